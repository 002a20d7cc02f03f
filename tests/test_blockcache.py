"""What a rendered block depends on: the versions the store keeps of a project's rows (real SQLite files).

A block rendered ahead stays in use while the versions of its project's rows and of the global memories stand
still; the recall record the hook leaves behind and another project's writes do not move them.
"""

from __future__ import annotations

import os

import pytest

from miner import paths
from miner.memory.records import NewMemory
from miner.memory.store import Store
from miner.recall import blockcache

HERE, ELSEWHERE = "/work/shop", "/work/other"


def memory(project: str, text: str, n: int, scope: str = "project", category: str = "decision") -> NewMemory:
    return NewMemory(project=project, category=category, text=text, confidence=0.7, rule_id="t", role="user",
                     session_id=f"s-{project}", transcript=f"{project}/t.jsonl", entry_uuid=f"u{n}",
                     ts=f"2025-05-{1 + n:02d}T10:00:00.000Z", scope=scope)


@pytest.fixture
def store(isolated_home):
    with Store() as opened:
        with opened.atomic():
            opened.add_memory(memory(HERE, "We deploy the shop with Kamal on two hosts.", 1))
            opened.add_memory(memory(ELSEWHERE, "The other service keeps its queue in Redis.", 2))
        yield opened


def states(project: str = HERE) -> dict[str, list | None]:
    return {situation: blockcache.store_state(project, situation) for situation in ("startup", "compact")}


def test_no_database_or_no_versions_is_no_state(isolated_home):
    assert blockcache.store_state(HERE, "startup") is None  # no database at all
    with Store() as opened, opened.atomic() as db:
        db.execute("DROP TABLE block_versions")  # as a store from before the versions reads
    assert blockcache.store_state(HERE, "startup") is None


def test_the_recall_record_and_other_projects_leave_the_state_alone(store):
    before = states()
    assert before["startup"] and before["compact"]
    store.log_recall(HERE, "startup", "", [1], [], [], 120, 3.2)  # the hook's own recall record
    with store.atomic():
        store.add_memory(memory(ELSEWHERE, "The other service retries each job three times.", 3))
        store.upsert_session("s-other", ELSEWHERE, ELSEWHERE, "main", f"{ELSEWHERE}/t.jsonl", "2025-06-01T00:00:00Z")
    store.put_checkpoint("s-other", ELSEWHERE, {"task": ["queue"]})
    assert states() == before
    assert states(ELSEWHERE) != {"startup": None, "compact": None}


def test_recall_counts_move_only_what_weighs_them(store):
    before = states()
    (mine,) = [m.id for m in store.project_memories(HERE)]
    store.note_recalled([mine])
    after = states()
    assert after["startup"] == before["startup"]  # a new session's block does not weigh recall counts
    assert after["compact"] != before["compact"]  # a block after a compaction does


@pytest.mark.parametrize("write", ["memory", "state", "global", "session", "checkpoint", "link", "purge"])
def test_every_write_the_block_is_drawn_from_moves_the_state(store, write):
    before = states()
    (mine,) = [m.id for m in store.project_memories(HERE)]
    if write == "memory":
        with store.atomic():
            store.add_memory(memory(HERE, "The shop's images are built on the CI runner.", 4))
    elif write == "state":
        with store.atomic():
            store.set_state(mine, "forgotten", "by hand")
    elif write == "global":  # a preference said in another project, recalled in every one
        with store.atomic():
            store.add_memory(memory(ELSEWHERE, "I prefer short commit messages.", 5, "global", "preference"))
    elif write == "session":
        with store.atomic():
            store.upsert_session("s-here", HERE, HERE, "main", f"{HERE}/t.jsonl", "2025-06-01T00:00:00Z")
    elif write == "checkpoint":
        store.put_checkpoint("s-here", HERE, {"task": ["deploy"]})
    elif write == "link":
        with store.atomic():
            older, _ = store.add_memory(memory(ELSEWHERE, "The shop once deployed with Capistrano.", 6))
            store.note_replacement(mine, older, "test", "2025-06-01T00:00:00Z")  # a link from this project
    else:
        from miner.memory import privacy

        privacy.purge(store, HERE)
    after = states()
    assert after["startup"] != before["startup"] and after["compact"] != before["compact"]


def test_a_restored_file_is_another_state(store):
    before = states()
    copy = paths.db_path().with_suffix(".copy")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # no log left beside the file for the copy to inherit
    store.db.execute(f"VACUUM INTO '{copy}'")
    os.replace(copy, paths.db_path())  # same rows and versions, another file (as a restored backup is)
    assert states() != before


def test_a_backup_copied_back_over_the_same_file_never_brings_back_a_block_rendered_before(store, isolated_home):
    """`cp backup memory.db` keeps the file (its inode) and takes the versions back; the writes after it moved them
    by as many steps as the writes before it had, and a block rendered in between passed for current: a memory
    forgotten since was in it, one active again left out."""
    import shutil

    with store.atomic():
        store.add_memory(memory(HERE, "The shop's staging host is shop-staging-1.", 8))
    first, second = sorted(m.id for m in store.project_memories(HERE))
    backup = paths.db_path().with_suffix(".backup")
    store.db.execute(f"VACUUM INTO '{backup}'")
    with store.atomic():
        store.set_state(first, "forgotten", "by hand")
    path = blockcache.startup_path(HERE)
    assert blockcache.refresh(path, HERE, "startup")
    inode = os.stat(paths.db_path()).st_ino
    store.close()
    for side in ("-wal", "-shm"):
        paths.db_path().with_name(paths.db_path().name + side).unlink(missing_ok=True)
    shutil.copyfile(backup, paths.db_path())  # as the README restores one: the same file, written over
    assert os.stat(paths.db_path()).st_ino == inode
    with Store() as restored, restored.atomic():
        restored.set_state(second, "forgotten", "by hand")
    assert blockcache.load(path) is None


def test_an_entry_is_used_only_while_its_state_holds(store, isolated_home):

    path = blockcache.startup_path(HERE)
    assert blockcache.refresh(path, HERE, "startup")
    entry = blockcache.load(path)
    assert entry is not None and "Kamal" in entry["text"]
    store.log_recall(HERE, "startup", "", [1], [], [], 120, 3.2)
    with store.atomic():
        store.add_memory(memory(ELSEWHERE, "The other service pins Python 3.12.", 7))
    assert blockcache.load(path) == entry
    with store.atomic():
        store.add_memory(memory(HERE, "The shop's staging host is shop-staging-1.", 8))
    assert blockcache.load(path) is None
