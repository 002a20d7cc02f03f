"""What the hooks load, run as `miner install` registers them: the per-turn hooks stay near a bare interpreter.

`re` (which `json` and `pathlib` import) costs about 6 ms, `runpy` (`python -m`) 3 ms: a Stop hook and a
SessionStart answered from its rendered block need neither, and the prompt hook needs `re` only for words of
other scripts than ASCII.
Each test runs the registered command in a fresh process, with the payload on stdin, and has the process
write down what it loaded as it exits, beyond what a bare start of the same interpreter loads.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest
from test_hooks import Session, seed_store, wait_for_workers

from miner import config
from miner.install.settings import ENTRY, hook_command
from miner.memory.store import Store
from miner.recall import blockcache

HEAVY = {"re", "json", "pathlib", "runpy", "sqlite3", "typing", "dataclasses", "inspect", "hashlib"}


REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def installed_python(tmp_path_factory) -> str:
    """A venv that finds the package and its dependencies through plain paths, as a non-editable install does:
    this checkout's editable finder loads `re` and `pathlib` at every start, which would hide the hook's own."""
    venv = tmp_path_factory.mktemp("hook-venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    purelib = Path(sysconfig.get_path("purelib", vars={"base": str(venv), "platbase": str(venv)}))
    (purelib / "miner-test-paths.pth").write_text(f"{REPO}\n{sysconfig.get_paths()['purelib']}\n")
    python = str(venv / "bin" / "python")
    assert {"re", "pathlib"} & at_start(python) == set()  # the bare start loads neither: the tests below can tell
    return python


@pytest.fixture
def session(tmp_path, claude_dir) -> Session:
    path = tmp_path / "work" / "shop-api"
    path.mkdir(parents=True)
    yield Session(path)
    wait_for_workers()


def run_registered(python: str, event: str, stdin: bytes, tmp_path) -> tuple[subprocess.CompletedProcess, set[str]]:
    """The command `miner install` registers for `event`, with a probe that lists the loaded modules as it ends."""
    argv = shlex.split(hook_command(python, event))
    assert argv[1:3] == ["-I", "-c"] and argv[3] == ENTRY and argv[4] == event  # what is run here is what is registered
    listing = tmp_path / f"modules-{event}.txt"
    # The hook's process ends with os._exit (no atexit handlers): the listing is written on the way there.
    write = f"open({str(listing)!r}, 'w').write(' '.join(sys.modules))"
    probe = f"import os, sys; end = os._exit; os._exit = lambda code: ({write}, end(code)); {ENTRY}"
    done = subprocess.run([argv[0], "-I", "-c", probe, event], input=stdin, capture_output=True, env=dict(os.environ),
                          timeout=60)
    assert done.returncode == 0, done.stderr.decode()
    return done, set(listing.read_text().split()) - at_start(argv[0])


def at_start(python: str) -> set[str]:
    """What the interpreter loads before any code runs (a venv's `.pth` files may load `re` and `pathlib` there:
    an editable install's finder does; those cost every process alike, the hook's own imports are the rest)."""
    done = subprocess.run([python, "-I", "-c", "import sys; print(' '.join(sys.modules))"], capture_output=True,
                          text=True, timeout=60, check=True)
    return set(done.stdout.split())


def test_stop_loads_no_regular_expressions_no_json_module_and_no_runpy(session, installed_python, tmp_path):
    session.turn("Pick the package manager for the monorepo.", "Let's go with pnpm as the package manager.")
    done, modules = run_registered(installed_python, "stop", session.payload("stop.json"), tmp_path)
    wait_for_workers()
    assert done.stdout == b""
    assert "miner.runtime.locks" in modules and "_json" in modules  # the probe saw the hook do its work
    assert modules & HEAVY == set()


def test_session_start_from_its_rendered_block_loads_no_regular_expressions_and_no_store(session, installed_python, tmp_path):
    project = str(session.cwd)
    seed_store(project, count=6)
    path = blockcache.startup_path(project)
    assert blockcache.refresh(path, project, "startup")
    with Store(readonly=True) as store:
        live, _ = blockcache.render(store, project, config.load(), "startup")

    done, modules = run_registered(installed_python, "session-start", session.payload("session-start.startup.json"), tmp_path)
    wait_for_workers()
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"] == {"hookEventName": "SessionStart", "additionalContext": live}
    assert "miner.recall.blockcache" in modules and "miner.memory.store" not in modules
    assert modules & HEAVY == set()


def test_the_prompt_hook_loads_no_regular_expressions_no_json_module_no_pathlib_and_no_runpy(
        session, installed_python, tmp_path):
    """An English prompt's words need no `re` (about 6 ms at every prompt); the glossary is compiled, as every
    miner compiles it, so that the prompt is expanded as it is in use."""
    from miner.recall import glossary

    glossary.refresh()
    seed_store(str(session.cwd), count=6)
    prompt = json.dumps({"session_id": session.session_id, "transcript_path": str(session.transcript),
                         "cwd": str(session.cwd), "hook_event_name": "UserPromptSubmit",
                         "prompt": "What did we say about module 3?"}).encode()
    done, modules = run_registered(installed_python, "user-prompt-submit", prompt, tmp_path)
    context = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    assert "Memory number 3:" in context
    assert {"miner.recall.prompt", "miner.textutil", "miner.recall.glossary", "miner.memory.glossary_db"} <= modules
    assert modules & HEAVY == set()


def test_session_start_rendering_its_block_loads_no_pathlib_and_no_json_module(session, installed_python, tmp_path):
    """A cache miss renders from the store: it needs `re` and `sqlite3`, but not `pathlib` (with `urllib.parse`
    and `ipaddress` behind it) nor `json`, which cost it milliseconds; the last session's checkpoint is read too."""
    project = str(session.cwd)
    seed_store(project, count=6)
    with Store() as store:
        store.put_checkpoint("earlier-session", project, {"session_id": "earlier-session", "project": project,
                                                          "task": ["Move the invoice exporter to the scheduler."],
                                                          "decisions": [], "todos": []})
    with Store(readonly=True) as store:
        live, _ = blockcache.render(store, project, config.load(), "startup")
    assert "invoice exporter" in live  # the checkpoint is what the block opens with

    assert not os.path.exists(blockcache.startup_path(project))  # nothing rendered ahead: the hook renders it
    done, modules = run_registered(installed_python, "session-start", session.payload("session-start.startup.json"), tmp_path)
    wait_for_workers()
    out = json.loads(done.stdout)
    assert out["hookSpecificOutput"] == {"hookEventName": "SessionStart", "additionalContext": live}
    assert "miner.recall.block" in modules and "miner.memory.store" in modules
    assert modules & {"json", "pathlib", "urllib.parse", "ipaddress", "runpy", "typing", "dataclasses", "inspect"} == set()
