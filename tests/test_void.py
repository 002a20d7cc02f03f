"""Void marking: weak clusters are voided, the top cluster is protected, hubs are suppressed."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import pytest
from click.testing import CliRunner

from miner import config as config_mod
from miner.cli.main import main
from miner.memory.records import NewMemory
from miner.memory.store import Store
from miner.recall.block import build
from miner.recall.void import cluster, suppress_hubs, void_mark

CONFIG = config_mod.load()


@dataclass
class FakeMemory:
    id: int
    keywords: str
    recall_count: int = 0
    pinned: bool = False


@dataclass
class FakeItem:
    memory: FakeMemory
    score: float
    parts: dict = field(default_factory=dict)


def items_for(groups: list[tuple[str, float, int]]) -> list[FakeItem]:
    """`count` items per (keywords, score) group, ids in order."""
    out, n = [], 0
    for words, score, count in groups:
        for k in range(count):
            n += 1
            out.append(FakeItem(FakeMemory(n, f"{words} extra{k}"), score - k * 0.001))
    return out


def test_similar_items_share_a_cluster():
    zones = cluster(items_for([("postgres database schema", 0.9, 3), ("deploy render docker", 0.5, 2)]), 0.25)
    assert sorted(len(z.ids) for z in zones) == [2, 3]
    assert zones[0].topic == ["postgres", "database", "schema"]


def test_weak_cluster_voided_and_top_cluster_protected():
    items = items_for([("postgres database schema", 0.95, 4), ("deploy render docker", 0.9, 3),
                       ("colour palette header", 0.30, 3), ("logo font size", 0.25, 2)])
    zones = void_mark(items, {"void_share": 0.3, "void_jaccard": 0.25, "void_min_candidates": 5})
    by_topic = {z.topic[0]: z for z in zones}
    assert by_topic["postgres"].protected and not by_topic["postgres"].voided
    assert by_topic["deploy"].protected  # above the largest gap (0.9 → 0.3)
    voided = [z for z in zones if z.voided]
    assert voided and all(z.score < 0.5 for z in voided)
    share = sum(len(z.ids) for z in voided) / len(items)
    assert 0.15 <= share <= 0.45


def test_current_session_memory_protects_its_cluster():
    items = items_for([("postgres database schema", 0.95, 6), ("logo font size", 0.2, 4)])
    weak = {i.memory.id for i in items if "logo" in i.memory.keywords}
    settings = config_mod.changed(CONFIG, void_share=0.3, void_min_candidates=5)
    zones = void_mark(items, settings, protected_ids={min(weak)})
    assert not any(z.voided for z in zones)


def test_few_candidates_are_never_voided():
    items = items_for([("postgres database schema", 0.95, 2), ("logo font size", 0.1, 2)])
    assert not any(z.voided for z in void_mark(items, CONFIG))


def test_hub_is_damped():
    items = items_for([("a b c", 0.9, 1), ("d e f", 0.8, 1), ("g h i", 0.7, 1), ("j k l", 0.6, 1)])
    items[0].memory.recall_count = 40
    for item in items[1:]:
        item.memory.recall_count = 2
    assert suppress_hubs(items) == [1]
    assert items[0].score == pytest.approx(0.45) and items[0].parts["hub_damping"] == 0.5
    assert items[1].score == pytest.approx(0.8)


@pytest.fixture
def crowded():
    with Store() as store:  # the default database under the test's MINER_HOME, so the CLI sees it too
        with store.atomic():
            for n in range(120):
                topic = ("payments webhook retry", "ui colour palette", "deploy docker image", "test fixtures")[n % 4]
                store.add_memory(NewMemory(
                    project="/p", category="fact", text=f"{topic} variant {n} ({topic})",
                    confidence=0.8, rule_id="t", role="user", session_id="s", transcript="/t", entry_uuid=f"u{n}",
                    ts=f"2026-01-{1 + n % 28:02d}T00:00:00Z"))
        yield store


def test_block_reports_voided_topics_and_zones_are_logged(crowded):
    result = build(crowded, "/p", CONFIG, situation="query", query="payments webhook retry", budget_chars=1500)
    voided = [z for z in result.zones if z.voided]
    assert voided
    assert "weakly related memories voided (topics:" in result.text
    shown = {i.memory.id for i in result.shown}
    assert not shown & {i for z in voided for i in z.ids}
    row = crowded.last_recall("/p")
    assert any(z["voided"] for z in json.loads(row.voided))


def test_void_off_gives_a_block_without_zones(crowded):
    result = build(crowded, "/p", CONFIG, situation="query", query="payments", budget_chars=1500, void=False)
    assert result.zones == [] and "voided" not in result.text


def test_confidence_grows_with_recalls(crowded):
    def ask(log=True):
        return build(crowded, "/p", CONFIG, situation="query", query="payments webhook retry", budget_chars=1500,
                     log=log)

    first = ask()
    item = first.shown[0]
    assert item.parts["confidence_multiplier"] == pytest.approx(0.75 + 0.25 * 0.8)
    for _ in range(3):
        ask()
    again = ask(log=False)
    same = next(i for i in again.shown + again.left_out if i.memory.id == item.memory.id)
    assert same.memory.recall_count >= 3
    assert same.parts["confidence_multiplier"] > item.parts["confidence_multiplier"]
    # A new session's block is shown every time: it is counted, but it does not vouch for itself.
    startup = build(crowded, "/p", CONFIG, budget_chars=1500, log=False)
    assert all(i.parts["confidence_multiplier"] == pytest.approx(0.75 + 0.25 * 0.8) for i in startup.shown)
    assert not any("hub_damping" in i.parts for i in startup.shown + startup.left_out)


def test_zones_and_explain_commands(crowded):
    runner = CliRunner()
    explained = runner.invoke(main, ["recall", "payments webhook", "--project", "/p", "--budget", "300", "--explain"])
    assert explained.exit_code == 0, explained.output
    assert "SHOWN" in explained.stdout and "relevance" in explained.stdout and "ZONES" in explained.stdout
    runner.invoke(main, ["recall", "payments webhook", "--project", "/p", "--budget", "300"])
    zones = runner.invoke(main, ["zones", "--project", "/p"])
    assert "VOID" in zones.stdout and "topic:" in zones.stdout
