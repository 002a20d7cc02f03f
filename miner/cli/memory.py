"""`miner forget|correct|pin|unpin|history`: corrections by hand, thin commands over `corrections`.

`register(main)` adds them to the `miner` group. Each opens the store, calls
one library function and prints what changed; a domain error is one line.
"""

from __future__ import annotations

import click

from ..memory import corrections
from .common import MEMORY_ID, open_store


def _run(action, *args, reads: bool = False):
    """`action(store, *args)`; `reads`: it only reads, and a store this user may not write is read."""
    with open_store(create=False, or_readonly=reads) as store:
        try:
            return action(store, *args)
        except corrections.CorrectionError as exc:
            raise click.ClickException(str(exc)) from None


def _echo(change: corrections.Change) -> None:
    for line in change.lines:
        click.echo(line)


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--reason", default="", help="Why; kept with the memory and shown by `miner show`.")
def forget(memory_id: int, reason: str) -> None:
    """Never recall memory MEMORY_ID again, even when its transcript is mined again.

    The row is kept (state forgotten) so that the same text stays forgotten.
    """
    _echo(_run(corrections.forget, memory_id, reason))


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
@click.argument("text")
@click.option("--reason", default="", help="Why; kept on the link between the old and the new text.")
def correct(memory_id: int, text: str, reason: str) -> None:
    """Replace memory MEMORY_ID with TEXT; the old text is kept as history.

    TEXT becomes a memory of its own that supersedes the old one, which is no
    longer recalled: the block shows TEXT, with what it replaced as "(was: …)"
    beside it (`miner history` shows both). The assistant's words never undo
    it; your own words in a later session can.
    """
    _echo(_run(corrections.correct, memory_id, text, reason))


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--global", "everywhere", is_flag=True, help="Recall it in every project, not only its own.")
def pin(memory_id: int, everywhere: bool) -> None:
    """Always recall memory MEMORY_ID; it never decays."""
    _echo(_run(corrections.pin, memory_id, everywhere))


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
@click.option("--global", "everywhere", is_flag=True,
              help="Also recall it in its own project only again (what `pin --global` widened).")
def unpin(memory_id: int, everywhere: bool) -> None:
    """Rank and decay memory MEMORY_ID like any other again."""
    _echo(_run(corrections.unpin, memory_id, everywhere))


@click.command()
@click.argument("memory_id", type=MEMORY_ID)
def history(memory_id: int) -> None:
    """Show every version of memory MEMORY_ID: what it replaced, what replaced it, and why."""
    found = _run(corrections.history, memory_id, reads=True)
    for line in corrections.format_history(found):
        click.echo(line)


COMMANDS = (forget, correct, pin, unpin, history)


def register(group: click.Group) -> None:
    """Add the correction commands to the `miner` command group."""
    for command in COMMANDS:
        group.add_command(command)
