"""The command line: help everywhere, clear one-line errors, and the main commands on real files."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from miner import paths
from miner.cli.main import main
from miner.extract import rules as rules_mod
from miner.memory.store import Store
from tests.builders import Session

README = Path(__file__).resolve().parent.parent / "README.md"


def all_commands(group: click.Group, prefix: tuple[str, ...] = ()):
    for name, command in group.commands.items():
        yield prefix + (name,), command
        if isinstance(command, click.Group):
            yield from all_commands(command, prefix + (name,))


COMMANDS = list(all_commands(main))


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_command_has_help(path, command):
    assert command.help and command.help.strip(), f"`miner {' '.join(path)}` has no help text"
    result = CliRunner().invoke(main, [*path, "--help"])
    assert result.exit_code == 0 and "Usage:" in result.output


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) for p, _ in COMMANDS])
def test_every_option_says_what_it_does(path, command):
    bare = [p.opts[0] for p in command.params if isinstance(p, click.Option) and not (p.help or "").strip()]
    assert bare == [], f"`miner {' '.join(path)}`: no help text for {', '.join(bare)}"


def test_readme_lists_every_command():
    text = README.read_text(encoding="utf-8")
    documented = set(re.findall(r"`miner ([a-z]+(?: [a-z]+)?)", text))
    for path, command in COMMANDS:
        if isinstance(command, click.Group):
            continue
        assert " ".join(path) in documented or path[0] in documented, f"README does not mention `miner {' '.join(path)}`"


@pytest.fixture
def transcript(tmp_path):
    s = Session(tmp_path / "proj" / "s1.jsonl", cwd="/work/shop")
    s.user("We'll use PostgreSQL instead of MySQL for the main database.")
    s.assistant("Understood. The API server listens on port 8080 in development.")
    s.user("Please always run the linter before you commit.")
    return s.path


def test_mine_list_show_stats_recall(transcript):
    runner = CliRunner()
    result = runner.invoke(main, ["mine", str(transcript)])
    assert result.exit_code == 0, result.output
    assert re.search(r"1 files, \d+ entries, \d+ units, \d+ candidates, [1-9]\d* new memories", result.output)

    again = runner.invoke(main, ["mine", str(transcript)])
    assert "0 new memories, 0 merged" in again.output

    listing = runner.invoke(main, ["list", "--limit", "50"])
    assert "PostgreSQL" in listing.output
    memory_id = int(re.search(r"^\s*(\d+)\s+\w+.*PostgreSQL", listing.output, re.M).group(1))

    shown = runner.invoke(main, ["show", str(memory_id)])
    assert shown.exit_code == 0
    assert str(transcript) in shown.output and "evidence (1)" in shown.output

    stats = runner.invoke(main, ["stats", "--json"])
    assert json.loads(stats.output)["sessions"] == 1

    block = runner.invoke(main, ["recall", "--project", "/work/shop"])
    assert "PostgreSQL" in block.output and "transcript-miner-recall" in block.output


def test_show_of_a_correction_prints_no_empty_transcript_line(transcript):
    """A correction (and a memory stored on request) was said in no transcript: `show` printed an empty line for it."""
    runner = CliRunner()
    assert runner.invoke(main, ["mine", str(transcript)]).exit_code == 0
    listing = runner.invoke(main, ["list", "--limit", "50"]).output
    memory_id = int(re.search(r"^\s*(\d+)\s+\w+.*PostgreSQL", listing, re.M).group(1))
    corrected = runner.invoke(main, ["correct", str(memory_id), "We'll use SQLite for the main database."])
    assert corrected.exit_code == 0, corrected.output
    new_id = int(re.search(r"#(\d+) added", corrected.output).group(1))
    shown = runner.invoke(main, ["show", str(new_id)]).output
    evidence = shown.split("evidence (1):\n", 1)[1].splitlines()
    assert evidence[0].strip().endswith(tuple("0123456789abcdef")) and evidence[1].startswith("  link:"), shown
    assert all(line.strip() for line in shown.splitlines()), shown


def test_mine_renders_the_next_session_start_block_of_what_it_mined(transcript):
    from miner import config
    from miner.memory.store import Store
    from miner.recall import blockcache

    path = blockcache.startup_path("/work/shop")
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    entry = blockcache.load(path)  # what SessionStart uses while the store and the settings are unchanged
    assert entry is not None and "PostgreSQL" in entry["text"]
    with Store(readonly=True) as store:
        assert entry["text"] == blockcache.render(store, "/work/shop", config.load(), "startup")[0]
    os.remove(path)
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    assert not os.path.exists(path)  # nothing new was mined: nothing rendered


def test_a_project_given_with_a_tilde_is_the_folder_in_home(isolated_home):
    """`--project=~/shop` reaches the command unexpanded (no shell expands after `=`): it means the home's shop."""
    from miner.cli.common import project_dir

    (isolated_home / "shop").mkdir()
    assert project_dir("~/shop") == str(isolated_home / "shop")
    assert project_dir(str(isolated_home / "shop")) == str(isolated_home / "shop")
    Store().close()
    block = CliRunner().invoke(main, ["recall", "--project=~/shop"])
    assert block.exit_code == 0 and f"Project memory for {isolated_home / 'shop'}," in block.output


@pytest.mark.parametrize("args", [["list"], ["stats"], ["show", "1"], ["search", "postgres"], ["recall"], ["zones"],
                                  ["export"], ["backup", "copy.db"], ["quarantine"], ["gc", "--dry-run"],
                                  ["history", "1"], ["forget", "1"], ["pin", "1"], ["approve", "1"],
                                  ["purge", "--project", "/work/shop", "--yes"]])
def test_a_command_that_reads_or_changes_the_store_never_makes_one(isolated_home, monkeypatch, args):
    """A mistyped MINER_HOME must not look like an empty memory: the command says where it looked, and the folder
    stays as it was."""
    home = isolated_home / "typo"
    monkeypatch.setenv("MINER_HOME", str(home))
    monkeypatch.chdir(isolated_home)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 1, result.output
    assert result.output.strip().splitlines() == [
        f"Error: no memory store at {home / 'memory.db'} yet: mine transcripts first (`miner mine --all`), or set "
        "MINER_HOME to the folder that holds it"]
    assert not home.exists()


MINE_PROBE = """
import json, sys
from miner.cli import main
try:
    main(["mine", "-q", *sys.argv[1:]])
except SystemExit:
    pass
print(json.dumps({"spacy": "spacy" in sys.modules}))
"""


def test_mining_nothing_new_builds_no_miner(transcript):
    """A transcript with nothing past its watermark is counted, not read: spaCy is never loaded for it."""
    def mine(*paths):
        done = subprocess.run([sys.executable, "-c", MINE_PROBE, *map(str, paths)], capture_output=True, text=True,
                              env=dict(os.environ), timeout=120)
        assert done.returncode == 0, done.stderr
        summary, probe = done.stdout.strip().splitlines()[-2:]
        return summary, json.loads(probe)["spacy"]

    first, loaded = mine(transcript)
    assert loaded and re.search(r"^1 files, [1-9]\d* entries, .* [1-9]\d* new memories", first)
    again, loaded = mine(transcript)
    assert not loaded and again.startswith("1 files, 0 entries, 0 units, 0 candidates, 0 new memories")
    transcript.write_text(transcript.read_text() + transcript.read_text().splitlines(keepends=True)[0].replace(
        '"uuid": "', '"uuid": "more-'))
    added, loaded = mine(transcript)  # a line past the watermark: mined
    assert loaded and added.startswith("1 files, 1 entries")


def test_show_unknown_id_is_one_clear_line(transcript):
    runner = CliRunner()
    runner.invoke(main, ["mine", str(transcript)])
    result = runner.invoke(main, ["show", "999999"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == ["Error: no memory 999999; `miner list` shows the ids"]


def test_mine_missing_path_is_one_clear_line(tmp_path):
    result = CliRunner().invoke(main, ["mine", str(tmp_path / "nope.jsonl")])
    assert result.exit_code == 1 and "does not exist" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_mine_an_empty_path_is_refused_not_read_as_the_working_folder(tmp_path, monkeypatch):
    """`miner mine ""` mined every file under the working folder (an export there was taken for a transcript)."""
    folder = tmp_path / "here" / "sub"
    folder.mkdir(parents=True)
    (folder / "export.jsonl").write_text('{"record": "header"}\n', encoding="utf-8")
    monkeypatch.chdir(tmp_path / "here")
    for args in (["mine", ""], ["mine", " "], ["mine", str(folder), ""]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1, result.output
        assert result.output.strip().splitlines() == ["Error: an empty path; pass transcript files or folders, or "
                                                      "--all"]
    assert not paths.db_path().exists()


def test_mine_a_pipe_is_named_for_what_it_is(tmp_path):
    fifo = tmp_path / "session.jsonl"
    os.mkfifo(fifo)
    result = CliRunner().invoke(main, ["mine", str(fifo)])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [f"Error: {fifo} is not a file or a folder; pass transcript files "
                                                  "or folders"]


def test_mine_a_folder_without_transcripts_says_so_in_one_line(tmp_path):
    (tmp_path / "notes.txt").write_text("not a transcript")
    result = CliRunner().invoke(main, ["mine", str(tmp_path)])
    assert result.exit_code == 1 and f"no transcripts (*.jsonl) under {tmp_path}" in result.output
    assert len(result.output.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["stats"], ["list"], ["search", "redis"], ["export"]])
def test_a_file_that_is_no_database_is_one_clear_line(command):
    paths.db_path().parent.mkdir(parents=True, exist_ok=True)
    paths.db_path().write_bytes(b"SQLite format 3\x00" + b"damaged " * 600)
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1
    assert result.output.startswith(f"Error: cannot use {paths.db_path()}: file is not a database;")
    assert len(result.output.strip().splitlines()) == 1


def test_mine_all_without_claude_folder_says_nothing_to_mine():
    result = CliRunner().invoke(main, ["mine", "--all"])
    assert result.exit_code == 0 and "Nothing to mine" in result.output


def test_mine_all_finds_projects_and_subagents(claude_dir):
    project = claude_dir / "projects" / "-work-shop"
    main_session = Session(project / "s1.jsonl", cwd="/work/shop")
    main_session.user("We'll use PostgreSQL instead of MySQL for the main database.")
    sub = Session(project / main_session.session_id / "subagents" / "agent-1.jsonl", cwd="/work/shop",
                  session_id=main_session.session_id)
    sub.assistant("The API server listens on port 8080 in development.", isSidechain=True)
    result = CliRunner().invoke(main, ["mine", "--all"])
    assert result.exit_code == 0 and result.stdout.startswith("2 files")


def test_broken_config_is_one_clear_line(isolated_home):
    config = isolated_home / ".config" / "miner"
    config.mkdir(parents=True)
    (config / "config.json").write_text("{nope", encoding="utf-8")
    result = CliRunner().invoke(main, ["recall"])
    assert result.exit_code == 1 and "config.json is not valid JSON" in result.output


def test_rules_check_and_list():
    runner = CliRunner()
    check = runner.invoke(main, ["rules", "check"])
    assert check.exit_code == 0, check.output
    assert "all examples behave" in check.output
    listing = runner.invoke(main, ["rules", "list"])
    assert listing.exit_code == 0 and "decision" in listing.output


def test_rules_check_reports_broken_user_rule(isolated_home):
    folder = isolated_home / ".config" / "miner" / "rules"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("rules:\n  - id: my.rule\n    category: fact\n    patterns: ['(']\n")
    result = CliRunner().invoke(main, ["rules", "check"])
    assert result.exit_code == 1
    assert "mine.yaml:2: rule my.rule" in result.output


def test_any_command_reports_a_broken_rule_file_in_one_line(isolated_home):
    folder = isolated_home / ".config" / "miner" / "rules"
    folder.mkdir(parents=True)
    (folder / "mine.yaml").write_text("rules:\n  - id: my.rule\n    category: fact\n    patterns: ['(']\n")
    result = CliRunner().invoke(main, ["rules", "test", "We use pnpm for every package in this repo."])
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "mine.yaml:2: rule my.rule" in lines[0] and "miner rules check" in lines[0]


def test_rules_check_names_a_disabled_id_that_no_rule_has(isolated_home):
    """A typo in `disable:` turned nothing off, and `rules check` said all was valid."""
    folder = isolated_home / ".config" / "miner" / "rules"
    folder.mkdir(parents=True)
    shipped = next(iter(rules_mod.load_rules(rules_mod.default_rule_files()).rules)).id
    (folder / "mine.yaml").write_text(f"disable: [{shipped}, {shipped}x]\n")
    result = CliRunner().invoke(main, ["rules", "check"])
    assert result.exit_code == 1
    assert f"mine.yaml: `disable` names no rule: {shipped}x" in result.output
    assert f"no rule: {shipped}\n" not in result.output and "1 disabled id(s) name no rule" in result.output


@pytest.mark.parametrize("command", [["rules", "check"], ["rules", "test", "We use pnpm."], ["mine", "--all"]])
def test_a_broken_secrets_file_is_one_line_for_any_command(isolated_home, claude_dir, command):
    """The user's secret kinds are part of redaction: no command mines (or traces) without them, and none
    answers a broken file with a traceback."""
    Session(claude_dir / "projects" / "-work-shop" / "s1.jsonl", cwd="/work/shop").user("We use pnpm.")
    folder = isolated_home / ".config" / "miner"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "secrets.yaml").write_text("secrets:\n  - kind: Bad Kind\n    pattern: 'x'\n")
    result = CliRunner().invoke(main, command)
    assert result.exit_code == 1
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "secrets.yaml: secret #1: `kind` must be lower-case" in lines[0]
    if paths.db_path().exists():  # nothing was mined
        with Store(readonly=True) as store:
            assert store.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


@pytest.mark.parametrize("name", ["synonyms.yaml", "glossary.yaml"])
def test_a_broken_word_list_of_the_users_stops_no_mining_and_rules_check_names_it(isolated_home, claude_dir, name):
    """A mistake in the user's synonyms stopped all mining (a Stop's worker logged a traceback and stored nothing),
    and `miner rules check` said everything was valid. Synonyms only decide what merges as the same memory."""
    Session(claude_dir / "projects" / "-work-shop" / "s1.jsonl", cwd="/work/shop").user(
        "We decided to use PostgreSQL for the billing service because we need transactions across accounts.")
    folder = isolated_home / ".config" / "miner"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_text("groups:\n  - [k8s, kubernetes\n", encoding="utf-8")
    check = CliRunner().invoke(main, ["rules", "check"])
    assert check.exit_code == 1 and f"{name}:3: not valid YAML" in check.output, check.output
    mined = CliRunner().invoke(main, ["mine", "--all"])
    assert mined.exit_code == 0, mined.output
    with Store(readonly=True) as store:
        assert store.db.execute("SELECT count(*) FROM memories WHERE text LIKE '%PostgreSQL%'").fetchone()[0] == 1
    (folder / name).write_text("groups:\n  - [k8s, kubernetes]\n", encoding="utf-8")
    check = CliRunner().invoke(main, ["rules", "check"])
    assert check.exit_code == 0 and "(glossary and synonyms): all valid" in check.output, check.output


def test_testing_the_rules_prints_no_secret_and_traces_what_mining_sees(claude_dir):
    """`rules test` traced the turns as they were written: a password a transcript or TEXT held was printed in
    clear, and the rules were shown firing on words that mining never sees. A secret the memory store learnt is
    hidden too."""
    from miner.extract.secret_turns import digest

    password, token = "Hq7!vLx2Wz9p", "sk-ant-api03-" + "Ab3dE6gH9jK2mN5pQ8sT1vW4yZ7bC0eF3hJ6"
    said = f"The staging database password is {password} and the API key is {token}."
    session = Session(claude_dir / "projects" / "-work-shop" / "s1.jsonl", cwd="/work/shop")
    session.user(said)
    learnt = "Rt5kPw8ZqL2x"
    with Store() as store, store.atomic():
        store.add_secret_digests({digest(store.secret_digests()[0], learnt)}, 100)
    for args in (["rules", "test", said], ["rules", "test", "--transcript", str(session.path), "--all-units"],
                 ["rules", "test", f"We decided the consumer group is named {learnt} for now."]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 0, result.output
        assert "[REDACTED:" in result.output, result.output
        assert not any(secret in result.output for secret in (password, token, learnt)), result.output


def test_testing_the_rules_makes_no_memory_store():
    result = CliRunner().invoke(main, ["rules", "test", "We'll use pnpm instead of npm for this repo."])
    assert result.exit_code == 0 and "-> kept" in result.stdout
    assert not paths.db_path().exists()


@pytest.mark.parametrize("command", [["rules", "check"], ["rules", "list"], ["rules", "test", "We use pnpm."]])
def test_a_project_folder_that_does_not_exist_is_one_clear_error(tmp_path, command):
    result = CliRunner().invoke(main, [*command, "--project", str(tmp_path / "gone")])
    assert result.exit_code == 1
    expected = f"Error: no such folder: {tmp_path / 'gone'}; give the project's folder with --project"
    assert result.output.strip() == expected


def test_rules_check_counts_the_secret_kinds_it_checked():
    result = CliRunner().invoke(main, ["rules", "check"])
    assert result.exit_code == 0 and re.search(r"\. \d+ secret kinds in 1 file: all valid\.$", result.output.strip())


def test_rules_test_shows_rules_and_refinement():
    runner = CliRunner()
    result = runner.invoke(main, ["rules", "test", "We'll use pnpm instead of npm for this repo. Thanks!"])
    assert result.exit_code == 0, result.output
    assert "[user] We'll use pnpm instead of npm for this repo." in result.stdout
    assert "-> kept" in result.stdout and "decision: We'll use pnpm instead of npm" in result.stdout
    # Every unit of a TEXT is shown, with what was done to it: thanks are not kept.
    thanks = result.stdout[result.stdout.index("[user] Thanks!"):]
    assert "-> kept" not in thanks.splitlines()[1]
    question = runner.invoke(main, ["rules", "test", "Should we use pnpm instead of npm for this repo?"])
    assert "-> question" in question.stdout
    # The refinement steps the unit went through, by name, in order; the last one is the one that dropped it.
    assert "    refinement: quote > output > question\n" in question.stdout
    kept = result.stdout.splitlines()
    steps = next(line for line in kept if line.startswith("    refinement: "))
    assert steps.endswith("self-contained > quality-gate > hedge")


def test_rules_test_transcript(transcript):
    result = CliRunner().invoke(main, ["rules", "test", "--transcript", str(transcript), "--all-units"])
    assert result.exit_code == 0
    assert "[assistant] Understood." in result.stdout  # --all-units lists units no rule fired on
    assert "PostgreSQL" in result.stdout


def test_rules_test_on_a_transcript_without_prose_says_so(tmp_path):
    empty = tmp_path / "tools-only.jsonl"
    empty.write_bytes(b"\x00\x01 not a transcript\n")
    result = CliRunner().invoke(main, ["rules", "test", "--transcript", str(empty)])
    assert result.exit_code == 0 and f"No prose to test in {empty}" in result.output
    assert "no classifier is installed" not in result.output


def test_rules_test_needs_exactly_one_input(transcript):
    result = CliRunner().invoke(main, ["rules", "test"])
    assert result.exit_code == 2 and "give TEXT or --transcript FILE" in result.output


def test_rules_test_refuses_an_option_that_does_not_apply_to_its_input(transcript):
    """`--all-units` with TEXT, and `--role` with a transcript, were taken and did nothing."""
    result = CliRunner().invoke(main, ["rules", "test", "We use pnpm for every package.", "--all-units"])
    assert result.exit_code == 2 and "--all-units goes with --transcript" in result.output, result.output
    result = CliRunner().invoke(main, ["rules", "test", "--transcript", str(transcript), "--role", "assistant"])
    assert result.exit_code == 2 and "--role says who says TEXT" in result.output, result.output
    allowed = CliRunner().invoke(main, ["rules", "test", "--role", "user", "We use pnpm for every package."])
    assert allowed.exit_code == 0, allowed.output


def test_recall_of_a_session_is_its_own_projects_block(tmp_path):
    """`--session` of another project than the one asked for (the cwd's by default) mixed that session's checkpoint
    into this project's block."""
    shop = Session(tmp_path / "shop" / "s1.jsonl", cwd="/work/shop")
    shop.user("We'll keep the invoices in PostgreSQL from now on.")
    other = Session(tmp_path / "blog" / "s2.jsonl", cwd="/work/blog")
    other.user("We decided to publish the blog with Hugo.")
    assert CliRunner().invoke(main, ["mine", str(shop.path), str(other.path)]).exit_code == 0
    asked = ["recall", "--situation", "compact", "--session", shop.session_id]
    result = CliRunner().invoke(main, [*asked, "--project", "/work/blog"])
    assert result.exit_code == 1 and result.output.splitlines() == [
        f"Error: session '{shop.session_id}' is of /work/shop, not of /work/blog: give --project /work/shop, or "
        "leave --project out"], result.output
    result = CliRunner().invoke(main, asked)  # run anywhere: the session's own project
    assert result.exit_code == 0 and "invoices in PostgreSQL" in result.output and "Hugo" not in result.output
    assert "Project memory for /work/shop," in result.output, result.output


def test_python_dash_m_miner_is_the_miner_command():
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-m", "miner", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and "Transcript Miner" in done.stdout and "eval" in done.stdout


def test_recall_explain_shows_the_words_of_what_a_question_ranked_past_the_shortlist(tmp_path):
    """A question reads whole only the memories a block may draw from; `--explain` reads the others it lists."""
    from miner.memory.records import NewMemory
    from miner.memory.store import Store

    project = str(tmp_path / "shop")
    with Store() as store, store.atomic():
        for n in range(175):
            store.add_memory(NewMemory(project=project, category="fact", text=f"Widget {n} is packed in crate {n}.",
                                       confidence=0.8, rule_id="t", role="user", session_id="s1",
                                       transcript="/t.jsonl", entry_uuid=f"u{n}", ts="2026-01-02T00:00:00Z"))
    result = CliRunner().invoke(main, ["recall", "widget crate", "--project", project, "--explain",
                                       "--budget", "100000"])
    assert result.exit_code == 0, result.output
    left = result.output.split("LEFT OUT (over budget)", 1)[1]
    assert left.count("[fact] Widget ") == 15 and "not read" not in left


def test_a_store_this_user_may_not_write_is_read_by_the_reading_commands_and_refused_in_one_line_by_the_rest(
        tmp_path, monkeypatch):
    from miner.memory import store as store_mod
    from miner.memory.records import NewMemory

    with Store() as store, store.atomic():
        store.add_memory(NewMemory(project="/work/shop", category="decision", confidence=0.9, rule_id="t",
                                   text="We decided to use Redis for the session cache.", role="user",
                                   session_id="s", transcript="/t.jsonl", entry_uuid="e-1", ts="2026-03-01T10:00:00Z"))
    db = str(paths.db_path())
    os.chmod(db, 0o400)
    if os.geteuid() == 0:  # the superuser may write any file: what the system answers anyone else is answered here
        real_access = os.access
        monkeypatch.setattr(store_mod.os, "access", lambda p, mode: False if p == db else real_access(p, mode))
    runner = CliRunner()
    for args in (["recall", "--project", "/work/shop"], ["list", "--project", "/work/shop"], ["search", "Redis"],
                 ["show", "1"], ["stats"], ["export"], ["history", "1"]):
        result = runner.invoke(main, args)
        assert result.exit_code == 0 and ("Redis" in result.output or args[0] == "stats"), (args, result.output)
        assert result.exception is None, (args, result.exception)
    session = Session(tmp_path / "s.jsonl", cwd="/work/shop")
    session.user("We decided to use Postgres for the orders.")
    for args in (["forget", "1"], ["pin", "1"], ["mine", str(session.path)]):
        result = runner.invoke(main, args)
        assert result.exit_code == 1 and f"cannot write to {db}: it is read-only for you" in result.output, (
            args, result.output)
        assert "Traceback" not in result.output
    with Store(readonly=True) as store:
        assert store.get(1).state == "active"
        assert store.db.execute("SELECT COUNT(*) FROM recall_log").fetchone()[0] == 0


def test_a_store_in_a_folder_this_user_may_not_write_is_one_line_for_its_readers_and_for_doctor(monkeypatch):
    """Reading a WAL database writes its -shm file beside it: in a folder the user may not write, every reading
    command ended in a traceback, and `miner doctor` called the sound file broken and said to move it aside (which
    loses what the transcripts cannot give back: forgets, corrections, pins). Run as another user when the tests
    run as root, since the superuser may write anywhere."""
    import shutil
    import tempfile

    from miner.cli import doctor

    with Store() as store:
        store.upsert_session("s", "/work/shop", "/work/shop", "main", "/t.jsonl", "2026-03-01T10:00:00Z")
    folder = Path(tempfile.mkdtemp(prefix="miner-ro-"))
    try:
        shutil.copy(paths.db_path(), folder / "memory.db")
        os.chmod(folder / "memory.db", 0o644)
        os.chmod(folder, 0o555)
        db = str(folder / "memory.db")
        if os.geteuid() != 0:
            from miner.memory.store import StoreError

            with pytest.raises(StoreError) as raised:
                Store(db, readonly=True)
            said = str(raised.value)
        else:
            python = shutil.which("python3", path="/usr/bin:/bin")
            if shutil.which("setpriv") is None or python is None:
                pytest.skip("as root, this needs setpriv and a system python3 to read the store as another user")
            os.chmod(folder, 0o755)
            code = ("import sys; sys.path.insert(0, sys.argv[1]); from miner.memory.store import Store, StoreError\n"
                    "try:\n    Store(sys.argv[2], readonly=True)\nexcept StoreError as exc:\n    print(exc)")
            repo = str(Path(__file__).resolve().parent.parent)
            ran = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", python, "-I", "-c",
                                  code, repo, db], capture_output=True, text=True, timeout=60, cwd="/")
            if "Permission denied" in ran.stderr or "No module named 'miner'" in ran.stderr:
                pytest.skip(f"the checkout cannot be read by another user here: {ran.stderr.strip()[-200:]}")
            assert ran.returncode == 0 and "Traceback" not in ran.stderr, ran.stderr
            said = ran.stdout.strip()
        assert said.startswith(f"cannot read {db}: SQLite writes beside the file to read it, and {folder} is "
                               "read-only for you"), said
    finally:
        os.chmod(folder, 0o755)
        shutil.rmtree(folder)
    # Doctor: the store is said to be unwritable, with the chmod that fixes it, never that it is broken.
    db, real_access = paths.db_path(), os.access
    monkeypatch.setattr(doctor.os, "access", lambda p, mode: False if Path(p) == db.parent else real_access(p, mode))
    if os.geteuid() != 0:
        monkeypatch.undo()
        os.chmod(db.parent, 0o555)
    try:
        checks = list(doctor.check_database())
    finally:
        os.chmod(db.parent, 0o700)
    assert checks == [(False, f"database {db} cannot be written by you ({db.parent}: read-only)",
                       f"chmod u+w {db.parent} (or run as their owner)")]


def test_mine_names_a_project_folder_it_cannot_read_and_exits_with_an_error(monkeypatch):
    """An unreadable project folder was left out without a word (an unreadable file was an error)."""
    from miner.extract import transcript as transcript_mod

    good = Session(paths.projects_dir() / "-work-shop" / "good.jsonl", cwd="/work/shop")
    good.user("We decided to use Redis for the session cache.")
    locked = paths.projects_dir() / "-work-vault"
    Session(locked / "hidden.jsonl", cwd="/work/vault").user("We decided to use Vault for the signing keys.")
    if os.geteuid() == 0:  # the superuser may list any folder: what the system answers anyone else is answered here
        real_scandir = os.scandir

        def scandir(path):
            if os.fspath(path) == str(locked):
                raise PermissionError(13, "Permission denied", os.fspath(path))
            return real_scandir(path)

        monkeypatch.setattr(transcript_mod.os, "scandir", scandir)
    else:
        os.chmod(locked, 0)
    try:
        result = CliRunner().invoke(main, ["mine", "--all"])
    finally:
        os.chmod(locked, 0o700)
    assert result.exit_code == 1, result.output
    assert "1 files" in result.output and "1 new memories" in result.output
    assert f"{locked}: cannot be read (permission denied), so its transcripts were not mined" in result.output


def on_a_terminal(args: list[str], stream: str) -> tuple[subprocess.CompletedProcess, bytes]:
    """`miner ARGS` with its `stream` (stdout or stderr) on a terminal: the process and all the terminal was shown."""
    import pty

    leader, follower = pty.openpty()
    try:
        other = "stderr" if stream == "stdout" else "stdout"
        proc = subprocess.run([sys.executable, "-m", "miner.cli", *args], env=dict(os.environ), timeout=120,
                              **{stream: follower, other: subprocess.PIPE})
        os.close(follower)
        shown = b""
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the terminal closed: everything was read
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(leader)
    return proc, shown


def test_a_terminal_is_shown_no_control_character_of_what_was_mined():
    """Memory text comes from transcripts: an escape sequence in it retitled the terminal, hid text or wrote to the
    clipboard when `miner show` or `list` printed it. A terminal gets the text without them."""
    from miner.memory.records import NewMemory

    text = ("We decided on Redis \x1b]0;retitled\x07 for the \x1b[8mhidden\x1b[0m cache \x1b]52;c;cHduZWQ=\x07\x00 "
            "layer.")
    with Store() as store, store.atomic():
        memory_id = store.add_memory(NewMemory(
            project="/work/shop", category="decision", confidence=0.9, rule_id="t", text=text, role="user",
            session_id="s", transcript="/t.jsonl", entry_uuid="e-1", ts="2026-03-01T10:00:00Z"))[0]
    for args in (["show", str(memory_id)], ["list", "--project", "/work/shop"], ["search", "Redis"]):
        proc, shown = on_a_terminal(args, "stdout")
        assert proc.returncode == 0, proc.stderr
        assert b"Redis" in shown and b"cache" in shown, (args, shown)
        assert not [c for c in shown if c < 0x20 and c not in b"\r\n\t"], (args, shown)


def test_a_carriage_return_in_memory_text_cannot_write_over_a_line_on_a_terminal():
    """A lone carriage return takes the cursor back: what follows it would be shown over what the line said."""
    import re

    from miner.memory.records import NewMemory

    text = "We decided to keep the audit log on.\rWe decided to turn the audit log off."
    with Store() as store, store.atomic():
        memory_id = store.add_memory(NewMemory(
            project="/work/shop", category="decision", confidence=0.9, rule_id="t", text=text, role="user",
            session_id="s", transcript="/t.jsonl", entry_uuid="e-1", ts="2026-03-01T10:00:00Z"))[0]
    for args in (["show", str(memory_id)], ["list", "--project", "/work/shop"]):
        proc, shown = on_a_terminal(args, "stdout")
        assert proc.returncode == 0, proc.stderr
        assert b"keep the audit log on." in shown and b"turn the audit log off." in shown, (args, shown)
        assert not re.search(rb"\r(?!\n)", shown), (args, shown)
    proc = subprocess.run([sys.executable, "-m", "miner.cli", "show", str(memory_id)], capture_output=True)
    assert b"on.\rWe decided" in proc.stdout  # a pipe gets every character


def test_mine_says_which_transcripts_it_could_not_mine_and_exits_with_an_error(tmp_path):
    """A file name that is not UTF-8 cannot be kept in the store: that transcript is named (printable) and left,
    the others are mined, and the exit status says that something was not done."""
    folder = paths.projects_dir() / "-work-shop"
    good = Session(folder / "good.jsonl", cwd="/work/shop")
    good.user("We decided to use Redis for the session cache.")
    bad = os.fsencode(folder / "bad.jsonl").replace(b"bad", b"bad\xff")
    with open(bad, "wb") as handle:
        handle.write(good.path.read_bytes().replace(b"Redis", b"Valkey"))
    result = CliRunner().invoke(main, ["mine", "--all"])
    assert result.exit_code == 1, result.output
    assert "2 files" in result.output and "1 new memories" in result.output
    assert "bad\\udcff.jsonl: its name is not UTF-8, which the store cannot keep; rename it" in result.output
    assert "Error: not everything was mined (1 error(s) above)" in result.output and "Traceback" not in result.output
    with Store(readonly=True) as store:
        assert [m.text for m in store.list_memories()] == ["We decided to use Redis for the session cache."]


def test_a_cwd_no_file_name_can_hold_is_its_own_project():
    assert paths.project_root("/work/shop/\ud800half") == "/work/shop/\ud800half"
    assert paths.project_root("/work/shop/a\x00b") == "/work/shop/a\x00b"


ID_COMMANDS = [(path, command) for path, command in COMMANDS
               if any(getattr(p, "name", "") == "memory_id" for p in command.params)]


@pytest.mark.parametrize("path,command", ID_COMMANDS, ids=[" ".join(p) for p, _ in ID_COMMANDS])
def test_a_memory_id_no_store_can_hold_is_refused_in_one_line(path, command):
    with Store():
        pass
    result = CliRunner().invoke(main, [*path, str(10**23)])
    assert result.exit_code == 2 and "is not in the range 1<=x<=" in result.output, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_team_share_in_a_project_that_joined_no_team_says_so():
    from miner.memory.records import NewMemory

    with Store() as store, store.atomic():
        store.add_memory(NewMemory(project="/work/solo", category="preference", confidence=0.9, rule_id="t",
                                   text="Please always squash commits before merging.", role="user", session_id="s",
                                   transcript="/t.jsonl", entry_uuid="e-1", ts="2026-03-01T10:00:00Z"))
    result = CliRunner().invoke(main, ["team", "share", "1"])
    assert result.exit_code == 1, result.output
    assert "#1 belongs to /work/solo, which has not joined a team: `miner team join` there first" in result.output


def test_a_correction_typed_with_private_text_keeps_none_of_it():
    from miner.memory.records import NewMemory

    with Store() as store, store.atomic():
        store.add_memory(NewMemory(project="/work/shop", category="decision", confidence=0.9, rule_id="t",
                                   text="We decided to use Redis for the session cache.", role="user", session_id="s",
                                   transcript="/t.jsonl", entry_uuid="e-1", ts="2026-03-01T10:00:00Z"))
    result = CliRunner().invoke(main, ["correct", "1", "We decided to use Valkey <private>on quokkahost</private> for "
                                       "the session cache.", "--reason", "<private>wombatcustard</private> moved"])
    assert result.exit_code == 0, result.output
    with Store(readonly=True) as store:
        texts = [m.text for m in store.list_memories(states=("active", "superseded"))]
        data = " ".join(texts) + " ".join(r[0] for r in store.db.execute("SELECT state_reason FROM memories"))
    assert "We decided to use Valkey for the session cache." in texts
    assert "quokkahost" not in data and "wombatcustard" not in data


def test_a_reason_pages_long_is_refused_and_changes_nothing():
    """A 100,000-character reason was stored and printed whole by `show` and `history`."""
    from miner.memory.records import NewMemory

    with Store() as store, store.atomic():
        store.add_memory(NewMemory(project="/work/shop", category="decision", confidence=0.9, rule_id="t",
                                   text="We decided to use Redis for the session cache.", role="user", session_id="s",
                                   transcript="/t.jsonl", entry_uuid="e-1", ts="2026-03-01T10:00:00Z"))
    for args in (["forget", "1"], ["correct", "1", "We decided to use Valkey for the session cache."]):
        result = CliRunner().invoke(main, [*args, "--reason", "because " * 12_500])
        assert result.exit_code == 1 and result.output == (
            "Error: the reason is 99,999 characters; at most 2,000: say why in a few sentences (nothing changed)\n"), \
            result.output
    with Store(readonly=True) as store:
        assert [(m.text, m.state) for m in store.list_memories(states=())] == [
            ("We decided to use Redis for the session cache.", "active")]
    assert CliRunner().invoke(main, ["forget", "1", "--reason", "wrong " * 330]).exit_code == 0  # (1,980 characters)


BUSY = ("Error: the memory store is busy: another process kept it locked (database is locked); run the command "
        "again in a moment")


@pytest.mark.parametrize("wait_s, lines", [
    (0.2, [BUSY]),
    # Waiting more than a second, it says so first (forget, import, purge, move and gc waited up to a minute for
    # another process's lock with nothing on screen).
    (1.5, ["waiting for another process to let go of the memory store (up to 2s)…", BUSY]),
])
def test_a_store_another_process_keeps_locked_is_one_line(isolated_home, monkeypatch, wait_s, lines):
    """A backfill's batch or a stuck process holds the write lock past the wait: the command says so in one line and
    changed nothing."""

    from miner.memory.records import NewMemory

    with Store() as store, store.atomic():
        memory_id = store.add_memory(NewMemory(project="/p", category="fact", text="The API listens on port 8080.",
                                               confidence=0.7, rule_id="r", role="user", session_id="s",
                                               transcript="/t", entry_uuid="e", ts="2026-01-01T00:00:00Z"))[0]
    monkeypatch.setattr(Store, "lock_wait_s", wait_s)
    holder = sqlite3.connect(paths.db_path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = CliRunner().invoke(main, ["forget", str(memory_id)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 1
    assert result.output.splitlines() == lines, result.output
    with Store(readonly=True) as store:
        assert store.get(memory_id).state == "active"


def test_a_backfill_under_another_process_lock_stops_at_the_first_file_in_one_line(tmp_path, monkeypatch):
    """Held past the wait, the lock made `miner mine` wait for each file in turn (minutes, in silence), then print
    one raw exception a file; it stops at the first instead, and the next run mines them all."""
    sessions = []
    for n in range(3):
        session = Session(tmp_path / f"s{n}.jsonl", cwd="/work/shop")
        session.user(f"We decided to deploy service number {n} with Kamal.")
        sessions.append(session)
    Store().close()
    monkeypatch.setattr(Store, "lock_wait_s", 0.2)
    holder = sqlite3.connect(paths.db_path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = CliRunner().invoke(main, ["mine", *(str(s.path) for s in sessions)])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 1
    assert result.output.splitlines()[-1:] == [BUSY], result.output
    assert "error:" not in result.output and "OperationalError" not in result.output, result.output
    result = CliRunner().invoke(main, ["mine", *(str(s.path) for s in sessions)])
    assert result.exit_code == 0 and "3 new memories" in result.output, result.output


def test_recall_prints_its_block_while_another_process_holds_the_write_lock(isolated_home, monkeypatch):
    """`miner recall QUERY` only reads, but logs what it printed: under a backfill's write lock it waited a minute for
    the log line, then failed without printing the block (`miner search` answered at once)."""
    import importlib

    from miner.memory.records import NewMemory

    cli_main = importlib.import_module("miner.cli.main")  # (`miner.cli.main` names the command group too)

    with Store() as store, store.atomic():
        store.add_memory(NewMemory(project="/work/shop", category="decision", confidence=0.9, rule_id="t",
                                   text="We decided to keep the ledger in PostgreSQL.", role="user", session_id="s",
                                   transcript="/t", entry_uuid="e", ts="2026-01-01T00:00:00Z"))
    monkeypatch.setattr(cli_main, "RECALL_LOG_WAIT_S", 0.3)
    holder = sqlite3.connect(paths.db_path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        result = CliRunner().invoke(main, ["recall", "ledger database", "--project", "/work/shop"])
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.exit_code == 0 and "keep the ledger in PostgreSQL" in result.output, result.output
    with Store(readonly=True) as store:
        assert store.db.execute("SELECT COUNT(*) FROM recall_log").fetchone()[0] == 0  # (left unlogged)
    assert CliRunner().invoke(main, ["recall", "ledger database", "--project", "/work/shop"]).exit_code == 0
    with Store(readonly=True) as store:
        assert store.db.execute("SELECT COUNT(*) FROM recall_log").fetchone()[0] == 1


def test_a_backfill_leaves_each_session_as_its_session_end_would_have(tmp_path, isolated_home):
    """`miner mine` of sessions no hook saw (the install's backfill): a todo a later session reports done goes cold,
    as the SessionEnd hook's checkpoint would have closed it, and the recall no longer lists it as open."""
    first = Session(tmp_path / "s1.jsonl", cwd="/work/shop")
    first.user("TODO: add pagination to the plant list endpoint.")
    second = Session(tmp_path / "s2.jsonl", cwd="/work/shop", start="2026-03-02T10:00:00")
    second.user("Let's finish the plant list work.")
    second.assistant("Pagination for the plant list endpoint is done now.")
    # A subagent of the second session, done before it (its file is older): the session's checkpoint is still
    # written from the main conversation, not from the subagent's side of it.
    helper = Session(tmp_path / second.session_id / "subagents" / "agent-a1.jsonl", cwd="/work/shop",
                     session_id=second.session_id, start="2026-03-02T10:00:30")
    helper.assistant("The plant list endpoint reads from the plants table.", isSidechain=True)
    os.utime(first.path, (1_000, 1_000))
    os.utime(helper.path, (2_000, 2_000))
    assert CliRunner().invoke(main, ["mine", str(tmp_path)]).exit_code == 0
    with Store(readonly=True) as store:
        (todo,) = [m for m in store.list_memories(states=(), limit=10) if m.category == "todo"]
        assert todo.state == "cold" and store.state_reason(todo.id).startswith("done: ")
        assert store.checkpoint(second.session_id)["task"] == ["Let's finish the plant list work."]
    recall = CliRunner().invoke(main, ["recall", "--project", "/work/shop"])
    assert recall.exit_code == 0 and "pagination" not in recall.output.lower()
    marked = {"session_id": second.session_id, "project": "/work/shop", "task": ["left as it was"]}
    with Store() as store:
        store.put_checkpoint(second.session_id, "/work/shop", marked)
    again = CliRunner().invoke(main, ["mine", str(first.path), str(second.path)])  # nothing new: nothing written
    assert again.exit_code == 0 and "0 entries" in again.output
    with Store(readonly=True) as store:
        assert store.checkpoint(second.session_id) == marked


def test_a_session_an_earlier_version_left_behind_a_purge_owes_no_checkpoint(tmp_path, isolated_home):
    """Earlier versions mined a purged project's session rows again (none of its words); after an upgrade, the
    checkpoints those sessions seemed to owe stored the purged project's words again and showed them at startup."""
    sid = "7d1c2b3a-0000-4000-8000-000000000003"
    session = Session(tmp_path / f"{sid}.jsonl", cwd="/work/blog", session_id=sid)
    session.user("Let's rewrite the draft about the garden shed.")
    assert CliRunner().invoke(main, ["mine", str(tmp_path)]).exit_code == 0
    assert CliRunner().invoke(main, ["purge", "--project", "/work/blog", "--yes"]).exit_code == 0
    with Store() as store, store.atomic():  # what the earlier versions' next `mine --all` left
        store.upsert_session(sid, "/work/blog", "/work/blog", "main", str(session.path), "2026-03-01T10:01:00.000Z")
    again = CliRunner().invoke(main, ["mine", str(tmp_path)])
    assert again.exit_code == 0, again.output
    with Store(readonly=True) as store:
        assert store.checkpoint(sid) is None
        assert store.db.execute("SELECT COUNT(*) FROM checkpoints").fetchone()[0] == 0


def test_a_checkpoint_a_run_owed_is_written_by_the_next_run_even_with_nothing_new(tmp_path, isolated_home):
    """A miner killed, or out of disk, between storing a session's lines and writing its checkpoint left the session
    without one for good: the next run found nothing new in the transcript, and wrote checkpoints only for the
    sessions it had just mined."""
    first = Session(tmp_path / "s1.jsonl", cwd="/work/shop")
    first.user("Let's move the plant list to the new endpoint.")
    # Named for its session, as Claude Code names them; its subagent's file is older, so mined first.
    sid = "7d1c2b3a-0000-4000-8000-000000000002"
    second = Session(tmp_path / f"{sid}.jsonl", cwd="/work/shop", session_id=sid, start="2026-03-02T10:00:00")
    second.user("Let's finish the plant list work.")
    helper = Session(tmp_path / sid / "subagents" / "agent-a1.jsonl", cwd="/work/shop", session_id=sid,
                     start="2026-03-02T10:00:30")
    helper.assistant("The plant list endpoint reads from the plants table.", isSidechain=True)
    os.utime(helper.path, (2_000, 2_000))
    assert CliRunner().invoke(main, ["mine", str(tmp_path)]).exit_code == 0
    with Store() as store:
        kept = store.checkpoint(first.session_id)
        store.db.execute("DELETE FROM checkpoints WHERE session_id = ?", (second.session_id,))  # as the run left it
    again = CliRunner().invoke(main, ["mine", str(tmp_path)])
    assert again.exit_code == 0 and "0 entries" in again.output, again.output
    with Store(readonly=True) as store:
        assert store.checkpoint(second.session_id)["task"] == ["Let's finish the plant list work."]
        assert store.checkpoint(first.session_id) == kept  # (one that was written is left as it is)


def test_a_tag_named_in_a_correction_or_through_mcp_is_text_not_a_wrapper_that_swallows_the_rest(tmp_path):
    """"the <command-name> wrapper is never shown" was stored as "the": an opening tag never closed hid all that
    followed it, as a wrapper of Claude Code's does in a transcript. Typed by hand, it is named; `<private>` still
    hides all that follows it."""
    from miner import config
    from miner.mcp import tools as mcp_tools
    from miner.memory.records import NewMemory

    with Store() as store, store.atomic():
        store.add_memory(NewMemory(project="/work/shop", category="fact", confidence=0.9, rule_id="t",
                                   text="The API server listens on port 8080.", role="user", session_id="s",
                                   transcript="/t.jsonl", entry_uuid="e-1", ts="2026-03-01T10:00:00Z"))
    typed = "The API server listens on port 8443; the <command-name> wrapper is never shown to users."
    result = CliRunner().invoke(main, ["correct", "1", typed])
    assert result.exit_code == 0, result.output
    (tmp_path / "kiln").mkdir()
    session = mcp_tools.Session(project=str(tmp_path / "kiln"), config=config.load())
    stored = mcp_tools.store_memory(session, "We decided the parser strips <system-reminder> blocks before it splits "
                                             "prose, never after. <private>quokkahost</private>", "decision")
    assert stored["text"] == ("We decided the parser strips <system-reminder> blocks before it splits prose, "
                              "never after.")
    hidden = mcp_tools.store_memory(session, "We decided to keep the staging database on the shared box. <private> "
                                             "it is wombathost, the old one", "decision")
    assert hidden["text"] == "We decided to keep the staging database on the shared box."
    with Store(readonly=True) as store:
        assert typed in [m.text for m in store.list_memories(states=("active",))]


def test_a_terminal_is_shown_no_control_character_of_an_error_either(tmp_path):
    """An error names a path as it was given: `miner mine $'/tmp/\\e]0;title\\a'` retitled the terminal through
    stderr, which the filter of stdout did not cover."""
    proc, shown = on_a_terminal(["mine", str(tmp_path / "a\x1b]0;retitled\x07b")], "stderr")
    assert proc.returncode != 0 and b"does not exist" in shown and b"retitled" in shown, shown
    assert not [c for c in shown if c < 0x20 and c not in b"\r\n\t"], shown


def test_a_device_or_a_pipe_given_as_a_file_to_read_is_refused_in_one_line(tmp_path):
    """`/dev/zero` passes click's `exists`: `miner rules test --transcript /dev/zero` read it for ever and `miner
    import /dev/zero` until memory ran out."""
    fifo = tmp_path / "pipe.jsonl"
    os.mkfifo(fifo)
    for args in (["rules", "test", "--transcript", "/dev/zero"], ["import", "/dev/zero"], ["import", str(fifo)]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2, (args, result.output)
        assert "is not a regular file (a device or a pipe); give a file" in result.output


def test_a_store_on_a_read_only_mount_is_one_line_not_a_traceback(tmp_path):
    """A read-only mount says "unable to open database file" (a folder read-only by its permissions says "readonly"):
    `miner stats` and every reading command gave a traceback."""
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs `unshare -m` (root, or user namespaces) to make a read-only mount")
    folder = tmp_path / "store"
    folder.mkdir()
    with Store(folder / "memory.db") as store:
        store.upsert_session("s", "/work/shop", "/work/shop", "main", "/t.jsonl", "2026-03-01T10:00:00Z")
    for leftover in ("memory.db-wal", "memory.db-shm"):  # a store every process closed: its WAL is gone
        assert not (folder / leftover).exists()
    script = (f"mount --bind -o ro {shlex.quote(str(folder))} {shlex.quote(str(folder))} && "
              f"{shlex.quote(sys.executable)} -I -m miner.cli stats")
    ran = subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, MINER_HOME=str(folder)))
    assert ran.returncode == 1 and "Traceback" not in ran.stderr, ran.stderr
    assert ran.stderr.strip() == (f"Error: cannot read {folder / 'memory.db'}: SQLite writes beside the file to read "
                                  f"it, and {folder} is read-only for you (its permissions or a read-only mount); "
                                  "make it writable (`chmod u+w`), or run as its owner")


def test_a_text_or_folder_not_in_utf8_is_one_line(tmp_path, isolated_home):
    """`miner recall $'…\\xff'` (and a project folder or a current folder so named) ended in a traceback where the
    query or the folder met the store."""
    session = Session(tmp_path / "s1.jsonl", cwd="/work/shop")
    session.user("Let's go with pnpm as the package manager for the shop.")
    assert CliRunner().invoke(main, ["mine", str(session.path)]).exit_code == 0
    odd = os.fsdecode(b"zeppelin \xff")
    folder = tmp_path / os.fsdecode(b"d\xff")
    folder.mkdir()
    for args, cwd in ((["recall", odd], None), (["search", "pnpm", "--project", str(folder)], None),
                      (["recall"], folder)):
        ran = subprocess.run([sys.executable, "-I", "-m", "miner.cli", *args], capture_output=True, text=True,
                             env=dict(os.environ), cwd=cwd, timeout=120, errors="surrogateescape")
        assert ran.returncode == 1 and ran.stderr.splitlines() == [
            "Error: a text or a folder given here (or the current folder) is not UTF-8: the store keeps UTF-8 only; "
            "give it in UTF-8"], (args, ran.stderr)


def test_a_database_of_something_else_is_refused_not_written_into(tmp_path, isolated_home):
    """`miner search` on a SQLite file that was not a store added some forty tables to it, or failed half-way with
    a traceback when a name clashed."""
    paths.db_path().parent.mkdir(parents=True, exist_ok=True)
    for table in ("notes (x)", "memories (x)"):
        paths.db_path().unlink(missing_ok=True)
        with sqlite3.connect(paths.db_path()) as other:
            other.execute(f"CREATE TABLE {table}")
        for args in (["search", "zeppelin"], ["forget", "1"], ["stats"]):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 1 and result.output == (
                f"Error: {paths.db_path()} is a database of something else (its tables: {table.split()[0]}); move it "
                "aside, or set MINER_HOME to the folder of the memory store\n"), (args, result.output)
        with sqlite3.connect(paths.db_path()) as other:
            assert [r[0] for r in other.execute("SELECT name FROM sqlite_master")] == [table.split()[0]]


def as_another_user(command: list[str]) -> list[str]:
    """`command` as it runs for a user whom file permissions bind: root reads and writes anything, so as root it runs
    without that power (setpriv); skipped where setpriv is missing."""
    if os.geteuid() != 0:
        return command
    if not shutil.which("setpriv"):
        pytest.skip("needs setpriv to test as root")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search", *command]


def _memory_count() -> int:
    with Store(readonly=True) as store:
        return store.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]


def test_an_empty_project_is_refused_not_taken_for_the_current_folder(transcript, tmp_path, monkeypatch):
    """`--project "$UNSET"` purged the project of the folder the command ran in."""
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    before = _memory_count()
    monkeypatch.chdir(tmp_path)  # a folder of no project: an empty --project would have named it
    for args in (["purge", "--project", "", "--yes"], ["recall", "--project", " "], ["list", "--project", ""]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1 and "--project is empty" in result.output, (args, result.output)
        assert result.output.count("\n") == 1
    assert _memory_count() == before > 0


def test_paths_that_cannot_be_used_are_one_line_not_a_traceback(tmp_path):
    """A name over 255 bytes, and MINER_HOME naming a file, ended in an OSError's traceback."""
    env = dict(os.environ)
    long_name = str(tmp_path / ("a" * 300 + ".jsonl"))
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    session = Session(tmp_path / "s.jsonl", cwd="/work/shop")
    session.user("We'll keep the invoices in PostgreSQL from now on.")
    for args, extra in ((["mine", long_name], {}), (["backup", str(tmp_path / ("b" * 300))], {}),
                        (["mine", str(session.path)], {"MINER_HOME": str(afile)})):
        done = subprocess.run([sys.executable, "-m", "miner", *args], capture_output=True, text=True,
                              env=dict(env, **extra), timeout=120)
        assert done.returncode == 1 and "Traceback" not in done.stderr, (args, done.stderr)
        assert done.stderr.count("\n") == 1 and done.stderr.startswith("Error: "), (args, done.stderr)


def test_a_store_folder_this_user_cannot_write_is_one_line(transcript, tmp_path):
    """A read-only folder under the store broke every command, reading ones too, with a forty-line traceback."""
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    home = Path(os.environ["MINER_HOME"])
    for name in os.listdir(home):  # the store alone, as a copy made read-only keeps it
        if name not in ("memory.db",):
            shutil.rmtree(home / name) if (home / name).is_dir() else os.unlink(home / name)
    command = as_another_user([sys.executable, "-m", "miner", "list"])
    os.chmod(home, 0o555)
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ), timeout=120)
    finally:
        os.chmod(home, 0o755)
    assert done.returncode == 1 and "Traceback" not in done.stderr, done.stderr
    assert done.stderr.count("\n") == 1 and str(home) in done.stderr, done.stderr


def test_doctor_reports_a_check_it_cannot_run_and_runs_the_others(isolated_home):
    """A store path it cannot open (here a folder) crashed doctor in its transcript check."""
    db = paths.db_path()
    db.mkdir(parents=True)
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    assert "could not check the transcripts: OperationalError" in result.output
    assert "no hook errors logged" in result.output  # the checks after it still ran


def test_export_does_not_replace_a_file_unless_told(transcript, tmp_path):
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    target = tmp_path / "notes.txt"
    target.write_text("precious\n")
    refused = CliRunner().invoke(main, ["export", "-o", str(target)])
    assert refused.exit_code == 1 and "--force" in refused.output and target.read_text() == "precious\n"
    assert CliRunner().invoke(main, ["export", "-o", str(target), "--force"]).exit_code == 0
    assert target.read_text().startswith("{")
    target.write_text("precious\n")
    refused = CliRunner().invoke(main, ["backup", str(target)])  # in the same words
    assert refused.exit_code == 1 and refused.output == f"Error: {target} exists: give another file, or --force to " \
        "replace it\n" and target.read_text() == "precious\n", refused.output


def test_recall_in_an_excluded_project_says_why_it_prints_nothing(transcript):
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    assert CliRunner().invoke(main, ["exclude", "add", "/work/shop"]).exit_code == 0
    result = CliRunner().invoke(main, ["recall", "--project", "/work/shop"])
    assert result.exit_code == 1 and "is excluded" in result.output and result.output.count("\n") == 1


def test_recall_with_a_broken_exclusions_file_names_the_file_not_an_exclusion(transcript):
    """With exclusions.json broken, every project was said to be excluded (`miner exclude list` then failed)."""
    from miner.runtime.exclusions import exclusions_path

    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    exclusions_path().parent.mkdir(parents=True, exist_ok=True)
    exclusions_path().write_text('{"exclude": [', encoding="utf-8")
    result = CliRunner().invoke(main, ["recall", "--project", "/work/shop"])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert str(exclusions_path()) in result.output and "is not valid JSON" in result.output, result.output
    assert "is excluded" not in result.output and "no block is injected anywhere" in result.output


def test_rules_check_checks_a_project_file_not_trusted_yet(tmp_path):
    own = tmp_path / "repo" / ".claude" / "miner-rules.yaml"
    own.parent.mkdir(parents=True)
    own.write_text("rules:\n  - id: [unclosed\n")
    result = CliRunner().invoke(main, ["rules", "check", "--project", str(tmp_path / "repo")])
    assert result.exit_code == 1 and "miner-rules.yaml" in result.output and "all valid" not in result.output


def test_install_refuses_a_project_without_its_scope(tmp_path):
    for command in ("install", "uninstall"):
        result = CliRunner().invoke(main, [command, "--project", str(tmp_path), "--dry-run"])
        assert result.exit_code == 1 and "--scope project" in result.output, result.output


def test_stats_names_every_counter_of_skipped_input_even_at_zero(transcript):
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    counters = json.loads(CliRunner().invoke(main, ["stats", "--json"]).output)["counters"]
    assert {"lines_skipped": 0, "entries_skipped_malformed": 0, "turns_cut": 0}.items() <= counters.items()


def test_a_transcript_this_user_cannot_read_is_named_with_what_to_do(transcript):
    # (a folder: a file named alone is checked before mining)
    command = as_another_user([sys.executable, "-m", "miner", "mine", str(transcript.parent)])
    os.chmod(transcript, 0)
    try:
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ), timeout=120)
    finally:
        os.chmod(transcript, 0o600)
    assert done.returncode == 1, done.stdout + done.stderr
    assert f"{transcript}: cannot be read (permission denied), so it was not mined; make it readable" in \
        done.stdout + done.stderr


def test_an_import_and_an_export_show_their_progress_on_a_terminal_and_nothing_on_a_pipe(transcript, tmp_path,
                                                                                          monkeypatch):
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    exported = tmp_path / "all.jsonl"
    assert CliRunner().invoke(main, ["export", "-o", str(exported)]).exit_code == 0
    monkeypatch.setenv("MINER_HOME", str(tmp_path / "other-home"))
    proc, shown = on_a_terminal(["import", str(exported)], "stderr")
    assert proc.returncode == 0 and b"Importing" in shown and b"100%" in shown, shown
    proc, shown = on_a_terminal(["export", "-o", str(tmp_path / "again.jsonl")], "stderr")
    assert proc.returncode == 0 and b"Exporting" in shown and b"100%" in shown, shown
    piped = subprocess.run([sys.executable, "-m", "miner.cli", "import", str(exported)], capture_output=True,
                           env=dict(os.environ, MINER_HOME=str(tmp_path / "third-home")), timeout=120)
    assert piped.returncode == 0 and b"Importing" not in piped.stderr, piped.stderr


@pytest.mark.parametrize("args,named", [(["watch", "--status", "--stop"], "--status and --stop"),
                                        (["watch", "--print-service", "--debounce", "5"], "--debounce goes with"),
                                        (["watch", "--status", "--debounce", "1"], "--debounce goes with"),
                                        (["rules", "stats", "--show-only", "-1"], "'--show-only'")])
def test_options_that_do_not_go_together_or_out_of_range_are_refused_not_ignored(args, named):
    result = CliRunner().invoke(main, args)
    assert result.exit_code in (1, 2) and "Error: " in result.output and named in result.output, result.output


@pytest.mark.parametrize("args,said,command", [
    (["recall", "--no-such-flag"], "No such option '--no-such-flag'.", "miner recall"),
    (["--no-such-flag"], "No such option '--no-such-flag'.", "miner"),
    (["no-such-command"], "No such command 'no-such-command'.", "miner"),
    (["rules", "no-such-command"], "No such command 'no-such-command'.", "miner rules"),
    (["export", "-o"], "Option '-o' requires an argument.", "miner export"),
    (["exclude", "add"], "Missing argument 'GLOB'.", "miner exclude add"),
    (["team", "join", "--zzz"], "No such option '--zzz'.", "miner team join"),
    (["eval", "--rules-only"], "give --gold DIR (with --transcripts and/or --multi), or --cv.", "miner eval"),
    (["team", "leave", "--all", "--project", "."], "give --project or --all, not both.", "miner team leave"),
])
def test_a_usage_error_is_one_line_that_names_the_help_to_read(args, said, command):
    """Click's own took four lines (the usage, a hint, a blank line, the error); an error given no context of its own
    (an option with no value) named no help at all."""
    done = subprocess.run([sys.executable, "-m", "miner", *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == "", done
    # (run as `python -m miner`, the command is named so: Click names it as it was run)
    assert done.stderr == f"Error: {said} See 'python -m {command} --help'.\n", done.stderr


@pytest.mark.parametrize("args", [[], ["rules"], ["exclude"], ["team"]])
def test_a_group_given_no_command_shows_its_help_as_help(args):
    """It was printed as an error: "Error: Usage: …", with "See '… --help'." glued to the last command's line."""
    done = subprocess.run([sys.executable, "-m", "miner", *args], capture_output=True, text=True, timeout=120)
    shown = done.stdout + done.stderr
    assert shown.startswith(f"Usage: python -m {' '.join(['miner', *args])} [OPTIONS] COMMAND"), shown
    assert "Error" not in shown and "--help'." not in shown and "Commands:" in shown, shown


def test_a_file_named_to_mine_that_holds_no_conversation_gets_a_note(tmp_path):
    """Random bytes or another program's JSONL were mined in silence ("0 entries, 11 lines skipped"), as if they
    had been a transcript with nothing to say."""
    noise = tmp_path / "noise.jsonl"
    noise.write_bytes(bytes(b for b in range(256) if b != 10) * 8 + b"\n" + b'{"level": "info", "msg": "started"}\n')
    session = Session(tmp_path / "real.jsonl", cwd="/work/shop")
    session.user("We'll keep the invoices in PostgreSQL from now on.")
    result = CliRunner().invoke(main, ["mine", str(noise), str(session.path)])
    assert result.exit_code == 0, result.output
    notes = [line for line in result.output.splitlines() if line.startswith("note: ")]
    assert notes == [f"note: {noise}: none of its 2 line(s) is a turn of a conversation; is it a Claude Code "
                     "transcript? (they are the JSONL files under ~/.claude/projects)"], result.output


def test_recall_for_a_session_the_store_does_not_know_says_so(transcript):
    """It printed an empty block, as if the session had left nothing to recall."""
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    result = CliRunner().invoke(main, ["recall", "--situation", "compact", "--session", "no-such-session"])
    assert result.exit_code == 1 and result.output.splitlines() == [
        "Error: no session 'no-such-session' in the store: give the id of a mined session (`miner show MEMORY_ID` "
        "names a memory's), or leave --session out"], result.output


def test_listing_a_project_by_a_path_that_names_no_folder_says_to_check_it(transcript, tmp_path):
    assert CliRunner().invoke(main, ["mine", str(transcript)]).exit_code == 0
    missing = tmp_path / "no-such-folder"
    result = CliRunner().invoke(main, ["list", "--project", str(missing)])
    assert result.output == f"No memories match. (No folder {missing} exists: check the path.)\n"
    assert CliRunner().invoke(main, ["list", "--project", str(tmp_path)]).output == "No memories match.\n"


def test_a_purge_shows_its_steps_on_a_terminal_and_nothing_on_a_pipe(transcript, tmp_path):
    """A big store's purge took minutes in silence: reading its transcripts, the deletion, the rebuilt indexes and
    the VACUUM."""
    other = Session(tmp_path / "other.jsonl", cwd="/work/other")
    other.user("We decided to keep the other service on Fly.io.")
    assert CliRunner().invoke(main, ["mine", str(transcript), str(other.path)]).exit_code == 0
    with Store(readonly=True) as store:
        project, second = (row[0] for row in store.db.execute("SELECT DISTINCT project FROM sessions ORDER BY "
                                                              "project LIKE '%other%'"))
    proc, shown = on_a_terminal(["purge", "--project", project, "--yes"], "stderr")
    assert proc.returncode == 0, shown
    for step in (b"Reading its transcripts", b"1/1", b"deleting its rows and rebuilding the search "
                 b"indexes", b"compacting the database"):
        assert step in shown, shown
    piped = subprocess.run([sys.executable, "-m", "miner.cli", "purge", "--project", second, "--yes"],
                           capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert piped.returncode == 0 and piped.stderr == "" and piped.stdout.endswith("database vacuumed.\n"), piped


@pytest.mark.parametrize("url", ["", "  "])
def test_team_setup_refuses_an_empty_url(url):
    """`miner team setup ""` set up the tables of whatever server libpq's defaults reach (the local socket)."""
    result = CliRunner().invoke(main, ["team", "setup", url])
    assert result.exit_code == 1 and result.output == (
        "Error: an empty URL; give the team server's, postgresql://USER@HOST/DB\n"), result.output


def test_leaving_every_team_when_none_was_joined_says_so():
    """It said "left the team: no project syncs any more", as if there had been one."""
    result = CliRunner().invoke(main, ["team", "leave", "--all"])
    assert result.exit_code == 1 and result.output.splitlines() == [
        "Error: no project here has joined a team: there is nothing to leave (`miner team status` says what has)"]


def test_rules_check_and_list_tell_a_replaced_shipped_rule_and_list_says_each_rules_effect_and_file(isolated_home):
    """A user file that redefined a shipped id (copied as a template) replaced it without a word, and `rules list`
    showed a veto as a decision, with no file."""
    folder = isolated_home / ".config" / "miner" / "rules"
    folder.mkdir(parents=True)
    shipped = next(r for r in rules_mod.load_rules(rules_mod.default_rule_files()).rules if r.lang == "en")
    (folder / "mine.yaml").write_text(
        f"rules:\n  - id: {shipped.id}\n    category: fact\n    patterns: ['(?i)\\bwe have settled on\\b']\n"
        "  - id: my.veto\n    effect: drop\n    patterns: ['(?i)\\bfly\\.io\\b']\n")
    checked = CliRunner().invoke(main, ["rules", "check"])
    assert checked.exit_code == 0, checked.output
    assert f"note: {folder / 'mine.yaml'}: rule {shipped.id} replaces the one of {shipped.source}" in checked.stderr
    listed = CliRunner().invoke(main, ["rules", "list"])
    lines = {line.split()[0]: line.split() for line in listed.stdout.splitlines()}
    assert lines["my.veto"][1:3] == ["decision", "drop"] and lines["my.veto"][-1] == "mine.yaml"
    assert lines[shipped.id][-1] == "mine.yaml" and lines["any.todo.marker"][-1] == "shipped"
    assert f"rule {shipped.id} replaces" in listed.stderr
