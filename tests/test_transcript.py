"""The transcript reader: what is kept, what is skipped (and counted), and incremental reading."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
from pathlib import Path

import pytest

from miner.extract import transcript as transcript_mod
from miner.extract.transcript import (
    COMPACT_SUMMARY_OPENING,
    MAX_PROSE_CHARS,
    NON_PROSE_TYPES,
    ReadStats,
    Watermark,
    cut_text,
    entry_to_turn,
    extract_prose,
    read_transcript,
)
from miner.extract.transcript_files import contained_transcript, transcript_files
from tests.builders import Session

TRANSCRIPTS = Path(__file__).resolve().parent / "fixtures" / "transcripts"
SESSION = "0a0a0a0a-0000-4000-8000-000000000001"


def fixture(name: str) -> str:
    return str(TRANSCRIPTS / name)


def short(turns) -> list[str]:
    """The last two digits of each turn's uuid: fixture uuids end in the entry's number."""
    return [t.uuid[-2:] for t in turns]


def entry(n: int, role: str = "user", text: str | None = None, **extra) -> dict:
    """A minimal 2.1.x-shaped user or assistant entry."""
    content = text if text is not None else f"{role} line {n}"
    message = {"role": role, "content": content if role == "user" else [{"type": "text", "text": content}]}
    if role == "assistant":
        message.update({"id": f"msg_{n:04d}", "type": "message", "model": "claude-opus-4-6"})
    value = {"parentUuid": None, "isSidechain": False, "type": role, "message": message,
             "uuid": f"00000000-0000-4000-8000-{n:012d}", "timestamp": f"2026-01-01T00:00:{n % 60:02d}.000Z",
             "cwd": "/srv/app", "sessionId": SESSION, "version": "2.1.185", "gitBranch": "main"}
    value.update(extra)
    return value


def line(value: dict) -> bytes:
    return (json.dumps(value, separators=(",", ":")) + "\n").encode()


def write(path: Path, *entries: dict) -> None:
    path.write_bytes(b"".join(line(e) for e in entries))


def append(path: Path, data: bytes) -> None:
    with path.open("ab") as handle:
        handle.write(data)


# --- what is kept and what is skipped ------------------------------------------------------


def test_every_entry_type_is_kept_or_skipped_with_its_reason_counted():
    chunk = read_transcript(fixture("entry_types.jsonl"))
    # Kept: a user string prompt, assistant text, a user text block beside an image, and both text
    # entries of an assistant message split over several entries sharing one message.id.
    assert short(chunk.turns) == ["02", "04", "09", "17", "19"]
    assert [t.role for t in chunk.turns] == ["user", "assistant", "user", "assistant", "assistant"]
    assert chunk.stats.skipped_entries == {
        "permission-mode": 1,
        "mode": 1,
        "file-history-snapshot": 1,
        "attachment": 2,
        "not-human": 1,  # a task notification queued as a command
        "ai-title": 1,
        "no-prose": 5,  # thinking, two tool_use, two tool_result
        "progress": 1,
        "system": 4,
        "summary": 1,
        "custom-title": 1,
        "last-prompt": 1,
        "queue-operation": 2,
        "meta": 1,
        "agent-color": 1,
    }
    assert chunk.stats.entries == chunk.stats.lines == 29
    assert chunk.stats.turns == 5
    assert chunk.stats.skipped_lines == 0


def test_only_text_blocks_are_prose():
    chunk = read_transcript(fixture("entry_types.jsonl"))
    texts = {t.uuid[-2:]: t.text for t in chunk.turns}
    assert texts["09"] == "[Image #1] The login button should stay blue. Never change the brand colours without asking me."
    joined = "\n".join(texts.values())
    assert "Cassandra" not in joined  # thinking, tool_use input, tool_result, meta, attachments
    assert "iVBORw0KGgo" not in joined  # the image's data


def test_extract_prose_keeps_strings_and_text_blocks_only():
    blocks = [
        {"type": "thinking", "thinking": "hidden reasoning"},
        {"type": "text", "text": "first"},
        {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
        {"type": "tool_result", "tool_use_id": "t1", "content": [{"type": "text", "text": "nested output"}]},
        {"type": "image", "source": {"type": "base64", "data": "AAAA"}},
        {"type": "text", "text": "second"},
        {"type": "text", "text": None},
        "not a block",
    ]
    assert extract_prose(blocks) == "first\n\nsecond"
    assert extract_prose("plain string") == "plain string"
    assert extract_prose(None) == ""
    assert extract_prose({"type": "text", "text": "a dict is not a list"}) == ""


def test_turn_records_provenance():
    chunk = read_transcript(fixture("entry_types.jsonl"))
    first = chunk.turns[0]
    assert first.uuid == "e1000000-0000-4000-8000-000000000002"
    assert first.session_id == "1e000000-0000-4000-8000-00000000e001"
    assert first.role == "user"
    assert first.ts == "2026-03-02T09:00:14.518Z"
    assert first.cwd == "/home/dev/weather-app"
    assert first.git_branch == "main"
    assert first.is_sidechain is False
    assert first.transcript == fixture("entry_types.jsonl")
    assert first.text == "We'll use SQLite for the local cache.\nPlease always run the linter before committing."
    assert chunk.session_ids == {"1e000000-0000-4000-8000-00000000e001"}


def test_compaction_summary_and_boundary_are_skipped():
    chunk = read_transcript(fixture("compaction.jsonl"))
    assert short(chunk.turns) == ["01", "02", "07", "08"]
    assert chunk.stats.skipped_entries == {"system": 1, "compact-summary": 1, "attachment": 2}
    assert all("Cassandra" not in t.text for t in chunk.turns)


def test_our_recall_block_never_comes_back_as_an_attachment_or_meta_turn():
    chunk = read_transcript(fixture("recall_echo.jsonl"))
    # hook_success and hook_additional_context attachments, the meta reminder and the system echo are skipped;
    # the one user turn that still carries the block is kept for the cleaner to strip.
    assert short(chunk.turns) == ["03", "06"]
    assert chunk.stats.skipped_entries == {"attachment": 2, "system": 1, "meta": 1}


def test_subagent_file_keeps_assistant_prose_and_skips_the_brief():
    chunk = read_transcript(fixture("subagent.jsonl"))
    assert short(chunk.turns) == ["04", "05"]
    assert all(t.is_sidechain and t.role == "assistant" for t in chunk.turns)
    assert chunk.turns[0].session_id == "5d000000-0000-4000-8000-00000000d005"  # the parent session
    # The brief the main assistant wrote is a sidechain "user" entry; tool use and result have no prose.
    assert chunk.stats.skipped_entries == {"sidechain-prompt": 1, "no-prose": 2}


def test_wrapped_prompts_are_kept_for_the_cleaner_but_task_notifications_are_not_human():
    chunk = read_transcript(fixture("wrappers.jsonl"))
    assert "06" not in short(chunk.turns)
    assert chunk.stats.skipped_entries == {"meta": 1, "not-human": 1}
    assert short(chunk.turns) == ["02", "03", "04", "05", "07", "08", "09", "10", "11", "12", "13", "14"]


def test_old_1_0_format_parses():
    chunk = read_transcript(fixture("old_format_1_0.jsonl"))
    assert short(chunk.turns) == ["01", "02", "07", "08", "12", "13"]
    assert chunk.stats.skipped_entries == {
        "summary": 1, "no-prose": 2, "system": 2, "meta": 1, "compact-summary": 1, "sidechain-prompt": 1,
    }
    by_uuid = {t.uuid[-2:]: t for t in chunk.turns}
    assert by_uuid["01"].git_branch == "legacy"
    assert by_uuid["01"].cwd == "/home/dev/admin-panel"
    assert by_uuid["02"].role == "assistant"
    assert by_uuid["12"].is_sidechain is True
    assert by_uuid["13"].is_sidechain is False
    assert chunk.session_ids == {"9c000000-0000-4000-8000-00000000c009"}


def test_new_2_1_format_parses():
    chunk = read_transcript(fixture("compaction.jsonl"))
    turn = chunk.turns[1]
    assert (turn.role, turn.text, turn.git_branch) == ("assistant", "The dev server listens on port 8000.", "develop")


def test_chinese_text_survives_reading():
    chunk = read_transcript(fixture("chinese.jsonl"))
    assert chunk.turns[0].text == "我们决定用 PostgreSQL 作为主数据库。以后都用 pnpm 安装依赖。"
    assert chunk.turns[2].text == "我們決定採用 Redis 做快取。以後請用繁體中文回覆。"
    assert chunk.stats.skipped_entries == {"no-prose": 2}  # thinking and a tool result


@pytest.fixture(params=[False, True], ids=["json", "orjson"])
def parser(request, monkeypatch):
    """Each test twice: with the standard library's parser (the hooks') and with orjson (the miner's)."""
    if request.param:
        import orjson

        monkeypatch.setattr(transcript_mod, "_loads", orjson.loads)
        monkeypatch.setattr(transcript_mod, "_DecodeErrors", (orjson.JSONDecodeError, ValueError, TypeError))


@pytest.mark.usefixtures("parser")
def test_a_lone_surrogate_becomes_a_replacement_character_and_the_entry_is_kept(tmp_path):
    path = tmp_path / "s.jsonl"
    write(path, entry(1, text="We use Sentry. Broken emoji \ud83d here."),
          entry(2, "assistant", text="A whole pair \ud83d\ude00 stays whole."), entry(3, text="\udc00 alone"))
    assert path.read_bytes().count(b"\\ud") == 4  # each half of the pair escaped too
    chunk = read_transcript(str(path))
    assert [t.text for t in chunk.turns] == ["We use Sentry. Broken emoji \ufffd here.",
                                             "A whole pair \U0001f600 stays whole.", "\ufffd alone"]
    assert chunk.stats.skipped_lines == 0


def test_a_timestamp_that_is_no_time_is_dropped_and_a_real_one_kept(tmp_path):
    path = tmp_path / "s.jsonl"
    stamps = ["not a date", "9999-99-99T10:00:00Z", 1700000000, "2026-02-30T10:00:00Z", "2026-01-02T29:00:00Z",
              "2026-01-02T10:00garbage", "2026-01-02T10:00:00.000Z"]
    write(path, *(entry(n + 1, timestamp=stamp) for n, stamp in enumerate(stamps)))
    assert [t.ts for t in read_transcript(str(path)).turns] == [""] * 6 + ["2026-01-02T10:00:00.000Z"]


def test_training_reads_the_compaction_summary_of_claude_code_1_0_that_mining_skips():
    """Its units are labelled like any other (the classifier learns what is worth keeping from them); the miner never
    takes them as the user's words."""
    entry = {"type": "user", "uuid": "u", "version": "1.0.11", "message": {"role": "user", "content": (
        f"{COMPACT_SUMMARY_OPENING}, summed up:\n- The user always wants every endpoint to return XML.")}}
    assert entry_to_turn(entry, "t.jsonl", ReadStats()) is None
    turn = entry_to_turn(entry, "t.jsonl", ReadStats(), notices=True)
    assert turn is not None and turn.role == "user" and "return XML" in turn.text


@pytest.mark.parametrize(
    ("value", "reason"),
    [
        ([1, 2], "not-an-object"),
        ({"type": "brand-new-type"}, "unknown-type"),
        ({"type": "user", "uuid": "u", "message": "text"}, "no-message"),
        ({"type": "user", "uuid": "u", "message": {"role": "system", "content": "x"}}, "unknown-role"),
        ({"type": "user", "uuid": "u", "message": {"role": "user", "content": "   "}}, "no-prose"),
        ({"type": "user", "message": {"role": "user", "content": "no uuid"}}, "no-uuid"),
        ({"type": "user", "uuid": "u", "isMeta": True, "message": {"role": "user", "content": "x"}}, "meta"),
        ({"type": "user", "uuid": "u", "isCompactSummary": True, "message": {"role": "user", "content": "x"}},
         "compact-summary"),
        # Claude Code 1.0 wrote the summary as a plain user entry: not the user's words (its rules would become theirs)
        ({"type": "user", "uuid": "u", "version": "1.0.11", "message": {"role": "user", "content": (
            f"{COMPACT_SUMMARY_OPENING}, summed up:\n- The user always wants every endpoint to return XML.")}},
         "compact-summary"),
        ({"type": "user", "uuid": "u", "isSidechain": True, "message": {"role": "user", "content": "brief"}},
         "sidechain-prompt"),
        ({"type": "user", "uuid": "u", "origin": {"kind": "task-notification"},
          "message": {"role": "user", "content": "done"}}, "not-human"),
        # Claude Code's own notices in the assistant's place: an API error, a usage limit, an interruption.
        ({"type": "assistant", "uuid": "u", "isApiErrorMessage": True,
          "message": {"role": "assistant", "model": "<synthetic>", "content": [
              {"type": "text", "text": "API Error: the request timed out, so we use a retry."}]}}, "not-the-model"),
        ({"type": "assistant", "uuid": "u", "isApiErrorMessage": True,
          "message": {"role": "assistant", "content": "Usage limit reached; we decided to wait."}}, "not-the-model"),
        ({"type": "assistant", "uuid": "u", "message": {"role": "assistant", "model": "<synthetic>",
                                                       "content": [{"type": "text", "text": "No response."}]}},
         "not-the-model"),
    ],
)
def test_entry_to_turn_skip_reasons(value, reason):
    stats = ReadStats()
    assert entry_to_turn(value, "t.jsonl", stats) is None
    assert stats.skipped_entries == {reason: 1}


def test_training_reads_claude_codes_notices_as_the_assistants_turn_the_miner_never_reads():
    """The classifier learns from them what not to keep (the model was trained with them as none); the miner, the
    archive and the restore lines never see them."""
    notice = {"type": "assistant", "uuid": "u", "isApiErrorMessage": True, "sessionId": "s",
              "message": {"role": "assistant", "model": "<synthetic>", "content": [
                  {"type": "text", "text": "API Error: the request timed out, so we use a retry."}]}}
    stats = ReadStats()
    turn = entry_to_turn(notice, "t.jsonl", stats, notices=True)
    assert turn is not None and turn.role == "assistant" and "timed out" in turn.text and not stats.skipped_entries
    assert entry_to_turn(notice, "t.jsonl", ReadStats()) is None


def test_human_origin_and_assistant_sidechain_are_kept():
    stats = ReadStats()
    human = {"type": "user", "uuid": "u1", "origin": {"kind": "human"}, "message": {"role": "user", "content": "hi"}}
    side = {"type": "assistant", "uuid": "u2", "isSidechain": True,
            "message": {"role": "assistant", "content": [{"type": "text", "text": "found it"}]}}
    assert entry_to_turn(human, "t.jsonl", stats).text == "hi"
    assert entry_to_turn(side, "t.jsonl", stats).is_sidechain is True
    assert stats.skipped_entries == {}


# --- replays -------------------------------------------------------------------------------


def test_replayed_uuids_are_deduplicated_through_seen():
    seen: set[str] = set()
    first = read_transcript(fixture("resumed_original.jsonl"), seen=seen)
    assert short(first.turns) == ["01", "02", "03", "04"]
    assert first.stats.replayed == 0
    second = read_transcript(fixture("resumed_continued.jsonl"), seen=seen)
    assert short(second.turns) == ["05", "06"]
    assert second.stats.replayed == 4
    assert second.session_ids == {"6f000000-0000-4000-8000-00000000f106"}
    assert {t.uuid for t in first.turns + second.turns} == seen


def test_without_seen_a_resumed_file_yields_everything():
    chunk = read_transcript(fixture("resumed_continued.jsonl"))
    assert short(chunk.turns) == ["01", "02", "03", "04", "05", "06"]
    assert chunk.stats.replayed == 0


def test_a_uuid_repeated_within_one_file_is_read_once(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1), entry(2, "assistant"), entry(1))
    chunk = read_transcript(str(path))
    assert short(chunk.turns) == ["01", "02"]
    assert chunk.stats.replayed == 1


# --- incremental reading -------------------------------------------------------------------


def test_appended_lines_come_back_alone(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1), entry(2, "assistant"))
    first = read_transcript(str(path))
    assert short(first.turns) == ["01", "02"]
    assert first.watermark.offset == path.stat().st_size

    append(path, line(entry(3)) + line(entry(4, "assistant")))
    second = read_transcript(str(path), first.watermark)
    assert short(second.turns) == ["03", "04"]
    assert second.stats.restarted is False
    assert second.stats.lines == 2

    third = read_transcript(str(path), second.watermark)
    assert third.turns == []
    assert third.watermark.offset == path.stat().st_size


@pytest.mark.usefixtures("parser")
def test_a_byte_order_mark_before_the_first_line_does_not_cost_its_entry(tmp_path):
    """A transcript saved by an editor that writes a UTF-8 byte-order mark: the first entry is read (orjson, which
    the miner parses with, refuses the mark), and the watermark counts its bytes (nothing read twice)."""
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + line(entry(1)) + line(entry(2, "assistant")))
    first = read_transcript(str(path))
    assert short(first.turns) == ["01", "02"] and first.stats.skipped_lines == 0
    assert first.watermark.offset == path.stat().st_size
    append(path, line(entry(3)))
    assert short(read_transcript(str(path), first.watermark).turns) == ["03"]


def test_a_file_rewritten_in_place_with_the_same_first_bytes_is_read_again_from_the_start(tmp_path):
    """Truncated and written again in place (same inode, same first line, at least as long): reading on at the
    old offset started in the middle of a line, which was lost as an unparsable one."""
    path = tmp_path / "t.jsonl"
    opening = entry(1, text="A first request long enough to fill the head the watermark checks. " * 10)
    write(path, opening, entry(2, "assistant"))
    first = read_transcript(str(path))
    assert len(line(opening)) > transcript_mod.HEAD_BYTES
    with path.open("r+b") as handle:
        handle.truncate(0)
        handle.write(line(opening) + line(entry(3, text="a longer line that now straddles the old offset")) +
                     line(entry(4, "assistant")))
    assert path.stat().st_size > first.watermark.offset
    again = read_transcript(str(path), first.watermark, seen={t.uuid for t in first.turns})
    assert again.stats.restarted and again.stats.skipped_lines == 0
    assert short(again.turns) == ["03", "04"]


def test_a_small_file_that_grows_past_the_head_is_not_mistaken_for_a_new_one(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1, text="short"))
    first = read_transcript(str(path))
    assert first.watermark.offset < transcript_mod.HEAD_BYTES
    append(path, line(entry(2, text="x" * 2000)))
    second = read_transcript(str(path), first.watermark)
    assert second.stats.restarted is False
    assert short(second.turns) == ["02"]


def test_partial_last_line_is_left_for_the_next_run(tmp_path):
    path = tmp_path / "t.jsonl"
    shutil.copyfile(fixture("partial_last_line.jsonl"), path)
    data = path.read_bytes()
    assert not data.endswith(b"\n")
    first = read_transcript(str(path))
    assert short(first.turns) == ["01", "02"]
    assert first.watermark.offset == data.rindex(b"\n") + 1
    assert first.stats.skipped_lines == 0

    again = read_transcript(str(path), first.watermark)
    assert again.turns == [] and again.watermark.offset == first.watermark.offset

    append(path, b"\n")
    completed = read_transcript(str(path), first.watermark)
    assert short(completed.turns) == ["03"]
    assert completed.turns[0].text == "Never apply Terraform changes without a plan review."
    assert completed.watermark.offset == len(data) + 1


def test_a_line_written_in_two_halves_is_read_once_whole(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1))
    mark = read_transcript(str(path)).watermark
    whole = line(entry(2, text="written in two halves"))
    append(path, whole[:25])
    half = read_transcript(str(path), mark)
    assert half.turns == [] and half.stats.skipped_lines == 0
    assert half.watermark.offset == mark.offset
    append(path, whole[25:])
    done = read_transcript(str(path), half.watermark)
    assert [t.text for t in done.turns] == ["written in two halves"]


@pytest.mark.usefixtures("parser")
def test_an_entry_written_after_a_torn_one_on_the_same_line_is_read(tmp_path):
    """A writer killed mid-line leaves it without its end; the next entry appended goes on that line."""
    path = tmp_path / "t.jsonl"
    write(path, entry(1))
    torn = line(entry(2, text='We keep the {"braces": 1} in the torn one.'))
    append(path, torn[:-40])
    mark = read_transcript(str(path)).watermark
    append(path, line(entry(3, text="Appended after the torn entry.")) + line(entry(4)))
    chunk = read_transcript(str(path), mark)
    assert short(chunk.turns) == ["03", "04"]
    assert chunk.turns[0].text == "Appended after the torn entry."
    assert chunk.stats.skipped_lines == 0 and chunk.watermark.offset == path.stat().st_size
    # A line that is only torn (no whole entry after it) is still skipped and counted.
    append(path, torn[:-40] + b"\n" + line(entry(5)))
    rest = read_transcript(str(path), chunk.watermark)
    assert short(rest.turns) == ["05"] and rest.stats.skipped_lines == 1


def test_corrupt_lines_are_skipped_and_counted():
    chunk = read_transcript(fixture("corrupt_line.jsonl"))
    assert short(chunk.turns) == ["01", "02", "03"]
    # A line cut mid-object, a line that is not UTF-8 and a line that is not JSON.
    assert chunk.stats.skipped_lines == 3
    assert chunk.stats.lines == 13
    assert chunk.stats.entries == 9
    assert chunk.stats.skipped_entries == {
        "not-an-object": 1, "no-uuid": 1, "no-message": 1, "no-prose": 2, "unknown-role": 1,
    }


def test_corrupt_line_does_not_stop_incremental_reading(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1))
    mark = read_transcript(str(path)).watermark
    append(path, b'{"type":"user","message":\n' + line(entry(2)))
    chunk = read_transcript(str(path), mark)
    assert short(chunk.turns) == ["02"]
    assert chunk.stats.skipped_lines == 1
    assert chunk.watermark.offset == path.stat().st_size


def test_an_oversized_line_is_skipped_without_being_parsed(tmp_path, monkeypatch):
    monkeypatch.setattr(transcript_mod, "MAX_LINE_BYTES", 300)
    path = tmp_path / "t.jsonl"
    write(path, entry(1), entry(2, text="y" * 1000), entry(3))
    chunk = read_transcript(str(path))
    assert short(chunk.turns) == ["01", "03"]
    assert chunk.stats.skipped_lines == 1
    assert chunk.watermark.offset == path.stat().st_size


def test_an_oversized_unfinished_line_waits_for_its_end(tmp_path, monkeypatch):
    monkeypatch.setattr(transcript_mod, "MAX_LINE_BYTES", 300)
    path = tmp_path / "t.jsonl"
    write(path, entry(1))
    size = path.stat().st_size
    big = line(entry(2, text="z" * 1000))
    append(path, big[:-1])
    first = read_transcript(str(path))
    assert short(first.turns) == ["01"]
    assert first.watermark.offset == size
    append(path, b"\n" + line(entry(3)))
    second = read_transcript(str(path), first.watermark)
    assert short(second.turns) == ["03"]
    assert second.stats.skipped_lines == 1


def test_crlf_line_endings_parse(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(line(entry(1)).replace(b"\n", b"\r\n") + line(entry(2, "assistant")).replace(b"\n", b"\r\n"))
    assert short(read_transcript(str(path)).turns) == ["01", "02"]


def test_empty_file_reads_nothing(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(b"")
    chunk = read_transcript(str(path))
    assert chunk.turns == [] and chunk.watermark.offset == 0 and chunk.stats.lines == 0


# --- truncated and replaced files ------------------------------------------------------------


def test_truncated_file_is_read_again_from_the_start(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1), entry(2, "assistant"), entry(3))
    mark = read_transcript(str(path)).watermark
    write(path, entry(7))  # shorter than the watermark
    assert path.stat().st_size < mark.offset
    chunk = read_transcript(str(path), mark)
    assert chunk.stats.restarted is True
    assert short(chunk.turns) == ["07"]
    assert chunk.watermark.offset == path.stat().st_size


def test_file_rewritten_in_place_with_other_content_is_read_again(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1, text="aaaa"), entry(2, text="bbbb"))
    mark = read_transcript(str(path)).watermark
    inode = path.stat().st_ino
    with path.open("r+b") as handle:  # same inode, same size, different bytes
        handle.write(line(entry(5, text="cccc")) + line(entry(6, text="dddd")))
    assert path.stat().st_ino == inode
    assert path.stat().st_size == mark.offset
    chunk = read_transcript(str(path), mark)
    assert chunk.stats.restarted is True
    assert short(chunk.turns) == ["05", "06"]


def test_file_replaced_by_a_larger_one_is_read_again(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1), entry(2))
    mark = read_transcript(str(path)).watermark
    fresh = tmp_path / "new.jsonl"
    write(fresh, entry(11), entry(12), entry(13), entry(14))
    os.replace(fresh, path)
    assert path.stat().st_size > mark.offset
    chunk = read_transcript(str(path), mark)
    assert chunk.stats.restarted is True
    assert short(chunk.turns) == ["11", "12", "13", "14"]


def test_file_replaced_by_an_identical_copy_is_read_again_but_replays_nothing(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1), entry(2))
    seen: set[str] = set()
    mark = read_transcript(str(path), seen=seen).watermark
    copy = tmp_path / "copy.jsonl"
    shutil.copyfile(path, copy)
    os.replace(copy, path)  # new inode, same bytes
    assert path.stat().st_ino != mark.inode
    chunk = read_transcript(str(path), mark, seen=seen)
    assert chunk.stats.restarted is True
    assert chunk.turns == []
    assert chunk.stats.replayed == 2


def test_watermark_matches():
    mark = Watermark()
    assert mark.matches(fixture("compaction.jsonl")) is True
    assert Watermark(offset=10).matches("/nonexistent/file.jsonl") is False


# --- cuts and batches --------------------------------------------------------------------------


def test_stop_after_uuid_ends_the_read_after_that_entry(tmp_path):
    path = tmp_path / "t.jsonl"
    shutil.copyfile(fixture("resumed_original.jsonl"), path)
    lines = path.read_bytes().splitlines(keepends=True)
    chunk = read_transcript(str(path), stop_after_uuid="f6000000-0000-4000-8000-000000000002")
    assert chunk.reached_stop is True
    assert short(chunk.turns) == ["01", "02"]
    assert chunk.watermark.offset == len(lines[0]) + len(lines[1])
    rest = read_transcript(str(path), chunk.watermark)
    assert short(rest.turns) == ["03", "04"]
    assert rest.reached_stop is False


def test_stop_after_uuid_of_a_skipped_entry_still_stops(tmp_path):
    chunk = read_transcript(fixture("compaction.jsonl"), stop_after_uuid="c4000000-0000-4000-8000-000000000004")
    assert chunk.reached_stop is True
    assert short(chunk.turns) == ["01", "02"]  # the compact summary itself is skipped


def test_stop_after_an_unknown_uuid_reads_to_the_end():
    chunk = read_transcript(fixture("compaction.jsonl"), stop_after_uuid="no-such-uuid")
    assert chunk.reached_stop is False
    assert short(chunk.turns) == ["01", "02", "07", "08"]


@pytest.mark.parametrize("name", ["entry_types.jsonl", "old_format_1_0.jsonl", "corrupt_line.jsonl"])
@pytest.mark.parametrize("max_bytes", [1, 700, 2500])
def test_max_bytes_batches_return_the_same_turns_as_one_read(name, max_bytes):
    whole = read_transcript(fixture(name))
    seen: set[str] = set()
    mark = Watermark()
    turns, batches, skipped = [], 0, 0
    while True:
        chunk = read_transcript(fixture(name), mark, seen=seen, max_bytes=max_bytes)
        batches += 1
        turns += chunk.turns
        skipped += chunk.stats.skipped_lines
        assert chunk.watermark.offset >= mark.offset
        mark = chunk.watermark
        if not chunk.more:
            break
        assert batches < 100
    assert turns == whole.turns
    assert skipped == whole.stats.skipped_lines
    assert mark.offset == whole.watermark.offset
    assert batches > 1


def test_max_bytes_one_reads_one_line_per_batch(tmp_path):
    path = tmp_path / "t.jsonl"
    write(path, entry(1), entry(2), entry(3))
    chunk = read_transcript(str(path), max_bytes=1)
    assert short(chunk.turns) == ["01"]
    assert chunk.more is True
    assert chunk.stats.lines == 1


def test_blank_lines_are_neither_entries_nor_skipped_lines(tmp_path):
    path = tmp_path / "t.jsonl"
    path.write_bytes(line(entry(1)) + b"\n" + b" \t\r\n" + line(entry(2, "assistant")))
    chunk = read_transcript(str(path))
    assert short(chunk.turns) == ["01", "02"]
    assert (chunk.stats.lines, chunk.stats.entries, chunk.stats.skipped_lines) == (4, 2, 0)


# --- queued prompts and metadata entries ------------------------------------------------------

METADATA = {
    "agent-name": {"agentName": "reviewer"},
    "agent-color": {"agentColor": "teal"},
    "agent-setting": {"agentSetting": "code-reviewer"},
    "tag": {"tag": "We'll use Cassandra for the cache."},
    "worktree-state": {"worktreeSession": None},
    "pr-link": {"prNumber": 12, "prUrl": "https://example.invalid/pr/12", "prRepository": "me/shop",
                "timestamp": "2026-03-01T10:00:00.000Z"},
    "custom-title": {"customTitle": "We'll use Cassandra"},
    "ai-title": {"aiTitle": "We decided to use Cassandra"},
    "last-prompt": {"lastPrompt": "We'll use Cassandra instead of SQLite."},
    "mode": {"mode": "normal"},
    "permission-mode": {"permissionMode": "default"},
    "file-history-snapshot": {"messageId": "m1", "snapshot": {"trackedFileBackups": {}}, "isSnapshotUpdate": False},
    "queue-operation": {"operation": "enqueue", "content": "We'll use Cassandra for the cache.",
                        "timestamp": "2026-03-01T10:00:00.000Z"},
}


def test_a_queued_prompt_is_the_users_words(tmp_path):
    session = Session(tmp_path / "t.jsonl", "/srv/app")
    session.user("Set up the cache layer.")
    queued = session.queued("Actually we'll use Redis for the cache, not Memcached.")
    session.assistant("Switching the cache to Redis.")
    chunk = read_transcript(str(session.path))
    assert [t.role for t in chunk.turns] == ["user", "user", "assistant"]
    turn = chunk.turns[1]
    assert turn.uuid == queued["uuid"] and turn.text == "Actually we'll use Redis for the cache, not Memcached."
    assert (turn.session_id, turn.ts, turn.cwd, turn.git_branch, turn.is_sidechain) == (
        session.session_id, queued["timestamp"], "/srv/app", "main", False)
    assert chunk.stats.skipped_entries == {}


def test_queued_task_notifications_and_our_own_block_never_become_turns(tmp_path):
    session = Session(tmp_path / "t.jsonl", "/srv/app")
    session.hook_output("<transcript-miner-recall>We'll use Cassandra for the cache.</transcript-miner-recall>")
    session.queued("<task-notification>\n<summary>We decided to use Cassandra</summary>\n</task-notification>",
                   mode="task-notification")
    session.queued("<task-notification>We decided to use Cassandra</task-notification>")  # no mode given
    session.queued("<bash-notification>\n<shell-id>b1</shell-id>\n<summary>We decided to use Cassandra</summary>\n"
                   "</bash-notification>")  # a background shell's report, queued as a prompt
    session.queued("We decided to use Cassandra.", origin={"kind": "task-notification"})
    session.queued("We decided to use Cassandra.", mode="bash")
    session.queued("We decided to use Cassandra.", isSidechain=True)  # for a subagent: the assistant's brief
    session.queued("   ")
    chunk = read_transcript(str(session.path))
    assert chunk.turns == []
    assert chunk.stats.skipped_entries == {"attachment": 2, "not-human": 5, "sidechain-prompt": 1, "no-prose": 1}


def test_an_agent_teams_message_is_not_the_users_words(tmp_path):
    """Agent teams deliver a teammate's message as a user entry in an envelope, announced by a line or not: an
    agent's words, never the user's preferences. A prompt the user typed around such a tag keeps the user's words."""
    session = Session(tmp_path / "t.jsonl", "/srv/app")
    envelope = ('<teammate-message teammate_id="reviewer" color="blue" summary="style">\nWe always indent with tabs '
                'in this repo.\n</teammate-message>')
    session.user(envelope)
    session.user("Another Claude session sent a message:\n" + envelope)
    session.queued(envelope)
    typed = session.user("I prefer spaces, whatever the reviewer says in <teammate-message> envelopes.")
    chunk = read_transcript(str(session.path))
    assert [t.uuid for t in chunk.turns] == [typed["uuid"]]
    assert chunk.stats.skipped_entries == {"not-human": 3}


def test_metadata_entries_are_known_not_malformed(tmp_path):
    session = Session(tmp_path / "t.jsonl", "/srv/app")
    for kind, fields in METADATA.items():
        session.metadata(kind, **fields)
    session.write({"type": "hologram", "sessionId": session.session_id})
    chunk = read_transcript(str(session.path))
    assert chunk.turns == []
    assert set(METADATA) <= NON_PROSE_TYPES
    assert chunk.stats.skipped_entries == {**{kind: 1 for kind in METADATA}, "unknown-type": 1}


def test_a_queued_prompt_is_mined_and_metadata_is_not_counted_as_malformed(tmp_path, pipeline):
    from miner.config import load
    from miner.memory.store import Store
    from miner.runtime.mine import Miner

    session = Session(tmp_path / "t.jsonl", "/srv/app")
    session.user("Set up the cache layer.")
    for kind, fields in METADATA.items():
        session.metadata(kind, **fields)
    queued = session.queued("Let's go with Redis for the session cache.")
    session.hook_output("<transcript-miner-recall>We'll use Cassandra for the cache.</transcript-miner-recall>")
    with Store(tmp_path / "m.db") as store:
        Miner(store, load(), pipeline=pipeline).mine_file(session.path)
        rows = store.db.execute("SELECT m.text, e.role, e.entry_uuid FROM memories m JOIN evidence e "
                                "ON e.memory_id = m.id").fetchall()
        assert [(r["role"], r["entry_uuid"]) for r in rows if "Redis" in r["text"]] == [("user", queued["uuid"])]
        assert not [r for r in rows if "Cassandra" in r["text"]]
        assert store.counters().get("entries_skipped_malformed", 0) == 0


# --- hostile sizes ----------------------------------------------------------------------------


def test_cut_text_never_cuts_inside_a_word():
    secret = "sk-ant-" + "a1B2c3D4" * 5
    text = "keep this " + secret + " and more"
    for limit in range(10, len(text)):
        cut = cut_text(text, limit)
        assert len(cut) <= limit and text.startswith(cut)
        assert secret in cut or "sk-" not in cut  # whole or not at all
    assert cut_text(text, len(text)) == text
    assert cut_text("数据库" * 10, 7) == "数据库数据库数"  # no spaces: cut where the limit falls
    assert cut_text("x" * 10_000, 5_000) == "x" * (5_000 - 4096)  # a word longer than the look-back


def test_a_huge_prompt_is_cut_before_anyone_cleans_it(tmp_path):
    path = tmp_path / "t.jsonl"
    sentence = "We keep the invoices in the billing database. "
    huge = sentence * (3 * MAX_PROSE_CHARS // len(sentence))
    blocks = [{"type": "text", "text": sentence * 2000} for _ in range(20)]
    write(path, entry(1, text=huge), entry(2, "assistant", text="ok"), entry(3, text="A short one."))
    append(path, line({**entry(4, "assistant"), "message": {"role": "assistant", "content": blocks}}))
    chunk = read_transcript(str(path))
    assert short(chunk.turns) == ["01", "02", "03", "04"]
    first, last = chunk.turns[0].text, chunk.turns[3].text
    assert MAX_PROSE_CHARS - 20 < len(first) <= MAX_PROSE_CHARS and huge.startswith(first)
    assert first.split()[-1] in sentence.split() and (first.endswith(" ") or huge[len(first)] == " ")  # whole words
    assert len(last) <= MAX_PROSE_CHARS
    assert chunk.stats.cut_turns == 2


# --- which files are transcripts ----------------------------------------------------------------


def test_transcript_files_never_follow_a_symlink(tmp_path):
    root = tmp_path / "projects"
    project = root / "-srv-app"
    (project / "s1" / "subagents").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.jsonl").write_text("{}\n")
    (outside / "passwd").write_text("root:x:0:0\n")
    (project / "s1.jsonl").write_text("{}\n")
    (project / "s1" / "subagents" / "agent-1.jsonl").write_text("{}\n")
    (project / "x.jsonl").symlink_to(outside / "passwd")
    (project / "inside.jsonl").symlink_to(project / "s1.jsonl")  # inside: skipped too, its target is found
    (project / "linked-dir").symlink_to(outside)
    (root / "-linked-project").symlink_to(outside)
    (project / "a-dir.jsonl").mkdir()
    os.mkfifo(project / "fifo.jsonl")
    expected = [str(project / "s1" / "subagents" / "agent-1.jsonl"), str(project / "s1.jsonl")]
    assert transcript_files(root, root) == sorted(expected)
    assert transcript_files(project, root) == sorted(expected)
    assert transcript_files(root / "-linked-project", root) == []
    assert transcript_files(outside, root) == []
    assert contained_transcript(project / "s1.jsonl", root) == str(project / "s1.jsonl")
    for refused in (project / "x.jsonl", project / "inside.jsonl", project / "linked-dir" / "secret.jsonl",
                    root / "-linked-project" / "secret.jsonl", outside / "secret.jsonl", project / "fifo.jsonl",
                    project / "a-dir.jsonl", project / "missing.jsonl"):
        assert contained_transcript(refused, root) is None, refused


def test_a_symlinked_projects_folder_is_claudes_own_choice(tmp_path):
    real = tmp_path / "dotfiles" / "projects"
    (real / "-srv-app").mkdir(parents=True)
    (real / "-srv-app" / "s1.jsonl").write_text("{}\n")
    root = tmp_path / "claude-projects"
    root.symlink_to(real)
    assert transcript_files(root, root) == [str(real / "-srv-app" / "s1.jsonl")]
    assert contained_transcript(root / "-srv-app" / "s1.jsonl", root) == str(real / "-srv-app" / "s1.jsonl")


def test_a_fifo_in_place_of_a_transcript_is_refused_at_once_not_waited_on(tmp_path):
    """A FIFO swapped in for a transcript after the watcher checked it blocked it in `open` for good: every reader of
    a transcript (the reader, its watermark check, the head digest, the rescan's look for a new line) opens only a
    regular file."""
    from miner.runtime.pending import has_unmined_line

    fifo = tmp_path / "swapped.jsonl"
    os.mkfifo(fifo)
    with guarded():
        assert has_unmined_line(fifo, 0) is False
        assert Watermark(offset=10, inode=os.stat(fifo).st_ino, head="x").matches(str(fifo)) is False
        with pytest.raises(OSError, match="not a regular file"):
            read_transcript(str(fifo), Watermark(), seen=set())


def test_a_rescan_skips_the_holes_of_a_sparse_transcript(tmp_path):
    """A sparse file of 200 GB with no line in it (no disk used) cost every rescan of the watcher 54 s: its holes
    were read as zeros. They hold no line, and are skipped; a line written after them is still found."""
    from miner.runtime.pending import has_unmined_line

    sparse = tmp_path / "sparse.jsonl"
    sparse.write_bytes(b'{"type": "user"}')
    os.truncate(sparse, 200 << 30)
    with guarded():
        assert has_unmined_line(sparse, 0) is False
        with open(sparse, "ab") as handle:
            handle.write(b"\n")
        assert has_unmined_line(sparse, 0) is True


class Hung(Exception):  # (not an OSError, which the readers would take for a missing file)
    pass


@contextlib.contextmanager
def guarded(seconds: int = 20):
    """An alarm standing guard over a read that must not block or crawl (the code before never returned)."""
    import signal

    def hung(*_):
        raise Hung(f"still reading after {seconds} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
