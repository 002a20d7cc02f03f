"""A full disk, made real: a small tmpfs mounted (in a mount namespace of its own, `unshare -m`) over the store's
folder or Claude Code's. Nothing may be lost or left half-written, mining goes on where it can, and a command says
so in one line. The mount lives as long as the shell script run in the namespace, so each test checks what the
script printed."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys

import pytest

from tests.builders import Session

MINER = f"{shlex.quote(sys.executable)} -I -m miner.cli"


def in_namespace(script: str, env: dict | None = None) -> subprocess.CompletedProcess:
    if shutil.which("unshare") is None or subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode:
        pytest.skip("needs `unshare -m` (root, or user namespaces) to mount a small tmpfs")
    return subprocess.run(["unshare", "-m", "sh", "-c", script], capture_output=True, text=True, timeout=300,
                          env=dict(os.environ, **(env or {})))


def fill(folder: str) -> str:
    """Shell that fills the file system of `folder` to the last byte."""
    return f"(head -c 100000000 /dev/zero > {shlex.quote(folder)}/filler 2>/dev/null || true)"


def one_session_and_home(tmp_path) -> tuple[Session, str]:
    """A transcript with one decision, and the store's folder (made, empty), where a tmpfs will be mounted."""
    session = Session(tmp_path / "projects" / "s1.jsonl", cwd="/work/shop")
    session.user("Let's go with pnpm as the package manager for the shop.")
    home = os.environ["MINER_HOME"]
    os.makedirs(home, exist_ok=True)
    return session, home


def test_mining_goes_on_when_the_glossary_cache_cannot_be_written_and_leaves_no_temp_file(tmp_path, isolated_home):
    """The glossary's compiled copy (about 0.7 MB) is a cache: a disk too full for it stopped every miner with a
    traceback, and a private copy half-written and readable by anyone stayed in the cache folder."""
    session, home = one_session_and_home(tmp_path)
    ran = in_namespace(f"mount -t tmpfs -o size=1000k tmpfs {shlex.quote(home)} && "
                       f"{MINER} mine {shlex.quote(str(session.path))} && {MINER} list && "
                       f"ls -aR {shlex.quote(home)}/cache")
    assert ran.returncode == 0, ran.stderr
    assert "pnpm as the package manager" in ran.stdout and "Traceback" not in ran.stderr
    assert "recall-terms.db" not in ran.stdout  # neither the cache nor a temp file of it
    assert ".tmp" not in ran.stdout and "textcat" in ran.stdout, ran.stdout  # (the classifier's cache did not fit)


def test_a_command_on_a_full_disk_is_one_line_and_changes_nothing(tmp_path, isolated_home):
    session, home = one_session_and_home(tmp_path)
    ran = in_namespace(f"mount -t tmpfs -o size=2000k tmpfs {shlex.quote(home)} && "
                       f"{MINER} mine -q {shlex.quote(str(session.path))} >/dev/null && {fill(home)} && "
                       f"{{ {MINER} forget 1; echo rc=$?; }} && rm {shlex.quote(home)}/filler && {MINER} list")
    assert "Traceback" not in ran.stderr, ran.stderr
    (line,) = ran.stderr.strip().splitlines()  # (SQLite says "database or disk is full" or "disk I/O error")
    assert line.startswith(f"Error: could not use the memory store in {home} (") and line.endswith(
        "), as on a full disk: free some space there and run the command again (what it was writing was not kept; "
        "nothing else changed)"), line
    assert "rc=1" in ran.stdout and "pnpm as the package manager" in ran.stdout.split("rc=1")[1]  # still active


def test_settings_on_a_full_disk_keep_no_half_backup(tmp_path, isolated_home):
    """The backup of settings.json was copied before the write: on a full disk a cut-short copy stayed, named like a
    backup, and each retry added one."""
    claude = os.environ["CLAUDE_CONFIG_DIR"]
    os.makedirs(claude, exist_ok=True)
    settings = '{"theme": "dark", "padding": "' + "x" * 15_000 + '"}\n'
    ran = in_namespace(f"mount -t tmpfs -o size=24k tmpfs {shlex.quote(claude)} && "
                       f"printf '%s' {shlex.quote(settings)} > {shlex.quote(claude)}/settings.json && "
                       f"{fill(claude)} && rm {shlex.quote(claude)}/filler && "
                       f"head -c 6000 /dev/zero > {shlex.quote(claude)}/filler && "
                       f"{{ {MINER} install; echo rc=$?; }} && ls -a {shlex.quote(claude)} && "
                       f"cmp -s {shlex.quote(claude)}/settings.json - <<'EOF'\n{settings}EOF\necho same=$?")
    assert "rc=1" in ran.stdout and "Traceback" not in ran.stderr, (ran.stdout, ran.stderr)
    assert "free some space on" in ran.stderr, ran.stderr
    assert ".bak-" not in ran.stdout and ".tmp" not in ran.stdout, ran.stdout
    assert "same=0" in ran.stdout


def test_a_worker_log_line_on_a_full_disk_is_lost_and_the_worker_goes_on(monkeypatch):
    """A worker's stderr is its log file: a line it could not write raised out of the error handler that wrote it,
    and the worker died before recording what SessionStart showed or mining."""
    from miner.runtime import passes

    if not os.path.exists("/dev/full"):
        pytest.skip("needs /dev/full, which fails every write with 'No space left on device'")
    full = open("/dev/full", "w", encoding="utf-8")
    try:
        monkeypatch.setattr(sys, "stderr", full)
        passes.note("the store was repaired")  # (raised OSError: [Errno 28])
        with pytest.raises(OSError):
            print("a line", file=full, flush=True)  # what the note met
    finally:
        monkeypatch.undo()
        try:
            full.close()  # (what the failed writes left in its buffer fails once more)
        except OSError:
            pass
