"""Each refinement step on its own, then the whole step on units a rule matched."""

from __future__ import annotations

import pytest

from miner import refine as r
from miner.model import Turn, Unit
from miner.rules import Hit, load_rules

TURN = {"user": Turn("u", "s", "user", "", "", "", "", False, ""),
        "assistant": Turn("a", "s", "assistant", "", "", "", "", False, "")}


def unit(text: str, role: str = "user", previous: str = "") -> Unit:
    return Unit(TURN[role], 0, text, previous)


@pytest.mark.parametrize("text", ["Should we use pnpm here?", "What port does the API use", "用哪个数据库？",
                                  "Can you switch to pnpm?"])
def test_questions(text):
    assert r.is_question(text)


@pytest.mark.parametrize("text", ["We use pnpm.", "What we need is a queue.", "The port is 8080."])
def test_not_questions(text):
    assert not r.is_question(text)


@pytest.mark.parametrize("text", ["Thanks!", "Perfect!", "ok thanks", "Great, thank you!", "谢谢！", "LGTM"])
def test_greetings(text):
    assert r.is_greeting(text)


def test_greeting_with_content_is_kept():
    assert not r.is_greeting("Great, now use pnpm for every package install.")


@pytest.mark.parametrize("text", ["Let me check the config file.", "Now I'll update the tests.", "I'm going to run it.",
                                  "Checking the logs for the error.", "让我看一下配置文件。", "**Now let me** fix it."])
def test_narration(text):
    assert r.is_narration(text)


@pytest.mark.parametrize("text", ["I've updated the README with the new flags.", "Successfully built the image.",
                                  "All tests pass now after the change."])
def test_recaps(text):
    assert r.is_recap(text)


def test_not_narration_or_recap():
    assert not r.is_narration("The server listens on port 8080.")
    assert not r.is_recap("The cache is invalidated on every deploy.")


@pytest.mark.parametrize("text,ok", [("short one", False), ("----- 1234 ---- 5678 -----", False),
                                     ("The API listens on port 8080.", True), ("数据库改用 PostgreSQL 了", True)])
def test_quality_gate(text, ok):
    assert r.passes_quality_gate(text) is ok


@pytest.mark.parametrize("text", ["Maybe we should use Redis.", "I think the proxy might be the cause.",
                                  "可能是代理的问题。", "也许用 Redis 更好。"])
def test_hedges(text):
    assert r.is_hedged(text)


def test_self_contained_takes_previous_unit():
    merged = r.make_self_contained(unit("This keeps the builds reproducible.", previous="We pin every dependency."))
    assert merged == "We pin every dependency. This keeps the builds reproducible."


def test_dangling_without_context_is_dropped():
    assert r.make_self_contained(unit("It is faster that way.")) is None
    assert r.make_self_contained(unit("That works.", previous="Should we cache it?")) is None


def test_markup_is_removed_from_memory_text():
    assert r.display_text("- **Build stage:** use the slim image") == "Build stage: use the slim image"


RULES = load_rules([])


def hit_for(text: str, category: str = "decision", tentative: bool = False):
    from miner.rules import parse_rule

    rule = parse_rule({"id": "t", "category": category, "roles": ["user", "assistant"], "patterns": ["."],
                       "tentative": tentative}, "test", 1, "any")
    return Hit(rule, rule.search(text))


def test_refine_keeps_and_marks_tentative():
    verdict = r.refine(unit("Maybe we should move the cache to Redis."), hit_for("x"))
    assert verdict.candidate is not None and verdict.candidate.tentative
    assert verdict.candidate.confidence < 0.6


@pytest.mark.parametrize("text,role,reason", [
    ("Should we move the cache to Redis?", "user", "question"),
    ("Let me move the cache to Redis now.", "assistant", "narration"),
    ("I've moved the cache to Redis for you.", "assistant", "recap"),
    ("It is faster.", "user", "not-self-contained"),
    ("Use uv.", "user", "quality-gate"),
])
def test_refine_drops_with_reason(text, role, reason):
    verdict = r.refine(unit(text, role), hit_for(text))
    assert verdict.candidate is None and verdict.dropped_by == reason


def test_keywords_cover_identifiers_paths_versions_and_cjk():
    verdict = r.refine(unit("Pin node 20.11.1 in .nvmrc and run src/build.py; 数据库用 PostgreSQL。"), hit_for("x"))
    keywords = verdict.candidate.keywords
    for expected in ("20.11.1", "nvmrc", "src/build.py", "postgresql", "数据", "据库"):
        assert expected in keywords


@pytest.mark.parametrize("text,expected", [
    ("Make the circles bigger, so the difference shows. (", "Make the circles bigger, so the difference shows."),
    ("Large values should look MUCH larger.)", "Large values should look MUCH larger."),
    ("Use the slim image (Alpine).", "Use the slim image (Alpine)."),
    ("Pin node (not bun)", "Pin node (not bun)"),
])
def test_dangling_brackets_are_trimmed(text, expected):
    assert r.display_text(text) == expected
