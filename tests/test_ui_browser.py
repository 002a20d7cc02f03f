"""The web viewer in a real browser: Playwright drives Debian's Chromium against `miner ui` as a process.

Each edit made by clicking is checked where it matters: in the block the SessionStart hook injects next,
run as Claude Code runs it. Skipped, with the reason, when Chromium or Playwright is not installed
(`./install.sh --test` installs Debian's chromium package when it can).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("flask", reason="the viewer's extra (flask) is not installed: pip install -e '.[dev]'")
sync_api = pytest.importorskip("playwright.sync_api",
                               reason="Playwright is not installed: pip install -e '.[dev]' (./install.sh --test)")

from ui_support import CHROMIUM_ARGS, SCRIPT, Listener, Viewer, find_id, seed, session_start_block  # noqa: E402

CHROMIUM = os.environ.get("MINER_TEST_CHROMIUM", "/usr/bin/chromium")
CROWD = 160  # memories in the crowded project: more than a startup block holds


def crowd(env: dict[str, str], project: str) -> None:
    """A project with more memories than a block holds, and one old, unsure one the budget leaves out."""
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    topics = ["parser", "scheduler", "exporter", "gateway", "renderer", "indexer", "importer", "notifier"]
    with Store(Path(env["MINER_HOME"]) / "memory.db") as store, store.atomic():
        for n in range(CROWD):
            store.insert_memory(NewMemory(
                project=project, category="decision", confidence=0.9, rule_id="test", role="user", session_id="c",
                transcript="", entry_uuid=f"crowd-{n}", ts=f"2026-04-{1 + n % 28:02d}T10:00:00.00Z",
                text=f"We decided that the {topics[n % 8]} module number {n} keeps its own retry budget of {n} ms."))
        store.insert_memory(NewMemory(
            project=project, category="decision", confidence=0.3, rule_id="test", role="assistant", session_id="c",
            transcript="", entry_uuid="crowd-old", ts="2025-01-01T10:00:00.00Z",
            text="We decided to call the release train Bluebird."))


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"Chromium is not installed at {CHROMIUM}: ./install.sh --test installs Debian's chromium "
                    "package when it runs as root or with sudo (or set MINER_TEST_CHROMIUM)")
    data = seed(tmp_path_factory.mktemp("ui-browser"))
    data["crowded"] = str(Path(data["app"]).parent / "crowded")
    crowd(data["env"], data["crowded"])
    viewer = Viewer(data["env"], data["app"])
    data["viewer"] = viewer
    yield data
    viewer.stop()


@pytest.fixture(scope="module")
def browser(world):
    with sync_api.sync_playwright() as playwright:
        try:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        except Exception as exc:  # noqa: BLE001 - a browser that cannot start is a reason to skip, said
            pytest.skip(f"Chromium at {CHROMIUM} does not start: {str(exc).splitlines()[0]}")
        yield chromium
        chromium.close()


@pytest.fixture
def page(world, browser):
    """A fresh browser context that opened the token address; any dialog (an injected alert) fails the test."""
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    tab = context.new_page()
    dialogs: list[str] = []
    tab.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    tab.goto(world["viewer"].url)
    yield tab
    context.close()
    assert dialogs == [], f"a script ran: {dialogs}"


def block(world, project_key: str = "app") -> str:
    project = world[project_key]
    session = world["sessions"].get(project_key, ("cccccccc-0000-4000-8000-00000000000c", "/nonexistent.jsonl"))
    return session_start_block(world["env"], project, session)


def submit_filters(page) -> None:
    """Submit the filter form and wait for the page it loads: reading the list before then reads the old one."""
    with page.expect_navigation(wait_until="load"):
        page.click("form.filters button[type=submit]")


def open_memory(world, page, words: str) -> int:
    memory_id = find_id(world["env"], words)
    page.goto(f"{world['viewer'].base}/memory/{memory_id}")
    return memory_id


def test_without_the_token_the_browser_gets_nothing(world, browser):
    context = browser.new_context()
    tab = context.new_page()
    response = tab.goto(world["viewer"].base + "/memories")
    assert response.status == 403
    assert "needs its token" in tab.inner_text("body")
    assert "pnpm" not in tab.content()
    context.close()


def test_the_browser_sends_the_viewers_cookies_to_no_other_server_on_127_0_0_1(world, page):
    """Chromium keeps cookies apart by host and path, not by port: another local user's server on 127.0.0.1 that
    this browser visits must not be handed the token (it was, while the cookie was for the path `/`)."""
    assert page.locator("form").count() >= 1 and len(page.context.cookies()) >= 1
    other = Listener()
    try:
        for path in ("/", "/memories"):
            assert page.goto(other.url + path).status == 200
    finally:
        other.close()
    assert len(other.cookies) >= 2 and set(other.cookies) == {""}, other.cookies  # (and its favicon.ico)


def test_the_token_address_lands_on_the_memories_without_the_token(world, page):
    assert "token=" not in page.url
    assert page.locator("h1").inner_text().startswith("Memories of")
    assert page.locator("li.memory").count() >= 5


def test_search(world, page):
    page.fill("input[name=q]", "Netlify frontend")
    submit_filters(page)
    texts = page.locator("li.memory .text").all_inner_texts()
    assert texts and all("Netlify" in text for text in texts)
    assert "q=Netlify" in page.url


def test_filter_by_category_and_state(world, page):
    page.select_option("select[name=category]", "todo")
    submit_filters(page)
    categories = page.locator("li.memory .cat").all_inner_texts()
    assert categories and {c.lower() for c in categories} == {"todo"}
    page.select_option("select[name=category]", "")
    page.select_option("select[name=state]", "quarantined")
    submit_filters(page)
    texts = page.locator("li.memory .text").all_inner_texts()
    assert texts and all("evil.example" in text for text in texts)


def test_show_provenance(world, page):
    page.click("li.memory a.text:has-text('Netlify')")
    assert page.locator("#memory-text").inner_text().startswith("We decided to deploy the frontend on Netlify")
    provenance = page.locator("#provenance").inner_text()
    assert world["sessions"]["app"][0][:8] in provenance
    assert "db-staging.internal" in provenance  # the turn before it
    assert "user" in page.locator("ol.turns li.own").inner_text().lower()


def test_forget_reaches_the_next_block(world, page):
    assert "imperative mood" in block(world)
    open_memory(world, page, "imperative mood")
    page.fill("#forget-reason", "we changed the commit style")
    page.click("#forget")
    assert "forgotten" in page.locator(".flash").inner_text()
    assert page.locator("#state").inner_text().startswith("forgotten")
    assert "imperative mood" not in block(world)


def test_correct_reaches_the_next_block(world, page):
    assert "port 5433" in block(world)
    open_memory(world, page, "port 5433")
    page.fill("#correct-text", "The staging database is hosted on db-staging.internal at port 6543.")
    page.click("#correct")
    assert page.locator("#memory-text").inner_text().endswith("port 6543.")
    assert "superseded" in page.locator(".flash").inner_text()
    after = block(world)
    assert "port 6543" in after and "port 5433." not in after.replace("(was: ", "")


def test_pin_reaches_the_next_block(world, page):
    before = block(world, "crowded")
    assert "retry budget" in before and "Bluebird" not in before
    open_memory(world, page, "Bluebird")
    page.click("#pin")
    assert "pinned" in page.locator(".flash").inner_text()
    assert "Bluebird" in block(world, "crowded")
    page.click("#unpin")
    assert "unpinned" in page.locator(".flash").inner_text()
    assert "Bluebird" not in block(world, "crowded")


def test_pin_in_every_project_reaches_another_projects_block(world, page):
    assert "Python 3.12" not in block(world, "other")
    open_memory(world, page, "Python 3.12")
    page.click("#pin-global")
    assert "every project" in page.locator(".flash").inner_text()
    assert "Python 3.12" in block(world, "other")


def test_approve_reaches_the_next_block(world, page):
    assert "evil.example" not in block(world)
    open_memory(world, page, "evil.example")
    page.click("#approve")
    assert "approved" in page.locator(".flash").inner_text()
    assert page.locator("#state").inner_text() == "active"
    assert "evil.example" in block(world)


def test_a_memory_holding_a_script_renders_as_text(world, page):
    open_memory(world, page, "<script>")
    assert SCRIPT in page.locator("#memory-text").inner_text()
    assert page.locator("script").count() == 0  # no element was made of it
    page.goto(f"{world['viewer'].base}/memories")
    assert SCRIPT in page.locator("main").inner_text()
    # The `page` fixture fails the test if any alert() ran.


@pytest.mark.parametrize("path", ["/memories", "/memory/1", "/told", "/sessions", "/timeline", "/health", "/rules"])
def test_a_narrow_window_needs_no_sideways_scrolling(world, page, path):
    page.set_viewport_size({"width": 360, "height": 740})
    page.goto(world["viewer"].base + path)
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 360, f"{path} is {width} px wide in a 360 px window"


def test_a_long_word_on_the_rules_page_needs_no_sideways_scrolling(world, page):
    import urllib.parse

    text = "We decided to store build artifacts under /srv/" + "verylongdirectoryname" * 12
    page.goto(world["viewer"].base + "/rules?" + urllib.parse.urlencode({"text": text, "role": "user"}))
    assert "verylongdirectoryname" in page.locator("main").inner_text()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 1200, f"the rules page is {width} px wide in a 1200 px window"


def test_a_memory_in_a_right_to_left_script_reads_right_to_left(world, page):
    """Arabic text took the page's left-to-right direction: its full stop sat beside its first word, and the clause
    after a Latin word came before the one that leads to it."""
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    project = str(Path(world["app"]).parent / "intl")
    text = "قررنا استخدام PostgreSQL لقاعدة البيانات الرئيسية في هذا المشروع."
    with Store(Path(world["env"]["MINER_HOME"]) / "memory.db") as store, store.atomic():
        memory_id = store.insert_memory(NewMemory(
            project=project, category="decision", confidence=0.9, rule_id="test", role="user", session_id="intl",
            transcript="", entry_uuid="intl-1", ts="2026-04-01T10:00:00.00Z", text=text))
    # Where the text's first letter and its full stop are drawn: the stop left of the first letter, as Arabic reads.
    ends = """e => { const t = e.firstChild, r = document.createRange();
                     r.setStart(t, 0); r.setEnd(t, 1); const first = r.getBoundingClientRect().left;
                     r.setStart(t, t.length - 1); r.setEnd(t, t.length); const stop = r.getBoundingClientRect().left;
                     return [getComputedStyle(e).direction, stop < first]; }"""
    page.goto(f"{world['viewer'].base}/memory/{memory_id}")
    assert page.locator("#memory-text").evaluate(ends) == ["rtl", True]
    page.goto(f"{world['viewer'].base}/memories?project={project}")
    assert page.locator("a.text", has_text="PostgreSQL").evaluate(ends) == ["rtl", True]


def test_what_is_typed_into_a_form_stays_out_of_the_address_the_browser_keeps(world, page):
    """The rules page and the told page's prompt box sent what was typed in the address (GET): a secret pasted there
    to see what would be hidden of it went into the browser's history."""
    typed = "Hx7kq2Lmz9-typed"
    page.goto(world["viewer"].base + "/rules")
    page.fill("textarea[name=text]", f"We decided to use pnpm for every package, the db password is {typed}.")
    submit_filters(page)
    assert typed not in page.url and "pnpm" in page.locator("#traced").inner_text()
    page.goto(world["viewer"].base + "/told")
    page.fill("input[name=prompt]", f"Which package manager do we use? The token is {typed}")
    submit_filters(page)
    assert typed not in page.url and "pnpm" in page.locator("#prompt-block").inner_text()  # answered, as before
    history = page.evaluate("performance.getEntriesByType('navigation').map(e => e.name)")
    assert not any(typed in address for address in history), history
