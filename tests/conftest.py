"""Test isolation: every test gets its own MINER_HOME, HOME, XDG folders and Claude folder."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(autouse=True)
def isolated_home(tmp_path, monkeypatch):
    """No test touches the real ~/.claude, ~/.config or ~/.local/share."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("MINER_HOME", str(tmp_path / "miner-home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.setenv("XDG_DATA_HOME", str(home / ".local" / "share"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(home / ".claude"))
    from miner import paths

    paths.project_root.cache_clear()
    return home


@pytest.fixture
def claude_dir(isolated_home) -> Path:
    path = isolated_home / ".claude"
    (path / "projects").mkdir(parents=True)
    return path


@pytest.fixture
def store(tmp_path):
    """A fresh store in a real SQLite file of the test's own."""
    from miner.memory.store import Store

    with Store(tmp_path / "m.db") as s:
        yield s


@pytest.fixture(scope="session")
def shared_data() -> Path:
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA


@pytest.fixture(scope="session")
def pipeline():
    """The blank spaCy pipeline (offline), loaded once for the whole run."""
    from miner.extract import nlp

    return nlp.load(None, blank_only=True)


@pytest.fixture(scope="session")
def python_exe() -> str:
    return sys.executable


def subprocess_env(**extra: str) -> dict[str, str]:
    """The current (isolated) environment for a child process, plus `extra`."""
    env = dict(os.environ)
    env.update(extra)
    return env
