"""A session that reports a todo done closes it: a new session sees only the todos still open."""

from __future__ import annotations

import pytest

from miner.checkpoint import close_done_todos, done_todos
from miner.model import Turn
from miner.store import NewMemory
from miner.textutil import keywords

TODOS = ("Later we should add pagination to the plant list endpoint.",
         "Remaining: wire the CI job for the release build.",
         "待办：给设置页加上暗色模式")


@pytest.fixture
def todos(store):
    ids = []
    with store.transaction() as db:
        for n, text in enumerate(TODOS):
            ids.append(store.add_memory(db, NewMemory(
                project="/p", category="todo", text=text, confidence=0.7, rule_id="t", role="user", session_id="s1",
                transcript="/t.jsonl", entry_uuid=f"u{n}", ts="2026-03-01T10:00:00.000Z",
                keywords=tuple(keywords(text))))[0])
    return ids


def turn(text: str, ts: str = "2026-03-02T10:00:00.000Z", role: str = "assistant", sidechain: bool = False) -> Turn:
    return Turn("x", "s2", role, text, ts, "/p", "main", sidechain, "/t.jsonl")


@pytest.mark.parametrize("text, done", [
    ("Pagination for the plant list endpoint is done now.", 0),
    ("I added pagination to the plant list endpoint, 50 rows a page.", 0),
    ("The CI job for the release build is wired up.", 1),
    ("设置页的暗色模式已完成。", 2),
])
def test_a_report_of_the_work_done_closes_its_todo(store, todos, text, done):
    assert [t.id for t, _ in done_todos(store, "/p", [turn(text)])] == [todos[done]]


@pytest.mark.parametrize("text", [
    "Once pagination on the plant list endpoint is done, we can ship.",   # a condition
    "The pagination of the plant list endpoint is not done yet.",          # not done
    "Should I add pagination to the plant list endpoint?",                 # a question
    "I'll add pagination to the plant list endpoint next.",                # a plan
    "Fixed the plant watering bug.",                                       # another subject
    "设置页的暗色模式还没完成。",                                              # not done
])
def test_plans_questions_and_other_work_close_nothing(store, todos, text):
    assert done_todos(store, "/p", [turn(text)]) == []


def test_only_what_was_said_after_the_todo_counts(store, todos):
    assert done_todos(store, "/p", [turn("Pagination for the plant list endpoint is done now.",
                                         ts="2026-02-28T10:00:00.000Z")]) == []
    assert done_todos(store, "/p", [turn("Pagination for the plant list endpoint is done now.", sidechain=True)]) == []


def test_a_closed_todo_goes_cold_with_the_reason(store, todos):
    # Cold: out of recall, kept, found by `miner search --all`; the miner makes it active again when it is
    # said again (tests/test_multi.py checks that through the session-start hook).
    assert close_done_todos(store, "/p", [turn("Pagination for the plant list endpoint is done now.")]) == [todos[0]]
    row = store.db.execute("SELECT state, state_reason FROM memories WHERE id = ?", (todos[0],)).fetchone()
    assert row["state"] == "cold" and row["state_reason"].startswith("done: Pagination for the plant list")
    assert sorted(m.id for m in store.candidates("/p") if m.category == "todo") == todos[1:]
