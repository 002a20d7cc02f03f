"""`miner exclude|quarantine|approve|purge`: privacy commands, thin over `exclusions`, `trust` and `privacy`.

`register(main)` adds them to the `miner` group. Each calls one library
function and prints what changed; a domain error is one line.
"""

from __future__ import annotations

import sys

import click

from ..extract import trust
from ..memory import privacy
from ..runtime import exclusions
from .common import MEMORY_ID, open_store, project_dir, project_filter
from .group import Group


def _privacy(action, *args):
    try:
        return action(*args)
    except exclusions.PrivacyError as exc:
        raise click.ClickException(str(exc)) from None


@click.group(cls=Group)
def exclude() -> None:
    """Projects that are never mined and never injected (globs of folders)."""


@exclude.command(name="add")
@click.argument("glob")
def exclude_add(glob: str) -> None:
    """Never mine or inject projects matching GLOB (a folder, or a pattern such as '~/clients/*').

    Quote patterns so the shell does not expand them. A folder also covers
    everything below it. What was already mined stays until `miner purge`.
    """
    stored, added = _privacy(exclusions.add_exclusion, glob)
    click.echo(f"excluded {stored}" if added else f"{stored} was already excluded")
    if added:
        privacy.clear_block_cache()  # blocks rendered ahead of time must not be shown for it
        click.echo(f"memories mined before stay stored: `miner purge --project DIR` deletes them "
                   f"(exclusions live in {exclusions.exclusions_path()})")


@exclude.command(name="list")
def exclude_list() -> None:
    """List the excluded project globs."""
    globs = _privacy(exclusions.load_exclusions)
    for glob in globs:
        click.echo(glob)
    if not globs:
        click.echo("No project is excluded.")


@exclude.command(name="remove")
@click.argument("glob")
def exclude_remove(glob: str) -> None:
    """Mine and inject projects matching GLOB again (from their next new lines on)."""
    click.echo(f"no longer excluded: {_privacy(exclusions.remove_exclusion, glob)}")


@click.command()
@click.option("--project", type=str, help="Only this project directory (default: every project).")
@click.option("--limit", default=100, show_default=True, type=click.IntRange(1, 100_000), help="At most this many.")
def quarantine(project: str | None, limit: int) -> None:
    """List quarantined memories: assistant text that read like an instruction, never recalled.

    `miner approve ID` releases one; `miner forget ID` drops it for good.
    """
    with open_store(or_readonly=True) as store:
        rows = trust.quarantined(store, project_filter(project), limit)
        for memory in rows:
            click.echo(f"{memory.id:>6}  {memory.category:<10} {memory.last_seen[:10]}  {memory.role:<9} {memory.text}")
            reason = store.state_reason(memory.id)
            if reason:
                click.echo(f"        {reason}")
    if not rows:
        click.echo("No memory is quarantined.")


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
def approve(memory_id: int) -> None:
    """Release quarantined memory MEMORY_ID: it becomes active and can be recalled."""
    with open_store(create=False) as store:
        click.echo(_privacy(trust.approve, store, memory_id))


@click.command()
@click.option("--project", "folder", required=True, type=str,
              help="The project directory whose rows to delete (it need not exist any more).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
def purge(folder: str, yes: bool) -> None:
    """Delete every row of a project, evidence included, and vacuum the database.

    Memories, evidence, links, sessions, checkpoints, watermarks and the
    recall log of the project go; cached recall blocks are cleared. The
    purged transcripts are not mined again; new sessions there are, unless
    you also `miner exclude add` the project. A project that joined a team
    leaves it (the team's copy stays on its server).
    """
    project = project_dir(folder)
    with open_store(create=False) as store:
        projects = privacy.same_folder(store, project)
        if not yes:
            also = f" (and {', '.join(projects[1:])}, the same folder)" if projects[1:] else ""
            click.confirm(f"Delete everything stored for {project}{also}?", abort=True)
        _leave_team(projects)  # first: a background sync during the purge must not pull it back
        shown = sys.stderr.isatty()  # (steps and a bar on a terminal: a big store takes minutes)

        def stage(what: str) -> None:
            if shown:
                click.echo(f"{what}…", err=True)

        def track(items: list, label: str):
            return click.progressbar(items, label=label, file=sys.stderr, show_pos=True, hidden=not shown)

        purged = privacy.needs_compacting(store)  # (a purge stopped while it compacted: this one finishes it)
        for each in projects:
            try:
                counts = privacy.purge(store, each, stage, track)
            except privacy.PurgeInterrupted:
                raise click.ClickException(f"interrupted after {each}'s rows were deleted (that is done), while the "
                                           "database was compacted: run the same purge again to finish compacting "
                                           "it") from None
            if not any(count for name, count in counts.items() if name != "cached blocks"):
                click.echo(f"nothing was stored for {each} (a typo in the path? `miner stats` counts the projects)")
                continue
            purged = True
            click.echo(f"purged {each}:")
            for name, count in counts.items():
                click.echo(f"  {count:>6} {name}")
    if purged:
        click.echo("database vacuumed.")


def _leave_team(projects: list[str]) -> None:
    """A purged project that joined a team leaves it: its next sync would pull everything back."""
    from ..team import settings as settings_mod

    try:
        settings = settings_mod.load()
    except settings_mod.TeamError as exc:
        raise click.ClickException(f"purged, but the team settings cannot be read to leave the team: {exc}") from None
    left = [p for p in projects if settings.projects.pop(p, None) is not None]
    if left:
        settings_mod.save(settings)
        click.echo(f"left team {settings.team!r} for {', '.join(left)}: the team's copy stays on its server "
                   "(`miner team join` there syncs it back)")


COMMANDS = (exclude, quarantine, approve, purge)


def register(group: click.Group) -> None:
    """Add the privacy commands to the `miner` command group."""
    for command in COMMANDS:
        group.add_command(command)
