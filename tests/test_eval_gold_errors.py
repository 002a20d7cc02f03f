"""A malformed gold file is one line naming the file, the line and what is wrong, never a traceback or a score.

`miner eval --transcripts`, `miner eval --multi` and `miner rules stats` read the gold files laid out in
GUIDELINES.md; synthetic gold here, written beside a synthetic transcript.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

from miner.cli.main import main
from tests.builders import Session

SOURCE = "acme__shop__session"
UNIT = "We'll use PostgreSQL instead of MySQL for the main database."
ANSWERS = 'a non-empty list of non-empty strings, e.g. ["PostgreSQL", "Postgres"]'


@pytest.fixture
def shop(tmp_path):
    """A one-session transcript, a gold folder with a good extraction and restore file, and a project folder."""
    transcripts = tmp_path / "transcripts"
    s = Session(transcripts / "acme__shop" / "session.jsonl", cwd="/work/shop")
    first = s.user(UNIT)
    s.assistant("Sure, I'll set that up now.")
    gold = tmp_path / "gold"
    for sub in ("extraction", "restore", "multi"):
        (gold / sub).mkdir(parents=True)
    unit = {"unit": 0, "uuid": first["uuid"], "role": "user", "category": "decision", "text": UNIT,
            "tentative": False, "doc": False, "supersedes": []}
    (gold / "extraction" / f"{SOURCE}.jsonl").write_text(json.dumps(unit) + "\n", encoding="utf-8")
    question = {"cut": "end", "question": "Which database?", "answers": ["PostgreSQL"], "category": "decision"}
    (gold / "restore" / f"{SOURCE}.jsonl").write_text(json.dumps(question) + "\n", encoding="utf-8")
    multi = tmp_path / "multi"
    Session(multi / "acme__garden" / "s1.jsonl", cwd="/work/garden").user("Let's go with pnpm from now on.")
    return {"gold": gold, "transcripts": transcripts, "multi": multi, "uuid": first["uuid"]}


def refused(args: list[str]) -> list[str]:
    """The lines a command that must refuse its input prints; it exits 1 with a message, not an exception."""
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1 and isinstance(result.exception, SystemExit), (result.output, result.exception)
    assert "Traceback" not in result.output
    return result.output.strip().splitlines()


def eval_transcripts(shop) -> list[str]:
    return refused(["eval", "--gold", str(shop["gold"]), "--transcripts", str(shop["transcripts"])])


@pytest.mark.parametrize("content,problem", [
    (b'{"cut": "end", "question": "Which database?", "answers": ["Postg',
     "not valid JSON (Unterminated string starting at column 59); each line must be one whole JSON object, "
     "a restore question"),
    (b'{"question": "Which database?"}\n',
     'no "cut"; a restore question needs "cut", "question" and "answers" (see GUIDELINES.md)'),
    (b'["end", "Which database?"]\n',
     "an array, not a JSON object; each line must be one JSON object, a restore question"),
    (b'\xff\xfe{"cut": "end"}\n', "not UTF-8 (byte 0xff at column 1); save the file as UTF-8"),
], ids=["truncated", "missing-key", "list", "not-utf8"])
def test_a_malformed_restore_file_is_one_line(shop, content, problem):
    path = shop["gold"] / "restore" / f"{SOURCE}.jsonl"
    path.write_bytes(content)
    assert eval_transcripts(shop) == [f"Error: {path}:1: {problem}"]


@pytest.mark.parametrize("answers", ["e", [], [" "], ["PostgreSQL", 5]], ids=["string", "empty", "blank", "number"])
def test_restore_answers_must_be_a_list_of_strings(shop, answers):
    # A string was searched letter by letter: "e" is in any block, so the question always counted as answered.
    path = shop["gold"] / "restore" / f"{SOURCE}.jsonl"
    good = {"cut": "end", "question": "Which database?", "answers": ["PostgreSQL"]}
    path.write_text(json.dumps(good) + "\n\n" + json.dumps({**good, "answers": answers}) + "\n", encoding="utf-8")
    shown = json.dumps(answers)
    assert eval_transcripts(shop) == [f'Error: {path}:3: "answers" is {shown}; it must be {ANSWERS}']


def test_an_extraction_unit_without_its_fields_or_with_an_unknown_category_is_one_line(shop):
    path = shop["gold"] / "extraction" / f"{SOURCE}.jsonl"
    path.write_text('{"text": "hi"}\n', encoding="utf-8")
    assert eval_transcripts(shop) == [f'Error: {path}:1: no "unit"; a gold unit needs "unit", "uuid", "text" and '
                                      '"category" (see GUIDELINES.md)']
    opinion = {"unit": 0, "uuid": shop["uuid"], "role": "user", "category": "opinion", "text": UNIT}
    path.write_text(json.dumps(opinion) + "\n", encoding="utf-8")
    assert eval_transcripts(shop) == [f'Error: {path}:1: "category" is "opinion"; it must be one of decision, '
                                      'preference, fact, todo']


def test_rules_stats_names_the_bad_gold_line(shop):
    path = shop["gold"] / "extraction" / f"{SOURCE}.jsonl"
    unit = {"unit": 0, "uuid": shop["uuid"], "category": "decision", "text": UNIT}
    path.write_text(json.dumps(unit) + "\n" + json.dumps({**unit, "unit": 1, "uuid": None}) + "\n", encoding="utf-8")
    lines = refused(["rules", "stats", "--gold", str(shop["gold"]), "--transcripts", str(shop["transcripts"])])
    assert lines == [f'Error: {path}:2: "uuid" is null; it must be a string']


@pytest.mark.parametrize("question,problem", [
    ({"question": "Which package manager?", "answers": ["pnpm"]},
     'no "before"; a cross-session question needs "before", "question" and "answers" (see GUIDELINES.md)'),
    ({"before": "end", "question": "Which package manager?", "answers": "p"},
     f'"answers" is "p"; it must be {ANSWERS}'),
], ids=["missing-before", "string-answers"])
def test_a_malformed_cross_session_question_is_one_line(shop, question, problem):
    path = shop["gold"] / "multi" / "acme__garden.jsonl"
    path.write_text(json.dumps(question) + "\n", encoding="utf-8")
    lines = refused(["eval", "--gold", str(shop["gold"]), "--multi", str(shop["multi"])])
    assert lines == [f"Error: {path}:1: {problem}"]


def test_the_installed_command_prints_no_traceback(shop):
    path = shop["gold"] / "restore" / f"{SOURCE}.jsonl"
    path.write_text('{"cut": "end", "question": "Which database?", "answers": "PostgreSQL"}\n', encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "miner", "eval", "--gold", str(shop["gold"]), "--transcripts",
                           str(shop["transcripts"])], capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == f'Error: {path}:1: "answers" is "PostgreSQL"; it must be {ANSWERS}\n'


@pytest.mark.parametrize("command", [["train", "--out", "{out}"], ["eval", "--cv", "{data}"]])
def test_training_and_cross_validation_read_the_gold_as_eval_does(shop, tmp_path, command):
    """`miner train` and `miner eval --cv` read the same gold files through a reader of their own, which a truncated
    line or a missing field stopped with a traceback."""
    data = tmp_path  # the shared data's layout: gold/ and transcripts/ side by side
    (shop["gold"] / "extraction" / f"{SOURCE}.jsonl").write_text('{"unit": 0, "text": "hi"}\n', encoding="utf-8")
    args = [a.format(out=tmp_path / "model", data=data) for a in command]
    if command[0] == "train":
        args += ["--data", str(data)]
    lines = refused(args)
    assert lines[-1] == (f'Error: {shop["gold"] / "extraction" / f"{SOURCE}.jsonl"}:1: no "uuid"; a gold unit needs '
                         '"unit", "uuid", "text" and "category" (see GUIDELINES.md)')
    assert not (tmp_path / "model").exists()
