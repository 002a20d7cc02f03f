"""`miner ui`: the local web viewer (an optional extra: `pip install 'transcript-miner[ui]'`)."""

from __future__ import annotations

import signal

import click

from .common import project_dir


@click.command()
@click.option("--project", type=click.Path(file_okay=False, path_type=str),
              help="Project directory shown first (default: cwd); every project is a click away.")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True,
              help="Port on 127.0.0.1 (0: any free port).")
@click.option("--no-browser", is_flag=True, help="Print the address; do not open a browser.")
def ui(project: str | None, port: int, no_browser: bool) -> None:
    """See, search and correct the memory in a local web viewer, and what a session will be told.

    It listens on 127.0.0.1 only, and answers only the address it prints,
    which carries a token made for this run. Ctrl+C stops it.
    """
    try:
        from ..ui.server import ServeError, serve
    except ImportError as exc:
        raise click.ClickException(f"the viewer needs the ui extra ({exc.name} is missing): "
                                   "pip install 'transcript-miner[ui]', or run ./install.sh again") from None
    # SIGTERM stops it like Ctrl+C: the server closes its socket.
    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        serve(project_dir(project), port, open_browser=not no_browser, echo=click.echo)
    except ServeError as exc:
        raise click.ClickException(str(exc)) from None


COMMANDS = (ui,)


def register(group: click.Group) -> None:
    """Add `miner ui` to the `miner` command group."""
    for command in COMMANDS:
        group.add_command(command)
