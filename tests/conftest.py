"""Test isolation: every test gets its own MINER_HOME, HOME, XDG folders and Claude folder."""

from __future__ import annotations

import atexit
import itertools
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = REPO.parent / "shared" / "data"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# Test modules may load rules as they are imported, before any fixture runs: they get a throwaway home too, so
# that nothing the test process writes on its way out (the compiled rules it keeps) lands in the real one.
_IMPORT_HOME = tempfile.mkdtemp(prefix="miner-test-home-")
for _name, _folder in (("HOME", "home"), ("MINER_HOME", "miner-home"), ("XDG_CONFIG_HOME", "config"),
                       ("XDG_DATA_HOME", "data"), ("CLAUDE_CONFIG_DIR", "claude")):
    os.environ[_name] = os.path.join(_IMPORT_HOME, _folder)
    os.makedirs(os.environ[_name])
atexit.register(shutil.rmtree, _IMPORT_HOME, True)


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


@pytest.fixture
def sqlite_store(tmp_path):
    """A SQLite store, for a module whose `store` runs on every backend."""
    from miner.memory.store import Store

    with Store(tmp_path / "local.db") as s:
        yield s


@pytest.fixture(scope="session")
def pg_server():
    """The admin URL of a real PostgreSQL server for the whole run (`pg_support`); skips with the reason
    when none can be started here."""
    import pg_support

    given = os.environ.get("MINER_TEST_PG_URL")
    if given:
        yield given
        return
    try:
        server = pg_support.start()
    except pg_support.NoServer as exc:
        pytest.skip(f"no PostgreSQL server: {exc}")
    try:
        yield server.url
    finally:
        server.stop()


_databases = itertools.count()


@pytest.fixture
def pg_url(pg_server):
    """A fresh empty database of its own for one test."""
    import pg_support

    return pg_support.fresh_database(pg_server, f"miner_test_{os.getpid()}_{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgres"])
def any_store(request, tmp_path):
    """The store interface on each backend: a SQLite file, and a team's `PgStore` on a real server."""
    if request.param == "sqlite":
        from miner.memory.store import Store

        with Store(tmp_path / "m.db") as s:
            yield s
    else:
        from miner.memory.pgstore import PgStore

        with PgStore(request.getfixturevalue("pg_url"), team="team-a", member="tester") as s:
            yield s


def all_memories(store) -> list:
    """Every memory of the store, in any state, by id (either backend)."""
    from miner.memory.records import STATES

    return sorted(store.list_memories(states=STATES, limit=100_000), key=lambda m: m.id)


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
