"""Done-todo matching on labelled pairs: how many todos a later report of their completion closes, and how many a
sentence that does not report them done closes by mistake.

Usage: python bench/done_pairs.py [--verbose] [SET.jsonl ...]   (default: tests/fixtures/done_pairs/set_*.jsonl)

Each line of a set is a todo as it was said, a sentence said after it, and whether that sentence reports the todo
finished (`done`), with the kind of pair (`why`) and its language. The sets were written for this measurement by
someone who had not read the code, set B apart from set A (120 pairs each: 60 done; 60 not: another task done that
shares words with the todo, the same todo planned, in progress, partly done or asked about, or its topic only).
Each todo is stored alone in a project of its own, and `checkpoint.done_todos` reads the sentence as a turn said a
day later. It prints, per set, the todos closed by their report (recall) and the todos closed by a sentence that
does not report them done, by kind and by language.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
_HOME = tempfile.mkdtemp(prefix="bench-done-")  # nothing of the user's is read: their store, settings, rules
os.environ.update(MINER_HOME=os.path.join(_HOME, "miner"), XDG_CONFIG_HOME=os.path.join(_HOME, "config"),
                  CLAUDE_CONFIG_DIR=os.path.join(_HOME, "claude"))

from miner.extract.model import Turn  # noqa: E402
from miner.memory.records import NewMemory  # noqa: E402
from miner.memory.store import Store  # noqa: E402
from miner.recall.checkpoint import done_todos  # noqa: E402

SETS = sorted((REPO / "tests" / "fixtures" / "done_pairs").glob("set_*.jsonl"))


def closed(store: Store, n: int, pair: dict) -> bool:
    project = f"/work/project-{n}"
    with store.atomic():
        store.add_memory(NewMemory(project=project, category="todo", text=pair["todo"], confidence=0.7,
                                   rule_id="bench", role="user", session_id="s", transcript="/t.jsonl",
                                   entry_uuid=f"todo-{n}", ts="2026-01-01T10:00:00Z"))
    later = Turn(uuid=f"later-{n}", session_id="s", role="assistant", text=pair["later"], ts="2026-01-02T10:00:00Z",
                 cwd=project, git_branch="", is_sidechain=False, transcript="/t.jsonl")
    return bool(done_todos(store, project, [later]))


def measure(path: Path, verbose: bool) -> None:
    pairs = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    found, wrong, langs = Counter(), Counter(), Counter()
    with tempfile.TemporaryDirectory() as folder, Store(Path(folder) / "bench.db") as store:
        for n, pair in enumerate(pairs):
            hit = closed(store, n, pair)
            found[pair["done"]] += hit
            if hit and not pair["done"]:
                wrong[pair["why"]] += 1
            langs[(pair["lang"], pair["done"], hit)] += 1
            if verbose and hit != pair["done"]:
                print(f"  {'missed' if pair['done'] else 'closed'}: {pair['todo']}  =>  {pair['later']}")
    done = sum(1 for p in pairs if p["done"])
    print(f"{path.name}: reports that close their todo {found[True]}/{done} ({found[True] / done:.2f}); "
          f"todos closed by a sentence that does not report them done {found[False]}/{len(pairs) - done}")
    print("  closed by mistake, by kind: " + (", ".join(f"{k} {v}" for k, v in wrong.most_common()) or "none"))
    by_lang = sorted({lang for lang, _, _ in langs})
    print("  by language (closed by their report / reports): " + ", ".join(
        f"{lang} {langs[(lang, True, True)]}/{langs[(lang, True, True)] + langs[(lang, True, False)]}"
        for lang in by_lang))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sets", nargs="*", type=Path, default=SETS, help="JSONL pair sets (default: the shipped two)")
    parser.add_argument("--verbose", action="store_true", help="print every pair the matching gets wrong")
    args = parser.parse_args()
    for path in args.sets:
        measure(path, args.verbose)


if __name__ == "__main__":
    main()
