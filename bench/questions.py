"""Questions the user types without a question mark: how many become memories, and how many statements of the
same surface (same topic, same opening words) are still kept.

Usage: python bench/questions.py [SET.json ...]   (default: the sets in bench/questions/)

Each set holds, per language, questions with no "?" ("cómo puedo parar el contenedor") and statements that a
later session needs ("Como regla, los commits van en inglés"). They were written for this measurement, not
taken from any transcript. Each sentence is a user prompt of a synthetic session (one per language and kind),
mined with the shipped rules and classifier into a fresh store. Guidelines: a question is never a memory.
set1 and set2 hold English, Spanish, Italian, Portuguese, French and German; set3 and set4 Russian, Japanese,
Korean and Chinese. set2 and set4 were written before the code they measure, by someone who had not read it.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from deferred import run, write_sessions  # noqa: E402

from miner.memory.store import Store  # noqa: E402
from miner.runtime.mine import Miner  # noqa: E402

KINDS = ("question", "statement")


def measure(path: Path, config: dict) -> None:
    sets = json.loads(path.read_text(encoding="utf-8"))
    with tempfile.TemporaryDirectory(prefix="miner-bench-") as tmp:
        files = write_sessions(tmp, sets, KINDS)
        with Store(Path(tmp) / "m.db") as store:
            Miner(store, config).mine_paths(files)
            totals = {kind: [0, 0] for kind in KINDS}
            for lang, kinds in sets.items():
                row = []
                for kind in KINDS:
                    kept = [m.text for m in store.list_memories(f"/bench/{lang}/{kind}", limit=1000)]
                    found = sum(any(t in text or text in t for t in kept) for text in kinds[kind])
                    totals[kind][0] += found
                    totals[kind][1] += len(kinds[kind])
                    row.append(f"{found}/{len(kinds[kind])}")
                print(f"  {lang}: questions kept {row[0]}, statements kept {row[1]}")
    q, s = totals["question"], totals["statement"]
    print(f"{path.name}: questions kept as memories {q[0]}/{q[1]}; statements kept {s[0]}/{s[1]}")


def main() -> int:
    return run(measure, "questions")


if __name__ == "__main__":
    sys.exit(main())
