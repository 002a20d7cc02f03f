"""Hostile input: the reader never raises on malformed lines, and the miner skips and counts every bad case."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from miner.config import validated
from miner.extract.transcript import Watermark, read_transcript, use_fast_json
from miner.memory.store import Store
from miner.runtime.mine import Miner

GOOD = {"type": "user", "uuid": "u-good", "sessionId": "s", "cwd": "/work/fuzz", "timestamp": "2026-01-01T00:00:00Z",
        "message": {"role": "user", "content": "We'll use PostgreSQL instead of MySQL for the database."}}

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=40))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=10), inner, max_size=4)), max_leaves=20)


def entry_like():
    """Entries shaped like Claude Code's, with any field replaced by anything."""
    keys = st.sampled_from(["type", "uuid", "sessionId", "message", "isSidechain", "isMeta", "cwd", "timestamp",
                            "origin", "isCompactSummary", "content", "role", "unknownField"])
    return st.builds(lambda changes: {**GOOD, **changes}, st.dictionaries(keys, json_values, max_size=4))


def line_bytes():
    return st.one_of(
        st.binary(max_size=200),                                             # anything at all
        st.text(max_size=200).map(lambda t: t.encode("utf-8", "surrogatepass")),
        json_values.map(lambda v: json.dumps(v).encode()),                   # valid JSON, wrong shape
        entry_like().map(lambda e: json.dumps(e).encode()),                  # right shape, hostile fields
        entry_like().map(lambda e: json.dumps(e).encode()[: len(json.dumps(e)) // 2]),  # truncated
        st.integers(1, 5000).map(lambda n: b"[" * n + b"]" * n),             # deep nesting
        st.integers(1, 5000).map(lambda n: b'{"a":' * n + b"1" + b"}" * n),
        st.just(b"\xff\xfe\x00\x80 invalid utf-8 \xc3\x28"),
    )


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(lines=st.lists(line_bytes(), max_size=12), tail=st.binary(max_size=30), batch=st.integers(1, 400),
       fast=st.booleans())
def test_reader_never_raises_and_batches_agree(tmp_path, lines, tail, batch, fast):
    if fast:
        use_fast_json()
    path = tmp_path / "fuzz.jsonl"
    body = b"".join(line.replace(b"\n", b" ") + b"\n" for line in lines) + tail.replace(b"\n", b"")
    path.write_bytes(body)
    whole = read_transcript(str(path))
    # The partial last line is left for later; everything else is read.
    assert whole.watermark.offset == len(body) - len(tail.replace(b"\n", b""))
    assert whole.stats.lines == len(lines)
    # Reading in small batches from the watermark gives the same turns, in order.
    mark, turns, seen = Watermark(), [], set()
    for _ in range(len(lines) + 2):
        chunk = read_transcript(str(path), mark, seen=seen, max_bytes=batch)
        assert chunk.watermark.offset >= mark.offset
        mark, turns = chunk.watermark, turns + chunk.turns
        if not chunk.more:
            break
    assert mark.offset == whole.watermark.offset
    assert [t.uuid for t in turns] == [t.uuid for t in whole.turns]


# --- every bad case through the miner, counted in `miner stats` --------------------------------------------


@pytest.fixture
def miner(pipeline):
    with Store() as store:
        yield Miner(store, validated({"spacy_model": None}), pipeline=pipeline)


def good_line(uuid: str = "u-good", text: str = GOOD["message"]["content"]) -> bytes:
    return json.dumps({**GOOD, "uuid": uuid, "message": {"role": "user", "content": text}}).encode() + b"\n"


def mined_texts(store: Store) -> list[str]:
    return [m.text for m in store.list_memories(limit=1000)]


BAD_LINES = {
    "truncated": good_line()[:40] + b"\n",
    "invalid-utf8": b'{"type": "user", "message": "\xff\xfe\xc3\x28"}\n',
    "deep-nesting": b"[" * 200_000 + b"]" * 200_000 + b"\n",
    "binary": os.urandom(3000).replace(b"\n", b"") + b"\n",
    "ten-mb-garbage": b"x" * (10 * 1024 * 1024) + b"\n",
}


@pytest.mark.parametrize("case", sorted(BAD_LINES))
def test_bad_line_is_skipped_and_counted(tmp_path, miner, case):
    path = tmp_path / f"{case}.jsonl"
    path.write_bytes(good_line("u1") + BAD_LINES[case] + good_line("u2", "Let's go with pnpm as the package manager."))
    summary = miner.mine_file(path)
    assert summary.skipped_lines == 1
    assert miner.store.counters()["lines_skipped"] == 1
    texts = mined_texts(miner.store)
    assert any("PostgreSQL" in t for t in texts) and any("pnpm" in t for t in texts)
    assert miner.store.watermark(str(path.resolve()))[0] == path.stat().st_size


def test_ten_mb_prose_line_is_mined_without_crashing(tmp_path, miner):
    """A 10 MB message (a pasted log) is valid input: mined or dropped, never a crash, memory bounded."""
    path = tmp_path / "big.jsonl"
    huge = ("The build log says nothing useful here. " * 260_000)[: 10 * 1024 * 1024]
    path.write_bytes(good_line("u1") + good_line("u-big", huge) + good_line("u2", "We'll use Redis for the cache."))
    summary = miner.mine_file(path)
    assert not summary.errors
    assert any("Redis" in t for t in mined_texts(miner.store))
    assert miner.store.watermark(str(path.resolve()))[0] == path.stat().st_size


def test_partial_last_line_waits_for_its_newline(tmp_path, miner):
    path = tmp_path / "partial.jsonl"
    whole = good_line("u2", "Let's go with pnpm as the package manager.")
    path.write_bytes(good_line("u1") + whole[:30])
    miner.mine_file(path)
    assert miner.store.watermark(str(path.resolve()))[0] == len(good_line("u1"))
    with open(path, "ab") as handle:
        handle.write(whole[30:])
    miner.mine_file(path)
    assert any("pnpm" in t for t in mined_texts(miner.store))
    assert miner.store.counters().get("lines_skipped", 0) == 0


def test_empty_file_and_binary_file_named_jsonl(tmp_path, miner):
    empty = tmp_path / "empty.jsonl"
    empty.write_bytes(b"")
    binary = tmp_path / "binary.jsonl"
    binary.write_bytes(bytes(range(256)) * 400)
    total = miner.mine_paths([str(empty), str(binary)])
    assert not total.errors
    assert total.skipped_lines == binary.read_bytes().count(b"\n")
    assert miner.store.counters()["lines_skipped"] == total.skipped_lines
    assert mined_texts(miner.store) == []


def test_unknown_entry_types_and_fields_are_skipped(tmp_path, miner):
    path = tmp_path / "unknown.jsonl"
    entries = [
        {"type": "hologram", "uuid": "x1", "payload": {"a": 1}},
        {**GOOD, "uuid": "x2", "brandNewField": {"nested": [1, 2, 3]}, "message": {
            "role": "user", "content": [{"type": "video", "url": "x"}, {"type": "text", "text": GOOD["message"]["content"]}]}},
        {**GOOD, "uuid": "x3", "message": {"role": "narrator", "content": "Once upon a time we used Perl."}},
        {**GOOD, "uuid": "x4", "message": "not an object"},
        [1, 2, 3],
        "just a string",
    ]
    path.write_bytes(b"".join(json.dumps(e).encode() + b"\n" for e in entries))
    summary = miner.mine_file(path)
    assert not summary.errors and summary.skipped_lines == 0
    assert [t for t in mined_texts(miner.store) if "PostgreSQL" in t]
    counters = miner.store.counters()
    assert counters["entries_read"] == len(entries)
    # The hologram, the narrator, the message that is a string, the list and the string.
    assert counters["entries_skipped_malformed"] == 5


def test_file_deleted_while_it_is_read(tmp_path, miner, monkeypatch):
    path = tmp_path / "vanishing.jsonl"
    path.write_bytes(good_line("u1") * 1 + good_line("u2", "Let's go with pnpm as the package manager."))
    from miner.extract import transcript as transcript_mod

    real_iter = transcript_mod.iter_lines

    def deleting_iter(handle, start):
        for index, item in enumerate(real_iter(handle, start)):
            if index == 0:
                path.unlink()  # gone while the reader holds it open
            yield item

    monkeypatch.setattr(transcript_mod, "iter_lines", deleting_iter)
    first = miner.mine_paths([str(path)])
    assert not first.errors  # the open handle still reads what was written
    # Mining it again once it is gone is reported, never raised.
    again = miner.mine_paths([str(path)])
    assert len(again.errors) == 1 and "vanished while it was read" in again.errors[0]
    assert miner.store.counters()["transcripts_vanished"] == 1  # counted in `miner stats`
    assert miner.store.db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_file_replaced_by_another_is_read_from_the_start(tmp_path, miner):
    path = tmp_path / "replaced.jsonl"
    path.write_bytes(good_line("u1") + good_line("u2", "Let's go with pnpm as the package manager."))
    miner.mine_file(path)
    replacement = tmp_path / "new.jsonl"
    replacement.write_bytes(good_line("u3", "We'll use Redis for the session cache."))
    os.replace(replacement, path)
    miner.mine_file(path)
    assert any("Redis" in t for t in mined_texts(miner.store))
    assert Path(path).stat().st_size == miner.store.watermark(str(path.resolve()))[0]
