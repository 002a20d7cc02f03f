"""`jsonlite` reads and writes what `json` does, errors included; `paths` answers as `pathlib` did."""

from __future__ import annotations

import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from miner import jsonlite, paths

ALPHABET = 'ab "\\\n\t\x00\x1f\u2028é日本😀\ud800/'


def value(rng: random.Random, depth: int = 0):
    kind = rng.randrange(9 if depth < 4 else 6)
    if kind == 0:
        return None
    if kind == 1:
        return rng.random() < 0.5
    if kind == 2:
        return rng.randrange(-10**20, 10**20)
    if kind == 3:
        return rng.choice([rng.uniform(-1e6, 1e6), 1e-300, 1e300, 0.1, -0.0, 5e-324, 2.0])
    if kind in (4, 5):
        return "".join(rng.choice(ALPHABET) for _ in range(rng.randrange(8)))
    if kind == 6:
        return [value(rng, depth + 1) for _ in range(rng.randrange(4))]
    if kind == 7:
        return tuple(value(rng, depth + 1) for _ in range(rng.randrange(3)))
    return {rng.choice(["a", "b", "é", "日", '"', "x\ny"]): value(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_dumps_and_loads_agree_with_json_on_generated_documents():
    rng = random.Random(7)
    for _ in range(3000):
        doc = value(rng)
        written = jsonlite.dumps(doc)
        assert written == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
        for text in (written, f" \n{written}\t ", json.dumps(doc), json.dumps(doc, indent=2)):
            assert repr(jsonlite.loads(text)) == repr(json.loads(text))


def test_odd_keys_and_numbers_are_written_as_json_writes_them():
    for doc in ({2: 2, 1.5: 3, True: 1, None: 0}, {"x": float("nan"), "y": float("inf"), "z": float("-inf")}):
        assert jsonlite.dumps(doc) == json.dumps(doc, ensure_ascii=False, separators=(",", ":"))
    assert jsonlite.string("日本 \"x\"\n") == json.dumps("日本 \"x\"\n", ensure_ascii=False)
    with pytest.raises(TypeError, match="not JSON serializable"):
        jsonlite.dumps({"a": object()})
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="Circular"):
        jsonlite.dumps(loop)


BAD = ["", " ", "{", "[1,]", '{"a":1} x', "nul", '"\x01"', "\ufeff{}", "{'a':1}", "1 2", "0x10", "01",
       '"\\x"', "[1 2]", '{"a" 1}', '{"a":1,}', "[" * 100_000]


@pytest.mark.parametrize("text", BAD, ids=range(len(BAD)))
def test_a_bad_document_fails_as_json_fails_in_a_process_that_never_loaded_json(text):
    """The C scanner reports through `json.decoder`, which a hook has not loaded: the error must still be json's."""
    probe = ("import sys\n{load}\nt = sys.stdin.read()\n"
             "try:\n    print('ok', repr(codec.loads(t)))\n"
             "except Exception as e:\n    print(type(e).__name__, e)\n")
    answers = [subprocess.run([sys.executable, "-I", "-c", probe.format(load=load)], input=text, capture_output=True,
                              text=True, timeout=60, cwd=Path(__file__).resolve().parent.parent).stdout
               for load in ("from miner import jsonlite as codec", "import json as codec")]
    assert answers[0] == answers[1] and answers[0].split()[0] in {"JSONDecodeError", "RecursionError"}, answers


def reference_root(cwd: str) -> str:
    """`project_root` as it was written with `pathlib`, less the look-up of a relative path from the process's
    own folder."""
    path = Path(cwd)
    if not path.is_absolute():
        return str(path)
    try:
        for candidate in [path, *path.parents]:
            if (candidate / ".git").exists():
                return str(candidate)
    except OSError:
        pass
    return str(path)


def test_project_root_answers_as_pathlib_did(tmp_path, monkeypatch):
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "src" / "deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    base = str(tmp_path)
    cases = [f"{base}/repo/src/deep", f"{base}/repo/src/deep/", f"{base}//repo/src", f"{base}/repo/./src",
             "repo/src/deep", "repo", "src", ".", "./repo/src", "/", "//x/y", "///x", f"{base}/gone/x",
             "repo/../repo/src", "repo//src/"]
    for cwd in cases:
        paths.project_root.cache_clear()
        assert paths.project_root(cwd) == reference_root(cwd), cwd
    assert paths.project_root("") == ""


def test_a_path_that_is_not_absolute_here_is_its_own_project_wherever_the_process_runs(tmp_path, monkeypatch):
    """A session recorded on Windows and mined on Linux: its cwd is no path of this machine. Before, the look-up
    went on from the process's own folder, and a miner or hook started inside a git checkout filed it under
    "." (the same session under two projects, depending on where each process ran)."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    for cwd in ("C:\\Users\\me\\shop", "repo/src", "."):
        paths.project_root.cache_clear()
        assert paths.project_root(cwd) == cwd, cwd


def test_a_windows_drive_is_one_drive_in_either_case():
    """Claude Code records the same Windows folder as "C:\\…" and as "c:\\…" (a terminal, an editor's
    terminal): one project, named with the capital letter; the rest of the path is kept as written."""
    for cwd in ("c:\\Users\\me\\Shop", "C:\\Users\\me\\Shop"):
        paths.project_root.cache_clear()
        assert paths.project_root(cwd) == "C:\\Users\\me\\Shop", cwd
    assert paths.project_root("d:/work/app") == "D:/work/app"
    assert paths.project_root("a:") == "A:"
    for cwd in ("/c:/x", "ab:cd", "é:\\x"):  # no drive letter
        assert paths.project_root(cwd) == cwd


def test_project_folder_names_are_claude_codes():
    for cwd in ("/home/me/shop-api", "/a b/ü-x_y.z", "C:\\work\\x", "/srv/日本"):
        assert paths.encode_project(cwd) == re.sub(r"[^A-Za-z0-9]", "-", cwd)


def test_string_and_path_answers_name_the_same_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("MINER_HOME", str(tmp_path / "mh"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "~/elsewhere")
    assert Path(paths.data_root()) == paths.data_dir() == tmp_path / "mh"
    assert Path(paths.data_file("logs")) == paths.logs_dir() and paths.db_path() == tmp_path / "mh" / "memory.db"
    assert Path(paths.config_root()) == paths.config_dir() == tmp_path / "cfg" / "miner"
    assert paths.claude_dir() == Path(os.path.expanduser("~/elsewhere")) == Path(paths.claude_root())
    monkeypatch.delenv("MINER_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setattr(paths, "_installed_home", "")  # as in a checkout's venv, whichever venv runs the tests
    assert paths.data_dir() == tmp_path / "xdg" / "miner"


def test_the_folder_an_install_was_made_for_comes_after_miner_home_and_before_the_default(tmp_path, monkeypatch):
    """./install.sh writes its data folder into the venv it made; an interpreter of that venv reads it once."""
    venv = tmp_path / "venv"
    venv.mkdir()
    (venv / paths.INSTALLED_HOME_FILE).write_text(f"{tmp_path / 'installed'}\n", encoding="utf-8")
    monkeypatch.setattr(sys, "prefix", str(venv))
    monkeypatch.setattr(paths, "_installed_home", None)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("MINER_HOME", str(tmp_path / "explicit"))
    assert paths.data_dir() == tmp_path / "explicit"
    monkeypatch.delenv("MINER_HOME")
    assert paths.data_dir() == tmp_path / "installed" and paths.data_root() == str(tmp_path / "installed")
    (venv / paths.INSTALLED_HOME_FILE).write_text("relative/path\n", encoding="utf-8")  # not the install's: ignored
    monkeypatch.setattr(paths, "_installed_home", None)
    assert paths.data_dir() == tmp_path / "xdg" / "miner"


def test_a_folder_that_cannot_be_looked_into_leaves_the_cwd_its_own_project(tmp_path, monkeypatch):
    """As `pathlib` answered (its `exists()` raised, and the cwd stood as its own project): a `.git` above a
    folder the user may not enter is not this project's. The tests run as root, whom no permission stops, so
    the refusal is the file system's answer played by `os.stat` (which Python 3.10's pathlib does not call
    through the module: it is checked against the expected folders, not against `reference_root`)."""
    (tmp_path / ".git").mkdir()
    locked = tmp_path / "locked"
    (locked / "proj").mkdir(parents=True)
    real_stat = os.stat

    def refusing(path, *args, **kwargs):
        if str(path).startswith(str(locked)):
            raise PermissionError(13, "Permission denied", str(path))
        return real_stat(path, *args, **kwargs)

    monkeypatch.setattr(os, "stat", refusing)
    cwd = str(locked / "proj")
    paths.project_root.cache_clear()
    assert paths.project_root(cwd) == cwd
    paths.project_root.cache_clear()
    assert paths.project_root(str(tmp_path / "free")) == str(tmp_path)


def test_a_home_that_cannot_be_found_is_an_error_not_a_folder_in_the_cwd(monkeypatch):
    monkeypatch.setenv("MINER_HOME", "~no-such-user-here/miner")
    with pytest.raises(RuntimeError, match="cannot find the home folder"):
        paths.data_file("memory.db")
    with pytest.raises(RuntimeError):
        Path("~no-such-user-here/miner").expanduser()  # what `paths` answered when it used pathlib
    monkeypatch.setenv("MINER_HOME", "~/miner")
    assert paths.data_root() == os.path.join(os.path.expanduser("~"), "miner")


def test_the_store_file_and_the_project_name_read_paths_as_pathlib_does(tmp_path):
    """A SessionStart that renders its block keeps `pathlib` unloaded: the store keeps its file as a string, and
    the block names its project from a string, as `Path` would (every odd form of a path, generated)."""
    from miner.memory.store import Store
    from miner.recall.rank import project_name

    rng = random.Random(7)
    atoms = ["a", "b c", "é", ".", "..", "", "/", "//"]
    for _ in range(20_000):
        text = "".join(rng.choice(atoms + ["/"] * 3) for _ in range(rng.randint(1, 7)))
        if text:
            assert project_name(text) == Path(text).name, text
    with Store(str(tmp_path) + "//data/./memory.db") as store:
        assert store.path == tmp_path / "data" / "memory.db" and store.path.is_file()
        assert store.stats()["database"] == str(tmp_path / "data" / "memory.db")


def test_a_relative_folder_setting_is_an_error_or_ignored_never_a_folder_of_the_cwd(monkeypatch, tmp_path):
    """A hook runs in the user's project: a relative MINER_HOME put the store (mined conversation text) into the
    repository, where it could be committed. MINER_HOME and CLAUDE_CONFIG_DIR, which the user sets, are refused in one
    line; a relative XDG folder is ignored, as the XDG specification says."""
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setenv("MINER_HOME", "mdata")
    with pytest.raises(paths.PathSettingError, match="MINER_HOME is 'mdata', a relative path; set it to an absolute"):
        paths.data_root()
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", "claude")
    with pytest.raises(paths.PathSettingError, match="CLAUDE_CONFIG_DIR is 'claude', a relative path"):
        paths.claude_root()
    monkeypatch.delenv("MINER_HOME")
    monkeypatch.setenv("XDG_DATA_HOME", "data")
    monkeypatch.setenv("XDG_CONFIG_HOME", "conf")
    assert paths.data_root() == str(tmp_path / ".local" / "share" / "miner")
    assert paths.config_root() == str(tmp_path / ".config" / "miner")
