"""A backfill in several processes: each mines whole projects, file by file, in the order one process would.

What one memory becomes (exact repeat, paraphrase, a correction that supersedes) is decided among the memories of
its own project, so a project mined whole by one process ends as it would in a backfill of one process; the
processes only wait on each other's write transactions, as hooks and the watcher already do. (Nearly: which of its
project's memories a look-up finds first weighs words by their rarity in the whole store, which the other processes
are filling meanwhile. The eight real projects of the dev data end the same, memory for memory; synthetic projects
that share most of their words differ in a few supersede decisions.) Files are grouped by
their folder under Claude Code's projects folder (a subagent's file goes with its session's folder), and the groups
are taken biggest first: a process that finishes a project takes the next one not yet taken. A megabyte of one
project can cost three times the CPU of another's (how much of it is prose, and in which language), so shares
dealt out ahead by size left one process mining alone at the end.

A secret found by the words around it is hidden wherever it comes again: in the process that found it, and in the
files any process mines after it has stored what it found (the salted digests of `secret_turns`).

Children are started fresh (`spawn`): a forked child would share the parent's SQLite connection.
"""

from __future__ import annotations

import os
import queue as queue_mod
from pathlib import Path
from typing import Callable

from .passes import Summary

MAX_JOBS = 4
MIN_PARALLEL_BYTES = 16 * 1024 * 1024  # below this, a second process costs its start-up (spaCy) for little


def project_folder(file: str) -> str:
    """The folder a transcript's project is stored in: its own, or for a subagent's file
    (`<project>/<session>/subagents/agent-….jsonl`), its session's parent."""
    folder = os.path.dirname(file)
    if os.path.basename(folder) == "subagents":
        folder = os.path.dirname(os.path.dirname(folder))
    return folder


def _size(file: str) -> int:
    try:
        return os.path.getsize(file)
    except OSError:
        return 0


def project_groups(files: list[str]) -> list[list[str]]:
    """The files by project folder, each group in the order given, the groups biggest first (by bytes; ties in the
    order given): the order processes take them in."""
    groups: dict[str, list[str]] = {}
    for file in files:
        groups.setdefault(project_folder(file), []).append(file)
    sizes = {folder: sum(_size(f) for f in group) for folder, group in groups.items()}
    return [groups[folder] for folder in sorted(groups, key=lambda f: -sizes[f])]


def default_jobs(files: list[str]) -> int:
    """Processes for a backfill of `files`: one per core (up to `MAX_JOBS`) when there is enough to mine, else 1."""
    if sum(_size(f) for f in files) < MIN_PARALLEL_BYTES:
        return 1
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, min(MAX_JOBS, cores, len({project_folder(f) for f in files})))


def _take(groups: list[list[str]], taken) -> list[str] | None:
    """The next group no process has taken (`taken`: a shared counter), or None when all are."""
    with taken.get_lock():
        n = taken.value
        if n >= len(groups):
            return None
        taken.value = n + 1
    return groups[n]


def _mine_groups(db_file: str, groups: list[list[str]], taken, results) -> None:
    """A child: loads what mining needs, says it is ready, then mines the next untaken group, reporting each file,
    until none is left; then says done."""
    parent = os.getppid()
    try:
        from .. import config as config_mod
        from ..memory.store import Store
        from .mine import Miner

        with Store(db_file) as store:
            miner = Miner(store, config_mod.load())
            _ = miner.refiner, miner.classifier and miner.classifier.nlp  # loaded before the first file, as one
            results.put(("ready", miner.pipeline.name))
            # A parent killed (SIGKILL: no `daemon` clean-up runs) leaves no one to take the groups' reports.
            while os.getppid() == parent and (group := _take(groups, taken)) is not None:
                miner.mine_paths(group, progress=lambda file, result: results.put(("file", file, result)))
    except BaseException as exc:  # noqa: BLE001 - reported by the parent, with the files left unmined
        from .passes import store_wide

        why = (f"the memory store stayed locked by another process, or the disk is full ({exc}); what was mined is "
               "kept: run it again in a moment" if store_wide(exc) else f"{type(exc).__name__}: {exc}")
        results.put(("file", "", Summary(errors=[f"a mining process stopped: {why}"])))
    finally:
        if os.getppid() != parent:  # no reader: exiting would wait for ever to hand over what is queued
            results.cancel_join_thread()
        results.put(("done",))


def mine_parallel(db_file: str | Path, groups: list[list[str]], jobs: int,
                  progress: Callable[[str, Summary], None] | None = None,
                  ready: Callable[[str], None] | None = None) -> Summary:
    """Mine the groups of files (see `project_groups`) into the store at `db_file` in `jobs` processes (no more than
    there are groups), each taking the next group when done with one (see the module); `progress` is called in this
    process after each file, `ready` (with the spaCy pipeline's name) once every process has loaded what it mines
    with. A process that dies leaves the rest of its group unmined, each file named in the summary's errors: their
    watermarks did not move, so the next run mines them."""
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    taken = context.Value("i", 0)
    children = [context.Process(target=_mine_groups, args=(os.fspath(db_file), groups, taken, results), daemon=True)
                for _ in range(max(1, min(jobs, len(groups))))]
    for child in children:
        child.start()
    total, done, running, waiting = Summary(), set(), len(children), len(children)
    while running:
        try:
            message = results.get(timeout=1.0)
        except queue_mod.Empty:
            if any(child.is_alive() for child in children):
                continue
            try:  # every child has exited: what it put last may still be on its way
                message = results.get(timeout=1.0)
            except queue_mod.Empty:
                break
        if message[0] == "done":
            running -= 1
        elif message[0] == "ready":
            waiting -= 1
            if not waiting and ready:
                ready(message[1])
        else:
            _, file, result = message
            total.add(result)
            if file:
                done.add(file)
                if progress:
                    progress(file, result)
    for child in children:
        child.join()
    left = [file for group in groups for file in group if file not in done]
    total.errors += [f"{file}: not mined (its mining process stopped); run `miner mine --all` again" for file in left]
    return total
