"""What each page of the viewer shows, gathered from the store and the library; the templates only lay it out.

Nothing here writes: the edits are in `app` and go through `memory.corrections` and `extract.trust`.
"""

from __future__ import annotations

import os
import re
import threading
from concurrent.futures import ThreadPoolExecutor

from .. import paths
from ..memory import browse, corrections, reader
from ..memory.store import Store, StoreError

EVIDENCE_SHOWN = 10  # sightings shown with their surrounding turns on a memory's page (the first ones)
LOG_LINES = 40
_DAY_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def short_project(project: str) -> str:
    """A project's last two folders, for headings (the full path is in the title attribute)."""
    parts = [p for p in project.split(os.sep) if p]
    return os.sep.join(parts[-2:]) if parts else project


def project_names(store: Store) -> list[str]:
    return browse.projects(store)


def is_day(value: str) -> bool:
    if not _DAY_RE.match(value):
        return False
    from datetime import date

    try:
        date.fromisoformat(value)
    except ValueError:
        return False
    return True


def by_day(rows: list, searched: bool) -> list[tuple[str, list]]:
    """Rows grouped by the day they were last said, in their order; one group when they are search hits."""
    if searched:
        return [("", rows)] if rows else []
    groups: list[tuple[str, list]] = []
    for memory in rows:
        day = memory.last_seen[:10]
        if not groups or groups[-1][0] != day:
            groups.append((day, []))
        groups[-1][1].append(memory)
    return groups


def archive_hits(store: Store, project: str, query: str, limit: int = 50,
                 forms: dict[str, list[list]] | None = None) -> list:
    """What was said in earlier sessions (the archive) that matches `query`, best first. (On a page of their own:
    a unit that says what a memory says is listed too, unlike `miner search`, which prints both lists at once.)
    A store from before the archive (the viewer opens it read-only, never upgraded) is said to be one."""
    if not reader.has_table(store.db, "archive_fts"):
        raise StoreError(f"the memory store {paths.db_path()} is from a version before the archive of what was said: "
                         "any `miner` command that writes (`miner mine --all`) upgrades it")
    return [unit for unit, _ in store.search_archive(query, project=project, limit=limit, forms=forms)]


# --- one memory ---------------------------------------------------------------------------


def memory_page(store: Store, memory_id: int) -> dict | None:
    """A memory with its provenance: each sighting with the turns around it, its links, and its history."""
    memory = store.get(memory_id)
    if memory is None:
        return None
    evidence = store.evidence(memory_id)
    sightings = [(row, browse.turns_around(store, row.session_id, row.entry_uuid, row.ts))
                 for row in evidence[:EVIDENCE_SHOWN]]
    found = corrections.history(store, memory_id)
    return {"memory": memory, "sightings": sightings, "more_evidence": max(0, len(evidence) - EVIDENCE_SHOWN),
            "state_reason": store.state_reason(memory_id), "links": store.links(memory_id), "history": found,
            "corrected_to": corrections.corrected_to(store, memory)}


# --- what a session will be told ---------------------------------------------------------------


def told(store: Store, project: str, config: dict, prompt: str = "") -> dict:
    """The startup block exactly as the SessionStart hook injects it, each item's score parts, the void zones and
    what the budget left out; and, for a typed prompt, the block the UserPromptSubmit hook would add."""
    from ..recall import blockcache
    from ..recall import prompt as prompt_mod
    from ..runtime.exclusions import is_excluded

    # The startup block is empty for an excluded project (`build` checks); the prompt's lookup does not check.
    text, _, recall = blockcache.render_recall(store, project, config, "startup")
    shown_ids = {item.memory.id for item in recall.shown}
    voided = {i for zone in recall.zones if zone.voided for i in zone.ids}
    excluded = is_excluded(project)
    out = {"block": text, "recall": recall, "voided_count": len(voided - shown_ids), "prompt_block": "",
           "prompt_found": [], "excluded": excluded}
    if prompt.strip() and not excluded:
        budget = int(config["prompt_block_chars"])
        found = prompt_mod.candidates(store.db, project, prompt_mod.query_text(prompt))
        # As a new session would see it: nothing shown yet (the hook also skips what its session was shown).
        out["prompt_block"], _, _ = prompt_mod.render(found, {"memories": [], "archive": []}, budget) if found else (
            "", [], [])
        out["prompt_found"] = found
    return out


# --- timeline -------------------------------------------------------------------------------


def _when(ts: str) -> float | None:
    from ..memory.records import parse_ts

    return parse_ts(ts) if ts else None


def timeline(store: Store, project: str, rows: list) -> dict:
    """Where each memory of `rows` sits on the project's time span: first said, last restated, each sighting,
    as percentages of the span (for the bars)."""
    first, last = browse.span(store, project)
    start, end = _when(first), _when(last)
    times = browse.said_times(store, [m.id for m in rows])
    bars = []
    for memory in rows:
        a, b = _when(memory.first_seen), _when(memory.last_seen)
        if start is None or end is None or a is None or b is None or end <= start:
            bars.append((memory, 0.0, 100.0, []))
            continue
        width = end - start
        left = min(100.0, max(0.0, (a - start) / width * 100))
        right = min(100.0, max(left, (b - start) / width * 100))
        dots = [min(100.0, max(0.0, (t - start) / width * 100))
                for t in (_when(ts) for ts in times.get(memory.id, [])) if t is not None]
        bars.append((memory, round(left, 2), round(max(right - left, 0.4), 2), [round(d, 2) for d in dots]))
    return {"bars": bars, "first": first, "last": last}


# --- health ---------------------------------------------------------------------------------


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else 0.0


def mining_lag(store: Store | None, limit: int = 50) -> tuple[list[tuple[str, int, int]], int, int]:
    """(transcript, size, bytes not mined yet) of the transcripts furthest behind (one never mined counts whole),
    how many are behind, and how many there are: as `miner doctor` counts them."""
    from ..runtime.pending import transcript_lag

    behind, found = transcript_lag(store.watermarks() if store is not None else {})
    return behind[:limit], len(behind), found


def log_tail(name: str, lines: int = LOG_LINES) -> list[str]:
    """The last lines of a log (already redacted when they were written)."""
    path = paths.logs_dir() / name
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - 64 * 1024))
            tail = handle.read().decode("utf-8", "replace").splitlines()
    except OSError:
        return []
    return tail[-lines:]


def latencies(store: Store | None) -> list[tuple[str, int, float, float, float]]:
    """Per situation, over the latest recalls: (situation, count, p50 ms, p95 ms, max ms) of building the block."""
    by_situation: dict[str, list[float]] = {}
    for _, _, situation, elapsed, _ in browse.recent_recalls(store) if store is not None else ():
        by_situation.setdefault(situation, []).append(float(elapsed))
    return [(s, len(v), _percentile(v, 0.5), _percentile(v, 0.95), max(v)) for s, v in sorted(by_situation.items())]


def health(store: Store | None, config: dict, doctor: bool) -> dict:
    """Counts, mining lag per transcript, hook errors and the latencies of recent recalls; the doctor's checks
    when asked (they load the spaCy pipeline, which takes a moment). `store` None: there is no database yet."""
    lag, behind, tracked = mining_lag(store)
    checks = []
    if doctor:
        from ..cli.doctor import run_checks

        checks = list(run_checks(config))
    return {"stats": browse.counts(store) if store is not None else None, "lag": lag, "behind": behind,
            "tracked": tracked, "hook_log": log_tail("hooks.log"), "worker_log": log_tail("worker.log", 15),
            "latencies": latencies(store), "checks": checks}


# --- rules ----------------------------------------------------------------------------------

# The miner (spaCy, the compiled rules) is built once, on the first sentence traced, and used from one thread.
_tracer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="miner-ui-rules")
_miner: dict = {}
_miner_lock = threading.Lock()


def _trace(text: str, role: str, config: dict, project: str) -> list:
    from ..evaluation.tune import text_turn, trace_turns
    from ..runtime.mine import Miner

    with _miner_lock:
        if _miner.get("config") != config:
            if "store" in _miner:
                _miner["store"].close()  # the miner built with older settings goes, and its connection with it
            _miner["store"] = Store(readonly=True)
            _miner["miner"] = Miner(_miner["store"], config)
            _miner["config"] = config
    miner = _miner["miner"]
    miner.reload_rules()  # the rule files as they are now (unchanged files are not parsed again)
    return trace_turns(miner, [text_turn(text, role)], project)


def trace(text: str, role: str, config: dict, project: str) -> dict:
    """What `miner rules test TEXT` shows, with the default, the user's and the project's rules as they are now:
    per unit the rules that fired, the classifier's probabilities, what refinement did and the memory it gave."""
    from ..extract.classify import LABELS

    traced = _tracer.submit(_trace, text, role, config, project).result()
    return {"units": traced, "labels": LABELS}
