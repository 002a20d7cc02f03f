"""`miner`: a thin command line over the library. Each command opens the store, calls one function, prints.

This module holds the `miner` group and its mining, reading, install and doctor commands; `register(main)`
of `memory`, `ops`, `privacy`, `quality` and `mcp.server` adds the others.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from .. import __version__, paths
from .. import config as config_mod
from .common import MEMORY_ID, counted, load_config, open_store, project_dir, project_filter
from .group import Group

RECALL_LOG_WAIT_S = 2.0  # how long `miner recall` waits to log what it printed while another process writes


@click.group(cls=Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="miner")
def main() -> None:
    """Transcript Miner: memory for Claude Code, mined from its own transcripts.

    No LLM calls, no tokens, no network. Data lives in $MINER_HOME
    (default ~/.local/share/miner).
    """


# --- mining ----------------------------------------------------------------------------


@main.command()
@click.argument("transcripts", nargs=-1, type=click.Path(dir_okay=True, path_type=str))
@click.option("--all", "mine_all", is_flag=True, help="Mine every transcript under Claude Code's projects folder.")
@click.option("--jobs", "-j", type=click.IntRange(1, 16), default=None,
              help="Processes to mine with, each taking whole projects (default: one per core, up to 4, when there "
                   "are more than 16 MB to mine; else 1).")
@click.option("--quiet", "-q", is_flag=True, help="Print only the summary line.")
def mine(transcripts: tuple[str, ...], mine_all: bool, jobs: int | None, quiet: bool) -> None:
    """Mine transcripts (files or folders) into the memory store.

    Exits with status 1 when a transcript could not be mined (each is named; what was mined is kept).
    """
    from ..runtime.mine import Miner, Summary, find_transcripts
    from ..runtime.parallel import default_jobs, mine_parallel, project_groups
    from ..runtime.passes import owed_checkpoints
    from ..runtime.pending import has_work
    from ..worker import keep_indexes, refresh_blocks, transcript_projects

    files: list[str] = []
    unreadable: list[str] = []  # folders that could not be listed: said, and the exit status says so
    if any(not given.strip() for given in transcripts):  # (a path "" is the working folder to pathlib)
        raise click.ClickException("an empty path; pass transcript files or folders, or --all")
    for target in map(Path, transcripts):
        if target.is_dir():
            files += find_transcripts(target, unreadable)
        elif target.is_file():
            files.append(str(target))
        elif target.exists():
            raise click.ClickException(f"{target} is not a file or a folder; pass transcript files or folders")
        else:
            raise click.ClickException(f"{target} does not exist; pass transcript files or folders")
    if mine_all:
        files += find_transcripts(unreadable=unreadable)
    if not files and not unreadable:
        where = paths.projects_dir()
        if mine_all:
            click.echo(f"Nothing to mine: no transcripts under {where}.")
            return
        if transcripts:
            raise click.ClickException(f"no transcripts (*.jsonl) under {', '.join(map(str, transcripts))}; name "
                                       "Claude Code transcript files or folders, or pass --all")
        raise click.UsageError("name transcripts to mine, or pass --all")
    config = load_config()
    # A file name that is not UTF-8 (bytes the file system allows) cannot be kept in the store, which names the
    # transcripts it mined.
    unnamed = [file for file in files if not paths.is_utf8(file)]
    files = [file for file in files if paths.is_utf8(file)]
    with open_store() as store:
        # A transcript with nothing new is counted, not read: with nothing to mine, no miner is built (spaCy). One
        # whose session still owes its checkpoint (a run killed, or out of disk, after mining it) is taken again.
        todo = [file for file in files if has_work(store, resolved := str(Path(file).resolve()))
                or owed_checkpoints(store, resolved)]
        total = Summary(files=len(files) - len(todo) + len(unnamed), errors=[
            paths.unkeepable_name(file) for file in unnamed] + [
            f"{paths.printable(folder)}: cannot be read (permission denied), so its transcripts were not mined; make "
            "it readable (`chmod u+rx`)" for folder in unreadable])
        groups = project_groups(todo)
        processes = min(jobs or default_jobs(todo), len(groups))
        miner = Miner(store, config) if processes <= 1 and todo else None
        if not quiet and (processes > 1 or miner is not None):  # (before the bar: said inside, it ran into it)
            click.echo(f"Mining in {processes} processes, each taking whole projects." if processes > 1 else
                       f"Using the {miner.pipeline.name} pipeline.", err=True)
        # Files named here (not found in a folder: a session may hold no turn) with lines and no turn of a
        # conversation in them, and their lines.
        strange: list[tuple[str, int]] = []
        named = {str(target) for target in transcripts}

        def mined(file: str, result: Summary) -> None:
            bar.update(1)
            lines = result.entries + result.skipped_lines
            if lines and not (result.turns or result.replayed or result.errors) and file in named:
                strange.append((file, lines))

        with click.progressbar(length=len(todo), label="Mining", file=sys.stderr, show_pos=True,
                               hidden=quiet or not todo or not sys.stderr.isatty()) as bar:
            if processes > 1:
                total.add(mine_parallel(store.path, groups, processes, progress=mined))
            elif miner is not None:
                for file in todo:
                    result = miner.mine_paths([file])
                    total.add(result)
                    mined(file, result)
        if todo:  # a backfill: merged as far as merging goes
            keep_indexes(store, rounds=None, say=lambda message: click.echo(f"note: {message}", err=True))
        projects = transcript_projects(store, [str(Path(file).resolve()) for file in todo])
    if projects and config["recall_cache"]:  # the next session of each finds its block rendered, as after a worker
        refresh_blocks(projects)
    click.echo(total.line())
    for file, lines in strange:
        click.echo(f"note: {paths.printable(file)}: none of its {lines} line(s) is a turn of a conversation; is it a "
                   "Claude Code transcript? (they are the JSONL files under ~/.claude/projects)", err=True)
    for error in total.errors:
        click.echo(f"error: {error}", err=True)
    if total.errors:  # what was mined is kept; the next run tries the rest again
        raise click.ClickException(f"not everything was mined ({len(total.errors)} error(s) above); fix what they "
                                   "name and run it again")


# --- reading -----------------------------------------------------------------------------


@main.command()
@click.argument("query", required=False, default="")
@click.option("--project", type=click.Path(file_okay=False, path_type=str), help="Project directory (default: cwd).")
@click.option("--budget", type=click.IntRange(50, 100_000), help="Budget in tokens (default: 2% of the context window).")
@click.option("--situation", type=click.Choice(["startup", "compact", "resume", "query"]), default=None,
              help="Build the block a session would get in this situation.")
@click.option("--session", default="", help="Session id (for compact/resume).")
@click.option("--tentative", is_flag=True, help="Include unconfirmed (hedged) memories.")
@click.option("--explain", is_flag=True, help="Show each item's score broken down, and each void zone with why.")
@click.option("--no-void", is_flag=True, help="Build the block without void marking.")
def recall(query: str, project: str | None, budget: int | None, situation: str | None, session: str,
           tentative: bool, explain: bool, no_void: bool) -> None:
    """Print the recall block for a project, optionally ranked against QUERY.

    Logged for `miner zones`; looking does not count as a recall (the memories shown do not warm up for it).
    """
    import sqlite3

    from ..memory.store import locked
    from ..recall.block import build, explain_lines

    config = load_config()
    situation = situation or ("query" if query else "startup")
    root = project_dir(project)
    with open_store(or_readonly=True) as store:
        store.lock_wait_s = min(store.lock_wait_s, RECALL_LOG_WAIT_S)  # the log line waits a moment, not a minute
        if session:
            found, checkpoint = store.session(session), store.checkpoint(session)
            if found is None and checkpoint is None:
                raise click.ClickException(f"no session {session!r} in the store: give the id of a mined session "
                                           "(`miner show MEMORY_ID` names a memory's), or leave --session out")
            owner = found.project if found is not None else checkpoint.get("project") or root
            if project is None:
                root = owner  # (its own project, wherever this is run)
            elif owner != root:
                raise click.ClickException(f"session {session!r} is of {owner}, not of {root}: give --project "
                                           f"{owner}, or leave --project out")

        def built(log: bool):
            return build(store, root, config, situation=situation, query=query, session_id=session,
                         budget_chars=config_mod.budget_chars(config, budget), include_tentative=tentative,
                         void=False if no_void else None, log=log, counted=False)

        try:
            result = built(log=not explain)
        except sqlite3.OperationalError as exc:  # another process keeps the store locked: the block, unlogged
            if not locked(exc):
                raise
            result = built(log=False)
        if not result.text and situation != "query":
            from ..runtime.exclusions import PrivacyError, is_excluded, load_exclusions

            try:
                globs = load_exclusions()
            except PrivacyError as exc:  # (every project is taken for excluded then, and none is)
                raise click.ClickException(f"{exc}: until it is fixed, no block is injected anywhere") from None
            if is_excluded(root, globs):  # (a blank line said nothing)
                raise click.ClickException(f"{root} is excluded (`miner exclude list`): no block is "
                                           "injected there; a question (`miner recall QUERY`) is still answered")
        click.echo("\n".join(explain_lines(result, store)) if explain else result.text)


@main.command()
@click.option("--project", type=click.Path(file_okay=False, path_type=str), help="Project directory (default: cwd).")
def zones(project: str | None) -> None:
    """Show the void zones of the last recall for a project."""
    with open_store(or_readonly=True) as store:
        row = store.last_recall(project_dir(project))
    if row is None:
        click.echo("No recall logged for this project yet.")
        return
    zones_ = json.loads(row.voided)
    click.echo(f"last recall {row.created_at} ({row.situation}): {len(json.loads(row.shown))} shown, "
               f"{len(json.loads(row.left_out))} left out, {row.elapsed_ms:.1f} ms")
    for zone in zones_:
        state = "VOID" if zone["voided"] else ("kept, protected" if zone["protected"] else "kept")
        click.echo(f"  {state:<16} score {zone['score']:.3f}  {len(zone['ids']):>3} memories  "
                   f"topic: {', '.join(zone['topic'])}  {zone['reason']}")
    if not zones_:
        click.echo("  no void marking (too few candidates to crowd the budget)")


@main.command(name="list")
@click.option("--project", type=str, help="Only this project directory.")
@click.option("--category", type=click.Choice(["decision", "preference", "fact", "todo"]), help="Only this category.")
@click.option("--state", "states", multiple=True, type=click.Choice(["active", "superseded", "forgotten", "cold", "quarantined"]),
              help="States to list (default: active).")
@click.option("--limit", default=50, show_default=True, type=click.IntRange(1, 100_000), help="At most this many.")
def list_(project: str | None, category: str | None, states: tuple[str, ...], limit: int) -> None:
    """List memories, newest first."""
    with open_store(or_readonly=True) as store:
        where = project_filter(project)
        rows = store.list_memories(where, category, states or ("active",), limit)
    for m in rows:
        flag = (" (unconfirmed)" if m.tentative else "") + (" (pinned)" if m.pinned else "")
        state = f" [{m.state}]" if m.state != "active" else ""  # (with --state, a closed one is told from a current)
        click.echo(f"{m.id:>6}  {m.category:<10} {m.last_seen[:10]}  {m.text}{flag}{state}")
    if not rows:
        gone = where is not None and not os.path.isdir(where)  # (a project deleted since keeps its memories)
        click.echo("No memories match." + (f" (No folder {paths.printable(where)} exists: check the path.)" if gone
                                           else ""))


@main.command()
@click.argument("memory_id", type=MEMORY_ID)
def show(memory_id: int) -> None:
    """Show one memory with its provenance and evidence."""
    with open_store(or_readonly=True) as store:
        memory = store.get(memory_id)
        if memory is None:
            raise click.ClickException(f"no memory {memory_id}; `miner list` shows the ids")
        evidence = store.evidence(memory_id)
        links = store.links(memory_id)
        reason = store.state_reason(memory_id)
    click.echo(f"#{memory.id} [{memory.category}] {memory.text}")
    click.echo(f"  state: {memory.state}   confidence: {memory.confidence:.2f}   scope: {memory.scope}"
               f"{'   tentative' if memory.tentative else ''}{'   pinned' if memory.pinned else ''}")
    if reason:  # why it is forgotten, quarantined, cold or current again, as `forget --reason` promises
        click.echo(f"  why {memory.state}: {reason}")
    click.echo(f"  project: {memory.project}")
    click.echo(f"  rule: {memory.rule_id}   role: {memory.role}   source: {memory.source}")
    click.echo(f"  first seen {memory.first_seen}, last seen {memory.last_seen}; recalled {memory.recall_count} times")
    if memory.subject or memory.value:
        click.echo(f"  subject: {memory.subject}   value: {memory.value}")
    click.echo(f"  evidence ({len(evidence)}):")
    for row in evidence:
        click.echo(f"    {row.ts}  {row.role:<9} session {row.session_id or '-'}  entry {row.entry_uuid}")
        if row.transcript:  # (a correction or a memory stored on request was said in no transcript)
            click.echo(f"      {row.transcript}")
    for link in links:
        click.echo(f"  link: #{link.src} {link.kind} #{link.dst} {link.reason}")


@main.command()
@click.argument("query")
@click.option("--project", type=str, help="Only this project directory (default: every project).")
@click.option("--all", "all_states", is_flag=True, help="Also cold, superseded, forgotten and quarantined memories.")
@click.option("--limit", default=20, show_default=True, type=click.IntRange(1, 1000), help="At most this many of each.")
@click.option("--no-archive", is_flag=True, help="Memories only, not what was said in earlier sessions.")
def search(query: str, project: str | None, all_states: bool, limit: int, no_archive: bool) -> None:
    """Full-text search (BM25) of memories, active ones unless --all, then of the archive of everything said.

    A word of the glossary also finds what was said in other languages ("database" finds 数据库), as the prompt
    hook does."""
    from ..memory.browse import said_beyond
    from ..memory.records import STATES
    from ..recall import glossary

    where = project_filter(project)
    with open_store(or_readonly=True) as store:
        glossary.refresh_quietly()  # `miner doctor` names a broken glossary file; the search goes on without it
        forms = glossary.query_forms(query)
        hits = store.search(query, project=where, states=STATES if all_states else ("active",), limit=limit,
                            forms=forms)
        said = [] if no_archive else store.search_archive(query, project=where, limit=limit, forms=forms)
    # a unit that says what a memory listed says is not listed again
    said = said_beyond([unit for unit, _ in said], [memory.text for memory, _ in hits])
    added = list(dict.fromkeys(member[0] for found in forms.values() for member in found))
    if added:  # why a line may hold none of the query's words
        click.echo(f"(also searched for, from the glossary: {', '.join(added[:12])}{', …' if len(added) > 12 else ''})")
    for memory, _ in hits:
        state = "" if memory.state == "active" else f" [{memory.state}]"
        click.echo(f"{memory.id:>6}  {memory.category:<10} {memory.last_seen[:10]}  {memory.text}{state}")
    if not hits:
        click.echo("No memories match." + ("" if all_states else " (`--all` also searches cold and closed ones.)"))
    if said:
        click.echo(f"\nSaid in earlier sessions (the archive, {counted(len(said), 'unit')}):")
    for unit in said:
        text = " ".join(unit.text.split())
        click.echo(f"  {unit.ts[:10]}  {unit.role:<9} session {unit.session_id[:8]}  "
                   f"{text[:300]}{'…' if len(text) > 300 else ''}")


@main.command()
@click.option("--dry-run", is_flag=True, help="Show what would go cold; change nothing.")
@click.option("--project", type=str, help="Only this project directory.")
def gc(dry_run: bool, project: str | None) -> None:
    """Move memories whose heat fell below the threshold to cold storage (never deleted), and remove the files of
    sessions untouched for 30 days (blocks rendered for a compaction, what each was shown)."""
    from ..memory.decay import cold_candidates, go_cold
    from ..runtime.tidy import STALE_DAYS, tidy

    config = load_config()
    with open_store(create=False) as store:
        cold = cold_candidates(store, config, project_filter(project))
        for item in cold:
            click.echo(f"{item.memory.id:>6}  heat {item.heat:.3f}  {item.age_days:>5.0f} days  "
                       f"[{item.memory.category}] {item.memory.text[:100]}")
        if dry_run:
            click.echo(f"{len(cold)} memories would go cold (threshold {config['cold_threshold']}); nothing changed.")
        else:
            moved = go_cold(store, cold, config)
            click.echo(f"{len(moved)} memories moved to cold storage; `miner search --all` still finds them."
                       + (f" ({len(cold) - len(moved)} pinned, closed or used again meanwhile stayed)"
                          if len(moved) < len(cold) else ""))
            click.echo(f"{tidy()} files of sessions untouched for {STALE_DAYS} days (and of runs cut short) removed"
                       + (" (of every project: they name no project)." if project else "."))


@main.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")
def stats(as_json: bool) -> None:
    """Counts of memories, sessions, transcripts and skipped input."""
    with open_store(or_readonly=True) as store:
        data = store.stats()
    if as_json:
        click.echo(json.dumps(data, indent=2))
        return
    click.echo(f"database     {data['database']}")
    click.echo(f"memories     {data['memories']} ({', '.join(f'{k} {v}' for k, v in sorted(data['by_state'].items())) or 'none'})")
    click.echo(f"active by category: {', '.join(f'{k} {v}' for k, v in sorted(data['by_category'].items())) or 'none'}")
    click.echo(f"active by confidence: {', '.join(f'{k} {v}' for k, v in sorted(data['by_confidence'].items())) or 'none'}")
    click.echo(f"evidence     {data['evidence']}")
    click.echo(f"projects     {data['projects']}   sessions {data['sessions']}   transcripts {data['transcripts']}")
    for name, value in data["counters"].items():
        click.echo(f"{name:<20} {value}")


# --- hooks and install ------------------------------------------------------------------------


def _project_needs_its_scope(scope: str, project: str | None) -> None:
    """--project without --scope project named a project, and the user's own settings were changed instead."""
    if project is not None and scope != "project":
        raise click.ClickException("--project goes with --scope project (without it, the user's settings are the "
                                   "ones changed)")


@main.command()
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="The user's settings (~/.claude/settings.json), or one project's (.claude/settings.json).")
@click.option("--project", type=click.Path(exists=True, file_okay=False, path_type=str),
              help="Project directory for --scope project.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--mcp", "with_mcp", is_flag=True,
              help="Also register the MCP server (`miner mcp`) in Claude Code's MCP configuration.")
def install(scope: str, project: str | None, dry_run: bool, with_mcp: bool) -> None:
    """Register the hooks in Claude Code's settings.json (and, with --mcp, the MCP server)."""
    _project_needs_its_scope(scope, project)
    from ..install.settings import SettingsError
    from ..install.settings import install as do_install

    try:
        if with_mcp:
            from ..install.mcp_config import install_mcp

            install_mcp(scope, project, sys.executable, dry_run=True)  # its file checked before anything is written
        lines = do_install(scope, project, sys.executable, dry_run=dry_run)
        if with_mcp:
            lines += install_mcp(scope, project, sys.executable, dry_run=dry_run)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    for line in lines:
        click.echo(line)


@main.command()
@click.option("--scope", type=click.Choice(["user", "project"]), default="user", show_default=True,
              help="The user's settings (~/.claude/settings.json), or one project's (.claude/settings.json).")
@click.option("--project", type=click.Path(file_okay=False, path_type=str), help="Project directory for --scope project.")
@click.option("--dry-run", is_flag=True, help="Show what would change; write nothing.")
@click.option("--mcp", "with_mcp", is_flag=True, help="Also remove the MCP server entry.")
def uninstall(scope: str, project: str | None, dry_run: bool, with_mcp: bool) -> None:
    """Remove our hooks from Claude Code's settings.json (everything else is kept)."""
    _project_needs_its_scope(scope, project)
    from ..install.settings import SettingsError
    from ..install.settings import uninstall as do_uninstall

    try:
        if with_mcp:
            from ..install.mcp_config import uninstall_mcp

            uninstall_mcp(scope, project, dry_run=True)  # its file checked before anything is written
        lines = do_uninstall(scope, project, dry_run=dry_run)
        if with_mcp:
            lines += uninstall_mcp(scope, project, dry_run=dry_run)
    except SettingsError as exc:
        raise click.ClickException(str(exc)) from None
    for line in lines:
        click.echo(line)


@main.command()
@click.option("--fix", is_flag=True,
              help="First redact, in place, the stored secrets that the current redaction hides (database, FTS "
                   "index, caches, logs), and say what changed.")
def doctor(fix: bool) -> None:
    """Check the install, hook registration, database, stored secrets, spaCy pipeline, settings and mining lag."""
    from .doctor import run_checks

    if fix and paths.db_path().exists():
        from ..extract.secret_rules import SecretRuleError
        from ..memory.repair import fix as repair

        with open_store() as store:
            try:
                done = repair(store)
            except SecretRuleError as exc:
                raise click.ClickException(f"{exc}; fix it (`miner rules check`), then `miner doctor --fix`") from None
        click.echo(f"fixed: {'redacted ' + done.line() if done.total else 'no stored secret to redact'}")
    try:  # a broken settings file is one of the checks, not a reason to skip the others
        config = config_mod.load()
    except config_mod.ConfigError:
        config = config_mod.validated({})
    problems = 0
    for ok, line, fix in run_checks(config):
        click.echo(f"{'ok  ' if ok else 'FAIL'}  {line}")
        if not ok:
            problems += 1
            if fix:
                click.echo(f"      fix: {fix}")
    if problems:
        raise click.ClickException(f"{problems} problem(s) found")


from .memory import register as register_memory_commands  # noqa: E402 - after `main` exists

register_memory_commands(main)

from .ops import register as register_ops_commands  # noqa: E402

register_ops_commands(main)

from ..mcp.server import register as register_mcp_command  # noqa: E402

register_mcp_command(main)

from .privacy import register as register_privacy_commands  # noqa: E402

register_privacy_commands(main)

from .quality import register as register_quality_commands  # noqa: E402

register_quality_commands(main)

from .ui import register as register_ui_command  # noqa: E402

register_ui_command(main)

from .team import register as register_team_command  # noqa: E402

register_team_command(main)

if __name__ == "__main__":  # pragma: no cover
    main()
