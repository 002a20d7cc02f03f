"""Files in the user's project never run as our code.

Claude Code runs hooks in the project folder, and `python -m` puts the current directory first on
`sys.path`: a `json.py` (or a `miner/` folder) in a repository would be imported in place of ours, on every
prompt, without the user ever being asked. The hooks, their background worker, the MCP server and the
watcher run isolated (`python -I`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from builders import Session

from miner import paths
from miner.install import mcp_config
from miner.install import settings as st
from miner.worker import running_workers

PLANTED = """import os
open(os.environ["PLANTED_MARK"], "a").write(__name__ + "\\n")
raise SystemExit("planted module ran")
"""


def hostile_project(root: Path) -> Path:
    """A project folder holding modules named like ones the hooks import."""
    project = root / "repo"
    (project / "miner").mkdir(parents=True)
    for name in ("json.py", "select.py", "fcntl.py", "sqlite3.py", "miner/__init__.py"):
        (project / name).write_text(PLANTED)
    return project


def wait_for_workers(timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while running_workers() and time.monotonic() < deadline:
        time.sleep(0.05)


def run_hook(command: str, project: Path, payload: dict, env: dict) -> subprocess.CompletedProcess:
    """The command as Claude Code runs it: through the shell, in the project folder, the payload on stdin."""
    return subprocess.run(command, shell=True, cwd=project, input=json.dumps(payload), capture_output=True,
                          text=True, env=env, timeout=120)


def test_a_project_folder_cannot_stand_in_for_our_modules(tmp_path, claude_dir):
    mark = tmp_path / "planted.txt"
    project = hostile_project(tmp_path)
    session = Session(claude_dir / "projects" / paths.encode_project(str(project)) / "s.jsonl", str(project))
    session.user("We decided to use pnpm for every package.")
    session.assistant("Done: the build runs with pnpm now.")
    env = dict(os.environ, PLANTED_MARK=str(mark))
    payload = {"session_id": session.session_id, "transcript_path": str(session.path), "cwd": str(project),
               "hook_event_name": "Stop", "stop_hook_active": False}

    # Without isolation the planted module runs: the hazard is real, and this test would see it.
    exposed = run_hook(f"{sys.executable} -m miner.hooks stop", project, payload, env)
    assert mark.exists(), exposed.stderr
    mark.unlink()

    # The registered command, and the worker it starts (which mines, so it imports much more).
    for event, hook_event in (("stop", "Stop"), ("session-start", "SessionStart"),
                              ("user-prompt-submit", "UserPromptSubmit")):
        done = run_hook(st.hook_command(sys.executable, event), project,
                        dict(payload, hook_event_name=hook_event, source="startup", prompt="which package manager"),
                        env)
        assert done.returncode == 0, done.stderr
        wait_for_workers()
    assert not mark.exists(), mark.read_text()
    # The worker did its work: the transcript was mined.
    from miner.memory.store import Store

    with Store(readonly=True) as store:
        assert any("pnpm" in m.text for m in store.project_memories(str(project)))


def test_install_upgrades_an_entry_written_without_isolation(tmp_path):
    old = f"{sys.executable} -m miner.hooks stop"
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": old, "timeout": 10}]}]}}
    new = st.plan_install(settings, sys.executable)
    commands = [h["command"] for group in new["hooks"]["Stop"] for h in group["hooks"]]
    assert commands == [st.hook_command(sys.executable, "stop")]
    assert st.is_current(commands[0]) and " -I -c " in commands[0]


def test_install_upgrades_an_isolated_entry_of_an_older_version(tmp_path):
    old = f"{sys.executable} -I -m miner.hooks stop"  # isolated, but entered through runpy
    settings = {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": old, "timeout": 10}]}]}}
    new = st.plan_install(settings, sys.executable)
    assert [h["command"] for group in new["hooks"]["Stop"] for h in group["hooks"]] == [
        st.hook_command(sys.executable, "stop")]
    assert st.plan_uninstall(new) == {}


def test_the_mcp_server_entry_runs_isolated_and_an_older_entry_is_still_ours():
    assert mcp_config.server_entry(sys.executable)["args"] == ["-I", "-m", "miner.mcp_server"]
    assert mcp_config.is_ours({"type": "stdio", "command": sys.executable, "args": ["-m", "miner.mcp_server"]})


def test_the_worker_leaves_the_project_folder(tmp_path):
    project = tmp_path / "repo"
    project.mkdir()
    home = tmp_path / "miner-home"
    done = subprocess.run([sys.executable, "-I", "-c", "import os, miner.worker as w; w.leave_the_project_folder(); "
                           "print(os.getcwd())"], cwd=project, capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, MINER_HOME=str(home)))
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.strip()) == home.resolve()


def test_a_pipeline_name_is_never_read_from_a_folder_of_that_name(tmp_path, monkeypatch, pipeline):
    """`spacy_model` as a bare name is an installed package or nothing; as a path, it is that folder."""
    from miner.extract import nlp

    folder = tmp_path / "repo" / "en_core_web_zz"
    folder.parent.mkdir()
    pipeline.nlp.to_disk(folder)  # a real pipeline, saved where a project folder could hold it
    monkeypatch.chdir(tmp_path / "repo")
    assert nlp._trained("en_core_web_zz") is None
    loaded = nlp._trained(str(folder))
    assert loaded is not None and loaded.name == str(folder)
