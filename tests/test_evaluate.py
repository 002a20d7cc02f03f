"""`miner eval`: the scoring rules of GUIDELINES.md, on synthetic gold, and the dev gold when present."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from miner import config as config_mod
from miner.cli.main import main
from miner.evaluation.transcripts import (
    LONG_RANGE_CHARS,
    answer_distance,
    evaluate,
    prf,
    restore_lines,
    restore_totals,
    score_extraction,
    session_prose,
    texts_match,
)
from tests.builders import Session


def test_texts_match_by_containment_or_jaccard():
    assert texts_match("using Plotly for charts", "- Render the chart   using Plotly for charts.")
    assert texts_match("the port is 3216 for the api", "api port is 3216 for the")  # same words
    assert not texts_match("We use Postgres", "Deploy to Render on Fridays")


def gold_unit(n, uuid, text, category="decision", **kw):
    return {"unit": n, "uuid": uuid, "role": "user", "category": category, "text": text, "tentative": False,
            "doc": False, "supersedes": [], **kw}


def test_score_extraction_counts_neutral_units_and_categories():
    gold = [
        gold_unit(0, "a", "We deploy on Render."),
        gold_unit(1, "a", "Maybe use Redis.", tentative=True),
        gold_unit(2, "b", "Tests run with make test.", "fact"),
        gold_unit(3, "c", "Pasted brief line.", doc=True),
    ]
    mined = [
        {"uuid": "a", "text": "We deploy on Render.", "category": "decision"},  # tp
        {"uuid": "a", "text": "Maybe use Redis.", "category": "decision"},  # neutral
        {"uuid": "b", "text": "Tests run with make test.", "category": "decision"},  # tp ignored, fp required
        {"uuid": "b", "text": "Completely different words here.", "category": "fact"},  # fp
        {"uuid": "z", "text": "We deploy on Render.", "category": "decision"},  # other entry: fp
        {"uuid": "c", "text": "Pasted brief line.", "category": "fact"},  # neutral
    ]
    counts = score_extraction(mined, gold)
    ignored, required = prf(counts["ignored"]), prf(counts["required"])
    assert (counts["ignored"]["tp"], counts["ignored"]["fp"]) == (2, 2)
    assert ignored["precision"] == 0.5 and ignored["recall"] == 1.0
    assert (counts["required"]["tp"], counts["required"]["fp"]) == (1, 3)
    assert required["recall"] == 0.5
    assert counts["per_category"]["fact"] == {"fp": 1, "gold": 1}


@pytest.fixture
def synthetic_gold(tmp_path):
    transcripts = tmp_path / "transcripts"
    s = Session(transcripts / "acme__shop" / "session.jsonl", cwd="/work/shop")
    first = s.user("We'll use PostgreSQL instead of MySQL for the main database.")
    s.assistant("Sure, I'll set that up now.")
    s.user("Please always run the linter before you commit.")
    boundary, _ = s.compact("Summary: the user decided many things.")
    s.user("Let's go with pnpm as the package manager from now on.")
    gold = tmp_path / "gold"
    for sub in ("extraction", "restore"):
        (gold / sub).mkdir(parents=True)
    source = "acme__shop__session"
    (gold / "extraction" / f"{source}.jsonl").write_text(
        json.dumps(gold_unit(0, first["uuid"], "We'll use PostgreSQL instead of MySQL for the main database.")) + "\n")
    questions = [
        {"cut": boundary["uuid"], "question": "Which database?", "answers": ["PostgreSQL"], "category": "decision"},
        {"cut": boundary["uuid"], "question": "Which package manager?", "answers": ["pnpm"], "category": "decision"},
        {"cut": "end", "question": "Which package manager?", "answers": ["pnpm"], "category": "decision"},
    ]
    (gold / "restore" / f"{source}.jsonl").write_text("".join(json.dumps(q) + "\n" for q in questions))
    return gold, transcripts


def test_eval_on_synthetic_gold(synthetic_gold):
    gold, transcripts = synthetic_gold
    report = evaluate(gold, transcripts, config_mod.load())
    source = report["sources"][0]
    cuts = {c["cut"] == "end": c for c in source["restore"]}
    # Before the compaction only the database was known: pnpm comes later and must not leak in.
    assert (cuts[False]["answered"], cuts[False]["questions"]) == (1, 2)
    assert (cuts[True]["answered"], cuts[True]["questions"]) == (1, 1)
    assert report["extraction"]["ignored"]["recall"] == 1.0
    assert report["restore"]["hit_rate"] == round(2 / 3, 3)


def test_eval_cli_table_and_json(synthetic_gold):
    gold, transcripts = synthetic_gold
    runner = CliRunner()
    table = runner.invoke(main, ["eval", "--gold", str(gold), "--transcripts", str(transcripts)])
    assert table.exit_code == 0 and "0.667" in table.output
    data = json.loads(runner.invoke(main, ["eval", "--gold", str(gold), "--transcripts", str(transcripts),
                                           "--json"]).stdout)
    assert data["restore"]["answered"] == 2


def test_answer_distance_is_counted_from_where_the_answer_was_last_said(tmp_path):
    s = Session(tmp_path / "t.jsonl", cwd="/work/shop")
    early = s.user("We'll use PostgreSQL instead of MySQL for the main database.")
    s.assistant("Noted. " + "Filler prose about other things. " * 400)
    s.user("Remember: PostgreSQL, not MySQL.")
    s.assistant("Yes. " + "More filler prose. " * 100)
    prose, starts = session_prose(s.path)
    restated = {"answers": ["PostgreSQL"], "evidence_uuid": early["uuid"]}
    assert answer_distance(restated, prose, starts) == len(prose) - prose.rfind("PostgreSQL")
    assert answer_distance(restated, prose, starts) < LONG_RANGE_CHARS  # restated lately: not long-range
    paraphrased = {"answers": ["Postgres 16"], "evidence_uuid": early["uuid"]}
    assert answer_distance(paraphrased, prose, starts) == len(prose) > LONG_RANGE_CHARS  # from its evidence entry


def test_restore_is_reported_per_transcript_with_long_range_questions_apart(synthetic_gold):
    gold, transcripts = synthetic_gold
    report = evaluate(gold, transcripts, config_mod.load())
    restore = report["restore"]
    assert restore["long_questions"] == 0 and restore["tail_answered"] <= restore["answered"]
    table = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--transcripts", str(transcripts)]).output
    assert "Restore per transcript" in table and "acme__shop__session" in table and "long-range" in table
    assert "end (resumed)" in table


def test_a_session_shorter_than_the_block_is_marked_as_a_tail_that_holds_it_all(synthetic_gold):
    gold, transcripts = synthetic_gold
    report = evaluate(gold, transcripts, config_mod.load())
    # A few short lines: at both cuts the block is longer than the session's prose, so the tail is all of it.
    assert [c["whole_session"] for c in report["sources"][0]["restore"]] == [1, 1]
    table = CliRunner().invoke(main, ["eval", "--gold", str(gold), "--transcripts", str(transcripts)]).output
    row = next(line for line in table.splitlines() if line.startswith("acme__shop__session") and "/" in line
               and "cut" not in line and "end" not in line)
    assert row.endswith(" =") and "the tail is the whole session" in table


def test_a_transcript_is_marked_only_when_every_cut_held_the_whole_session():
    cut = {"questions": 4, "answered": 3, "answered_no_void": 3, "tail_answered": 1, "chars": 900,
           "long_questions": 0, "long_answered": 0, "long_tail_answered": 0}
    sources = [{"source": "one_cut_longer", "restore": [dict(cut, whole_session=1), dict(cut, whole_session=0)]}]
    lines = restore_lines(sources, restore_totals(sources[0]["restore"]))
    assert not lines[1].endswith(" =") and not any("whole session" in line for line in lines)
    sources[0]["restore"][1]["whole_session"] = 1
    lines = restore_lines(sources, restore_totals(sources[0]["restore"]))
    assert lines[1].endswith(" =") and "whole session" in lines[-1]


# --- the dev gold (../shared/data), skipped when absent -----------------------------------------


@pytest.mark.shared
def test_dev_transcripts_mine_cleanly_and_idempotently(shared_data):
    files = sorted(str(p) for p in (shared_data / "transcripts").glob("*/*.jsonl"))
    assert len(files) >= 5
    runner = CliRunner()
    first = runner.invoke(main, ["mine", *files])
    assert first.exit_code == 0, first.output
    assert "error" not in first.output.lower()
    again = runner.invoke(main, ["mine", *files])
    assert again.exit_code == 0
    assert "0 units, 0 candidates, 0 new memories, 0 merged" in again.stdout


@pytest.mark.shared
def test_dev_gold_baseline(shared_data):
    report = evaluate(shared_data / "gold", shared_data / "transcripts", config_mod.load())
    ignored = report["extraction"]["ignored"]
    assert ignored["precision"] >= 0.60, ignored
    assert ignored["recall"] >= 0.40, ignored
    assert report["restore"]["hit_rate"] >= 0.60, report["restore"]


def test_rules_stats_on_synthetic_gold(synthetic_gold):
    gold, transcripts = synthetic_gold
    result = CliRunner().invoke(main, ["rules", "stats", "--gold", str(gold), "--transcripts", str(transcripts)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["rule", "hits", "correct", "precision", "only", "it"]
    # The one gold unit (the database decision) is found, so some rule has a correct hit.
    rows = [line.split() for line in lines[1:] if not line.startswith("    ")]
    assert sum(int(r[2]) for r in rows) >= 1
    assert any("only: We'll use PostgreSQL" in line for line in lines) or sum(int(r[2]) for r in rows) > 1


def test_eval_with_nothing_to_score_and_train_into_no_folder_are_one_line_each(tmp_path):
    gold, transcripts = tmp_path / "gold", tmp_path / "transcripts"
    (gold / "extraction").mkdir(parents=True)
    transcripts.mkdir()
    (gold / "extraction" / "absent-session.jsonl").write_text("")
    runner = CliRunner()
    result = runner.invoke(main, ["eval", "--gold", str(gold), "--transcripts", str(transcripts)])
    assert result.exit_code == 1, result.output
    assert f"nothing to score: {gold} has labels (extraction/*.jsonl, restore/*.jsonl) for 1 transcript(s), none " \
           f"of them under {transcripts}" in result.output
    result = runner.invoke(main, ["eval", "--gold", str(gold), "--multi", str(transcripts)])
    assert result.exit_code == 1 and "nothing to score:" in result.output and "for 0 project(s)" in result.output
    result = runner.invoke(main, ["rules", "stats", "--gold", str(gold), "--transcripts", str(transcripts)])
    assert result.exit_code == 1 and len(result.output.strip().splitlines()) == 1
    assert f"nothing to score: 1 gold file(s) in {gold / 'extraction'}, none with its transcript under " \
           f"{transcripts}" in result.output
    out = tmp_path / "missing" / "model"  # said before the training runs, not after
    result = runner.invoke(main, ["train", "--data", str(tmp_path), "--out", str(out)])
    assert result.exit_code == 1 and f"cannot write the model to {out}" in result.output, result.output
