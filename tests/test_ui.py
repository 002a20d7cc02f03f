"""The web viewer (`miner ui`) over HTTP: a real server process, a real store mined from synthetic sessions.

What a browser does is in test_ui_browser.py; here: the token, CSRF, the Host check, headers, escaping, the
pages and their input errors, paging, and the startup block shown exactly as the hook injects it.
"""

from __future__ import annotations

import html
import os
import re
import socket
import subprocess
import sys
import time
import urllib.parse
from contextlib import contextmanager
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="the viewer's extra (flask) is not installed: pip install -e '.[dev]'")
pytest.importorskip("waitress", reason="the viewer's extra (waitress) is not installed: pip install -e '.[dev]'")

from ui_support import SCRIPT, Client, Listener, Viewer, csrf_token, find_id, seed, session_start_block  # noqa: E402


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    data = seed(tmp_path_factory.mktemp("ui"))
    viewer = Viewer(data["env"], data["app"])
    data["viewer"] = viewer
    yield data
    viewer.stop()


@pytest.fixture(scope="module")
def client(world) -> Client:
    return world["viewer"].client()


def page(world, path: str, **params) -> str:
    query = ("?" + urllib.parse.urlencode(params)) if params else ""
    return world["viewer"].base + path + query


@contextmanager
def viewer_on(env: dict[str, str], project: Path, make=None):
    """`miner ui` on `project` (its folder made), with the store of `env` (`make(db)` writes it first: a store of
    something else, or of an older version), and a client that opened its token address (whatever its first page
    answers: a broken store's is a 503)."""
    import sqlite3

    if make is not None:
        home = Path(env["MINER_HOME"])
        home.mkdir(parents=True)
        db = sqlite3.connect(home / "memory.db")
        make(db)
        db.commit()
        db.close()
    project.mkdir(parents=True, exist_ok=True)
    viewer = Viewer(env, str(project))
    try:
        client = Client()
        client.get(viewer.url)  # (the token's address sets the cookie, and goes to the first page)
        yield viewer, client
    finally:
        viewer.stop()


# --- the token ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", ["/", "/memories", "/memory/1", "/told", "/health", "/static/style.css"])
def test_a_request_without_the_token_is_refused(world, path):
    status, _, body = Client().get(world["viewer"].base + path)
    assert status == 403
    assert "token" in body and "miner ui" in body
    assert "pnpm" not in body  # no memory text leaks into the refusal


def test_a_post_without_the_token_is_refused_before_its_form_is_read(world):
    """403 (not the CSRF check's 400): the token is checked before anything else, for a POST as for a GET."""
    memory_id = find_id(world["env"], "Python 3.12")
    for data in ({"reason": "x"}, {"reason": "x" * 300_000}):  # the second is over the form size limit
        status, _, body = Client().post(world["viewer"].base + f"/memory/{memory_id}/forget", data)
        assert status == 403, body[:200]
        assert "token" in body


def test_a_wrong_token_is_refused_and_sets_no_cookie(world):
    anonymous = Client()
    status, _, _ = anonymous.get(world["viewer"].base + "/memories?token=" + "x" * 43)
    assert status == 403
    assert len(anonymous.jar) == 0
    assert anonymous.get(world["viewer"].base + "/memories")[0] == 403


def test_the_token_address_sets_a_strict_cookie_and_drops_the_token_from_the_address(world):
    fresh = Client()
    status, headers, _ = fresh.get(world["viewer"].url, follow=False)
    assert status == 303
    scope = urllib.parse.urlsplit(world["viewer"].base).path
    assert headers["Location"] == scope + "/"
    cookie = headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and f"Path={scope}/" in cookie
    assert world["viewer"].token in cookie
    # With the cookie alone, every page opens.
    assert fresh.get(world["viewer"].base + "/memories")[0] == 200


def test_no_cookie_of_the_viewer_goes_to_another_server_on_the_same_host(world):
    """Cookies are kept apart by host and path, not by port: with the token's cookie for `/`, a browser that
    visited another local user's server on 127.0.0.1 handed them the token. The viewer's pages and cookies live
    under the run's own path, which that server is never asked for."""
    visitor = world["viewer"].client()
    body = visitor.get(world["viewer"].base + f"/memory/{find_id(world['env'], 'Python 3.12')}")[2]
    assert csrf_token(body)  # the session cookie (the form's CSRF secret) is set by now too
    assert {cookie.name for cookie in visitor.jar} >= {f"miner_ui_{urllib.parse.urlsplit(world['viewer'].base).port}"}
    assert len(visitor.jar) == 2
    other = Listener()
    try:
        for path in ("/", "/memories", "/static/style.css"):
            assert visitor.get(other.url + path)[0] == 200
    finally:
        other.close()
    assert other.cookies == ["", "", ""]
    # The server itself answers nothing outside the run's path, even to the cookie's holder.
    status, _, body = visitor.get(world["viewer"].root + "/memories")
    assert status == 403 and "pnpm" not in body


def test_the_browser_is_opened_with_a_code_that_works_once_and_names_no_path(world, tmp_path):
    """A browser's command line can be read by other local users (`ps`): the address `miner ui` opens carries
    neither the run's token nor its path, only a code that is spent once the browser has used it."""
    recorder = tmp_path / "browser.sh"
    opened = tmp_path / "opened.txt"
    recorder.write_text(f"#!/bin/sh\nprintf '%s' \"$1\" > {opened}\n")
    recorder.chmod(0o700)
    env = dict(world["env"], DISPLAY=":0", BROWSER=str(recorder))
    proc = subprocess.Popen([sys.executable, "-m", "miner.cli", "ui", "--project", world["app"], "--port", "0"],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        printed = ""
        while "token=" not in printed:
            line = proc.stdout.readline()
            assert line, "miner ui exited before printing its address"
            printed = line
        deadline = time.monotonic() + 60
        while not (opened.exists() and opened.read_text()) and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.05)
        launch = opened.read_text()
        token = printed.split("token=")[1].strip()
        scope = urllib.parse.urlsplit(printed.strip()).path
        assert token not in launch and scope.strip("/") not in launch
        assert urllib.parse.urlsplit(launch).path == "/"
        first = Client()
        status, headers, _ = first.get(launch, follow=False)
        assert status == 303 and headers["Location"] == scope
        assert first.get(urllib.parse.urljoin(launch, scope) + "memories")[0] == 200
        status, _, body = Client().get(launch)  # spent: someone who read it on the command line gets nothing
        assert status == 403 and "pnpm" not in body
    finally:
        proc.terminate()
        proc.wait(timeout=30)
        proc.stdout.close()


def test_another_host_name_is_refused_even_with_the_token(world, client):
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host header."""
    port = urllib.parse.urlsplit(world["viewer"].base).port
    status, _, body = client.get(world["viewer"].base + "/memories", headers={"Host": f"evil.example:{port}"})
    assert status == 403
    assert "127.0.0.1" in body
    memory_id = find_id(world["env"], "Python 3.12")
    status, _, _ = client.post(page(world, f"/memory/{memory_id}/unpin"), {"csrf_token": "x"},
                               headers={"Host": f"evil.example:{port}"})
    assert status == 403
    status, _, _ = client.get(world["viewer"].base + "/memories", headers={"Host": f"LocalHost:{port}"})
    assert status == 200  # (a host name is the same in any case)


def test_it_listens_on_the_loopback_interface_only(world):
    port = urllib.parse.urlsplit(world["viewer"].base).port
    if not os.path.exists("/proc/net/tcp"):
        pytest.skip("no /proc/net/tcp to read the listening sockets from (not Linux)")
    with open("/proc/net/tcp", encoding="ascii") as handle:
        listening = handle.read()
    # /proc/net/tcp: local address as hex IP:port, state 0A = LISTEN; 0100007F is 127.0.0.1.
    rows = [line.split() for line in listening.splitlines()[1:]]
    ours = [r[1] for r in rows if r[3] == "0A" and int(r[1].split(":")[1], 16) == port]
    assert ours == ["0100007F:%04X" % port]
    assert not any(r[3] == "0A" and r[1].startswith("00000000:") and int(r[1].split(":")[1], 16) == port
                   for r in rows)


# --- CSRF and headers --------------------------------------------------------------------------


def test_a_post_without_its_csrf_token_changes_nothing(world, client):
    memory_id = find_id(world["env"], "Python 3.12")
    status, _, body = client.post(page(world, f"/memory/{memory_id}/forget"), {"reason": "no csrf"})
    assert status == 400
    assert "reload the page" in body
    status, _, body = client.post(page(world, f"/memory/{memory_id}/forget"),
                                  {"reason": "forged", "csrf_token": "not-the-token"})
    assert status == 400
    assert ">active<" in client.get(page(world, f"/memory/{memory_id}"))[2]


def test_a_post_with_its_csrf_token_goes_through(world, client):
    memory_id = find_id(world["env"], "Python 3.12")
    token = csrf_token(client.get(page(world, f"/memory/{memory_id}"))[2])
    status, _, body = client.post(page(world, f"/memory/{memory_id}/unpin"), {"csrf_token": token})
    assert status == 200  # after the redirect back to the memory
    assert f"#{memory_id} was not pinned" in body


def test_a_long_correction_keeps_the_session_working(world, client):
    """What an edit says is flashed through the session cookie: a long text must not push it over 4 kB (a
    browser drops such a cookie, and the CSRF token in it)."""
    memory_id = find_id(world["env"], "Kotlin")
    token = csrf_token(client.get(page(world, f"/memory/{memory_id}"))[2])
    text = "We decided to write the mobile client in Kotlin " + "and keep it small " * 200 + "."
    status, _, body = client.post(page(world, f"/memory/{memory_id}/correct"), {"csrf_token": token, "text": text})
    assert status == 200 and "a memory holds at most 1,000" in body  # too long to keep: said, nothing changed
    assert all(len(cookie.value) < 4000 for cookie in client.jar)
    text = "We decided to write the mobile client in Kotlin " + "and keep it small " * 52 + "."
    status, _, body = client.post(page(world, f"/memory/{memory_id}/correct"), {"csrf_token": token, "text": text})
    assert status == 200
    assert "superseded by" in body
    assert all(len(cookie.value) < 4000 for cookie in client.jar)
    new_id = find_id(world["env"], "and keep it small and keep it small")
    token = csrf_token(client.get(page(world, f"/memory/{new_id}"))[2])
    status, _, body = client.post(page(world, f"/memory/{new_id}/unpin"), {"csrf_token": token})
    assert status == 200 and f"#{new_id} was not pinned" in body


def test_a_pin_in_every_project_is_undone_from_the_page(world, client):
    """Unpin left the memory recalled in every project, and the page offered nothing to keep it to its own."""
    memory_id = find_id(world["env"], "Netlify")
    token = csrf_token(client.get(page(world, f"/memory/{memory_id}"))[2])
    status, _, body = client.post(page(world, f"/memory/{memory_id}/pin"), {"csrf_token": token, "everywhere": "1"})
    assert status == 200 and "is now recalled in every project" in body
    assert 'id="unpin-global"' in body and "Unpin, Recall in its own project only" in body
    status, _, body = client.post(page(world, f"/memory/{memory_id}/unpin"), {"csrf_token": token, "everywhere": "1"})
    assert status == 200 and "is recalled in its own project only again" in html.unescape(body), body
    assert "<dd>project</dd>" in body and 'id="unpin-global"' not in body and 'id="unpin"' not in body


def test_a_reason_and_a_correction_are_taken_whole_as_the_commands_take_them(world, client):
    """The page cut a reason at 500 characters and a correction at 4,000 (and then said the cut text's length)."""
    memory_id = find_id(world["env"], "short commit messages")
    token = csrf_token(client.get(page(world, f"/memory/{memory_id}"))[2])
    text = "I prefer short commit messages " + "in the imperative mood " * 430
    status, _, body = client.post(page(world, f"/memory/{memory_id}/correct"), {"csrf_token": token, "text": text})
    assert status == 200 and f"the new text is {len(text.strip()):,} characters" in html.unescape(body), body
    reason = "squash merges keep the history short " * 40
    status, _, body = client.post(page(world, f"/memory/{memory_id}/forget"), {"csrf_token": token, "reason": reason})
    assert status == 200 and "forgotten" in body
    shown = subprocess.run([sys.executable, "-m", "miner.cli", "show", str(memory_id)], env=world["env"],
                           capture_output=True, text=True, timeout=60)
    assert " ".join(reason.split()) in " ".join(shown.stdout.split()), shown.stdout


def test_what_was_said_outside_any_session_is_listed_without_a_link_to_no_session(tmp_path):
    """A transcript whose entries have no sessionId: its units linked to /session/, a page that does not exist."""
    import json as json_mod

    from ui_support import environment, transcript_path

    from tests.builders import Session

    env = environment(tmp_path)
    project = tmp_path / "work" / "nosid"
    project.mkdir(parents=True)
    path = transcript_path(env, project, "s1")
    session = Session(path, str(project))
    session.user("We decided to run the cron cleanup job at midnight.")
    session.assistant("The cron cleanup job now runs at midnight.")
    entries = [json_mod.loads(line) for line in path.read_text().splitlines()]
    path.write_text("".join(json_mod.dumps({k: v for k, v in e.items() if k != "sessionId"}) + "\n"
                            for e in entries))
    mined = subprocess.run([sys.executable, "-m", "miner.cli", "mine", "--all", "-q"], env=env, capture_output=True,
                           text=True, timeout=300)
    assert mined.returncode == 0, mined.stderr
    viewer = Viewer(env, str(project))
    try:
        client = viewer.client()
        status, _, body = client.get(viewer.base + "/said?" + urllib.parse.urlencode({"q": "cron",
                                                                                     "project": str(project)}))
    finally:
        viewer.stop()
    assert status == 200 and "cron cleanup job" in body, body
    assert "/session/\"" not in body and "no session id" in body, body


def test_a_get_never_changes_anything(world, client):
    memory_id = find_id(world["env"], "Python 3.12")
    status, _, _ = client.get(page(world, f"/memory/{memory_id}/forget"))
    assert status == 405
    assert ">active<" in client.get(page(world, f"/memory/{memory_id}"))[2]


def test_every_answer_carries_the_security_headers(world, client):
    for path in ("/memories", "/static/style.css"):
        _, headers, _ = client.get(page(world, path))
        assert "script-src" not in headers["Content-Security-Policy"]  # default-src 'none': no script at all
        assert "default-src 'none'" in headers["Content-Security-Policy"]
        assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
        assert headers["X-Content-Type-Options"] == "nosniff"
        assert headers["Referrer-Policy"] == "no-referrer"
        assert headers["Cache-Control"] == "no-store"
    _, headers, _ = Client().get(world["viewer"].base + "/memories")
    assert "default-src 'none'" in headers["Content-Security-Policy"]  # the refusal too


def test_memory_text_is_escaped_everywhere_it_is_shown(world, client):
    memory_id = find_id(world["env"], "<script>")
    pages = [client.get(page(world, f"/memory/{memory_id}"))[2], client.get(page(world, "/memories"))[2],
             client.get(page(world, "/told"))[2], client.get(page(world, "/timeline"))[2],
             client.get(page(world, "/memories", q="docs page"))[2]]
    for body in pages:
        assert SCRIPT not in body
        assert SCRIPT in html.unescape(body)  # shown, as text
        assert "<script" not in body.lower()


# --- pages ------------------------------------------------------------------------------------


def test_the_memories_page_filters_by_category_state_and_day_and_searches(world, client):
    body = client.get(page(world, "/memories"))[2]
    assert "We decided to use pnpm for every package" in body
    assert "always run curl" not in body  # quarantined: not among the active ones
    todos = client.get(page(world, "/memories", category="todo"))[2]
    assert "migrate the CI cache" in todos and "pnpm for every package" not in todos
    quarantined = client.get(page(world, "/memories", state="quarantined"))[2]
    assert "always run curl" in quarantined and "migrate the CI cache" not in quarantined
    day = client.get(page(world, "/memories", day="2026-03-04"))[2]
    assert "Python 3.12" in day and "Netlify" not in day
    found = client.get(page(world, "/memories", q="Netlify frontend"))[2]
    assert "Netlify" in found and "imperative mood" not in found
    in_chinese = client.get(page(world, "/memories", q="前端"))[2]  # the glossary's word for "frontend"
    assert "Netlify" in in_chinese and "imperative mood" not in in_chinese
    assert "Netlify" in client.get(page(world, "/said", q="前端"))[2]
    other = client.get(page(world, "/memories", project=world["other"]))[2]
    assert "Kotlin" in other and "Netlify" not in other


def test_a_search_also_finds_what_was_said_in_the_archive(world, client):
    body = client.get(page(world, "/memories", q="lockfile"))[2]
    assert 'id="search-said"' in body  # the memories found; a link to what was said
    said = client.get(page(world, "/said", q="lockfile"))[2]
    assert "pnpm-lock.yaml" in said
    assert "imperative mood" not in said  # what does not match is not listed


def test_what_was_said_comes_fifty_to_a_page_and_every_match_can_be_reached(world, client):
    """The page listed the 50 best matches and nothing past them, without a word: the rest was out of reach."""
    from miner.memory.store import Store

    project = str(Path(world["app"]).parent / "said-many")
    rows = [(project, "dddddddd-0000-4000-8000-00000000000d", "/t.jsonl", f"said-{n}", 0, "user",
             f"2026-03-0{1 + n % 9}T10:00:00Z", f"We decided that service number {n} uses port {9000 + n} in staging.",
             "", 0.5) for n in range(130)]
    with Store(Path(world["env"]["MINER_HOME"]) / "memory.db") as store, store.atomic():
        store.archive_units(rows)
    seen: list[int] = []
    for number, has_next in ((1, True), (2, True), (3, False)):
        body = client.get(page(world, "/said", project=project, q="service port staging", page=str(number)))[2]
        on_page = [int(n) for n in re.findall(r"service number (\d+) uses", body)]
        assert len(on_page) == (50 if has_next else 30)
        assert ('rel="next"' in body) == has_next and ('rel="prev"' in body) == (number > 1), body
        seen += on_page
    assert sorted(seen) == list(range(130))


def test_the_rules_page_answers_for_a_project_no_folder_can_be(world, client):
    """A folder's name over the system's limit in `project` gave Flask's bare 500 page (the project's own rule
    file was looked for there, and the look-up raised)."""
    status, _, body = client.get(page(world, "/rules", text="We decided to use Redis for the job queue.",
                                      role="user", project="/tmp/" + "b" * 256))
    assert status == 200 and re.search(r'<p class="candidate">decision: We decided to use Redis', body), body[:300]


def test_the_memory_page_shows_provenance_with_the_surrounding_turns_and_history(world, client):
    memory_id = find_id(world["env"], "Netlify")
    body = client.get(page(world, f"/memory/{memory_id}"))[2]
    assert world["sessions"]["app"][0] in body  # the session
    assert "2026-03-01T10:" in body  # when
    import sqlite3

    db = sqlite3.connect(f"{world['env']['MINER_HOME']}/memory.db")
    rule, confidence = db.execute("SELECT rule_id, confidence FROM memories WHERE id = ?", (memory_id,)).fetchone()
    db.close()
    assert rule and f"{rule} · source mined · confidence {confidence:.2f}" in html.unescape(body)
    turns = re.search(r'<ol class="turns">(.*?)</ol>', body, re.S).group(1)
    assert "db-staging.internal" in turns  # the turn before
    assert "migrate the CI cache" in turns  # the turn after
    assert 'class="user own"' in turns
    assert "History" in body


def test_the_startup_block_is_shown_exactly_as_the_hook_injects_it(world, client):
    body = client.get(page(world, "/told"))[2]
    shown = html.unescape(re.search(r'<pre id="block" class="block">(.*?)</pre>', body, re.S).group(1))
    assert shown == session_start_block(world["env"], world["app"], world["sessions"]["app"])
    assert "Each item's score" in body and "recency" in body


def test_the_block_for_a_typed_prompt_is_shown(world, client):
    body = client.get(page(world, "/told", prompt="where is the staging database hosted"))[2]
    block = html.unescape(re.search(r'<pre id="prompt-block" class="block">(.*?)</pre>', body, re.S).group(1))
    assert "db-staging.internal" in block
    nothing = client.get(page(world, "/told", prompt="zebra quantum marmalade"))[2]
    assert "would add nothing" in nothing


def test_sessions_and_what_each_one_said(world, client):
    body = client.get(page(world, "/sessions"))[2]
    assert world["sessions"]["app"][0][:8] in body
    session = client.get(page(world, f"/session/{world['sessions']['app'][0]}"))[2]
    assert "Netlify" in session and "first said here" in session
    assert "Python 3.12" not in session  # said in the second session


def test_the_timeline_places_each_memory_on_the_projects_span(world, client):
    body = client.get(page(world, "/timeline"))[2]
    bars = re.findall(r'<rect class="span (\w+)" x="([\d.]+)" y="1" width="([\d.]+)"', body)
    assert len(bars) >= 5
    xs = {float(x) for _, x, _ in bars}
    assert min(xs) == 0.0 and max(xs) > 50  # the first session's memories start the span, the second's sit later


def test_health_shows_counts_lag_hook_errors_and_the_recall_latencies(world, client):
    from pathlib import Path

    session_start_block(world["env"], world["app"], world["sessions"]["app"])  # logs a recall
    body = client.get(page(world, "/health"))[2]
    assert "Memories" in body and "Mining lag" in body
    assert re.search(r'id="lag">0 of 3 transcripts have lines not mined', body)
    assert re.search(r"<td>startup</td><td>\d+</td>", body)  # a latency row
    # A transcript never mined is behind by all of it; a hook's error shows with the log's other lines.
    unmined = Path(world["env"]["CLAUDE_CONFIG_DIR"]) / "projects" / "-elsewhere" / "new.jsonl"
    unmined.parent.mkdir(parents=True)
    unmined.write_text('{"type": "user"}\n')
    logs = Path(world["env"]["MINER_HOME"]) / "logs"
    logs.mkdir(exist_ok=True)
    with open(logs / "hooks.log", "a", encoding="utf-8") as handle:
        handle.write("2026-03-09T10:00:00 SessionStart no recall block: OperationalError: disk I/O error\n")
    body = client.get(page(world, "/health"))[2]
    assert re.search(r'id="lag">1 of 4 transcripts have lines not mined', body)
    assert str(unmined) in body
    assert "disk I/O error" in body
    unmined.unlink()


def test_the_rules_page_traces_a_sentence_with_the_rules_as_they_are_now(world, client):
    from pathlib import Path

    body = client.get(page(world, "/rules", text="We decided to use Redis for the job queue.", role="user"))[2]
    assert re.search(r'<p class="candidate">decision: We decided to use Redis', body)
    assert "classifier: none" in body  # the shipped classifier's probabilities
    assert "user.fact.zorblax" not in body
    # A rule the user adds now is used at once, without restarting the viewer.
    rules = Path(world["env"]["XDG_CONFIG_HOME"]) / "miner" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "mine.yaml").write_text(
        "lang: en\nrules:\n  - id: user.fact.zorblax\n    category: fact\n    roles: [user]\n    confidence: 0.9\n"
        "    patterns:\n      - '(?i)\\bzorblax\\b'\n")
    body = client.get(page(world, "/rules", text="The zorblax runs on port 9000.", role="user"))[2]
    (rules / "mine.yaml").unlink()
    assert "user.fact.zorblax" in body


@pytest.mark.parametrize("params, words", [
    ({"page": "abc"}, "page must be a whole number"),
    ({"state": "deleted"}, "state must be one of"),
    ({"category": "idea"}, "category must be one of"),
    ({"day": "2026-13-01"}, "day must be a date"),
])
def test_bad_input_is_one_clear_line(world, client, params, words):
    status, _, body = client.get(page(world, "/memories", **params))
    assert status == 400
    assert words in body


def test_an_unknown_memory_is_a_404_that_says_where_to_look(world, client):
    status, _, body = client.get(page(world, "/memory/999999"))
    assert status == 404 and "no memory #999999" in body


def test_an_id_no_store_can_hold_is_a_404_not_a_server_error(world, client):
    huge = 2**63
    assert client.get(page(world, f"/memory/{huge}"))[0] == 404
    token = csrf_token(client.get(page(world, f"/memory/{find_id(world['env'], 'Python 3.12')}"))[2])
    status, _, body = client.post(page(world, f"/memory/{huge}/forget"), {"csrf_token": token, "reason": "x"})
    assert status == 404 and "Traceback" not in body


def test_an_edit_of_a_memory_that_is_not_there_says_so_on_its_page(world, client):
    """It flashed the miss and redirected to the memory's page, a 404 that shows no flash (the line showed on some
    later page instead)."""
    token = csrf_token(client.get(page(world, f"/memory/{find_id(world['env'], 'Python 3.12')}"))[2])
    status, _, body = client.post(page(world, "/memory/999999/pin"), {"csrf_token": token})
    assert status == 404 and "no memory #999999; the memories page lists them" in body
    assert "no memory" not in client.get(page(world, "/memories"))[2]


def test_an_edit_while_another_process_holds_the_store_is_one_line_and_changes_nothing(world, client):
    """It waited a minute holding one of the server's threads, then answered a bare 500."""
    import sqlite3

    memory_id = find_id(world["env"], "Python 3.12")
    token = csrf_token(client.get(page(world, f"/memory/{memory_id}"))[2])
    holder = sqlite3.connect(Path(world["env"]["MINER_HOME"]) / "memory.db", isolation_level=None)
    try:
        holder.execute("BEGIN IMMEDIATE")
        status, _, body = client.post(page(world, f"/memory/{memory_id}/pin"), {"csrf_token": token})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert status == 200 and "nothing was changed: the memory store is busy" in body
    assert "pinned" not in client.get(page(world, f"/memory/{memory_id}"))[2].lower().split("<h1")[1][:400]


def test_pages_that_are_not_there_and_forms_too_large_are_one_line(world, client):
    status, _, body = client.get(page(world, "/nowhere"))
    assert status == 404 and "no page at /nowhere: check the address" in body
    token = csrf_token(client.get(page(world, f"/memory/{find_id(world['env'], 'Python 3.12')}"))[2])
    status, _, body = client.post(page(world, "/memory/1/correct"), {"csrf_token": token, "text": "x" * 300_000})
    assert status == 413 and "the form is too large (at most 256 KB)" in body


def test_a_day_at_the_end_of_the_calendar_is_an_empty_list_not_a_server_error(world, client):
    status, _, body = client.get(page(world, "/memories", day="9999-12-31"))
    assert status == 200 and "pnpm" not in body


def test_a_broken_rule_file_is_one_line_on_the_rules_page(world, client):
    rules = Path(world["env"]["XDG_CONFIG_HOME"]) / "miner" / "rules"
    rules.mkdir(parents=True, exist_ok=True)
    (rules / "broken.yaml").write_text("rules:\n  - id: user.broken\n    category: nonsense\n    patterns: ['x']\n")
    try:
        status, _, body = client.get(page(world, "/rules", text="We decided to use Redis.", role="user"))
    finally:
        (rules / "broken.yaml").unlink()
    assert status == 500 and "broken.yaml" in body and "miner rules check" in body


def test_a_busy_port_is_one_line_and_a_non_zero_exit(world):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = subprocess.run([sys.executable, "-m", "miner.cli", "ui", "--no-browser", "--port", str(port)],
                                env=world["env"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert result.stderr.strip().startswith("Error: cannot listen on 127.0.0.1:")
    assert len(result.stderr.strip().splitlines()) == 1


def test_paging_at_the_server(tmp_path):
    """A page holds 50 memories; the next page the rest; the total is counted, not listed."""
    from miner.memory import browse
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    with Store(tmp_path / "m.db") as store:
        with store.atomic():
            for n in range(120):
                store.insert_memory(NewMemory(
                    project="/p", category="fact", text=f"Fact number {n} about component c{n}.", confidence=0.7,
                    rule_id="test", role="user", session_id="s", transcript="t", entry_uuid=f"u{n}",
                    ts=f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.00Z"))
        first = browse.memories(store, "/p", offset=0, limit=50)
        third = browse.memories(store, "/p", offset=100, limit=50)
        searched = browse.memories(store, "/p", query="c7", offset=0, limit=50)
    assert first.total == 120 and len(first.rows) == 50 and first.has_next
    assert first.rows[0].text.startswith("Fact number 119")  # newest said first
    assert len(third.rows) == 20 and not third.has_next
    assert [m.text for m in searched.rows] == ["Fact number 7 about component c7."]


def test_an_excluded_project_is_told_nothing(world, client):
    """Last in this file: it excludes the `other` project for the rest of the module."""
    assert "Kotlin" in client.get(page(world, "/told", project=world["other"], prompt="mobile client Kotlin"))[2]
    done = subprocess.run([sys.executable, "-m", "miner.cli", "exclude", "add", world["other"]], env=world["env"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    body = client.get(page(world, "/told", project=world["other"], prompt="mobile client Kotlin"))[2]
    assert "this project is excluded" in body
    assert 'id="prompt-block"' not in body and "Kotlin" not in body.split("<h1", 1)[1].split("</h1>", 1)[1]


def test_paging_past_the_count_cap_ends(tmp_path):
    """Over COUNT_CAP memories the total says "10000+", and the last page still has no next page."""
    from miner.memory import browse
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    with Store(tmp_path / "m.db") as store:
        with store.atomic():
            for n in range(browse.COUNT_CAP + 60):
                store.insert_memory(NewMemory(
                    project="/p", category="fact", text=f"Fact {n}.", confidence=0.7, rule_id="test", role="user",
                    session_id="s", transcript="t", entry_uuid=f"u{n}", ts="2026-03-01T10:00:00.00Z"))
        last = browse.memories(store, "/p", offset=browse.COUNT_CAP, limit=50)
        beyond = browse.memories(store, "/p", offset=browse.COUNT_CAP + 100, limit=50)
        every = browse.memories(store, "/p", state="all", offset=0, limit=50)
    assert last.total == browse.COUNT_CAP and last.more
    assert len(last.rows) == 50 and last.has_next
    assert beyond.rows == [] and not beyond.has_next
    assert len(every.rows) == 50 and every.has_next


def test_a_session_whose_id_holds_a_slash_opens(tmp_path):
    """Its link led to a 404: the route took one path segment."""
    from ui_support import environment

    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    env = environment(tmp_path)
    session_id = "team/alpha?x=1#frag"
    with Store(Path(env["MINER_HOME"]) / "memory.db") as store, store.atomic():
        store.upsert_session(session_id, "/p", "/p", "main", "t.jsonl", "2026-03-01T10:00:00.00Z")
        store.insert_memory(NewMemory(
            project="/p", category="decision", text="We decided to ship the exporter on Fridays.", confidence=0.9,
            rule_id="test", role="user", session_id=session_id, transcript="t.jsonl", entry_uuid="u1",
            ts="2026-03-01T10:00:00.00Z"))
    viewer = Viewer(env, "/p")
    try:
        client = viewer.client()
        listed = client.get(viewer.base + "/sessions?project=%2Fp")[2]
        link = re.search(r'href="([^"]*/session/[^"]+)"', listed)
        assert link, listed
        status, _, body = client.get(viewer.root + html.unescape(link.group(1)))
    finally:
        viewer.stop()
    assert status == 200 and "ship the exporter on Fridays" in body


def test_no_escape_sequence_or_direction_override_in_a_store_reaches_a_page(world, client):
    """A store an older version mined may hold a terminal's escape sequences and bidirectional overrides in a memory:
    the pages showed them raw (HTML escaping leaves them)."""
    code = ("from miner.memory.records import NewMemory\nfrom miner.memory.store import Store\n"
            "with Store() as store, store.atomic():\n"
            "    print(store.add_memory(NewMemory(project=%r, category='fact', confidence=0.9, rule_id='r',"
            " role='user',"
            " text='The status banner prints \\x1b[31mRED\\x1b[0m then \\x1b]0;title\\x07 and \\u202eevil\\u202c.',"
            " session_id='s9', transcript='/t.jsonl', entry_uuid='u9', ts='2026-03-06T10:00:00Z'))[0])" % world["app"])
    added = subprocess.run([sys.executable, "-c", code], env=world["env"], capture_output=True, text=True, timeout=60)
    assert added.returncode == 0, added.stderr
    memory_id = int(added.stdout)
    bodies = [client.get(page(world, f"/memory/{memory_id}"))[2], client.get(page(world, "/memories", q="banner"))[2]]
    assert all("status banner prints" in body for body in bodies)
    assert not any(c in body for body in bodies for c in "\x1b\x07\u202e\u202c"), bodies


def test_the_pages_show_no_secret_an_older_version_stored_before_the_repair_has_run(tmp_path):
    """The commands, the hooks and the MCP tools redact on the way out while the repair of an upgrade is pending; the
    viewer showed the password in clear on the memory, search and session pages."""
    from ui_support import environment

    from miner.memory import repair
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    env = environment(tmp_path)
    secret = "Hq8#vT3kW9pLx2"
    session_id = "cccccccc-0000-4000-8000-000000000001"
    with Store(Path(env["MINER_HOME"]) / "memory.db") as store, store.atomic() as db:
        store.upsert_session(session_id, "/p", "/p", "main", "t.jsonl", "2026-03-01T10:00:00.00Z")
        memory_id = store.add_memory(NewMemory(
            project="/p", category="fact", text=f"The staging keychain password is {secret} for release builds.",
            confidence=0.9, rule_id="r", role="user", session_id=session_id, transcript="t.jsonl", entry_uuid="u0",
            ts="2026-03-01T10:00:00.00Z"))[0]
        db.execute("DELETE FROM counters WHERE name = ?", (repair.VERSION_COUNTER,))  # as an older version left it
    viewer = Viewer(env, "/p")
    try:
        client = viewer.client()
        bodies = [client.get(viewer.base + path)[2] for path in (
            f"/memory/{memory_id}", "/memories?project=%2Fp&q=keychain", f"/session/{session_id}?project=%2Fp",
            "/told?project=%2Fp&prompt=what+is+the+staging+keychain+password")]
    finally:
        viewer.stop()
    for body in bodies:
        assert "staging keychain password is [REDACTED:" in html.unescape(body) and secret not in body, body


def test_a_database_of_something_else_is_a_clear_503_not_a_server_error(tmp_path):
    """A valid SQLite file that is no memory store (MINER_HOME pointed at another tool's folder) gave a bare 500 on
    every page, the traceback on the server's stderr only; MCP and the CLI said what it is."""
    from ui_support import environment

    env = environment(tmp_path)
    with viewer_on(env, tmp_path / "work" / "app", lambda db: db.execute("CREATE TABLE orders (id INTEGER)")) as (
            viewer, client):
        for path in ("/", "/memories", "/said?q=deploy", "/timeline"):
            status, _, body = client.get(viewer.base + path)
            assert status == 503 and "a database of something else" in html.unescape(body), (path, status, body)
        status, _, body = client.get(viewer.base + "/health")
        assert status == 200 and "a database of something else" in html.unescape(body), body


def test_a_quarantined_memory_corrected_once_offers_its_current_version_not_approve_nor_correct(world, client):
    """Once corrected, a quarantined memory stays quarantined, linked to its correction; the page still offered
    "Approve" and "Correct to", and both were refused on submit."""
    memory_id = find_id(world["env"], "always run curl")
    token = csrf_token(client.get(page(world, f"/memory/{memory_id}"))[2])
    before = client.get(page(world, f"/memory/{memory_id}"))[2]
    assert 'id="approve"' in before and 'id="correct"' in before and 'id="corrected-to"' not in before
    status, _, body = client.post(page(world, f"/memory/{memory_id}/correct"),
                                  {"csrf_token": token, "text": "Run the smoke tests before the release."})
    assert status == 200 and "stays quarantined" in body, body
    new_id = find_id(world["env"], "Run the smoke tests before the release.")
    after = client.get(page(world, f"/memory/{memory_id}"))[2]
    assert 'id="approve"' not in after and 'id="correct"' not in after, after
    corrected = after.split('id="corrected-to">', 1)[1].split("</p>", 1)[0]
    assert f'/memory/{new_id}">#{new_id}</a> is its current version' in corrected, after
    assert 'id="forget"' in after  # it can still be forgotten


def test_the_health_page_opens_with_a_broken_settings_file_and_says_what_is_wrong(world, client):
    """Every error page sends the user to the Health page, which answered a 500 itself when the settings file was
    broken."""
    config = Path(world["env"]["XDG_CONFIG_HOME"]) / "miner" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text('{"prompt_block_chars": "abc",', encoding="utf-8")
    try:
        status, _, body = client.get(page(world, "/health"))
    finally:
        config.unlink()
    assert status == 200, body
    shown = html.unescape(body.split('id="broken-settings">', 1)[1].split("</p>", 1)[0])
    assert "config.json" in shown and "fix the settings file" in shown, shown
    assert 'id="memory-count"' in body  # the rest of the page is there


def test_the_header_of_a_memory_or_session_of_another_project_stays_in_that_project(world, client):
    """The viewer started on one project; a memory page of another sent the header's links back to the first."""
    import sqlite3

    other = world["other"]
    db = sqlite3.connect(Path(world["env"]["MINER_HOME"]) / "memory.db")
    memory_id = db.execute("SELECT MIN(id) FROM memories WHERE project = ?", (other,)).fetchone()[0]
    db.close()
    session_id = world["sessions"]["other"][0]
    for path in (f"/memory/{memory_id}", f"/session/{session_id}"):
        status, _, body = client.get(page(world, path))
        header = body.split("<nav>", 1)[1].split("</nav>", 1)[0]
        assert status == 200 and header.count(f"project={other}\"") == 6, (path, header)


def test_a_page_past_the_last_search_hit_counts_the_hits(tmp_path):
    """A ranked search is not counted; a page past its last hit said there were as many hits as the pages before
    it hold (150, then 200 on the next)."""
    from miner.memory import browse
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    with Store(tmp_path / "m.db") as store:
        with store.atomic():
            for n in range(60):
                store.insert_memory(NewMemory(
                    project="/p", category="fact", text=f"Redis note number {n}.", confidence=0.7, rule_id="test",
                    role="user", session_id="s", transcript="t", entry_uuid=f"u{n}",
                    ts=f"2026-03-01T10:{n // 60:02d}:{n % 60:02d}.00Z"))
        past = [browse.memories(store, "/p", query="redis", offset=offset, limit=50) for offset in (100, 150)]
        second = browse.memories(store, "/p", query="redis", offset=50, limit=50)
    assert [(len(p.rows), p.total, p.has_next) for p in past] == [(0, 60, False), (0, 60, False)]
    assert (len(second.rows), second.total, second.has_next) == (10, 60, False)


def test_a_wrong_method_is_a_page_with_a_way_back(world, client):
    memory_id = find_id(world["env"], "Python 3.12")
    status, _, body = client.get(page(world, f"/memory/{memory_id}/forget"))
    assert status == 405 and "its page has the form" in body, body
    assert "/health" in body and "/memories" in body  # (every error page links back)


def test_edits_on_a_viewer_without_a_store_make_none_and_history_ends_each_version_as_the_command_does(tmp_path):
    """Three things a user met on a viewer of their own store: an edit with no store made an empty one (and said only
    "no memory #1"); the history showed a forgotten version "→ now", as if current beside its correction; an approval
    that closed an older memory was flashed as one line with its line break in it."""
    from ui_support import environment, transcript_path

    from tests.builders import Session

    env = environment(tmp_path)
    app = tmp_path / "work" / "app"
    with viewer_on(env, app) as (viewer, client):
        token = csrf_token(client.get(viewer.base + "/rules")[2])
        status, _, body = client.post(viewer.base + "/memory/1/forget", {"csrf_token": token, "reason": "x"})
        assert status == 503 and "nothing was changed" in html.unescape(body), body
        assert not (Path(env["MINER_HOME"]) / "memory.db").exists()
    session = Session(transcript_path(env, app, "s1"), str(app), session_id="s1", start="2026-03-01T10:00:00")
    session.user("We decided to use yarn as the package manager.")
    session.user("We decided to write the release notes by hand.")
    session.assistant("From now on we decided to use npm as the package manager.")
    mined = subprocess.run([sys.executable, "-m", "miner.cli", "mine", "--all", "-q"], env=env, capture_output=True,
                           text=True, timeout=300)
    assert mined.returncode == 0, mined.stderr
    with viewer_on(env, app) as (viewer, client):
        notes = find_id(env, "release notes")
        token = csrf_token(client.get(viewer.base + f"/memory/{notes}")[2])
        client.post(viewer.base + f"/memory/{notes}/forget", {"csrf_token": token, "reason": "wrong"})
        status, _, body = client.post(viewer.base + f"/memory/{notes}/correct",
                                      {"csrf_token": token, "text": "We decided to generate the release notes."})
        assert status == 200, body
        history = html.unescape(client.get(viewer.base + f"/memory/{notes}")[2].split('id="history"', 1)[1])
        assert history.count("→ now") == 1 and "→ forgotten" in history, history
        npm = find_id(env, "use npm")
        status, _, body = client.post(viewer.base + f"/memory/{npm}/approve", {"csrf_token": token})
        flashed = body.split('<ul class="flash">', 1)[1].split("</ul>", 1)[0]
        assert status == 200 and flashed.count("<li") >= 2 and "\n" not in flashed.replace("</li>\n", ""), flashed


def test_what_was_said_on_a_store_from_before_the_archive_says_how_to_upgrade_it(tmp_path):
    """The viewer opens a store read-only and never upgrades it: on one from before the archive the search of
    what was said was a bare 500 (no such table)."""
    from ui_support import environment

    from miner.memory import migrations

    def older(db) -> None:  # as a version before the archive left it
        db.execute("CREATE TABLE migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        for migration in migrations.MIGRATIONS[:5]:  # the archive came with m006
            migration(db)
            db.execute("INSERT INTO migrations VALUES (?, '2025-01-01T00:00:00Z')", (migration.__name__,))

    env = environment(tmp_path)
    with viewer_on(env, tmp_path / "work" / "app", older) as (viewer, client):
        status, _, body = client.get(viewer.base + "/said?q=pnpm")
        assert status == 503 and "upgrades it" in html.unescape(body), (status, body)
