"""`miner-hook <event>`: Claude Code's entry points (standard library and own modules only).

Each hook reads Claude Code's JSON payload from stdin, does its work, prints
at most once at the end, and fails open: on any problem it writes one line
to `$MINER_HOME/logs/hooks.log`, prints nothing and exits 0.

- session-start: prints the recall block as `additionalContext` (under
  10,000 characters as Claude Code counts them): the block a worker
  rendered ahead of time when the store has not changed since (see
  `blockcache`), else rendered from the store, read only. Then a detached
  worker records what was shown and mines the project's lagging transcripts.
- stop: takes the transcript's lock and hands it to a detached miner; when a
  miner already holds it, leaves a mark so that miner does another pass.
- pre-compact: writes the session checkpoint that opens the block after the
  compaction at once, from the transcript's tail and what is stored, then
  hands the transcript to a detached miner that mines it, writes the
  checkpoint again and renders that block; the hook waits for it until
  `precompact_timeout_s` after it started (a second by default: a cold miner
  needs seconds to load spaCy, the compaction itself takes much longer).
- session-end: like stop, and the miner writes the session's checkpoint
  after its final pass, so that the next startup ranks against it.

Hostile input costs bounded time: stdin is read for a second at most (`hookio.STDIN_TIMEOUT_S`) and 8 MB at
most; a log line is cut before it is redacted; the checkpoint reads a bounded tail and cuts each request before it
is cleaned.

Import cost is latency here: Stop must stay near a bare interpreter start,
so modules are imported where they are needed, and this one does not use
dataclasses (which imports `inspect`), `json` or `pathlib` (which import `re`):
`jsonlite` reads and writes the JSON, `paths` answers strings. For the same
reason a hook's process ends with `os._exit` once its output is flushed
(`hookio.end_process`): the interpreter's teardown, which frees every module
and object one by one, cost a Stop more than the rest of its work.
"""

from __future__ import annotations

import os
import sys
import time

from . import jsonlite, paths
from .hookio import HookInputError, MissingTranscript, end_process, read_stdin, replayed_session, safe_transcript

EVENTS = ("session-start", "user-prompt-submit", "stop", "pre-compact", "session-end")
USAGE = (f"usage: miner-hook {{{','.join(EVENTS)}}} < payload.json\n\n"
         "Transcript Miner's hooks, run by Claude Code: each reads its event's JSON payload on stdin and prints what\n"
         "it adds to the session, if anything. `miner install` registers them; `miner doctor` checks them.\n")
SOURCES = ("startup", "resume", "clear", "compact", "fork")
LOG_MAX_BYTES = 256 * 1024
LOG_LINE_CHARS = 1000
# A log message is cut to this many more characters than a line keeps before it is redacted: a secret that
# straddles the line's end is still whole (and redacted) when the line is cut.
LOG_REDACT_MARGIN = 4096
STARTED = time.monotonic()  # the hook's budgets count from its start
SESSION_START_BUSY_MS = 2000  # the longest SessionStart waits for a store another process keeps locked


class HookEvent:
    """The fields of a hook payload this tool uses, validated (a frozen record; see the module note on imports)."""

    __slots__ = ("event", "session_id", "transcript_path", "cwd", "source", "trigger", "reason", "prompt")

    def __init__(self, event: str, session_id: str = "", transcript_path: str = "", cwd: str = "",
                 source: str = "", trigger: str = "", reason: str = "", prompt: str = ""):
        for name, value in zip(self.__slots__, (event, session_id, transcript_path, cwd, source, trigger, reason,
                                                prompt)):
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise AttributeError(f"HookEvent is frozen; cannot set {name}")

    def __repr__(self) -> str:  # never the prompt: a repr can end up in a log line
        fields = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__slots__ if name != "prompt")
        return f"HookEvent({fields})"

    def __eq__(self, other) -> bool:
        return isinstance(other, HookEvent) and all(getattr(self, n) == getattr(other, n) for n in self.__slots__)

    @classmethod
    def parse(cls, event: str, raw: str) -> "HookEvent":
        if event not in EVENTS:
            raise HookInputError(f"unknown event {event!r}; expected one of {', '.join(EVENTS)}")
        if not raw.strip():
            raise HookInputError("empty payload on stdin")
        try:
            data = jsonlite.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise HookInputError(f"payload is not JSON: {exc}") from None
        if not isinstance(data, dict):
            raise HookInputError(f"payload is a JSON {type(data).__name__}, not an object")

        def text(key: str) -> str:
            value = data.get(key)
            if value is None:
                return ""
            if not isinstance(value, str):
                raise HookInputError(f"payload field {key!r} is a {type(value).__name__}, not a string")
            if key == "prompt":
                value = value.replace("\x00", " ")  # pasted binary: the words around it still ask something
            elif "\x00" in value:
                raise HookInputError(f"payload field {key!r} holds a NUL character")
            if key != "prompt" and not value.isascii() and not paths.is_utf8(value):
                # a lone surrogate (`\ud800`): no path, no id, nothing a store can keep
                raise HookInputError(f"payload field {key!r} holds a lone surrogate, not text")
            return value

        return cls(event, text("session_id"), text("transcript_path"), text("cwd"), text("source"),
                   text("trigger"), text("reason"), text("prompt"))


# --- logging -----------------------------------------------------------------------


def _rotate(path, max_bytes: int) -> None:
    try:
        if os.stat(path).st_size > max_bytes:
            os.replace(path, f"{path}.1")
    except FileNotFoundError:
        pass


def said(message: str) -> str:
    """`message` as a hook logs it or shows it (a `systemMessage`): on one line, cut, its secrets hidden."""
    from .extract.redact import load_kept_extra, redact
    from .extract.transcript import cut_text

    head = cut_text(message, LOG_LINE_CHARS + LOG_REDACT_MARGIN)
    load_kept_extra()
    return " ".join(redact(head)[0].split())[:LOG_LINE_CHARS]


def log(event: str, message: str, max_bytes: int = LOG_MAX_BYTES) -> None:
    """One line in hooks.log (rotated to hooks.log.1 past `max_bytes`); never raises.

    The message is cut before it is redacted (an 8 MB message must not cost
    seconds of regular expressions), with a margin redacted beyond what the
    line keeps, and never inside a word, so no secret is left half visible.
    The secret kinds of `secrets.yaml` are hidden too, as the last miner kept them.
    """
    try:
        folder = paths.ensure_private_dir(paths.data_file("logs"))
        path = os.path.join(folder, "hooks.log")
        _rotate(path, max_bytes)
        line = said(message)
        stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime())
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        with os.fdopen(fd, "a", encoding="utf-8", errors="replace") as handle:
            handle.write(f"{stamp} {event} {line}\n")
    except Exception:  # noqa: BLE001 - logging must never break a hook
        pass


# --- input safety -------------------------------------------------------------------


# --- background work -----------------------------------------------------------------


def spawn(args: list[str], keep_fd: int | None = None) -> int:
    """Start `python -m miner.worker ARGS` detached; returns its pid. The hook never waits for it.

    posix_spawn instead of subprocess: no `subprocess` import and no fork of
    the hook's memory. The worker gets its own session (Claude Code may kill
    the hook's process group), /dev/null for stdin and logs/worker.log for
    output: it must not hold Claude Code's pipes open, or Claude Code would
    wait for it. Only `keep_fd` (a lock) is inherited besides those.
    """
    folder = paths.ensure_private_dir(paths.data_file("logs"))
    log_path = os.path.join(folder, "worker.log")
    _rotate(log_path, LOG_MAX_BYTES * 4)
    # Isolated (-I), as the hook itself runs: the worker starts in the user's project folder too, whose files
    # must never stand in for a module it imports.
    argv = [sys.executable, "-I", "-m", "miner.worker", *args]
    if keep_fd is not None:
        os.set_inheritable(keep_fd, True)
    try:
        if hasattr(os, "posix_spawn"):
            actions = [
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_OPEN, 1, log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600),
                (os.POSIX_SPAWN_DUP2, 1, 2)]
            return os.posix_spawn(sys.executable, argv, os.environ, file_actions=actions, setsid=True)
        import subprocess  # pragma: no cover - platforms without posix_spawn

        with open(log_path, "ab") as out:
            return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                                    pass_fds=(keep_fd,) if keep_fd is not None else ()).pid
    finally:
        if keep_fd is not None:
            os.set_inheritable(keep_fd, False)


def hand_off(transcript: str, checkpoint: tuple[str, str] | None = None, compact_block: bool = False) -> bool:
    """Have the transcript mined in the background; True when a miner was started for it.

    Mark first, then try the lock: a running miner looks for the mark after
    it releases the lock, so the new lines are mined either way (and a
    checkpoint request is served by whichever miner holds the lock next).
    `compact_block`: the miner also renders the session's block for after its
    compaction, and removes the session's wait mark once the checkpoint is
    written (PreCompact waits for that).
    """
    from .runtime import locks

    if checkpoint:
        locks.request_checkpoint(transcript, *checkpoint, compact_block=compact_block)
    locks.mark_pending(transcript)
    fd = locks.try_lock(transcript)
    if fd is None:
        return False  # the running miner will see the mark
    try:
        args = ["mine", "--lock-fd", str(fd)]
        if checkpoint:
            args += [f"--checkpoint={checkpoint[0]}", f"--cwd={checkpoint[1]}"]  # (a value may start with "-")
            if compact_block:
                args.append("--compact-block")
        spawn([*args, "--", transcript], keep_fd=fd)
    finally:
        os.close(fd)  # the worker holds the lock now (same open file); closing ours does not release it
    return True


# --- events ------------------------------------------------------------------------------


def has_transcripts(cwd: str) -> bool:
    """True when Claude Code keeps transcripts for this cwd or its project root (catch-up has work to look at)."""
    root = os.path.join(paths.claude_root(), "projects")
    return any(os.path.isdir(os.path.join(root, paths.encode_project(p))) for p in {cwd, paths.project_root(cwd)} if p)


def situation_of(event: HookEvent) -> str:
    situation = event.source if event.source in SOURCES else "startup"
    return "resume" if situation == "fork" else situation


def recall_block(event: HookEvent, config: dict | None = None) -> tuple[str, dict | None]:
    """(block text, what to record) for a SessionStart, or ('', None) when there is nothing to show.

    A block rendered ahead of time from what the store still says is used as is
    (one read of its versions, no recall code loaded); otherwise it is rendered
    from the store, read only, so the hook never waits for a miner's write.
    """
    from .recall import blockcache

    started = time.perf_counter()
    situation = situation_of(event)
    by_session = situation in ("compact", "resume") and bool(event.session_id)
    project = paths.project_root(event.cwd)
    path = blockcache.session_path(event.session_id) if by_session else blockcache.startup_path(project)
    # An entry exists only while `recall_cache` was on, and is used only with the settings file unchanged.
    entry = blockcache.load(path)
    if entry is not None and entry.get("session_id" if by_session else "project") == (
            event.session_id if by_session else project):
        if not entry["text"]:
            return "", None
        elapsed = round((time.perf_counter() - started) * 1000, 2)
        return entry["text"], dict(entry["record"], situation=situation, elapsed_ms=elapsed)

    from . import config as config_mod
    from .memory.store import Store

    if not os.path.exists(paths.data_file(paths.DB_NAME)):
        return "", None
    config = config if config is not None else config_mod.load()
    # A store another process keeps locked (a crashed tool, a `locking_mode=EXCLUSIVE` reader) is waited for a
    # moment, not the 10 s Claude Code gives the hook: then there is no block, and the session starts. (The moment
    # counts what the look at the block rendered ahead waited already.)
    spent_ms = (time.perf_counter() - started) * 1000
    with Store(readonly=True, busy_ms=max(int(SESSION_START_BUSY_MS - spent_ms), 50)) as store:
        session_id = event.session_id
        if by_session:
            row = store.session(session_id)
            if row is None and situation == "resume":  # a fork opens where the session its file replays stopped
                session_id = replayed_session(event.transcript_path, session_id) or session_id
                row = store.session(session_id)
            project = row.project if row and row.project else project
        return blockcache.render(store, project, config, situation, session_id)


def excluded(cwd: str) -> bool | str:
    """True for a project the user excluded: never mined, never injected; what is wrong with a broken exclusions
    file, which excludes every project (the safe side), to be said."""
    if not cwd or not os.path.exists(os.path.join(paths.config_root(), "exclusions.json")):
        return False  # the usual case (no exclusions.EXCLUSIONS_FILE), decided without importing anything
    from .runtime.exclusions import PrivacyError, is_excluded, load_exclusions
    try:
        return is_excluded(cwd, load_exclusions())
    except PrivacyError as exc:
        return f"{exc}: until it is fixed, no project is mined or recalled (`miner doctor`)"


def context_output(hook_event_name: str, text: str) -> str:
    """What a hook prints to add `text` to the session's context."""
    return (f'{{"hookSpecificOutput": {{"hookEventName": {jsonlite.string(hook_event_name)}, '
            f'"additionalContext": {jsonlite.string(text)}}}}}')


def session_start(event: HookEvent, config: dict | None) -> str:
    if not event.cwd:
        raise HookInputError("payload has no cwd")
    notice = ""
    try:
        text, record = recall_block(event, config)
    except Exception as exc:  # noqa: BLE001 - catch-up still starts; the block is simply absent
        from .config import ConfigError
        from .memory.store import locked

        busy = "info: " if locked(exc) else ""  # (another process's lock for a moment, as at PreCompact: no fault)
        log(event.event, f"{busy}no recall block: {type(exc).__name__}: {exc}")
        text, record = "", None

        if isinstance(exc, ConfigError):  # the user is shown the line that names the setting
            notice = f"transcript-miner: no memory injected: {said(str(exc))}"  # (a setting's name may be a key)
    try:
        if record is not None or has_transcripts(event.cwd):
            args = ["catchup"]
            if record is not None:  # in a private file: any local user reads a command line, and this quotes requests
                handed = paths.data_file("cache", f"recall-{paths.file_stem(event.session_id)}-{os.getpid()}.json")
                paths.write_private(handed, jsonlite.dumps(record))
                args.append(f"--recall-file={handed}")
            try:
                spawn([*args, "--", event.cwd])
            except Exception:
                if record is not None:
                    os.unlink(handed)
                raise
    except Exception as exc:  # noqa: BLE001 - the block matters more than catch-up
        log(event.event, f"catch-up not started: {type(exc).__name__}: {exc}")
    try:  # what this session was shown, not shown again by its prompts (after a compaction or /clear: only this)
        from .recall.shown import remember_shown

        remember_shown(event.session_id, (record or {}).get("shown", ()) if text else (),
                       anew=situation_of(event) in ("compact", "clear"))
    except Exception as exc:  # noqa: BLE001 - the block goes out either way
        log(event.event, f"shown ids not kept: {type(exc).__name__}")
    if not notice and os.path.exists(paths.data_file("cache", paths.HALTED_MARKER)):  # (no import without one)
        from .runtime.halted import notice as halted

        notice = halted(paths.project_root(event.cwd))  # (a broken rule file: the block is of what was mined before)
    if not text:
        return f'{{"systemMessage": {jsonlite.string(notice)}}}' if notice else ""
    out = context_output("SessionStart", text)
    return f'{{"systemMessage": {jsonlite.string(notice)}, {out[1:]}' if notice else out


def user_prompt_submit(event: HookEvent, config: dict | None) -> str:
    """What the memories and the archive hold about this prompt (see `recall.prompt`); '' when nothing is relevant.

    The store is read only, and the prompt is never written anywhere: the Stop hook mines it as always.
    """
    if not event.cwd:
        raise HookInputError("payload has no cwd")
    if not event.prompt.strip():
        return ""
    from . import config as config_mod
    from .recall.prompt import prompt_block

    settings = config if config is not None else config_mod.load()
    budget = int(settings["prompt_block_chars"])
    if budget <= 0:
        return ""
    text = prompt_block(paths.project_root(event.cwd), event.session_id, event.prompt, budget)
    if not text:
        return ""
    from .recall.blockcache import fit_block  # characters beyond the BMP count twice where Claude Code cuts

    return context_output("UserPromptSubmit", fit_block(text))


def stop(event: HookEvent, config: dict | None) -> str:
    hand_off(safe_transcript(event.transcript_path))
    return ""


PRECOMPACT_MAX_S = 50.0  # Claude Code stops a hook at 60 s


def pre_compact(event: HookEvent, config: dict) -> str:
    from .runtime import locks

    transcript = safe_transcript(event.transcript_path)
    if not event.session_id:
        hand_off(transcript)
        raise HookInputError("payload has no session_id: transcript handed to a miner, no checkpoint written")
    deadline = STARTED + min(max(0.0, float(config["precompact_timeout_s"])), PRECOMPACT_MAX_S)
    # The checkpoint now (the compaction may start any moment); its writes, and opening the store, wait for another
    # process's lock (a backfill's batch) no longer than the hook may run.
    project, mined = checkpoint_now(event, transcript, int(max(0.0, deadline - time.monotonic()) * 1000))
    # Then mining, the checkpoint again and the block after the compaction, by a detached miner.
    if mined:  # every line is mined already: the checkpoint just written is the one it would write, no wait
        hand_off(transcript, checkpoint=(event.session_id, event.cwd), compact_block=True)
        return ""
    locks.start_waiting(transcript, event.session_id)
    try:
        hand_off(transcript, checkpoint=(event.session_id, event.cwd), compact_block=True)
        written = locks.wait_for_checkpoint(transcript, event.session_id, deadline)
    finally:
        locks.stop_waiting(transcript, event.session_id)
    if not project and not written:
        raise HookInputError("payload has no cwd and the session is unknown: the checkpoint is left to the miner")
    return ""


def checkpoint_now(event: HookEvent, transcript: str, busy_ms: int) -> tuple[str, bool]:
    """`checkpoint.write_now`; a store busy is logged as a notice, one unreadable (damaged) as an error."""
    import sqlite3

    from .memory.store import StoreError, locked
    from .recall.checkpoint import write_now
    from .runtime.pending import has_work
    try:
        return write_now(event.session_id, event.cwd, transcript, busy_ms, has_work)
    except (sqlite3.Error, StoreError) as exc:
        what = "info: the store is busy" if locked(exc) else "the store is unreadable"
        log(event.event, f"{what} ({exc}): the checkpoint is left to the miner")
        return paths.project_root(event.cwd) if event.cwd else "", False


def session_end(event: HookEvent, config: dict | None) -> str:
    try:
        transcript = safe_transcript(event.transcript_path)
    except MissingTranscript:  # its own, not there: it ended before its first prompt, so nothing was written
        if os.path.basename(event.transcript_path) == f"{event.session_id}.jsonl":
            return ""
        raise
    if event.session_id and event.reason == "clear":  # at once (2 s at most): the next SessionStart reads it
        checkpoint_now(event, transcript, 2000)
    hand_off(transcript, checkpoint=(event.session_id, event.cwd) if event.session_id else None)
    return ""


HANDLERS = {"session-start": session_start, "user-prompt-submit": user_prompt_submit, "stop": stop,
            "pre-compact": pre_compact, "session-end": session_end}


def run(event_name: str, raw: str) -> str:
    """The hook's output for a payload; every event leaves an excluded project alone (checked here, once,
    for all the handlers: a handler called directly does not check)."""
    event = HookEvent.parse(event_name, raw)
    config = None
    if event.event == "pre-compact":  # its wait is a setting
        from . import config as config_mod

        config = config_mod.load()
    # Stop and SessionEnd only hand work over; SessionStart reads the settings only when it renders.
    left_out = excluded(event.cwd)
    if isinstance(left_out, str) and event.event == "session-start":  # said once a session, as a broken setting is
        log(event.event, left_out)
        return f'{{"systemMessage": {jsonlite.string("transcript-miner: " + said(left_out))}}}'
    return "" if left_out else HANDLERS[event.event](event, config)


def _at_terminal() -> bool:
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (OSError, ValueError):  # closed: not a person typing either
        return False


def main(argv: list[str] | None = None) -> int:
    """Run the hook named by `argv[0]` (the process's own arguments when None) on the payload on stdin; 0.

    Called as the process's entry (no `argv`), it does not return: once the output is flushed, the process ends
    at once, without the interpreter's teardown. Every file it wrote is closed by then, and every write to the
    store committed and its connection closed (the handlers use `with`)."""
    entry = argv is None
    argv = sys.argv[1:] if argv is None else argv
    event_name = argv[0] if argv else ""
    if event_name in ("-h", "--help") or _at_terminal():
        # Someone at a terminal, not Claude Code (which pipes the payload, and reads stdout as context): no log line.
        sys.stdout.write(USAGE)
        sys.stdout.flush()
        return 0
    try:
        output = run(event_name, read_stdin())
        if output:
            # Bytes, not text: the locale may not be UTF-8, and the block can hold any script.
            sys.stdout.buffer.write(output.encode("utf-8"))
            sys.stdout.flush()
    except BaseException as exc:  # noqa: BLE001 - hooks fail open, whatever happened
        from .config import ConfigError
        from .memory.store import locked

        if event_name == "user-prompt-submit" and locked(exc):  # (a moment's lock: no fault, as at PreCompact)
            log(event_name, "info: the store is busy (another process keeps it locked): no answer to this prompt")
        elif event_name == "user-prompt-submit" and not isinstance(exc, (HookInputError, ConfigError)):
            # The message of an error met while looking up a prompt may quote the prompt: only its kind is logged.
            log(event_name, f"{type(exc).__name__} (details withheld: they may quote the prompt)")
        else:
            log(event_name or "?", f"{type(exc).__name__}: {exc}")
    if entry:
        end_process(0)
    return 0


if __name__ == "__main__":
    sys.exit(main())
