"""Serving the viewer: waitress on 127.0.0.1 only, on the port asked for or a free one, with a token and a path
made for this run (see `security`); the address that carries them is printed, and where there is a screen the
browser is opened with a code that works once."""

from __future__ import annotations

import logging
import os
import sys
import webbrowser
from typing import Callable

from . import security
from .app import create_app

HOST = "127.0.0.1"  # never another interface: the viewer shows private data
THREADS = 4


class ServeError(RuntimeError):
    """The viewer cannot start; the message says why and what to do."""


def can_open_browser() -> bool:
    """Whether a graphical browser can be opened here (a console browser would take over the terminal)."""
    return sys.platform in ("darwin", "win32") or bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def make_server(project: str, port: int = 0):
    """(server, address with its token, address with a code that works once) for `project`; the server is bound
    but not yet serving."""
    from waitress import create_server

    token, scope, launch = security.new_token(), security.new_scope(), security.new_token()
    app = create_app(project, token, scope, launch)
    try:
        server = create_server(app, host=HOST, port=port, threads=THREADS, ident="transcript-miner")
    except OSError as exc:
        raise ServeError(f"cannot listen on {HOST}:{port} ({exc.strerror or exc}); "
                         "pick another port with --port, or leave it out for a free one") from None
    bound = server.effective_port
    app.config.update(MINER_PORT=bound, SESSION_COOKIE_NAME=f"miner_ui_session_{bound}")
    return (server, f"http://{HOST}:{bound}/{scope}/?{security.TOKEN_PARAM}={token}",
            f"http://{HOST}:{bound}/?{security.TOKEN_PARAM}={launch}")


def serve(project: str, port: int = 0, open_browser: bool = True, echo: Callable[[str], None] = print) -> None:
    """Serve the viewer until interrupted (Ctrl+C or SIGTERM)."""
    logging.getLogger("waitress").setLevel(logging.ERROR)
    server, url, launch_url = make_server(project, port)
    echo(f"Memory viewer for {project}")
    echo(f"  {url}")
    echo("Only this address (it carries this run's token) opens it. Ctrl+C stops it.")
    if open_browser and can_open_browser():
        webbrowser.open(launch_url)  # not `url`: a browser's command line can be read by other local users
    elif open_browser:
        echo("(no screen found here: open the address above in your browser)")
    sys.stdout.flush()
    try:
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        server.close()
