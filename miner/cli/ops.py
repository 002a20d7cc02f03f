"""`miner export|import|backup|move|watch`: operating the store, thin commands over `portable`, `relocate` and
`watch`.

`register(main)` adds them to the `miner` group.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from pathlib import Path

import click

from .common import (
    ReadableFile,
    counted,
    load_config,
    open_store,
    project_dir,
    project_filter,
    refuse_to_replace,
    stopped_as_by_ctrl_c,
)


@click.command(name="export")
@click.option("--project", type=click.Path(file_okay=False, path_type=str),
              help="Only this project directory (default: every project).")
@click.option("--output", "-o", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="File to write (created readable by you only); default: standard output.")
@click.option("--force", is_flag=True, help="Replace the --output file if it exists.")
def export_(project: str | None, output: Path | None, force: bool) -> None:
    """Write memories, their evidence, links and states as JSONL.

    `miner import` restores the file losslessly. Text passes through secret
    redaction on the way out.
    """
    from ..memory import portable, privacy

    project_root = project_filter(project)
    refuse_to_replace(output, force)
    with open_store(or_readonly=True, shows=False) as store:
        if project_root is not None and project_root not in privacy.stored_projects(store):
            raise click.ClickException(f"nothing is stored for {project_root} (a typo in the path? `miner stats` "
                                       "counts the projects): nothing was exported")
        if output is None:
            count = portable.export(store, sys.stdout, project_root)
        else:
            shown = sys.stderr.isatty()
            try:
                with click.progressbar(length=portable.export_size(store, project_root) if shown else 0,
                                       label="Exporting", file=sys.stderr, hidden=not shown) as bar, \
                        stopped_as_by_ctrl_c():
                    count = portable.export_to_file(store, output, project_root, progress=bar.update)
            except (portable.PortableError, OSError) as exc:
                raise click.ClickException(f"export failed: {exc}") from None
    if output is not None:
        click.echo(f"{count} memories exported to {output}", err=True)


@click.command(name="import")
@click.argument("file", type=ReadableFile(Path))
def import_(file: Path) -> None:
    """Restore memories from a `miner export` FILE (all or nothing).

    Into an empty store the ids are kept; memories the store already holds
    merge their evidence instead of being doubled.
    """
    from ..memory import portable

    with open_store() as store, click.progressbar(length=file.stat().st_size, label="Importing", file=sys.stderr,
                                                  hidden=not sys.stderr.isatty()) as bar:
        try:
            summary = portable.import_file(store, file, progress=bar.update)
        except (portable.PortableError, UnicodeDecodeError) as exc:
            raise click.ClickException(f"{file}: {exc}; nothing was imported") from None
    click.echo(summary.line())


@click.command()
@click.argument("path", type=click.Path(path_type=str))
@click.option("--force", is_flag=True, help="Replace PATH when it is an existing file.")
def backup(path: str, force: bool) -> None:
    """Copy the database to PATH (a file, or a folder for a dated copy), safely while others write.

    Uses SQLite's online backup API; the copy passes integrity_check.
    """
    from ..memory.backup import backup as copy_store
    from ..memory.portable import PortableError

    if not path.strip():  # (a path "" is the working folder to pathlib)
        raise click.ClickException("an empty path; give the file or the folder to copy the database to")
    target = Path(path)
    refuse_to_replace(target, force)
    with open_store(or_readonly=True) as store:
        try:
            with stopped_as_by_ctrl_c():
                written = copy_store(store, target)
        except (OSError, sqlite3.Error, PortableError) as exc:
            raise click.ClickException(f"backup failed: {exc}") from None
    click.echo(f"backup written to {written}")


@click.command()
@click.argument("old", type=str)
@click.argument("new", type=str)
@click.option("--yes", is_flag=True, help="Do not ask before moving a folder that holds several projects, nor before "
                                         "joining OLD's memories to those NEW holds already.")
def move(old: str, new: str, yes: bool) -> None:
    """File the memories of project folder OLD under NEW, where it was moved or renamed to.

    The sessions of a moved folder start a project of their own, without the
    old one's memories. This files the old project's memories, sessions,
    checkpoints and archive under the new path (and those of folders inside
    it under the same folders inside the new one). OLD need not exist any
    more. A project that joined a team stays in it.
    """
    from ..memory import relocate

    if not old.strip() or not new.strip():
        raise click.ClickException("give the folder the project was in and the one it is in now")
    # OLD as written (it is gone: looking for its git root would climb to a folder above it, $HOME's dotfiles, and
    # file every project under that); NEW as the hooks will see it, its git root.
    old, new = os.path.normpath(os.path.abspath(os.path.expanduser(old))), project_dir(new)
    if old == new:
        raise click.ClickException(f"{old} is already the project's folder (both paths lead to it): nothing to move")
    if new.startswith(old.rstrip("/") + "/"):
        raise click.ClickException(f"{new} is inside {old}: give a folder outside the project")
    with open_store(create=False) as store:
        moving = relocate.stored_projects(store, old)
        if not moving:
            raise click.ClickException(f"nothing is stored for {old} (a typo in the path? `miner stats` counts the "
                                       "projects)")
        if not yes and old not in moving:  # (no project of its own: the folder above several)
            listed = ", ".join(moving[:3]) + (", …" if moving[3:] else "")
            click.confirm(f"{old} holds {counted(len(moving), 'project')} ({listed}): move them under {new}?",
                          abort=True)
        if relocate.stored_projects(store, new) and not yes:
            click.confirm(f"{new} holds memories of its own: join those of {old} to them?", abort=True)
        counts = relocate.move_project(store, old, new)
    moved = ", ".join(counted(counts[table], *nouns) for table, nouns in (
        ("memories", ("memory", "memories")), ("sessions", ("session",)), ("checkpoints", ("checkpoint",)),
        ("archive", ("archived unit",))) if counts[table])
    click.echo(f"moved {old} to {new}: {moved or 'its mining records only'}")
    joined = counts["already there"]
    if joined:
        click.echo(f"  {counted(joined, 'memory', 'memories')} joined {'the one' if joined == 1 else 'those'} {new} "
                   "held in the same words (the evidence and what you decided of them went along)")
    _move_team(old, new)


def _move_team(old: str, new: str) -> None:
    """A moved project that joined a team syncs under its new path."""
    from ..team import settings as settings_mod

    try:
        settings = settings_mod.load()
    except settings_mod.TeamError as exc:
        raise click.ClickException(f"moved, but the team settings cannot be read to move it there too: {exc}") from None
    inside = old.rstrip("/") + "/"
    joined = [p for p in settings.projects if p == old or p.startswith(inside)]  # (and the folders inside it)
    if not joined:
        return
    for project in joined:
        moved, key = new + project[len(old):], settings.projects.pop(project)
        if settings.projects.get(moved, key) != key:  # (a project there joined the team already, under its own key)
            click.echo(f"{moved} syncs with team {settings.team!r} as {settings.projects[moved]!r} already: "
                       f"{project}'s key {key!r} is no longer used")
            continue
        settings.projects[moved] = key
        click.echo(f"{moved} syncs with team {settings.team!r} as {key!r} now")
    settings_mod.save(settings)


@click.command()
@click.option("--status", "show_status", is_flag=True, help="Show whether the watcher runs, and what it did.")
@click.option("--stop", is_flag=True, help="Stop the running watcher (SIGTERM) and wait for it to exit.")
@click.option("--print-service", is_flag=True,
              help="Print a systemd user unit (Linux) or a launchd plist (macOS) that runs the watcher.")
@click.option("--debounce", type=click.FloatRange(0.05, 60.0), default=1.0, show_default=True,
              help="Seconds of quiet after a write before a transcript is mined.")
def watch(show_status: bool, stop: bool, print_service: bool, debounce: float) -> None:
    """Watch Claude Code's projects folder and mine transcripts as they are written.

    Runs in the foreground until SIGTERM or Ctrl-C; subagent transcripts are
    included. One watcher per data folder (a pidfile guards it).
    """
    from ..runtime import watch as watch_mod

    if print_service + show_status + stop > 1:  # (one was done and the others left without a word)
        raise click.ClickException("give one of --print-service, --status and --stop")
    given = click.get_current_context().get_parameter_source("debounce") is not click.core.ParameterSource.DEFAULT
    if given and (print_service or show_status or stop):
        raise click.ClickException("--debounce goes with running the watcher (the service runs it with the default)")
    if print_service:
        try:
            from ..runtime.service import service_definition

            click.echo(service_definition(), nl=False)
        except watch_mod.WatchError as exc:
            raise click.ClickException(str(exc)) from None
        return
    if show_status:
        for line in watch_mod.status_lines():
            click.echo(line)
        return
    if stop:
        try:
            click.echo(watch_mod.stop())
        except watch_mod.WatchError as exc:  # (it did not stop in time: still mining a long transcript)
            raise click.ClickException(str(exc)) from None
        return
    try:
        watch_mod.run(load_config(), debounce_s=debounce)
    except watch_mod.WatchError as exc:
        raise click.ClickException(str(exc)) from None


COMMANDS = (export_, import_, backup, move, watch)


def register(group: click.Group) -> None:
    """Add the operations commands to the `miner` command group."""
    for command in COMMANDS:
        group.add_command(command)
