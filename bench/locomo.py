"""Retrieval on LoCoMo: evidence recall@5, @10 and at the default budget, against plain FTS5 BM25.

Usage: python bench/locomo.py [--data ../shared/data/bench/locomo10.json]

Each dialogue turn is stored as a fact memory ("Speaker: text", dated by its
session), one project per conversation. Each question of categories 1-4 is
asked as a `miner recall QUERY` would ask it. A question's evidence recall is
the share of its evidence turns among the retrieved memories; the figures are
means over questions. The baseline ranks the same memories by FTS5 BM25 alone
(all query terms OR-ed), in the same run and store.

LoCoMo (Maharana et al., ACL 2024) is CC BY-NC 4.0: read from ../shared, never copied.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from miner import config as config_mod  # noqa: E402
from miner.memory.records import NewMemory  # noqa: E402
from miner.memory.store import Store  # noqa: E402
from miner.recall.block import build, format_item  # noqa: E402
from miner.recall.rank import rank  # noqa: E402

DEFAULT_DATA = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "bench" / "locomo10.json"


def session_time(text: str) -> str:
    try:
        return datetime.strptime(text.strip(), "%I:%M %p on %d %B, %Y").strftime("%Y-%m-%dT%H:%M:%SZ")
    except ValueError:
        return ""


def load_conversation(store: Store, sample: dict) -> str:
    project = f"/locomo/{sample['sample_id']}"
    conversation = sample["conversation"]
    with store.atomic():
        for key, turns in conversation.items():
            if not re.fullmatch(r"session_\d+", key) or not turns:
                continue
            stamp = session_time(conversation.get(f"{key}_date_time", ""))
            for turn in turns:
                text = f"{turn['speaker']}: {turn['text']}"
                if turn.get("blip_caption"):
                    text += f" [shares a photo: {turn['blip_caption']}]"
                store.add_memory(NewMemory(
                    project=project, category="fact", text=text, confidence=0.6, rule_id="locomo", role="user",
                    session_id=key, transcript="locomo", entry_uuid=turn["dia_id"], ts=stamp))
    return project


def evidence_recall(retrieved: list[str], evidence: list[str]) -> float:
    wanted = set(evidence)
    return len(wanted & set(retrieved)) / len(wanted) if wanted else 0.0


CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
GRID = [(0, 0.0)] + [(w, b) for w in (1, 2, 3) for b in (0.3, 0.5, 0.7, 1.0)]  # (query_neighbours, weight)


def questions_of(sample: dict) -> list[dict]:
    return [q for q in sample["qa"] if q.get("category") in CATEGORIES and q.get("evidence")]


def ours_at(store: Store, project: str, config, question: str, k: int) -> list[str]:
    return [i.memory.entry_uuid for i in rank(store, project, config, question, asked=True)[:k]]


def cross_validated(store: Store, samples: list[dict], projects: list[str], config) -> None:
    """Leave one conversation out: the neighbour settings are chosen on the other nine by recall@10, then scored
    on the held-out one; BM25 beside it on the same questions."""
    scores: dict[tuple[int, float], list[list[float]]] = {}
    for setting in GRID:
        tried = config_mod.changed(config, query_neighbours=setting[0], query_neighbour_weight=setting[1])
        scores[setting] = [[evidence_recall(ours_at(store, project, tried, q["question"], 10), q["evidence"])
                            for q in questions_of(sample)] for sample, project in zip(samples, projects)]
    held: list[tuple[int, float, float]] = []  # (category, ours, bm25) per question
    chosen = []
    for c, (sample, project) in enumerate(zip(samples, projects)):
        def train_score(setting):
            return sum(sum(v) for i, v in enumerate(scores[setting]) if i != c)
        best = max(GRID, key=lambda setting: (train_score(setting), -setting[0], -setting[1]))
        chosen.append(best)
        for q, ours in zip(questions_of(sample), scores[best][c]):
            bm25 = [m.entry_uuid for m, _ in store.search(q["question"], project=project, limit=10)]
            held.append((q["category"], ours, evidence_recall(bm25, q["evidence"])))
    print(f"leave one conversation out: settings chosen per fold (neighbours, weight): {chosen}")
    print(f"{'recall@10':<14} {'questions':>9} {'ours (CV)':>10} {'BM25':>7} {'gain':>7}")
    for category, name in [(None, "all")] + list(CATEGORIES.items()):
        rows = [h for h in held if category is None or h[0] == category]
        ours, bm25 = sum(h[1] for h in rows) / len(rows), sum(h[2] for h in rows) / len(rows)
        print(f"{name:<14} {len(rows):>9} {ours:>10.3f} {bm25:>7.3f} {ours - bm25:>+7.3f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--conversations", type=int, default=0, help="only the first N conversations (default: all)")
    parser.add_argument("--cv", action="store_true",
                        help="also choose the neighbour settings leaving one conversation out, and score them")
    args = parser.parse_args()
    if not args.data.is_file():
        print(f"no LoCoMo file at {args.data}; pass --data")
        return 1
    samples = json.loads(args.data.read_text(encoding="utf-8"))
    if args.conversations:
        samples = samples[: args.conversations]
    config = config_mod.load()
    budget = config_mod.budget_chars(config)
    sums = {k: 0.0 for k in ("ours@5", "ours@10", "ours@budget", "bm25@5", "bm25@10", "bm25@budget")}
    by_category: dict[int, list[tuple[float, float]]] = {c: [] for c in CATEGORIES}
    projects = []
    questions = 0
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="miner-locomo-") as tmp:
        store = Store(Path(tmp) / "memory.db")
        for sample in samples:
            project = load_conversation(store, sample)
            projects.append(project)
            for item in questions_of(sample):
                questions += 1
                ranked = rank(store, project, config, item["question"], asked=True)
                ours = [i.memory.entry_uuid for i in ranked[:10]]
                block = build(store, project, config, situation="query", query=item["question"], log=False)
                in_block = [i.memory.entry_uuid for i in block.shown]
                hits = store.search(item["question"], project=project, limit=200)
                bm25 = [m.entry_uuid for m, _ in hits]
                used, bm25_budget = len(block.text) - sum(len(format_item(i.memory)) + 1 for i in block.shown), []
                for memory, _ in hits:  # the same characters, filled in BM25 order
                    cost = len(format_item(memory)) + 1
                    if used + cost <= budget:
                        bm25_budget.append(memory.entry_uuid)
                        used += cost
                evidence = item["evidence"]
                sums["ours@5"] += evidence_recall(ours[:5], evidence)
                sums["ours@10"] += evidence_recall(ours[:10], evidence)
                sums["ours@budget"] += evidence_recall(in_block, evidence)
                sums["bm25@5"] += evidence_recall(bm25[:5], evidence)
                sums["bm25@10"] += evidence_recall(bm25[:10], evidence)
                sums["bm25@budget"] += evidence_recall(bm25_budget, evidence)
                by_category[item["category"]].append((evidence_recall(ours[:10], evidence),
                                                      evidence_recall(bm25[:10], evidence)))
        elapsed = time.perf_counter() - started
        report(samples, questions, budget, elapsed, sums, by_category)
        if args.cv:
            cross_validated(store, samples, projects, config)
        store.close()
    return 0


def report(samples, questions, budget, elapsed, sums, by_category) -> None:
    print(f"machine: {os.cpu_count()} cores, Python {sys.version.split()[0]}; LoCoMo {len(samples)} conversations, "
          f"{questions} questions (categories 1-4), budget {budget} characters; {elapsed:.0f} s")
    print(f"{'':<22} {'recall@5':>9} {'recall@10':>10} {'recall@budget':>14}")
    for name, prefix in (("transcript-miner", "ours"), ("FTS5 BM25 only", "bm25")):
        print(f"{name:<22} {sums[prefix + '@5'] / questions:>9.3f} {sums[prefix + '@10'] / questions:>10.3f} "
              f"{sums[prefix + '@budget'] / questions:>14.3f}")
    print(f"{'recall@10 by category':<22} {'questions':>9} {'ours':>7} {'BM25':>7}")
    for category, rows in by_category.items():
        if rows:
            print(f"{CATEGORIES[category]:<22} {len(rows):>9} {sum(r[0] for r in rows) / len(rows):>7.3f} "
                  f"{sum(r[1] for r in rows) / len(rows):>7.3f}")


if __name__ == "__main__":
    sys.exit(main())
