"""The viewer's pages: memories, one memory with its provenance and history, what a session will be told,
sessions, a timeline, health and rules. `create_app(project, token, scope)` builds the Flask app.

Every read opens the store read-only for the request; every edit is a POST that calls the same library
function as the CLI and the MCP tools (`memory.corrections`, `extract.trust`), in one transaction, so the
next SessionStart block shows it. The data each page shows is gathered in `pages`.
"""

from __future__ import annotations

from pathlib import Path

from flask import Flask, abort, flash, g, redirect, render_template, request, url_for
from werkzeug.exceptions import NotFound

from .. import __version__, paths
from .. import config as config_mod
from ..extract.redaction_version import REDACTION_VERSION, for_output
from ..extract.rules import RuleError
from ..extract.secret_rules import SecretRuleError
from ..memory import browse, corrections, reader
from ..memory.store import Store, StoreError, locked
from ..recall import glossary
from ..textutil import NOT_SHOWN
from . import pages, security

PAGE_SIZE = 50
FLASH_CHARS = 300
# How long an edit waits for another process's write lock: the page waits for it, and a wait holds one of the
# server's few threads (the command line waits a minute).
EDIT_LOCK_WAIT_S = 5.0


def _int(name: str, default: int = 0, low: int = 0, high: int = 10**9) -> int:
    value = request.args.get(name, "")
    if not value:
        return default
    try:
        number = int(value)
    except ValueError:
        abort(400, f"{name} must be a whole number, not {value[:40]!r}")
    return max(low, min(high, number))


def _choice(name: str, allowed: tuple[str, ...], default: str | None) -> str | None:
    value = request.values.get(name, "") or default  # (of the address, or of a form's body)
    if value is not None and value not in allowed:
        abort(400, f"{name} must be one of {', '.join(allowed)}, not {value[:40]!r}")
    return value


def page_args(number: int) -> dict:
    """The arguments of a link to page `number` of the list shown: this page's own, the query's filters (never
    one of `url_for`'s own keywords, which start with "_"), and the page."""
    args = {k: v for k, v in request.args.items() if not k.startswith("_") and k not in (request.view_args or {})}
    return {**args, **(request.view_args or {}), "page": number}


# A memory id in a URL: one past SQLite's integers is no memory (404), not a server error.
MEMORY_ID = "<int(min=1, max=9223372036854775807):memory_id>"


def shown(value):
    """What a page shows of a value: no control character, and, while the repair of an upgrade has not run on the
    store, what the current redaction hides hidden (`redaction_version.for_output`, as the commands and hooks do)."""
    if not isinstance(value, str):
        return value
    return for_output(value, g.get("cleaned_by", REDACTION_VERSION)).translate(NOT_SHOWN)


def create_app(project: str, token: str, scope: str, launch: str = "") -> Flask:
    """The viewer for `project` (the project a page shows unless its address names another), under `/<scope>/`,
    opened with `token` (or once with `launch`; see `security`)."""
    app = Flask(__name__, static_folder=str(Path(__file__).parent / "static"))
    security.install(app, token, scope, launch)
    app.jinja_env.globals.update(version=__version__, short=pages.short_project, page_args=page_args,
                                 version_end=corrections.version_end)
    # No control character or bidirectional override reaches a page (a store an older version mined may hold some).
    app.jinja_env.finalize = shown

    def store() -> Store:
        if "store" not in g:
            g.store = Store(readonly=True)
            g.cleaned_by = reader.redaction_version(g.store.db)
        return g.store

    def settings() -> dict:
        if "settings" not in g:
            g.settings = config_mod.load()
        return g.settings

    def current() -> str:
        # The project of the memory or session a page shows, else the address's (never a refused POST's form).
        return g.get("project") or request.args.get("project") or project

    @app.teardown_request
    def close(_exc=None) -> None:
        opened = g.pop("store", None)
        if opened is not None:
            opened.close()

    @app.context_processor
    def common() -> dict:
        return {"project": current(), "projects": pages.project_names(g.store) if "store" in g else [current()]}

    @app.errorhandler(400)
    def bad_request(error):
        return security.refuse(str(error.description), 400)

    @app.errorhandler(404)
    def not_found(error):
        if error.description == NotFound.description:  # no such page (not a memory or session we looked for)
            return security.refuse(f"no page at {request.path[:200]}: check the address", 404)
        return security.refuse(str(error.description), 404)

    @app.errorhandler(405)
    def wrong_method(_error):
        return security.refuse(f"{request.method} is not how {request.path[:200]} is used: its page has the form", 405)

    @app.errorhandler(413)
    def too_large(_error):
        return security.refuse(f"the form is too large (at most {app.config['MAX_CONTENT_LENGTH'] // 1024} KB)", 413)

    @app.errorhandler(RuleError)
    @app.errorhandler(SecretRuleError)
    def bad_rules(error):
        return security.refuse(f"{error} (fix it, then check with `miner rules check`)", 500)

    @app.errorhandler(StoreError)
    def no_store(error):
        return security.refuse(f"{error} (the Health page checks the install)", 503)

    @app.errorhandler(config_mod.ConfigError)
    def bad_settings(error):
        return security.refuse(f"{error} (fix the settings file, then reload)", 500)

    @app.get("/")
    def index():
        if not paths.db_path().exists():  # nothing mined yet: the page that says what to do
            return redirect(url_for("health"))
        return redirect(url_for("memories", project=current()))

    @app.get("/memories")
    def memories():
        state = _choice("state", browse.VIEW_STATES + ("all",), "active")
        category = _choice("category", browse.CATEGORIES, None)
        day = request.args.get("day", "")
        if day and not pages.is_day(day):
            abort(400, f"day must be a date as YYYY-MM-DD, not {day[:40]!r}")
        query = request.args.get("q", "")[:500]
        offset = _int("page", 1, 1) * PAGE_SIZE - PAGE_SIZE
        page = browse.memories(store(), current(), category, state, day or None, query, offset, PAGE_SIZE,
                               glossary.query_forms(query))
        return render_template("memories.html", page=page, facets=browse.facets(store(), current()),
                               state=state, category=category, day=day, query=query, number=offset // PAGE_SIZE + 1,
                               groups=pages.by_day(page.rows, bool(query.strip())))

    @app.get("/said")
    def said():
        query = request.args.get("q", "")[:500]
        number = _int("page", 1, 1)
        found = pages.archive_hits(store(), current(), query, number * PAGE_SIZE + 1,
                                   glossary.query_forms(query)) if query.strip() else []
        return render_template("said.html", query=query, units=found[(number - 1) * PAGE_SIZE:number * PAGE_SIZE],
                               number=number, page={"has_next": len(found) > number * PAGE_SIZE})

    @app.get(f"/memory/{MEMORY_ID}")
    def memory(memory_id: int):
        shown = pages.memory_page(store(), memory_id)
        if shown is None:
            abort(404, f"no memory #{memory_id}; the memories page lists them")
        g.project = shown["memory"].project  # (the header's links stay in its project)
        return render_template("memory.html", **shown)

    def edit(memory_id: int, action, *args):
        import sqlite3

        from ..runtime import exclusions

        if not paths.db_path().exists():  # (a writable store would be made, empty, to say so)
            raise StoreError(f"no memory store at {paths.db_path()}: nothing was changed")
        try:
            with Store() as writable:
                if writable.get(memory_id) is None:
                    abort(404, f"no memory #{memory_id}; the memories page lists them")
                writable.lock_wait_s = EDIT_LOCK_WAIT_S
                change = action(writable, memory_id, *args)
        except (corrections.CorrectionError, exclusions.PrivacyError) as exc:
            flash(str(exc)[:FLASH_CHARS], "error")
            return redirect(url_for("memory", memory_id=memory_id))
        except sqlite3.OperationalError as exc:
            if not locked(exc):
                raise
            flash(f"nothing was changed: the memory store is busy (another process, such as a backfill, kept it "
                  f"locked for {EDIT_LOCK_WAIT_S:.0f} s); try again in a moment", "error")
            return redirect(url_for("memory", memory_id=memory_id))
        lines = change.splitlines() if isinstance(change, str) else list(change.lines)
        for line in lines:  # flashed through the session cookie, which holds 4 kB: a line is cut
            flash(line if len(line) <= FLASH_CHARS else line[:FLASH_CHARS - 1] + "…", "done")
        target = getattr(change, "new_id", None) or memory_id
        return redirect(url_for("memory", memory_id=target))

    @app.post(f"/memory/{MEMORY_ID}/forget")
    def forget(memory_id: int):
        return edit(memory_id, corrections.forget, request.form.get("reason", ""))

    @app.post(f"/memory/{MEMORY_ID}/correct")
    def correct(memory_id: int):  # (the text and the reason whole, as the command takes them: a text too long is
        # refused with its own length)
        return edit(memory_id, corrections.correct, request.form.get("text", ""), request.form.get("reason", ""))

    @app.post(f"/memory/{MEMORY_ID}/pin")
    def pin(memory_id: int):
        return edit(memory_id, corrections.pin, request.form.get("everywhere") == "1")

    @app.post(f"/memory/{MEMORY_ID}/unpin")
    def unpin(memory_id: int):
        return edit(memory_id, corrections.unpin, request.form.get("everywhere") == "1")

    @app.post(f"/memory/{MEMORY_ID}/approve")
    def approve(memory_id: int):
        from ..extract import trust

        return edit(memory_id, trust.approve)

    # What is typed into a form goes in its body (POST), never in an address that the browser's history keeps: a
    # secret pasted to see what would be hidden of it stays out of it. (GET still answers a link.)
    @app.route("/told", methods=["GET", "POST"])
    def told():
        prompt = request.values.get("prompt", "")[:4000]
        return render_template("told.html", prompt=prompt, **pages.told(store(), current(), settings(), prompt))

    @app.get("/sessions")
    def sessions():
        offset = _int("page", 1, 1) * PAGE_SIZE - PAGE_SIZE
        page = browse.sessions(store(), current(), offset, PAGE_SIZE)
        return render_template("sessions.html", page=page, number=offset // PAGE_SIZE + 1)

    @app.get("/session/<path:session_id>")  # (an id may hold a slash)
    def session(session_id: str):
        offset = _int("page", 1, 1) * PAGE_SIZE - PAGE_SIZE
        found = store().session(session_id)
        if found is None:
            abort(404, f"no session {session_id[:80]!r}; the sessions page lists them")
        g.project = found.project or None
        page = browse.session_memories(store(), session_id, offset, PAGE_SIZE)
        return render_template("session.html", session=found, page=page, number=offset // PAGE_SIZE + 1)

    @app.get("/timeline")
    def timeline():
        category = _choice("category", browse.CATEGORIES, None)
        offset = _int("page", 1, 1) * PAGE_SIZE - PAGE_SIZE
        page = browse.memories(store(), current(), category, "active", None, "", offset, PAGE_SIZE)
        return render_template("timeline.html", page=page, category=category, number=offset // PAGE_SIZE + 1,
                               **pages.timeline(store(), current(), page.rows))

    @app.get("/health")
    def health():
        doctor = request.args.get("doctor") == "1"
        try:
            opened, problem = store(), ""
        except StoreError as exc:  # no database yet, or none to use: the lag, the logs and the doctor help then
            opened, problem = None, "" if not paths.db_path().exists() else str(exc)
        try:
            config, broken = settings(), ""
        except config_mod.ConfigError as exc:  # the page that says what is wrong still opens (as `miner doctor`)
            config, broken = config_mod.validated({}), f"{exc}: fix the settings file (until then: the defaults)"
        return render_template("health.html", doctor=doctor, problem=problem, broken_settings=broken,
                               **pages.health(opened, config, doctor))

    @app.route("/rules", methods=["GET", "POST"])
    def rules():
        text = request.values.get("text", "")[:4000]
        role = _choice("role", ("user", "assistant"), "user")
        traced = pages.trace(text, role, settings(), current()) if text.strip() else None
        return render_template("rules.html", text=text, role=role, traced=traced)

    return app
