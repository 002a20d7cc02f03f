"""What keeps the viewer private: a per-run token on every request, its pages under a per-run path, CSRF tokens on
every POST, the Host header checked, and headers that keep a page from running anything but the viewer's own files.

- The server listens on 127.0.0.1 only (`server.serve`).
- Every page is served under a random path made for the run, `/<scope>/`, and its cookies are sent by the
  browser to that path only. Browsers keep cookies apart by host and path, not by port: a cookie for the path
  `/` would also go to any other server on 127.0.0.1 the browser visits, which another local user may run, and
  that user could then replay it. A server elsewhere on 127.0.0.1 would have to know the path to be sent them.
- `miner ui` makes a random token for the run and prints `http://127.0.0.1:PORT/<scope>/?token=…`; it opens the
  browser at `http://127.0.0.1:PORT/?token=<code>`, with a code that works once: a browser's command line can
  be read by other local users, so what it carries is spent as soon as the browser has used it, and it names
  no path. The first request that carries the token (or the code) gets a cookie holding the token (HttpOnly,
  SameSite=Strict, for `/<scope>/` only) and is redirected to the same page without it, so the token does not
  stay in the address bar. Any request, static files included, without a valid token (in the URL or the
  cookie) is refused with 403.
- A request whose Host header is not this server's own address is refused too (DNS rebinding).
- Every state-changing request is a POST, and Flask-WTF's CSRFProtect checks its form token (signed with a key
  made for this run alone).
- Every response forbids inline scripts and styles, framing, sniffing and sending a referrer, and is not cached.
  Templates are Jinja2 with autoescaping: memory text is untrusted (it comes from transcripts), so it is always
  rendered as text.
"""

from __future__ import annotations

import hmac
import secrets
import threading
from urllib.parse import urlencode

from flask import Flask, Response, redirect, render_template, request
from flask_wtf.csrf import CSRFError, CSRFProtect

TOKEN_PARAM = "token"
OUTSIDE = "miner.outside"  # set in a request's WSGI environ when its path is not under the run's scope
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def new_scope() -> str:
    return secrets.token_urlsafe(16)


class Keys:
    """The run's token, and the code the browser is opened with, which works once."""

    def __init__(self, token: str, launch: str = ""):
        self.token = token
        self._launch = launch
        self._lock = threading.Lock()  # (the server answers on several threads)

    def accept(self, given: str) -> bool:
        if hmac.compare_digest(given.encode(), self.token.encode()):
            return True
        with self._lock:
            if self._launch and hmac.compare_digest(given.encode(), self._launch.encode()):
                self._launch = ""
                return True
        return False


class Scoped:
    """The app under `/<scope>/` (moved into SCRIPT_NAME, so that every address it makes carries it); a request
    for any other path reaches the app marked `OUTSIDE`, for `install`'s guard to answer."""

    def __init__(self, wsgi_app, scope: str):
        self.wsgi_app = wsgi_app
        self.prefix = "/" + scope

    def __call__(self, environ, start_response):
        path = environ.get("PATH_INFO", "")
        if path.startswith(self.prefix + "/"):
            environ["SCRIPT_NAME"] = environ.get("SCRIPT_NAME", "") + self.prefix
            environ["PATH_INFO"] = path[len(self.prefix):]
        else:
            environ[OUTSIDE] = True
        return self.wsgi_app(environ, start_response)


def cookie_name(port: int) -> str:
    """Cookies are not kept apart by port: two viewers on one machine each need their own name."""
    return f"miner_ui_{port}"


def install(app: Flask, token: str, scope: str, launch: str = "") -> None:
    """Guard every request of `app` with `token` (or, once, `launch`), and serve it under `/<scope>/` (see the
    module's docstring)."""
    root = f"/{scope}/"
    app.config.update(
        SECRET_KEY=secrets.token_bytes(32), SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict",
        SESSION_COOKIE_PATH=root, WTF_CSRF_TIME_LIMIT=None, MAX_CONTENT_LENGTH=256 * 1024,
    )
    app.wsgi_app = Scoped(app.wsgi_app, scope)
    keys = Keys(token, launch)

    @app.before_request  # first: before the CSRF check reads a form, the token and the Host are checked
    def guard():
        port = app.config.get("MINER_PORT")
        if port is not None and request.host.lower() not in (f"127.0.0.1:{port}", f"localhost:{port}"):  # (any case)
            return refuse(f"this viewer answers at 127.0.0.1:{port} only, not at {request.host}", 403)
        outside = request.environ.get(OUTSIDE, False)
        given = request.args.get(TOKEN_PARAM)
        if given is not None:
            if not keys.accept(given):
                return refuse("wrong token: open the address that `miner ui` printed", 403)
            rest = [(k, v) for k, v in request.args.items(multi=True) if k != TOKEN_PARAM]
            page = "/" if outside else request.path  # (the browser is opened at `/`, outside the scope)
            response = redirect(root[:-1] + page + ("?" + urlencode(rest) if rest else ""), code=303)
            response.set_cookie(cookie_name(port or 0), token, httponly=True, samesite="Strict", path=root)
            return response
        if outside:
            if request.path == root[:-1]:  # the viewer's address typed without its last slash
                return redirect(root, code=308)
            return refuse("this viewer needs its token: open the address that `miner ui` printed", 403)
        held = request.cookies.get(cookie_name(port or 0), "")
        if not hmac.compare_digest(held.encode(), token.encode()):
            return refuse("this viewer needs its token: open the address that `miner ui` printed", 403)
        return None

    CSRFProtect(app)  # its own before_request runs after `guard`

    @app.errorhandler(CSRFError)
    def csrf_failed(error):
        return refuse(f"the form was refused ({error.description}); reload the page and try again", 400)

    @app.after_request
    def headers(response: Response) -> Response:
        response.headers["Content-Security-Policy"] = CSP
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        response.headers["Cache-Control"] = "no-store"
        return response


def refuse(message: str, status: int):
    """A page of one line saying what was wrong and what to do."""
    return render_template("error.html", message=message, status=status), status
