"""./install.sh, run for real as a subprocess.

The slow tests share installs made once per module (a fresh venv with spaCy
takes about a minute here): one install with hooks into a temporary HOME, a
second run of it (idempotence), a --no-hooks run with a transcript to backfill,
and `--test` on a tiny throwaway repository to show that a suite that tests
nothing never passes. pip keeps the caller's pip settings (find-links, index
mirrors, cache) so that it installs from what this machine already has.

The fast tests cover --help, an unknown option and a bad PYTHON: each fails
with exactly one line.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SCRIPT = REPO / "install.sh"
BASE_PYTHON = os.path.realpath(getattr(sys, "_base_executable", "") or sys.executable)
EVENTS = ("SessionStart", "UserPromptSubmit", "Stop", "PreCompact", "SessionEnd")
OFFLINE_LINE = "spaCy English model not available (offline?): using the blank pipeline with a sentencizer"


def _caller_pip_env() -> dict[str, str]:
    """The caller's pip cache and user config, found before any test swaps HOME.

    With a temporary HOME (and XDG folders), pip would lose the user's
    pip.conf (find-links, local index mirrors) and start a cold cache.
    """
    env: dict[str, str] = {}
    home = Path(os.environ.get("HOME") or os.path.expanduser("~"))
    if "PIP_CACHE_DIR" not in os.environ:
        cache = Path(os.environ.get("XDG_CACHE_HOME") or home / ".cache") / "pip"
        env["PIP_CACHE_DIR"] = str(cache)
    if "PIP_CONFIG_FILE" not in os.environ:
        xdg_config = Path(os.environ.get("XDG_CONFIG_HOME") or home / ".config")
        for candidate in (xdg_config / "pip" / "pip.conf", home / ".config" / "pip" / "pip.conf",
                          home / ".pip" / "pip.conf"):
            if candidate.is_file():
                env["PIP_CONFIG_FILE"] = str(candidate)
                break
    return env


# Module import happens at collection, before the autouse fixture moves HOME.
CALLER_PIP_ENV = _caller_pip_env()
DROPPED = ("VIRTUAL_ENV", "PYTHONHOME", "PYTHONPATH", "CLAUDE_CONFIG_DIR", "MINER_HOME",
           "XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "PYTHON")


def script_env(home: Path, miner_home: Path | None = None, **extra: str) -> dict[str, str]:
    """A clean environment for install.sh: its own HOME, no Claude folder unless made there."""
    env = {k: v for k, v in os.environ.items() if k not in DROPPED}
    env.update(CALLER_PIP_ENV)
    env["HOME"] = str(home)
    env["XDG_DATA_HOME"] = str(home / ".local" / "share")
    env["XDG_CONFIG_HOME"] = str(home / ".config")
    env["PYTHON"] = BASE_PYTHON
    if miner_home is not None:
        env["MINER_HOME"] = str(miner_home)
    env.update(extra)
    return env


@dataclass
class Run:
    args: list[str]
    returncode: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr

    def __str__(self) -> str:  # shown by failing asserts
        return (f"install.sh {' '.join(self.args)} exited {self.returncode}\n"
                f"--- stdout ---\n{self.stdout}\n--- stderr ---\n{self.stderr}")


def run_script(*args: str, env: dict[str, str], cwd: Path, script: Path = SCRIPT, timeout: float = 1200) -> Run:
    proc = subprocess.run([str(script), *args], env=env, cwd=cwd, stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)
    return Run(list(args), proc.returncode, proc.stdout, proc.stderr)


def one_line_failure(result: Run) -> str:
    """The failure line; asserts it is the only thing install.sh printed."""
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert result.returncode != 0, result
    assert len(lines) == 1, result
    assert lines[0].startswith("install.sh: "), result
    return lines[0]


# ------------------------------------------------------------------------- fast


def test_script_is_executable():
    assert os.access(SCRIPT, os.X_OK), "install.sh lost its executable bit (chmod +x install.sh)"
    assert os.access(REPO / ".ci" / "run", os.X_OK), ".ci/run lost its executable bit"


def test_help(tmp_path):
    result = run_script("--help", env=script_env(tmp_path / "script-home"), cwd=tmp_path, timeout=60)
    assert result.returncode == 0, result
    assert "--test" in result.stdout and "--no-hooks" in result.stdout, result
    assert result.stderr == "", result
    assert not (tmp_path / "script-home").exists(), "--help must not write anything"


def test_unknown_option_fails_with_one_line(tmp_path):
    result = run_script("--frobnicate", env=script_env(tmp_path / "script-home"), cwd=tmp_path, timeout=60)
    line = one_line_failure(result)
    assert "--frobnicate" in line and "--help" in line
    assert result.stdout == ""


@pytest.mark.parametrize("args", [(), ("--test",)], ids=["install", "test"])
def test_missing_python_fails_with_one_line(tmp_path, args):
    env = script_env(tmp_path / "script-home", tmp_path / "script-miner-home", PYTHON="/nonexistent")
    result = run_script(*args, env=env, cwd=tmp_path, timeout=60)
    line = one_line_failure(result)
    assert "/nonexistent" in line and "PYTHON" in line
    assert not (tmp_path / "script-miner-home").exists()


def test_a_relative_claude_config_dir_fails_with_one_line_before_anything_is_installed(tmp_path):
    """`miner install` refused it, but only once the venv was made and the package installed: minutes later."""
    env = script_env(tmp_path / "script-home", tmp_path / "script-miner-home", CLAUDE_CONFIG_DIR=".claude")
    line = one_line_failure(run_script(env=env, cwd=tmp_path, timeout=60))
    assert "CLAUDE_CONFIG_DIR is '.claude', a relative path; set it to an absolute one" in line, line
    assert not (tmp_path / "script-miner-home").exists()


@pytest.mark.parametrize("left", [True, False], ids=["earlier-install", "its-folder-removed"])
def test_a_run_without_miner_home_goes_where_the_linked_install_is(tmp_path, left):
    """The install ~/.local/bin/miner runs is upgraded in its folder; one whose folder was removed since is no install
    (the check of it stopped the script without a word, under `set -e`). A Python that cannot make the venv stops
    each run where it chose the folder."""
    python = _fake_python(tmp_path, 'case "$*" in *"-m venv"*) exit 1 ;; *ensurepip*) exit 0 ;; *) echo 3.11.2 ;; '
                                    "esac\n")
    home, earlier = tmp_path / "script-home", tmp_path / "earlier-home"
    (earlier / "venv" / "bin").mkdir(parents=True)
    (earlier / "venv" / "miner-home").write_text(f"{earlier if left else tmp_path / 'removed'}\n")
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "miner").symlink_to(earlier / "venv" / "bin" / "miner")
    result = run_script(env=script_env(home, PYTHON=python), cwd=tmp_path, timeout=60)
    ours = [line for line in result.stderr.splitlines() if line.startswith("install.sh:")]
    chosen = earlier if left else home / ".local" / "share" / "miner"
    assert result.returncode != 0 and len(ours) == 1, result
    assert f"could not create the virtual environment {chosen / 'venv'} (see" in ours[0], result
    assert ("- upgrading the install in" in result.stdout) is left, result


def _fake_python(tmp_path: Path, body: str) -> str:
    fake = tmp_path / "fake-python"
    fake.write_text("#!/bin/sh\n" + body)
    fake.chmod(0o755)
    return str(fake)


def test_old_python_fails_with_one_line(tmp_path):
    python = _fake_python(tmp_path, "echo 3.8.10\n")
    env = script_env(tmp_path / "script-home", tmp_path / "script-miner-home", PYTHON=python)
    line = one_line_failure(run_script(env=env, cwd=tmp_path, timeout=60))
    assert "3.10 or newer" in line and "3.8.10" in line
    assert not (tmp_path / "script-miner-home").exists()


def test_python_without_venv_fails_with_one_line(tmp_path):
    python = _fake_python(tmp_path, 'case "$*" in *ensurepip*) exit 1 ;; *) echo 3.11.2 ;; esac\n')
    env = script_env(tmp_path / "script-home", tmp_path / "script-miner-home", PYTHON=python)
    line = one_line_failure(run_script(env=env, cwd=tmp_path, timeout=60))
    assert "venv" in line
    assert not (tmp_path / "script-miner-home").exists()


def test_not_python_fails_with_one_line(tmp_path):
    python = _fake_python(tmp_path, "echo hello\n")
    env = script_env(tmp_path / "script-home", tmp_path / "script-miner-home", PYTHON=python)
    line = one_line_failure(run_script(env=env, cwd=tmp_path, timeout=60))
    assert "does not run as Python" in line


# ------------------------------------------------------------------------- slow: a real install


@dataclass
class Install:
    home: Path
    miner_home: Path
    env: dict[str, str]
    first: Run
    first_settings: bytes | None
    second: Run | None
    second_settings: bytes | None
    build_dir_before: bool

    @property
    def venv(self) -> Path:
        return self.miner_home / "venv"

    @property
    def settings(self) -> Path:
        return self.home / ".claude" / "settings.json"


def _read(path: Path) -> bytes | None:
    return path.read_bytes() if path.exists() else None


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Install:
    """./install.sh into a fresh HOME with no Claude folder, then the same again."""
    root = tmp_path_factory.mktemp("install")
    home = root / "home"
    home.mkdir()
    miner_home = root / "miner-home"
    env = script_env(home, miner_home)
    build_dir_before = (REPO / "build").exists()
    first = run_script(env=env, cwd=root)
    first_settings = _read(home / ".claude" / "settings.json")
    second = second_settings = None
    if first.returncode == 0:
        second = run_script(env=env, cwd=root, timeout=600)
        second_settings = _read(home / ".claude" / "settings.json")
    return Install(home, miner_home, env, first, first_settings, second, second_settings, build_dir_before)


@pytest.fixture(scope="module")
def installed_no_hooks(installed, tmp_path_factory) -> tuple[Run, Path]:
    """./install.sh --no-hooks, reusing the venv, for a HOME whose ~/.claude holds one transcript."""
    if installed.first.returncode != 0:
        pytest.fail(f"the first install failed:\n{installed.first}")
    root = tmp_path_factory.mktemp("no-hooks")
    home = root / "home"
    project = root / "work" / "shop"
    folder = home / ".claude" / "projects" / "".join(c if c.isalnum() else "-" for c in str(project))
    folder.mkdir(parents=True)
    base = {"sessionId": "s-1", "cwd": str(project), "gitBranch": "main", "version": "2.0.0"}
    entries = [
        {**base, "type": "user", "uuid": "u-1", "timestamp": "2026-01-05T10:00:00Z",
         "message": {"role": "user", "content": "We decided to keep the API versioned under /v1."}},
        {**base, "type": "assistant", "uuid": "a-1", "timestamp": "2026-01-05T10:00:04Z",
         "message": {"role": "assistant", "id": "m-1",
                     "content": [{"type": "text", "text": "Understood: everything stays under /v1."}]}},
        {**base, "type": "user", "uuid": "u-2", "timestamp": "2026-01-05T10:01:00Z",
         "message": {"role": "user", "content": "Use pnpm instead of npm for this repo."}},
    ]
    (folder / "s-1.jsonl").write_text("".join(json.dumps(e) + "\n" for e in entries))
    (home / ".local" / "bin").mkdir(parents=True)
    (home / ".local" / "bin" / "miner-hook").symlink_to("/usr/bin/true")  # another tool's command of that name
    result = run_script("--no-hooks", env=script_env(home, installed.miner_home), cwd=root, timeout=600)
    return result, home


@pytest.mark.slow
class TestInstall:
    def test_first_run_exits_0(self, installed):
        assert installed.first.returncode == 0, installed.first
        assert installed.first.stderr == "", installed.first

    def test_venv_has_a_working_miner(self, installed):
        miner = installed.venv / "bin" / "miner"
        proc = subprocess.run([str(miner), "--help"], env=installed.env, capture_output=True, text=True,
                              stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert (installed.venv / "bin" / "miner-hook").is_file()

    def test_commands_linked_into_local_bin(self, installed):
        bin_dir = installed.home / ".local" / "bin"
        for name in ("miner", "miner-hook"):
            link = bin_dir / name
            assert link.is_symlink(), installed.first
            assert Path(os.readlink(link)) == installed.venv / "bin" / name
        proc = subprocess.run([str(bin_dir / "miner"), "--help"], env=installed.env, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0, proc.stderr

    def test_says_how_to_put_local_bin_on_path(self, installed):
        assert "~/.local/bin is not on your PATH" in installed.first.stdout, installed.first
        assert 'export PATH="$HOME/.local/bin:$PATH"' in installed.first.stdout, installed.first

    def test_installed_package_ships_and_finds_its_default_rules(self, installed):
        # A regular (non-editable) install must mine with the rules from its wheel, not from a checkout.
        miner = installed.venv / "bin" / "miner"
        proc = subprocess.run([str(miner), "rules", "list"], env=installed.env, cwd=installed.home,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0, proc.stderr
        from miner.extract.rules import default_rule_files, load_rules

        shipped = len(load_rules(default_rule_files()).rules)
        assert len(proc.stdout.splitlines()) == shipped, "the installed miner must list every shipped rule"

    def test_installed_viewer_serves_its_templates_and_stylesheet(self, installed):
        # The viewer's templates and stylesheet are package data: an install from the wheel must carry them.
        import http.cookiejar
        import re
        import urllib.request

        proc = subprocess.Popen([str(installed.venv / "bin" / "miner"), "ui", "--no-browser"], env=installed.env,
                                cwd=installed.home, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                stdin=subprocess.DEVNULL)
        try:
            url = ""
            while not url:
                line = proc.stdout.readline()
                assert line, "miner ui exited before printing its address"
                found = re.search(r"http://127\.0\.0\.1:\d+/[\w\-]+/\?token=\S+", line)
                url = found.group(0) if found else ""
            opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
            base = url.split("/?")[0]
            # No database in this HOME: the address leads to Health, which says what to do.
            with opener.open(url, timeout=60) as page:
                body = page.read().decode()
            assert page.status == 200 and "<h1>Health</h1>" in body
            assert "No memory database yet" in body
            with opener.open(base + "/static/style.css", timeout=60) as sheet:
                assert sheet.status == 200 and b"--accent" in sheet.read()
        finally:
            proc.terminate()
            proc.wait(timeout=30)

    def test_one_line_names_the_spacy_pipeline(self, installed):
        lines = [line for line in installed.first.stdout.splitlines()
                 if OFFLINE_LINE in line or "spaCy pipeline: en_core_web_sm" in line]
        assert len(lines) == 1, installed.first

    def test_pip_output_goes_to_the_log(self, installed):
        assert "Collecting" not in installed.first.output and "Successfully" not in installed.first.output
        log = installed.venv / "install.log"
        assert "Successfully installed" in log.read_text(), log
        assert str(log) in installed.first.stdout or "install.log" in installed.first.stdout

    def test_checkout_is_left_untouched(self, installed):
        if not installed.build_dir_before:
            assert not (REPO / "build").exists(), "install.sh builds from a copy, not in the checkout"

    def test_nothing_to_backfill_without_a_claude_folder(self, installed):
        assert "Nothing to backfill" in installed.first.stdout, installed.first

    def test_hooks_registered_with_the_venv_python(self, installed):
        assert installed.first_settings is not None, installed.first
        hooks = json.loads(installed.first_settings)["hooks"]
        python = str(installed.venv / "bin" / "python")
        for event in EVENTS:
            commands = [h["command"] for group in hooks[event] for h in group["hooks"]]
            assert len(commands) == 1, hooks[event]
            parts = shlex.split(commands[0])
            assert parts[0] == python, commands[0]
            assert parts[1:3] == ["-I", "-c"] and "from miner.hooks import main" in parts[3], commands[0]
        # The hook interpreter really is the venv's: it imports the installed package.
        proc = subprocess.run([python, "-c", "import miner.hooks, sys; print(sys.prefix)"], env=installed.env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert Path(proc.stdout.strip()) == installed.venv

    def test_second_run_is_idempotent(self, installed):
        assert installed.second is not None, installed.first
        assert installed.second.returncode == 0, installed.second
        reused = next(line for line in installed.second.stdout.splitlines() if "reusing" in line)
        assert reused.endswith("(Python %d.%d.%d)" % sys.version_info[:3]), reused  # BASE_PYTHON's version
        assert "made with another Python" not in installed.second.stdout  # the same interpreter as the first run
        assert installed.second_settings == installed.first_settings
        assert not list((installed.home / ".claude").glob("settings.json.bak-*")), "nothing changed: no backup"
        assert Path(os.readlink(installed.home / ".local" / "bin" / "miner")) == installed.venv / "bin" / "miner"

    def test_no_hooks_writes_no_settings(self, installed_no_hooks):
        result, home = installed_no_hooks
        assert result.returncode == 0, result
        said = [line for line in result.stderr.splitlines() if "another tool's" not in line]  # (the next test's)
        assert said == [] or "pipeline" in result.stderr, result
        assert "--no-hooks" in result.stdout, result
        assert not (home / ".claude" / "settings.json").exists(), result

    def test_the_plugins_mcp_server_starts_with_the_no_hooks_install(self, installed, installed_no_hooks):
        """The plugin declares the MCP server, and the --no-hooks install (the plugin's) lacked its package: the
        server failed at every Claude Code start."""
        result, home = installed_no_hooks
        assert result.returncode == 0, result
        server = json.loads((REPO / ".claude-plugin" / "plugin.json").read_text())["mcpServers"]["transcript-miner"]
        hello = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2024-11-05", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}}}
        env = script_env(home, installed.miner_home)
        proc = subprocess.run([server["command"], *server["args"]], input=json.dumps(hello) + "\n", env=env,
                              capture_output=True, text=True, timeout=120, cwd=home)
        answer = json.loads(proc.stdout.splitlines()[0]) if proc.stdout.strip() else {}
        assert answer.get("result", {}).get("serverInfo", {}).get("name") == "transcript-miner", proc

    def test_a_link_of_another_tool_is_left_alone(self, installed, installed_no_hooks):
        result, home = installed_no_hooks
        link = home / ".local" / "bin" / "miner-hook"
        assert os.readlink(link) == "/usr/bin/true"
        assert f"{link} links to /usr/bin/true, another tool's: left alone" in result.stderr, result
        assert Path(os.readlink(home / ".local" / "bin" / "miner")) == installed.venv / "bin" / "miner"

    def test_backfill_and_recall_of_the_latest_project(self, installed, installed_no_hooks):
        result, home = installed_no_hooks
        assert result.returncode == 0, result
        assert "Nothing to backfill" not in result.stdout, result
        project = home.parent / "work" / "shop"
        assert f"miner recall --project {project}" in result.stdout, result
        env = script_env(home, installed.miner_home)
        proc = subprocess.run([str(installed.venv / "bin" / "miner"), "stats", "--json"], env=env,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["transcripts"] == 1, proc.stdout
        # The backfill used the shipped rules: the decisions are memories, and the recall shows one.
        assert json.loads(proc.stdout)["memories"] >= 1, proc.stdout
        assert "pnpm instead of npm" in result.stdout, result

    def test_the_install_and_its_hooks_share_one_store_without_miner_home(self, installed, installed_no_hooks):
        """Installed with MINER_HOME set, the tool keeps that store when MINER_HOME is not set, as Claude Code starts
        hooks from wherever it was launched: no second store appears where the variable's default points."""
        result, home = installed_no_hooks
        assert result.returncode == 0, result
        bare = script_env(home)  # HOME only: no MINER_HOME
        default_store = home / ".local" / "share" / "miner"
        proc = subprocess.run([str(installed.venv / "bin" / "miner"), "stats", "--json"], env=bare,
                              capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert json.loads(proc.stdout)["transcripts"] == 1, proc.stdout
        command = json.loads(installed.first_settings)["hooks"]["SessionStart"][0]["hooks"][0]["command"]
        project = home.parent / "work" / "shop"
        payload = {"session_id": "s-2", "transcript_path": str(home / "none.jsonl"), "cwd": str(project),
                   "hook_event_name": "SessionStart", "source": "startup"}
        hook = subprocess.run(["sh", "-c", command], input=json.dumps(payload), env=bare, cwd=home,
                              capture_output=True, text=True, timeout=120)
        assert hook.returncode == 0, hook.stderr
        assert "pnpm instead of npm" in hook.stdout, hook.stdout
        assert not default_store.exists(), sorted(p.name for p in default_store.rglob("*"))
        assert (installed.venv / "miner-home").read_text().strip() == str(installed.miner_home)


# ------------------------------------------------------------------------- slow: --test never passes on nothing


FAKE_PYPROJECT = """\
[build-system]
requires = ["setuptools>=68"]
build-backend = "setuptools.build_meta"

[project]
name = "install-script-probe"
version = "0"
requires-python = ">=3.10"

[project.optional-dependencies]
dev = ["pytest>=8"]

[tool.setuptools]
py-modules = []

[tool.pytest.ini_options]
testpaths = ["tests"]
"""


@pytest.fixture(scope="module")
def probe_repo(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    """A throwaway repository with a copy of install.sh, to run `--test` on suites we control."""
    root = tmp_path_factory.mktemp("probe")
    repo = root / "repo"
    (repo / "tests").mkdir(parents=True)
    shutil.copy2(SCRIPT, repo / "install.sh")
    (repo / "pyproject.toml").write_text(FAKE_PYPROJECT)
    home = root / "home"
    home.mkdir()
    # One interpreter unless a test asks for more: each other one is a venv more to build; no browser to install.
    return repo, script_env(home, root / "miner-home", MINER_TEST_PYTHONS="", MINER_TEST_BROWSER="0",
                       MINER_TEST_POSTGRES="0")


def _suite(repo: Path, **files: str) -> None:
    tests = repo / "tests"
    shutil.rmtree(tests)
    tests.mkdir()
    for name, text in files.items():
        (tests / f"{name}.py").write_text(text)


def _test_run(repo: Path, env: dict[str, str], *args: str) -> Run:
    return run_script("--test", *args, env=env, cwd=repo, script=repo / "install.sh", timeout=600)


@pytest.mark.slow
class TestTestMode:
    def test_passing_suite_passes_and_arguments_go_to_pytest(self, probe_repo):
        repo, env = probe_repo
        _suite(repo, test_two="def test_alpha():\n    pass\n\ndef test_beta():\n    pass\n")
        result = _test_run(repo, env, "-k", "alpha")
        assert result.returncode == 0, result
        assert "1 passed, 1 deselected" in result.stdout, result
        assert (repo / ".venv" / "bin" / "pytest").exists()
        assert "Successfully" not in result.output, "pip's output belongs in the log"

    def test_a_quieter_run_is_judged_by_its_junit_report(self, probe_repo):
        """`--test -q` makes pytest -qq, which prints no closing line: the JUnit report still says what passed."""
        repo, env = probe_repo
        _suite(repo, test_two="def test_alpha():\n    pass\n\ndef test_beta():\n    pass\n")
        result = _test_run(repo, env, "-q")
        assert result.returncode == 0, result
        assert " passed in " not in result.stdout, result  # (no closing line to read)
        assert "- 2 passed (pytest's JUnit report" in result.stdout, result

    def test_a_quieter_run_that_hides_a_failure_still_fails(self, probe_repo):
        """A plugin turns a failure into exit 0 and -qq hides the closing line: the JUnit report still counts it."""
        repo, env = probe_repo
        _suite(repo, test_bad="def test_bad():\n    assert 1 == 2\n\ndef test_ok():\n    pass\n",
               conftest="def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n")
        result = _test_run(repo, env, "-q")
        assert result.returncode != 0, result
        ours = [line for line in result.stderr.splitlines() if line.startswith("install.sh:")]
        assert len(ours) == 1 and "1 failed" in ours[0], result

    def test_failing_suite_fails_with_one_line(self, probe_repo):
        repo, env = probe_repo
        _suite(repo, test_bad="def test_bad():\n    assert 1 == 2\n")
        result = _test_run(repo, env)
        assert result.returncode != 0, result
        assert "reusing" in result.stdout, result
        ours = [line for line in result.stderr.splitlines() if line.startswith("install.sh:")]
        assert len(ours) == 1 and "exit code 1" in ours[0], result

    def test_a_venv_left_half_cleared_is_made_again_not_taken_for_one(self, probe_repo):
        """Ctrl-C during `venv --clear` left bin/python without pyvenv.cfg: the next run took it for a working venv,
        and pip installed the package into the interpreter it was made from, outside any venv."""
        repo, env = probe_repo
        _suite(repo, test_one="def test_one():\n    pass\n")
        assert _test_run(repo, env).returncode == 0
        (repo / ".venv" / "pyvenv.cfg").unlink()
        result = _test_run(repo, env)
        assert result.returncode == 0, result
        assert "virtual environment: created" in result.stdout and "reusing" not in result.stdout, result
        probe = subprocess.run([BASE_PYTHON, "-m", "pip", "show", "install-script-probe"], capture_output=True)
        assert probe.returncode != 0, "installed outside the venv"

    def test_the_suite_runs_on_each_listed_interpreter_once(self, probe_repo, tmp_path):
        """MINER_TEST_PYTHONS: each other version gets its own .venv-X.Y; the same version again is not
        run twice, and an interpreter that is not installed is named in a warning, not a failure."""
        repo, env = probe_repo
        _suite(repo, test_one="import sys\n\ndef test_version():\n    print(sys.version)\n")
        others = [p for p in ("python3.10", "python3.11", "python3.12") if shutil.which(p)
                  and subprocess.run([p, "-c", "import sys; sys.exit(sys.version_info[:2] == (%d, %d))"
                                      % sys.version_info[:2]]).returncode == 0]
        listed = [BASE_PYTHON, "python9.99"] + others[:1]
        result = _test_run(repo, dict(env, MINER_TEST_PYTHONS=" ".join(listed)))
        assert result.returncode == 0, result
        assert result.stdout.count("1 passed") == 1 + len(others[:1]), result
        assert "python9.99" in result.stderr and "did not run" in result.stderr, result
        for other in others[:1]:
            version = subprocess.run([other, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
                                     capture_output=True, text=True).stdout.strip()
            assert (repo / f".venv-{version}" / "bin" / "python").exists(), result

    @pytest.mark.parametrize("case", ["none-collected", "exit-0-forced", "all-skipped", "all-skipped-quietly"])
    def test_suite_that_tests_nothing_fails(self, probe_repo, case):
        repo, env = probe_repo
        if case == "none-collected":  # pytest exits 5
            _suite(repo, test_ok="def test_ok():\n    pass\n")
            result = _test_run(repo, env, "-k", "no_such_test")
        elif case == "exit-0-forced":  # a plugin turns "no tests ran" into exit 0: still no pass
            _suite(repo, conftest="def pytest_sessionfinish(session, exitstatus):\n    session.exitstatus = 0\n")
            result = _test_run(repo, env)
        else:
            _suite(repo, test_skip="import pytest\n\n@pytest.mark.skip(reason='probe')\ndef test_s():\n    pass\n")
            result = _test_run(repo, env, *(["-q"] if case == "all-skipped-quietly" else []))
        assert result.returncode != 0, result
        ours = [line for line in result.stderr.splitlines() if line.startswith("install.sh:")]
        assert len(ours) == 1, result
        assert "no test" in ours[0], result


@pytest.mark.slow
def test_a_run_without_the_first_runs_miner_home_upgrades_that_install(installed, installed_no_hooks):
    """Run again from a shell without the MINER_HOME of the first run, the installer made a second venv and store
    under ~/.local/share/miner, re-mined every transcript into it and pointed the hooks at it: the memories the user
    had forgotten came back, and the pins were gone. It upgrades the install ~/.local/bin/miner runs; and with
    --no-hooks it says the hooks an earlier run registered stay (it said they were not registered)."""
    assert installed.first.returncode == 0, installed.first
    result = run_script("--no-hooks", env=script_env(installed.home), cwd=installed.home, timeout=600)
    assert result.returncode == 0, result
    assert f"- upgrading the install in {installed.miner_home} (~/.local/bin/miner runs it" in result.stdout, result
    assert "- hooks: left as they are (--no-hooks): an earlier install registered them in" in result.stdout, result
    assert "- existing store (miner doctor --fix): " in result.stdout, result  # (the store the first runs made)
    assert not (installed.home / ".local" / "share" / "miner").exists()
    assert Path(os.readlink(installed.home / ".local" / "bin" / "miner")) == installed.venv / "bin" / "miner"
