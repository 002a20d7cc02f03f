"""`miner team`: share a project's decisions, facts and todos with a team through PostgreSQL (the `team` extra)."""

from __future__ import annotations

import os
import re

import click

from .common import MEMORY_ID, open_store, project_dir
from .group import Group

_NO_DRIVER = ("team memory needs the team extra (psycopg is missing): pip install 'transcript-miner[team]', "
              "or run ./install.sh again")


def _settings():
    from ..team import settings as settings_mod

    try:
        return settings_mod.load()
    except settings_mod.TeamError as exc:
        raise click.ClickException(_line(exc)) from None


def _errors():
    """The errors a team command shows as one line: the team's own, the server's, and the local store's."""
    import sqlite3

    try:
        import psycopg

        from ..memory.pgstore import PgStoreError
    except ImportError:
        raise click.ClickException(_NO_DRIVER) from None
    from ..extract.secret_rules import SecretRuleError
    from ..team.settings import TeamError

    # ValueError: what a store refuses (an unknown state, say) stops the command, not the whole terminal.
    return (PgStoreError, TeamError, psycopg.Error, sqlite3.Error, SecretRuleError, ValueError)


def _line(exc: Exception) -> str:
    """An error as one line: a server's message can run over several, quoting the statement ("LINE 3: …") and a
    refused row whole, memory text and all ("DETAIL: Failing row contains …"); its first line says what failed."""
    diag = getattr(exc, "diag", None)
    primary = getattr(diag, "message_primary", None) if diag is not None else None
    text = " ".join((primary or str(exc)).split())
    return text or type(exc).__name__


@click.group(cls=Group)
def team() -> None:
    """Share this project's decisions, facts and todos with your team through a PostgreSQL server.

    Each machine keeps its own store, and the hooks read only that: they never
    wait for the network. Preferences stay personal unless shared with
    `miner team share`; private text, secrets, excluded projects and the
    archive of what was said never leave this machine.
    """


@team.command()
@click.argument("url")
def setup(url: str) -> None:
    """Create the team tables on the server (once, as a role that may create them; see the README for the
    least-privilege role members then use)."""
    if not url.strip():  # (libpq reads "" as the local server's defaults)
        raise click.ClickException("an empty URL; give the team server's, postgresql://USER@HOST/DB")
    errors = _errors()
    from ..memory.pgstore import PgStore, describe
    from ..team.settings import without_password

    try:
        without_password(url)  # an unreadable URL: libpq's reason, without the password it may quote
        with PgStore(url, team="", create=False) as remote:
            remote.create_schema(repair=True)  # (what was dropped since is made again)
    except errors as exc:
        raise click.ClickException(_line(exc)) from None
    click.echo(f"team tables ready on {describe(url)} (tables made again need the members' role granted again: "
               "see the README)")


@team.command()
@click.argument("url", required=False)
@click.option("--team", "team_id", help="Team id (default: the one joined before, else 'default').")
@click.option("--key", help="The team's name for this project (default: its git remote, else its folder's name).")
@click.option("--member", help="Your name on the team (default: MINER_TEAM_MEMBER, else user@host).")
@click.option("--project", type=click.Path(file_okay=False, path_type=str), help="Project directory (default: cwd).")
@click.option("--no-sync", is_flag=True, help="Join without syncing now.")
def join(url: str | None, team_id: str | None, key: str | None, member: str | None, project: str | None,
         no_sync: bool) -> None:
    """Join this project to a team on a PostgreSQL server (URL, or MINER_TEAM_URL), then sync it.

    The URL is kept without its password: give the password through
    MINER_TEAM_URL, PGPASSWORD or ~/.pgpass, which the background sync reads too.
    """
    errors = _errors()
    from ..runtime.exclusions import is_excluded
    from ..team import settings as settings_mod
    from ..team.service import connect

    settings = _settings()
    root = project_dir(project)
    if is_excluded(root):
        raise click.ClickException(f"{root} is excluded from mining: nothing of it may be shared")
    try:
        url = url or settings.server_url()
        if not url:
            raise settings_mod.TeamError("give the server: miner team join postgresql://user@host/db")
        others = [p for p in settings.projects if p != root]
        if others and (team_id and team_id != settings.team
                       or not settings_mod.same_server(url, settings.server_url())):
            raise settings_mod.TeamError(
                f"this machine syncs {len(others)} other project(s) with team {settings.team!r} on "
                f"{settings_mod.without_password(settings.server_url())}: join with the same server and team, "
                "or `miner team leave --all` first")
        environment = os.environ.get(settings_mod.URL_ENV)
        if environment and not settings_mod.same_server(url, environment):  # (which every connection would use)
            raise settings_mod.TeamError(
                f"{settings_mod.URL_ENV} names another server ({settings_mod.without_password(environment)}): unset "
                "it, or join that one")
        settings.url = url
        settings.team = team_id or settings.team or "default"
        settings.member = member or settings.member or settings_mod.default_member()
        was = settings.key_of(root)
        settings.projects[root] = settings_mod.check_key(key or was or settings_mod.default_key(root))
        rekeyed = was is not None and was != settings.projects[root]
        with_password = settings_mod.has_password(url)
        if with_password and not os.environ.get(settings_mod.URL_ENV):
            os.environ[settings_mod.URL_ENV] = url  # for this run's connections only; never written
        with connect(settings) as remote:
            if not key and was is None:  # a key an older version gave this repository, that the team uses already
                settings.projects[root] = _known_key(remote, settings.projects[root], settings_mod.default_key(
                    root, with_port=True))
        if rekeyed:  # pushed whole under its new name: what was synced under the old one stays there
            with open_store() as store, store.atomic():
                store.clear_team_project(settings.team, root)
        settings_mod.save(settings)
    except errors as exc:
        raise click.ClickException(_line(exc)) from None
    click.echo(f"{root} joined team {settings.team!r} as {settings.projects[root]!r} "
               f"({settings_mod.without_password(url)}), member {settings.member!r}")
    if with_password:
        click.echo("The password was not saved: give it to the background sync through MINER_TEAM_URL, "
                   "PGPASSWORD or ~/.pgpass.")
    if not no_sync:
        _sync_one(settings, root, errors)


def _known_key(remote, key: str, older: str) -> str:
    """`key`, or the `older` key (a URL's port in it) when the team holds memories under that one only: members who
    joined before keep syncing with those who join now."""
    if older != key and remote.active_texts(older) and not remote.active_texts(key):
        return older
    return key


def _sync_one(settings, root: str, errors) -> None:
    from ..team.service import sync_project

    with open_store() as store:
        bar = None

        def progress(done: int, total: int) -> None:
            nonlocal bar
            if bar is None and total >= 2000:
                bar = click.progressbar(length=total, label="pushing", file=click.get_text_stream("stderr"))
                bar.__enter__()
            if bar is not None:
                bar.update(done - bar.pos)

        try:
            report = sync_project(store, settings, root, progress=progress)
        except errors as exc:
            raise click.ClickException(_line(exc)) from None
        finally:
            if bar is not None:
                bar.__exit__(None, None, None)
    click.echo(f"{settings.key_of(root)}: {report.line()}")
    for note in report.notes:  # (what was left out or redacted here, and why)
        click.echo(f"  note: {note}")


@team.command()
@click.option("--project", type=click.Path(file_okay=False, path_type=str), help="Project directory (default: cwd).")
@click.option("--all", "every", is_flag=True, help="Every project this machine joined.")
def sync(project: str | None, every: bool) -> None:
    """Push this project's changes to the team and pull the team's (the worker also does after mining)."""
    errors = _errors()
    settings = _settings()
    roots = sorted(settings.projects) if every else [project_dir(project)]
    if not roots:
        raise click.ClickException("this machine has joined no project: run `miner team join URL` in one")
    for root in roots:
        _sync_one(settings, root, errors)


@team.command()
@click.option("--project", type=click.Path(file_okay=False, path_type=str), help="Project directory (default: cwd).")
@click.option("--offline", is_flag=True, help="Do not ask the server; show what this machine knows.")
def status(project: str | None, offline: bool) -> None:
    """What is pending here, the last sync, and the concurrent changes resolved."""
    from ..team.shared import pending

    settings = _settings()
    if not settings.team:
        click.echo("no team joined: `miner team join postgresql://user@host/db` in a project")
        return
    from ..team.settings import TeamError, without_password

    try:
        server = without_password(settings.server_url())
    except (TeamError, ImportError) as exc:
        server = f"an unreadable URL ({_line(exc)})"
    click.echo(f"team {settings.team!r} on {server}, member {settings.member!r}")
    root = project_dir(project)
    roots = [root] if settings.key_of(root) else sorted(settings.projects)
    with open_store(or_readonly=True) as store:  # (it only reads: a missing store is said, never made)
        for one in roots:
            key = settings.key_of(one)
            state = store.team_state(settings.team, one)
            waiting = pending(store, settings.team, one)
            click.echo(f"{one} as {key!r}: {len(waiting)} pending; last sync "
                       f"{state.get('last_sync', 'never')}" + (f" ({state['last_report']})" if 'last_report' in state
                                                                else ""))
            click.echo(f"  concurrent changes resolved: {state.get('conflicts_resolved', '0')}")
    if offline:
        return
    errors = _errors()
    from ..team.service import connect

    try:
        with connect(settings, connect_timeout=3) as remote:
            for one in roots:
                click.echo(f"server: {len(remote.active_texts(settings.key_of(one)))} current team memories of "
                           f"{settings.key_of(one)!r}; {remote.counters().get('team_conflicts_resolved', 0)} "
                           "concurrent changes resolved team-wide")
    except errors as exc:
        line = _line(exc)
        if _UNREACHABLE_RE.search(line):
            advice = "changes wait here until it answers"
        elif "permission denied" in line:
            advice = "this role lacks the members' grants: have the database's owner grant them (README, team memory)"
        else:
            advice = "changes wait here until this is fixed"
        click.echo(f"server: {line}; {advice}")


# A server that may answer later (down, unreachable, slow), not one that refuses what was given.
_UNREACHABLE_RE = re.compile(r"(?i)connection refused|is the server running|timeout expired|timed out|"
                             r"could not connect|no route to host|network is unreachable|failed to resolve host|"
                             r"could not translate host|name or service not known|temporary failure in name resolution|"
                             r"server closed")


@team.command()
@click.option("--project", type=click.Path(file_okay=False, path_type=str), help="Project directory (default: cwd).")
@click.option("--all", "every", is_flag=True, help="Leave the team with every project (the settings file goes).")
def leave(project: str | None, every: bool) -> None:
    """Stop syncing a project (what it pulled stays here; nothing is deleted on the server; joining again
    pushes and pulls it whole, merged, never doubled)."""
    from ..team import settings as settings_mod

    if every:
        if project is not None:
            raise click.UsageError("give --project or --all, not both")
        if not settings_mod.team_path().exists():
            raise click.ClickException("no project here has joined a team: there is nothing to leave "
                                       "(`miner team status` says what has)")
        try:
            settings = settings_mod.load()
        except settings_mod.TeamError as exc:  # (its advice is this command: every team's sync is forgotten)
            settings, unreadable = None, _line(exc)
        with open_store() as store, store.atomic():
            if settings is None:
                store.clear_teams()
            for root in settings.projects if settings else ():
                store.clear_team_project(settings.team, root)
        settings_mod.team_path().unlink(missing_ok=True)
        click.echo("left the team: no project syncs any more"
                   + (f" (the settings file could not be read, and is gone: {unreadable})" if settings is None else ""))
        return
    settings = _settings()
    root = project_dir(project)
    if settings.projects.pop(root, None) is None:
        raise click.ClickException(f"{root} has not joined a team (`miner team status` lists what has)")
    settings_mod.save(settings)
    with open_store() as store, store.atomic():
        store.clear_team_project(settings.team, root)
    click.echo(f"{root} no longer syncs with team {settings.team!r}")


@team.command()
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--stop", is_flag=True, help="Stop sharing it (what the team has stays there).")
def share(memory_id: int, stop: bool) -> None:
    """Share one of your preferences with the team (preferences are personal otherwise)."""
    with open_store() as store:
        memory = store.get(memory_id)
        if memory is None:
            raise click.ClickException(f"no memory #{memory_id} (`miner list` shows ids)")
        if not stop and memory.scope == "project" and memory.project not in _settings().projects:
            raise click.ClickException(f"#{memory_id} belongs to {memory.project}, which has not joined a team: "
                                       "`miner team join` there first")
        if memory.category != "preference":
            raise click.ClickException(f"#{memory_id} is a {memory.category}: decisions, facts and todos of a "
                                       "joined project are shared already")
        if memory.scope != "project" and not stop:
            raise click.ClickException(f"#{memory_id} applies to every project: only a project's own "
                                       "preferences can be shared with its team")
        with store.atomic():
            store.set_team_shared(memory_id, not stop)
    click.echo(f"#{memory_id} {'is no longer' if stop else 'will be'} shared with the team at the next sync")


COMMANDS = (team,)


def register(group: click.Group) -> None:
    """Add `miner team` to the `miner` command group."""
    for command in COMMANDS:
        group.add_command(command)
