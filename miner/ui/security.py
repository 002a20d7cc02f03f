"""What keeps the viewer private: a per-run token on every request, CSRF tokens on every POST, the Host
header checked, and headers that keep a page from running anything but the viewer's own files.

- The server listens on 127.0.0.1 only (`server.serve`).
- `miner ui` makes a random token for the run and opens `http://127.0.0.1:PORT/?token=…`. The first request
  that carries it gets a cookie holding it (HttpOnly, SameSite=Strict: never sent by another site's page) and
  is redirected to the same address without it, so the token does not stay in the address bar. Any request,
  static files included, without a valid token (in the URL or the cookie) is refused with 403.
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
from urllib.parse import urlencode

from flask import Flask, Response, redirect, render_template, request
from flask_wtf.csrf import CSRFError, CSRFProtect

TOKEN_PARAM = "token"
CSP = ("default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; "
       "base-uri 'none'")


def new_token() -> str:
    return secrets.token_urlsafe(32)


def cookie_name(port: int) -> str:
    """Cookies are not kept apart by port: two viewers on one machine each need their own name."""
    return f"miner_ui_{port}"


def install(app: Flask, token: str) -> None:
    """Guard every request of `app` with `token` (see the module's docstring)."""
    app.config.update(
        SECRET_KEY=secrets.token_bytes(32), SESSION_COOKIE_HTTPONLY=True, SESSION_COOKIE_SAMESITE="Strict",
        WTF_CSRF_TIME_LIMIT=None, MAX_CONTENT_LENGTH=256 * 1024,
    )

    @app.before_request  # first: before the CSRF check reads a form, the token and the Host are checked
    def guard():
        port = app.config.get("MINER_PORT")
        if port is not None and request.host not in (f"127.0.0.1:{port}", f"localhost:{port}"):
            return refuse(f"this viewer answers at 127.0.0.1:{port} only, not at {request.host}", 403)
        given = request.args.get(TOKEN_PARAM)
        if given is not None:
            if not hmac.compare_digest(given.encode(), token.encode()):
                return refuse("wrong token: open the address that `miner ui` printed", 403)
            rest = [(k, v) for k, v in request.args.items(multi=True) if k != TOKEN_PARAM]
            response = redirect(request.path + ("?" + urlencode(rest) if rest else ""), code=303)
            response.set_cookie(cookie_name(port or 0), token, httponly=True, samesite="Strict", path="/")
            return response
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
