"""`miner mine --jobs`: a backfill in several processes ends in the store that one process makes."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from miner.memory.store import Store
from miner.runtime.parallel import MAX_JOBS, _take, default_jobs, mine_parallel, project_folder, project_groups
from tests.builders import Session
from tests.test_crash import snapshot

# Each project says things twice in other words, changes its mind, and is mined across several sessions.
LINES = [
    ("user", "We'll use PostgreSQL instead of MySQL for the {x} database."),
    ("assistant", "The {x} API server listens on port 3216 in development."),
    ("user", "Please always run the linter before you commit to the {x} repo."),
    ("user", "Actually the {x} API server listens on port 3220 now."),
    ("user", "Please always run the linter before committing to the {x} repo."),
    ("user", "No, let's go with SQLite for the {x} database instead."),
    ("user", "Later we should add retries to the {x} uploader, not now."),
]


def projects(root: Path) -> Path:
    """Three project folders as Claude Code stores them, one with a subagent's file; returns the folder."""
    folder = root / "projects"
    for p, name in enumerate(("billing", "search", "ledger")):
        for s in range(2):
            session = Session(folder / f"-work-{name}" / f"s{s}.jsonl", cwd=f"/work/{name}",
                              start=f"2026-03-0{s + 1}T10:00:00")
            for role, text in LINES[s * 3:s * 3 + 4]:
                (session.user if role == "user" else session.assistant)(text.format(x=name))
                session.tool_result("x" * 200)
        agent = Session(folder / f"-work-{name}" / "s0" / "subagents" / "agent-a1.jsonl", cwd=f"/work/{name}",
                        session_id=f"agent-{p}", start="2026-03-01T11:00:00")
        agent.assistant(f"The {name} worker reads its settings from `config/{name}.toml`.")
    return folder


def content(store: Store) -> tuple[list, list]:
    """The store's content without its ids (which tell the order the processes wrote in, and nothing else)."""
    texts = dict(store.db.execute("SELECT id, text FROM memories").fetchall())
    reasons = sorted((text, re.sub(r"#(\d+)", lambda m: "#" + texts[int(m.group(1))], reason or ""))
                     for text, reason in store.db.execute("SELECT text, state_reason FROM memories"))
    return snapshot(store, ignore=("state_reason",)), reasons


def mine(folder: Path, home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "MINER_HOME": str(home)}
    done = subprocess.run([sys.executable, "-m", "miner.cli", "mine", str(folder), *args], env=env,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done


def test_files_are_grouped_by_project_folder_biggest_first_each_in_the_order_given(tmp_path):
    folder = projects(tmp_path)
    with open(folder / "-work-search" / "s1.jsonl", "a", encoding="utf-8") as handle:
        handle.write("\n" * 5000)  # the biggest project now
    files = sorted(str(p) for p in folder.rglob("*.jsonl"))
    groups = project_groups(files)
    assert sorted(f for group in groups for f in group) == files
    assert [project_folder(group[0]) for group in groups][0] == str(folder / "-work-search")
    for group in groups:
        assert group == [f for f in files if f in group]  # each group in the order given
        assert len({project_folder(f) for f in group}) == 1
    assert len(groups) == 3  # the subagent's file counts as its project's
    assert project_folder(str(folder / "-work-billing" / "s0" / "subagents" / "agent-a1.jsonl")) == \
        str(folder / "-work-billing")
    assert project_groups([]) == []


def test_each_group_is_taken_once_in_order_whoever_asks():
    import multiprocessing

    taken = multiprocessing.get_context("spawn").Value("i", 0)
    groups = [["a1", "a2"], ["b1"], ["c1"]]
    assert [_take(groups, taken) for _ in range(5)] == [["a1", "a2"], ["b1"], ["c1"], None, None]


def test_a_backfill_takes_one_process_per_core_only_when_there_is_much_to_mine(tmp_path):
    folder = projects(tmp_path)
    files = sorted(str(p) for p in folder.rglob("*.jsonl"))
    assert default_jobs(files) == 1  # a few KB: a second process would cost more than it saves
    for n, name in enumerate(("billing", "search", "ledger")):
        big = folder / f"-work-{name}" / "big.jsonl"
        with open(big, "wb") as handle:
            handle.truncate(10 * 1024 * 1024)  # sparse: only its size counts
        files.append(str(big))
    assert default_jobs(files) == min(MAX_JOBS, len(os.sched_getaffinity(0)), 3)
    assert default_jobs(files[:-2]) == 1  # 10 MB is not enough


def test_two_processes_store_what_one_process_stores(tmp_path):
    folder = projects(tmp_path)
    one, two = tmp_path / "one", tmp_path / "two"
    alone = mine(folder, one, "--jobs", "1")
    together = mine(folder, two, "--jobs", "2")
    assert "Mining in 2 processes" in together.stderr and "processes" not in alone.stderr
    assert alone.stdout.splitlines()[-1] == together.stdout.splitlines()[-1]  # the same summary line
    with Store(one / "memory.db") as a, Store(two / "memory.db") as b:
        states = dict(a.db.execute("SELECT state, count(*) FROM memories GROUP BY state").fetchall())
        assert states.get("superseded") and states.get("active")  # the runs did merge and supersede
        assert {r[0] for r in a.db.execute("SELECT DISTINCT project FROM memories")} == \
            {"/work/billing", "/work/search", "/work/ledger"}
        assert content(a) == content(b)
        assert a.db.execute("SELECT count(*) FROM archive").fetchone() == b.db.execute(
            "SELECT count(*) FROM archive").fetchone()
    again = mine(folder, two, "--jobs", "2")  # nothing new: no process is started
    assert "processes" not in again.stderr and "0 new memories" in again.stdout


def test_a_process_that_stops_leaves_its_files_to_the_next_run(tmp_path):
    folder = projects(tmp_path)
    files = sorted(str(p) for p in folder.rglob("*.jsonl"))
    blocked = tmp_path / "not-a-database"
    blocked.mkdir()  # a folder where the database should be: no process can open it
    seen: list[str] = []
    failed = mine_parallel(blocked, project_groups(files), 2, progress=lambda file, _result: seen.append(file))
    assert seen == [] and failed.new == 0
    assert any("a mining process stopped: StoreError" in e for e in failed.errors)
    assert sorted(e.split(": not mined")[0] for e in failed.errors if ": not mined" in e) == files
    ok = mine_parallel(tmp_path / "m.db", project_groups(files), 8, progress=lambda file, _result: seen.append(file))
    assert not ok.errors and ok.new > 0 and sorted(seen) == files


KILLED_PARENT = """
import json, os, signal, sys
from pathlib import Path
from miner.runtime.parallel import mine_parallel, project_groups

folder, db = Path(sys.argv[1]), sys.argv[2]
for p in range(2):
    project = folder / f"-tmp-p{p}"
    project.mkdir(parents=True)
    for i in range(1500):  # enough reports to fill the pipe no one reads any more
        entry = {"type": "user", "uuid": f"u{p}-{i}", "sessionId": f"s{p}-{i}", "cwd": f"/tmp/p{p}",
                 "timestamp": "2026-01-01T00:00:00Z", "message": {"role": "user", "content":
                 f"We decided to use tool number {i} for the service of project {p} from now on."}}
        (project / f"s{i}.jsonl").write_text(json.dumps(entry) + "\\n")
files = sorted(str(f) for f in folder.rglob("*.jsonl"))
mine_parallel(db, project_groups(files), 2, ready=lambda _name: os.kill(os.getpid(), signal.SIGKILL))
"""


def test_mining_processes_whose_parent_was_killed_finish_their_group_and_exit(tmp_path):
    """`miner mine --jobs 2` killed with SIGKILL (an OOM kill, a closed terminal's kill -9): its children mined on, then
    hung for ever, 150 MB each, handing their reports to a pipe no one read. They finish the group in hand and exit;
    what they mined is kept (the next run mines the rest)."""
    import time

    home = tmp_path / "home"
    # (its children share its stdout: `run` returns when they have exited too, or times out)
    killed = subprocess.run([sys.executable, "-c", KILLED_PARENT, str(tmp_path / "projects"), str(tmp_path / "m.db")],
                            env=dict(os.environ, MINER_HOME=str(home)), capture_output=True, timeout=300)
    assert killed.returncode == -9, killed.stderr

    def children() -> list[int]:
        found = []
        for pid in (int(name) for name in os.listdir("/proc") if name.isdigit()):
            try:
                with open(f"/proc/{pid}/environ", "rb") as handle:
                    if f"MINER_HOME={home}".encode() in handle.read().split(b"\0"):
                        found.append(pid)
            except OSError:
                continue
        return found

    deadline = time.monotonic() + 240  # a guard: before, they never exited
    while children() and time.monotonic() < deadline:
        time.sleep(0.5)
    left = children()
    for pid in left:
        os.kill(pid, 9)
    assert left == []
    with Store(tmp_path / "m.db") as store:
        assert store.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0] > 0


def test_a_mining_process_held_up_by_another_process_lock_says_so_in_words(tmp_path, monkeypatch):
    """A process of `miner mine --jobs N` that met a store locked past the wait reported "OperationalError: database
    is locked": it says what held it up, that what was mined is kept, and what to do."""
    import multiprocessing
    import sqlite3

    from miner import paths
    from miner.runtime.parallel import _mine_groups

    folder = projects(tmp_path)
    Store().close()
    monkeypatch.setattr(Store, "lock_wait_s", 0.2)
    holder = sqlite3.connect(paths.db_path(), isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    results = multiprocessing.get_context("spawn").Queue()
    try:
        _mine_groups(str(paths.db_path()), project_groups(sorted(map(str, folder.rglob("*.jsonl")))),
                     multiprocessing.get_context("spawn").Value("i", 0), results)
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    said = []
    while (message := results.get(timeout=10))[0] != "done":
        said += message[2].errors if message[0] == "file" else []
    assert said == ["a mining process stopped: the memory store stayed locked by another process, or the disk is "
                    "full (database is locked); what was mined is kept: run it again in a moment"], said
