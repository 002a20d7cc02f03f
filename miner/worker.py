"""Background mining started by the hooks: `python -m miner.worker mine|catchup …`.

This is where spaCy is loaded, never in the hook process itself, and only
once there is something to mine under a lock this process holds. Each
transcript is mined under its lock (see `locks`): a hook that starts a
miner hands it the lock already taken (`--lock-fd`), and a hook that finds
the lock taken leaves a mark that makes the running miner do another pass.

- `mine TRANSCRIPT… [--lock-fd N] [--wait S] [--checkpoint SESSION_ID --cwd CWD [--compact-block]]
  [--no-render]`: mine until no pass is pending, then write the checkpoints
  asked for (SessionEnd asks for its session's, so the next startup ranks
  against it; PreCompact for its session's and for the block after the
  compaction, `--compact-block`).
- `catchup CWD [--recall-file FILE]`: record what a SessionStart block showed,
  then mine the project's transcripts that lag behind their watermarks
  (regular files under Claude's projects folder only: no symlink is followed),
  and write the checkpoints that sessions ended without one owe.

Either way the worker ends by rendering, from the store as it leaves it
(`blockcache`), the project's startup block and the block after the
compaction of each session whose checkpoint asked for it, so that the next
SessionStart can print it without opening the store.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
import traceback
from pathlib import Path
from typing import Callable

from . import config as config_mod
from . import paths
from .memory.store import Store, StoreError
from .runtime import locks
from .runtime.passes import mine_locked, note
from .runtime.pending import LazyMiner, has_unmined_line


def project_folders(cwd: str) -> list[Path]:
    """Claude Code's transcript folders of the project a cwd belongs to (the cwd's, and its git root's).

    A folder that is a symlink is left out: catch-up never leaves Claude's folder.
    """
    root = paths.projects_dir()
    names = [paths.encode_project(cwd)]
    project = paths.project_root(cwd)
    if project and paths.encode_project(project) not in names:
        names.append(paths.encode_project(project))
    return [root / name for name in names if _real_folder(root / name)]


def _real_folder(path: Path) -> bool:
    try:
        return not path.is_symlink() and path.is_dir()
    except OSError:  # a name too long to be a folder's (a deep project's path, encoded): there is none
        return False


def lagging_transcripts(store: Store, folder: Path) -> list[str]:
    """Transcripts in a project folder (subagents included) with complete lines not yet mined.

    Real paths of regular files under Claude's projects folder, found without
    following a symlink (`transcript.transcript_files`): a link to a file
    outside, such as /etc/passwd, is never read.
    """
    from .extract.transcript_files import transcript_files

    marks = store.watermarks()
    lagging = []
    for path in transcript_files(folder, paths.projects_dir()):
        if not paths.is_utf8(path):
            continue  # no watermark can name it (`miner mine` says so)
        done = marks.get(path, 0)
        try:
            st = os.stat(path)
        except OSError:
            continue
        if st.st_size <= done:
            # Replaced by another file (shorter, or another inode): read again from its start (what was seen is
            # skipped by its entries' ids), as the watcher and a Stop on it do.
            mark = store.watermark(path) if done else None
            if mark and (st.st_size < done or (mark[1] and st.st_ino != mark[1])):
                lagging.append(path)
            continue
        if has_unmined_line(Path(path), done):
            lagging.append(path)
    return lagging


def catch_up(store: Store, miner, cwd: str,
             on_checkpoint: Callable[[str, str], None] | None = None) -> int:
    """Mine the project's lagging transcripts, one catch-up per project at a time. Returns how many were mined."""
    project = paths.project_root(cwd)
    fd = locks.try_catchup_lock(project)
    if fd is None:
        return 0
    try:
        mined = 0
        for folder in project_folders(cwd):
            for transcript in lagging_transcripts(store, folder):
                mined += mine_locked(miner, transcript, store=store, on_checkpoint=on_checkpoint)
            owed_by_quiet_transcripts(store, folder)
        return mined
    finally:
        locks.release(fd)


QUIET_S = 600  # a transcript untouched this long is of a session that ended, said so or not ...
OWED_WITHIN_S = 7 * 86400  # ... and one untouched for a week was looked at by the catch-ups since


def owed_by_quiet_transcripts(store: Store, folder: Path, quiet_s: float = QUIET_S) -> None:
    """Write the checkpoints the folder's quiet transcripts owe: a session whose terminal was closed, or whose process
    was killed, had no SessionEnd to write its own, and a new session's "where the last session left off" named an
    older one. The same as `miner mine` writes for a session it finds without one."""
    import time

    from .extract.transcript_files import transcript_files
    from .runtime.passes import owed_checkpoints, session_checkpoints

    now = time.time()
    for path in transcript_files(folder, paths.projects_dir()):
        if not paths.is_utf8(path):
            continue  # (no session row can name it)
        try:
            quiet = quiet_s <= now - os.stat(path).st_mtime <= OWED_WITHIN_S
        except OSError:
            continue
        owed = owed_checkpoints(store, path) if quiet else []
        for error in session_checkpoints(store, path, set(owed)) if owed else []:
            note(error)


def running_workers(data_dir: Path | None = None) -> list[int]:
    """Pids of the background workers started with `MINER_HOME` = this data dir (Linux /proc; [] elsewhere).

    A worker is detached: nothing holds its pid. Tests, benchmarks and
    `doctor` use this to wait for the workers the hooks started.
    """
    home = str(data_dir or paths.data_dir()).encode()
    found = []
    try:
        pids = [int(name) for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                cmdline = handle.read().split(b"\0")
            if b"miner.worker" not in cmdline:
                continue
            with open(f"/proc/{pid}/environ", "rb") as handle:
                environ = handle.read().split(b"\0")
        except OSError:
            continue
        if b"MINER_HOME=" + home in environ:
            found.append(pid)
    return found


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m miner.worker", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    mine = sub.add_parser("mine", help="mine transcripts under their locks")
    mine.add_argument("transcripts", nargs="+")
    mine.add_argument("--wait", type=float, default=0.0, help="seconds to wait for a running miner")
    mine.add_argument("--lock-fd", type=int, default=None, help="descriptor of the lock the starting hook took")
    mine.add_argument("--checkpoint", metavar="SESSION_ID", default="",
                      help="write this session's checkpoint after mining (needs one transcript)")
    mine.add_argument("--cwd", default="", help="the session's cwd, to find its project")
    mine.add_argument("--compact-block", action="store_true",
                      help="with --checkpoint: also render the session's block for after its compaction")
    mine.add_argument("--no-render", action="store_true",
                      help="do not render the project's startup block afterwards (the caller writes more first)")
    catchup = sub.add_parser("catchup", help="mine a project's transcripts that lag behind")
    catchup.add_argument("cwd")
    catchup.add_argument("--recall-file", default="", help="a file of JSON: what a SessionStart block showed (removed "
                         "once read)")
    args = parser.parse_args(argv)
    if args.command == "mine" and (args.lock_fd is not None or args.checkpoint) and len(args.transcripts) != 1:
        parser.error("--lock-fd and --checkpoint take exactly one transcript")
    return args


def transcript_projects(store: Store, transcripts: list[str]) -> set[str]:
    """The projects the miner filed these transcripts under."""
    projects = set()
    for transcript in transcripts:
        project = store.watermark_project(transcript)
        if project:
            projects.add(project)
    return projects


def refresh_blocks(projects: set[str]) -> None:
    """Render the startup block of each project from the store as this worker leaves it (see `blockcache`)."""
    from .recall import blockcache

    for project in sorted(projects):
        try:
            blockcache.refresh(blockcache.startup_path(project), project, "startup")
        except OSError as exc:  # a full or read-only disk: one line (SessionStart renders it itself then)
            note(f"startup block of {project} not rendered: {exc}")
        except Exception:  # noqa: BLE001 - SessionStart renders it itself then
            note(f"startup block of {project} not rendered:\n{traceback.format_exc()}")


def refresh_compact_blocks(sessions: list[tuple[str, str]]) -> None:
    """Render the block of each (session, project) for the SessionStart(compact) after its compaction."""
    from .recall import blockcache

    for session_id, project in sessions:
        try:
            blockcache.refresh(blockcache.session_path(session_id), project, "compact", session_id)
        except OSError as exc:  # a full or read-only disk: one line (SessionStart renders it itself then)
            note(f"block of session {session_id} not rendered: {exc}")
        except Exception:  # noqa: BLE001 - SessionStart renders it itself then
            note(f"block of session {session_id} not rendered:\n{traceback.format_exc()}")


def keep_indexes(store: Store, rounds: int | None = 1, say: Callable[[str], None] | None = None) -> None:
    """After mining: the full-text indexes merged when their segments piled up (`Store.merge_indexes`), and their
    common terms counted again when they grew (`Store.count_common_terms`). A store another process holds for
    writing is left for the next pass, said through `say` (default: the worker's log); what was mined is kept
    whatever happens here."""
    try:
        store.merge_indexes(rounds=rounds)
        store.count_common_terms()
    except sqlite3.Error as exc:
        (say or note)(f"the full-text indexes were not merged and counted ({exc}); the next mining pass does it")


def repair_if_needed(store: Store) -> None:
    """After an upgrade that redacts more (the plugin updates without ./install.sh), the first worker
    redacts what an older version stored (`miner doctor --fix`'s repair); a later worker finds it done."""
    from .memory import repair

    try:
        if repair.needed(store):
            done = repair.fix(store)
            if done.total:
                note(f"stored secrets redacted after an upgrade: {done.line()}")
    except Exception:  # noqa: BLE001 - mining goes on; `miner doctor` reports what is left
        note(f"repair of stored secrets failed:\n{traceback.format_exc()}")


def main(argv: list[str] | None = None, miner_factory: Callable | None = None) -> int:
    args = parse_args(argv)
    # What a SessionStart showed, taken first: its file quotes requests, and goes whatever happens after.
    shown = _take_recall_file(args.recall_file) if getattr(args, "recall_file", "") else None
    try:
        config = config_mod.load()
    except config_mod.ConfigError as exc:  # SessionStart tells the user; the log says it once, not a traceback
        note(f"nothing mined: {exc}")
        return 2
    projects: set[str] = set()
    compact: list[tuple[str, str]] = []  # sessions whose block after the compaction is to be rendered

    def on_checkpoint(session_id: str, project: str) -> None:
        compact.append((session_id, project))

    try:
        store = Store()
    except (StoreError, sqlite3.Error) as exc:  # damaged, not a store, locked past the wait: one line, not a trace
        note(f"nothing mined: {exc}")
        return 2
    with store:
        repair_if_needed(store)
        miner = (miner_factory or LazyMiner)(store, config)
        if args.command == "mine":
            lock_fd = args.lock_fd if args.lock_fd is not None and locks.holds_lock(args.lock_fd) else None
            if args.lock_fd is not None and lock_fd is None:
                note(f"--lock-fd {args.lock_fd} is not open; taking the lock again")
            transcripts = [str(Path(t).resolve()) for t in args.transcripts]
            for transcript in transcripts:
                if args.checkpoint:
                    locks.request_checkpoint(transcript, args.checkpoint, args.cwd, compact_block=args.compact_block)
                mine_locked(miner, transcript, args.wait, lock_fd, store=store, on_checkpoint=on_checkpoint)
                lock_fd = None
            projects = transcript_projects(store, transcripts)
        else:
            if shown is not None:
                try:  # all or nothing, and never in the way of catching up
                    from .recall.block import record_recall

                    with store.atomic():
                        record_recall(store, shown)
                except Exception as exc:  # noqa: BLE001 - a record the store refuses is noted, and mining goes on
                    note(f"recall not logged: {type(exc).__name__}: {exc}")
            catch_up(store, miner, args.cwd, on_checkpoint=on_checkpoint)
            projects = {paths.project_root(args.cwd)}
        keep_indexes(store)
    # After the store is closed: a block is rendered from what the next SessionStart will find.
    if config["recall_cache"]:
        refresh_compact_blocks(compact)
        if not getattr(args, "no_render", False):
            refresh_blocks(projects)
    try:  # once a day: the files of ended sessions go (`runtime.tidy`)
        from .runtime.tidy import tidy_if_due

        tidy_if_due()
    except OSError as exc:
        note(f"housekeeping skipped: {exc}")
    # Last, and only for projects joined to a team: the network is never in the way of a block.
    sync_team(projects)
    return 0


def _take_recall_file(path: str):
    """The record a SessionStart handed over in `path` (removed), or None when it does not read."""
    try:
        return json.loads(paths.read_small(path))
    except (OSError, ValueError) as exc:
        note(f"recall not logged: {exc}")
        return None
    finally:
        paths.discard(path)


def sync_team(projects: set[str]) -> None:
    """Push and pull the mined projects that joined a team (`miner team`); offline, they wait for the next."""
    from .team import settings as team_settings

    if not team_settings.team_path().is_file():
        return  # no team joined: nothing imported, nothing to do
    from .team.service import sync_after_mining

    sync_after_mining(projects, note)


def leave_the_project_folder() -> None:
    """A worker starts in the folder its hook ran in, the user's project: nothing it loads by a relative name
    (a spaCy pipeline named like a folder there) may come from it. Every path it is given is absolute."""
    try:
        os.chdir(paths.ensure_private_dir(paths.data_dir()))
    except OSError:
        os.chdir("/")


if __name__ == "__main__":
    leave_the_project_folder()
    sys.exit(main())
