"""`miner doctor` and the install/uninstall commands, through the CLI."""

from __future__ import annotations

import json
import sys

import pytest
from click.testing import CliRunner

from miner.cli.main import main
from tests.builders import Session


def test_doctor_on_a_fresh_machine_names_each_fix():
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code == 1
    out = result.stdout
    assert "FAIL  hooks not registered" in out and "fix: miner install" in out
    # No transcript yet is no failure: the first mined session creates the database.
    assert "ok    no database yet" in out and "first mined session creates it" in out
    assert "spaCy:" in out


def test_doctor_fails_on_hook_errors_and_counts_the_hooks_notices_apart(isolated_home):
    from miner import hooks, paths

    hooks.log("pre-compact", "info: the store is busy (locked): the checkpoint is left to the miner")
    result = CliRunner().invoke(main, ["doctor"])
    assert "ok    no hook errors logged (1 notice(s) in" in result.stdout, result.stdout
    hooks.log("stop", "ValueError: the payload is not JSON")
    hooks.log("pre-compact", "info: the store is busy (locked): the checkpoint is left to the miner")
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code != 0
    line = next(line for line in result.stdout.splitlines() if "hook error(s)" in line)
    assert line.startswith("FAIL  1 hook error(s) in ") and "last: " in line and "ValueError" in line, line
    assert line.endswith(f"(2 notice(s) in {paths.logs_dir() / 'hooks.log'})"), line


def test_doctor_fails_on_a_background_miners_traceback_and_names_its_error(isolated_home):
    """A hook's catch-up worker died with a traceback every session (a project path too long to be a folder's): only
    its log said so, which doctor never read."""
    from miner import paths

    assert "ok    no background miner failed" in CliRunner().invoke(main, ["doctor"]).stdout
    paths.logs_dir().mkdir(parents=True, exist_ok=True)
    (paths.logs_dir() / "worker.log").write_text(
        "[worker 12 2026-12-01T10:00:00Z] mined 3 transcripts\n"
        "Traceback (most recent call last):\n  File \"/x/worker.py\", line 54, in project_folders\n"
        "    return [root / name for name in names]\nOSError: [Errno 36] File name too long: '/x'\n", encoding="utf-8")
    result = CliRunner().invoke(main, ["doctor"])
    assert result.exit_code != 0
    line = next(line for line in result.stdout.splitlines() if "background miner" in line)
    assert line == (f"FAIL  1 background miner failure(s) in {paths.logs_dir() / 'worker.log'}; last: OSError: "
                    "[Errno 36] File name too long: '/x'"), line


def test_doctor_on_a_correct_fresh_install_reports_no_failure(claude_dir):
    """Hooks registered, no session run yet: every check passes (the install is this test's own venv)."""
    runner = CliRunner()
    assert runner.invoke(main, ["install"]).exit_code == 0
    result = runner.invoke(main, ["doctor"])
    assert result.exit_code == 0, result.stdout
    assert "FAIL" not in result.stdout
    assert "ok    installed in" in result.stdout
    assert "memory classifier:" in result.stdout and "thresholds on P(none): user 0." in result.stdout


def test_doctor_says_when_the_hooks_run_another_installs_code(claude_dir, tmp_path):
    """Hooks registered by another install (an older venv) passed as "ok hooks registered": every session ran that
    code, and its redaction, while this one was upgraded."""
    import importlib.util
    import shutil
    import subprocess
    import sysconfig

    from miner.install import settings

    venv = tmp_path / "other-venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    purelib = sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)})
    package = importlib.util.find_spec("miner").submodule_search_locations[0]
    shutil.copytree(package, f"{purelib}/miner", ignore=shutil.ignore_patterns("__pycache__"))
    other = str(venv / "bin" / "python")
    settings.install("user", None, other)
    out = CliRunner().invoke(main, ["doctor"]).stdout
    assert f"FAIL  the hooks run another install's code: {other} imports {purelib}/miner (version" in out, out
    assert CliRunner().invoke(main, ["install"]).exit_code == 0  # this install's hooks instead
    assert "another install" not in CliRunner().invoke(main, ["doctor"]).stdout


def test_doctor_names_a_broken_rule_or_secrets_file(isolated_home):
    folder = isolated_home / ".config" / "miner"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "secrets.yaml").write_text("secrets:\n  - kind: Bad Kind\n    pattern: 'x'\n")
    out = CliRunner().invoke(main, ["doctor"]).stdout
    assert "FAIL  rules: " in out and "secrets.yaml: secret #1" in out and "nothing is mined until it is fixed" in out
    assert "fix: fix it, then run miner rules check" in out


def test_doctor_after_install_and_mining(claude_dir, tmp_path, monkeypatch):
    runner = CliRunner()
    assert runner.invoke(main, ["install"]).exit_code == 0
    s = Session(claude_dir / "projects" / "-work-shop" / "s1.jsonl", cwd="/work/shop")
    s.user("We'll use PostgreSQL instead of MySQL for the main database.")
    assert runner.invoke(main, ["mine", "--all"]).exit_code == 0
    out = runner.invoke(main, ["doctor"]).stdout
    assert "ok    hooks registered" in out
    assert "passes integrity_check" in out
    assert "1 transcripts found, all mined" in out
    s.user("Let's go with pnpm as the package manager from now on.")
    out = runner.invoke(main, ["doctor"]).stdout
    assert "1 behind" in out


def test_a_transcript_whose_last_line_was_torn_is_not_behind(claude_dir):
    """A writer stopped mid-line (a crash, a session being written): mining reads up to the last complete line, and
    doctor said "1 behind" for good, with a fix (`miner mine --all`) that changed nothing."""
    runner = CliRunner()
    s = Session(claude_dir / "projects" / "-work-shop" / "s1.jsonl", cwd="/work/shop")
    s.user("We'll use PostgreSQL instead of MySQL for the main database.")
    with open(s.path, "a", encoding="utf-8") as handle:
        handle.write('{"type": "user", "uuid": "torn", "message": {"role": "user", "content": "Half of')
    assert runner.invoke(main, ["mine", "--all"]).exit_code == 0
    out = runner.invoke(main, ["doctor"]).stdout
    assert "1 transcripts found, all mined" in out, out
    with open(s.path, "a", encoding="utf-8") as handle:
        handle.write(' it."}}\n')  # the line completed: now it is behind
    assert "1 behind" in runner.invoke(main, ["doctor"]).stdout


def test_with_the_plugin_enabled_install_registers_nothing_and_doctor_counts_the_plugin(claude_dir):
    """The plugin runs the hooks: registering ours as well would run each twice and inject the block twice."""
    settings = claude_dir / "settings.json"
    text = json.dumps({"enabledPlugins": {"transcript-miner@local": True, "other@market": True}}, indent=2) + "\n"
    settings.write_text(text, encoding="utf-8")
    runner = CliRunner()
    install = runner.invoke(main, ["install"])
    assert install.exit_code == 0
    assert "the transcript-miner plugin is enabled (transcript-miner@local)" in install.output
    assert settings.read_text(encoding="utf-8") == text
    doctor = runner.invoke(main, ["doctor"])
    assert "ok    hooks run through the transcript-miner plugin (transcript-miner@local" in doctor.stdout
    assert "hooks not registered" not in doctor.stdout

    settings.write_text(json.dumps({"enabledPlugins": {"transcript-miner@local": False}}), encoding="utf-8")
    assert runner.invoke(main, ["install"]).exit_code == 0  # disabled: ours are registered
    both = json.loads(settings.read_text(encoding="utf-8"))
    both["enabledPlugins"]["transcript-miner@local"] = True  # then the plugin is enabled again
    settings.write_text(json.dumps(both), encoding="utf-8")
    doctor = runner.invoke(main, ["doctor"])
    assert doctor.exit_code == 1 and "every hook runs twice" in doctor.stdout
    assert "fix: miner uninstall" in doctor.stdout
    again = runner.invoke(main, ["install"])  # ./install.sh run again: says what is left to do
    assert f"warning: hooks of ours are registered in {settings} too, so every hook runs twice" in again.output


def test_a_plugin_enabled_for_this_project_only_also_counts(claude_dir, tmp_path, monkeypatch):
    project = tmp_path / "shop"
    (project / ".claude").mkdir(parents=True)
    (project / ".claude" / "settings.json").write_text(json.dumps({"enabledPlugins": {"transcript-miner@team": True}}))
    monkeypatch.chdir(project)
    install = CliRunner().invoke(main, ["install"])
    assert "the transcript-miner plugin is enabled (transcript-miner@team)" in install.output
    assert not (claude_dir / "settings.json").exists()
    assert "ok    hooks run through the transcript-miner plugin" in CliRunner().invoke(main, ["doctor"]).stdout


def test_doctor_flags_an_interpreter_that_cannot_import_the_hooks(claude_dir):
    """The interpreter is there but the package is not (a venv emptied by hand, another Python): each event would
    fail. The base interpreter of this test's venv stands for it."""
    base = getattr(sys, "_base_executable", "") or sys.executable
    if base == sys.executable:
        pytest.skip("this interpreter is not a venv's")
    from miner.install import settings

    settings.install("user", None, base)
    out = CliRunner().invoke(main, ["doctor"]).stdout
    assert f"FAIL  the hooks' interpreter {base} cannot import them (ModuleNotFoundError" in out, out
    assert "fix: ./install.sh" in out


def test_doctor_counts_hooks_registered_for_this_project_only(claude_dir, tmp_path, monkeypatch):
    project = tmp_path / "shop"
    project.mkdir()
    monkeypatch.chdir(project)
    assert CliRunner().invoke(main, ["install", "--scope", "project"]).exit_code == 0
    out = CliRunner().invoke(main, ["doctor"]).stdout
    assert f"ok    hooks registered in {project / '.claude' / 'settings.json'} (this project's settings" in out
    assert "hooks not registered" not in out and "cannot import" not in out


def test_doctor_flags_hook_pointing_at_missing_interpreter(claude_dir):
    settings = claude_dir / "settings.json"
    command = "'/nonexistent/python' -m miner.hooks session-start"
    settings.write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": command}]}]}}))
    out = CliRunner().invoke(main, ["doctor"]).stdout
    assert "missing interpreter: /nonexistent/python" in out


def test_doctor_flags_a_hook_registered_without_isolation_until_install_rewrites_it(claude_dir):
    settings = claude_dir / "settings.json"
    command = f"{sys.executable} -m miner.hooks stop"  # as an older version registered it
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}))
    runner = CliRunner()
    out = runner.invoke(main, ["doctor"]).stdout
    assert "FAIL  Stop hook(s) not isolated" in out and "fix: miner install" in out
    assert runner.invoke(main, ["install"]).exit_code == 0
    assert "not isolated" not in runner.invoke(main, ["doctor"]).stdout


def test_doctor_flags_a_hook_of_an_older_version_that_starts_through_runpy(claude_dir):
    settings = claude_dir / "settings.json"
    command = f"{sys.executable} -I -m miner.hooks stop"  # isolated, as the versions before the -c entry wrote it
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}))
    runner = CliRunner()
    out = runner.invoke(main, ["doctor"]).stdout
    assert "FAIL  Stop hook(s) not registered as this version registers them" in out and "not isolated" not in out
    assert runner.invoke(main, ["install"]).exit_code == 0
    assert "older version" not in runner.invoke(main, ["doctor"]).stdout


def test_doctor_tells_a_hand_edited_isolated_hook_from_one_without_isolation(claude_dir):
    settings = claude_dir / "settings.json"
    command = f'{sys.executable} -I -c "import sys; from miner.hooks import main; sys.exit(main())" stop'
    settings.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": command}]}]}}))
    out = CliRunner().invoke(main, ["doctor"]).stdout
    assert "FAIL  Stop hook(s) not registered as this version registers them" in out and "not isolated" not in out


def test_install_then_uninstall_leaves_other_hooks_byte_identical(claude_dir):
    settings = claude_dir / "settings.json"
    original = {"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}}
    text = json.dumps(original, indent=2) + "\n"
    settings.write_text(text)
    runner = CliRunner()
    installed = runner.invoke(main, ["install"])
    assert installed.exit_code == 0, installed.output
    data = json.loads(settings.read_text())
    commands = [h["command"] for groups in data["hooks"].values() for g in groups for h in g["hooks"]]
    assert any(sys.executable in c and "from miner.hooks import main; sys.exit(main())' session-start" in c
               for c in commands)
    assert "say done" in commands
    assert runner.invoke(main, ["uninstall"]).exit_code == 0
    assert settings.read_text() == text


def test_install_refuses_invalid_settings(claude_dir):
    settings = claude_dir / "settings.json"
    settings.write_text("{not json")
    result = CliRunner().invoke(main, ["install"])
    assert result.exit_code == 1 and "is not valid JSON" in result.output
    assert settings.read_text() == "{not json"


def test_install_dry_run_writes_nothing(claude_dir):
    result = CliRunner().invoke(main, ["install", "--dry-run"])
    assert result.exit_code == 0 and "dry run" in result.output
    assert not (claude_dir / "settings.json").exists()


def test_doctor_names_a_broken_setting_and_still_runs_every_other_check(claude_dir):
    """A misspelt key is a failed check naming it (the other checks still run); a setting an earlier version
    read is ignored, and doctor says so; an optional setting with no default is neither."""
    from miner import config

    runner = CliRunner()
    assert runner.invoke(main, ["install"]).exit_code == 0
    path = config.config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"budget_shar": 0.05, "budget_share": 0.03}))
    result = runner.invoke(main, ["doctor"])
    assert result.exit_code == 1
    assert "FAIL  settings: " in result.stdout and "unknown setting 'budget_shar'" in result.stdout
    assert "did you mean 'budget_share'?" in result.stdout and "ok    hooks" in result.stdout

    path.write_text(json.dumps({"startup_shares": {"todo": 0.1}, "dedup": {"threshold": 0.8}, "budget_share": 0.03}))
    result = runner.invoke(main, ["doctor"])
    line = next(line for line in result.stdout.splitlines() if "ignores" in line)
    assert line.startswith("FAIL") and line.endswith(": startup_shares") and "settings:" not in result.stdout
    path.write_text(json.dumps({"dedup": {"threshold": 0.8}, "budget_share": 0.03}))
    result = runner.invoke(main, ["doctor"])
    assert "ignores" not in result.stdout and "settings:" not in result.stdout
    # valid, but every session then starts without a block, which no hook says
    path.write_text(json.dumps({"budget_share": 0}))
    result = runner.invoke(main, ["doctor"])
    line = next(line for line in result.stdout.splitlines() if "budget_share to 0" in line)
    assert line.startswith("FAIL") and "every session starts without a block" in line and result.exit_code == 1


def test_doctor_names_a_broken_glossary_and_compiles_a_good_one(claude_dir):
    from miner import paths
    from miner.recall import glossary

    runner = CliRunner()
    assert runner.invoke(main, ["install"]).exit_code == 0
    user = paths.config_dir() / "glossary.yaml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("version: 1\ngroups:\n  - [deploy, 部署\n", encoding="utf-8")
    result = runner.invoke(main, ["doctor"])
    assert result.exit_code == 1
    line = next(line for line in result.stdout.splitlines() if "glossary" in line)
    assert line.startswith(f"FAIL  glossary: {user}:4: not valid YAML"), line
    user.write_text("version: 1\ngroups:\n  - [deploy, 部署, 上线]\n", encoding="utf-8")
    result = runner.invoke(main, ["doctor"])
    assert result.exit_code == 0, result.stdout
    assert "ok    glossary compiled for the prompt hook from" in result.stdout and str(user) in result.stdout
    assert "上线" in {member[0] for members in glossary.expand("deploy it", ["deploy"]).values() for member in members}


def test_the_mining_lag_is_said_in_the_unit_that_shows_it():
    from miner.cli.doctor import _size

    assert [_size(n) for n in (12, 45_000, 99_999, 2_400_000)] == ["12 bytes", "45 KB", "100 KB", "2.4 MB"]


def test_a_database_that_is_not_one_is_named_with_a_fix_that_works(claude_dir):
    """`miner backup` cannot copy a file SQLite cannot read: the fix keeps it aside and mines again."""
    from miner import paths

    paths.db_path().parent.mkdir(parents=True, exist_ok=True)
    paths.db_path().write_bytes(b"not a database, whatever it was" * 100)
    out = CliRunner().invoke(main, ["doctor"]).stdout
    db = paths.db_path()
    assert f"FAIL  database {db} is not usable" in out
    assert f"fix: mv {db} {db}.broken, then miner mine --all" in out


def test_a_database_another_process_keeps_locked_is_busy_not_broken(claude_dir, monkeypatch):
    import functools
    import sqlite3

    from miner import paths
    from miner.memory import reader
    from miner.memory.store import Store

    Store().close()
    monkeypatch.setattr(reader, "health_check", functools.partial(reader.health_check, timeout=0.1))
    holder = sqlite3.connect(paths.db_path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        out = CliRunner().invoke(main, ["doctor"]).stdout
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert f"FAIL  database {paths.db_path()} is busy: another process kept it locked" in out
    assert "fix: run miner doctor again" in out and ".broken" not in out


def test_install_with_mcp_writes_nothing_when_the_mcp_file_is_broken(claude_dir):
    """The hooks were written first, then the broken .claude.json stopped it: half an install, and the lines that
    said what had been written were never printed."""
    import os
    from pathlib import Path

    from miner.install.settings import settings_path

    broken = Path(os.environ["CLAUDE_CONFIG_DIR"]) / ".claude.json"
    broken.write_text("{not json")
    for args in (["install", "--mcp"], ["uninstall", "--mcp"]):
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 1 and ".claude.json" in result.output and "Traceback" not in result.output
        assert not settings_path("user").exists(), args
    assert broken.read_text() == "{not json"


def test_install_for_a_project_that_is_not_there_is_refused(tmp_path):
    missing = tmp_path / "no-such-project"
    result = CliRunner().invoke(main, ["install", "--scope", "project", "--project", str(missing)])
    assert result.exit_code == 2 and "does not exist" in result.output
    assert not missing.exists()


def test_doctor_says_when_a_projects_own_rule_file_halted_the_background_miners(claude_dir, tmp_path):
    """The halted miners' log line is no traceback, and doctor reads the user's rule files only: a trusted project
    file that broke since halted mining, and doctor said nothing was wrong."""
    from miner import paths
    from miner.extract import rules as rules_mod
    from miner.runtime import halted

    own = tmp_path / "shop" / ".claude" / "miner-rules.yaml"
    own.parent.mkdir(parents=True)
    own.write_text("rules: [\n", encoding="utf-8")
    rules_mod.trust(own, paths.config_dir())  # (trusted, then broken by a pull: it halts its project's miners)
    halted.record(f"{own}:1: not valid YAML: expected a node")
    out = CliRunner().invoke(main, ["doctor"]).stdout
    assert f"FAIL  rules: background mining halted: {own}:1: not valid YAML" in out, out
    own.write_text("rules: []\n", encoding="utf-8")  # fixed (and no longer trusted as it is: left out)
    assert "background mining halted" not in CliRunner().invoke(main, ["doctor"]).stdout
