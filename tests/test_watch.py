"""`miner watch`: appended lines become memories within seconds; subagents, deletion, replacement, status, stop."""

from __future__ import annotations

import contextlib
import json
import os
import plistlib
import signal
import subprocess
import sys
import time

import pytest
from builders import grow_indexes, merge_rounds_ran
from click.testing import CliRunner

from miner import paths
from miner.cli.ops import watch as watch_cmd
from miner.memory.store import Store
from miner.runtime import service, watch
from tests.test_hooks import Session, memory_texts, plant_symlinks, wait_for_workers, wait_until

# `miner`, as the command line runs it (every command group registered).
MINER = [sys.executable, "-m", "miner.cli"]


@pytest.fixture
def workdir(tmp_path, claude_dir):
    path = tmp_path / "work" / "shop"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def watcher(claude_dir):
    """A `miner watch` process; stopped (and never left behind) at the end."""
    proc = subprocess.Popen([*MINER, "watch", "--debounce", "0.2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ))
    try:
        wait_until(lambda: (watch.read_status() or {}).get("pid") == proc.pid or proc.poll() is not None,
                   timeout=60, what="the watcher's status file")
        assert proc.poll() is None, proc.stderr.read().decode()
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        proc.stdout.close()
        proc.stderr.close()
        wait_for_workers()


def has(text: str):
    return lambda: any(text in t for t in memory_texts())


def test_appended_lines_become_memories_within_seconds_and_it_survives_deletion(workdir, watcher):
    session = Session(workdir)
    session.turn("Set up the billing database.", "We'll use PostgreSQL instead of MySQL for the billing database.")
    started = time.monotonic()
    wait_until(has("PostgreSQL"), timeout=60, what="the first memory")
    first_s = time.monotonic() - started  # includes loading spaCy once

    session.turn("Package manager?", "Let's go with pnpm as the package manager for the frontend.")
    started = time.monotonic()
    wait_until(has("pnpm"), timeout=60, what="the appended memory")
    print(f"first memory after {first_s:.1f}s, an appended one after {time.monotonic() - started:.1f}s")

    # Subagent transcripts are watched too (recursive).
    sub = session.folder / session.session_id / "subagents" / "agent-a1b2c3.jsonl"
    sub.parent.mkdir(parents=True)
    entry = {"parentUuid": None, "isSidechain": True, "userType": "external", "cwd": str(workdir),
             "sessionId": session.session_id, "version": "2.0.14", "gitBranch": "main", "type": "assistant",
             "agentId": "a1b2c3", "uuid": "sub-1", "timestamp": "2026-03-01T10:00:00.000Z",
             "message": {"id": "msg_sub", "type": "message", "role": "assistant", "model": "claude-x",
                         "content": [{"type": "text", "text": "We'll use Redis for the session cache."}]}}
    sub.write_text(json.dumps(entry) + "\n", encoding="utf-8")
    wait_until(has("Redis"), timeout=60, what="the subagent's memory")

    status = watch.read_status()
    assert status["running"] and status["pid"] == watcher.pid and status["errors"] == 0
    assert status["mined"] >= 2 and status["last_mined"]

    # Deleted and replaced transcripts (one watcher process for both parts: spaCy loads once).
    doomed = Session(workdir)
    doomed.turn("Queue?", "Let's go with RabbitMQ for the invoice queue.")
    wait_until(has("RabbitMQ"), timeout=60, what="the first memory")
    watching = watch.read_status()["files_watched"]
    doomed.transcript.unlink()
    wait_until(lambda: watch.read_status()["files_watched"] == watching - 1, timeout=60,
               what="the status to stop counting the deleted transcript")

    replaced = Session(workdir)
    replaced.turn("Search?", "We'll use Meilisearch for the product search.")
    wait_until(has("Meilisearch"), timeout=60, what="a memory of the second transcript")
    fresh = workdir / "new.jsonl"
    other = Session(workdir)
    other.transcript = fresh
    other.turn("Styles?", "We decided to use Tailwind for the frontend styles.")
    os.replace(fresh, replaced.transcript)  # the same name, another file
    wait_until(has("Tailwind"), timeout=60, what="the replacement's memory")

    assert watcher.poll() is None
    assert watch.read_status()["errors"] == 0


def test_the_watcher_never_follows_a_symlink_out_of_claudes_folder(workdir, tmp_path):
    """In process, with real symlinks on disk: what the rescan finds and what events it accepts."""
    from miner import config

    session = Session(workdir)
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    real = str(plant_symlinks(session, tmp_path / "outside"))
    (paths.projects_dir() / "-linked-project").symlink_to(tmp_path / "outside")
    mined = []

    class Recording:
        def refresh(self):
            pass

        def mine_file(self, transcript):
            mined.append(transcript)

    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        watcher.miner = Recording()
        watcher.rescan()
        for name in ("x.jsonl", "stolen.jsonl", "alias.jsonl", "etc-passwd.jsonl", "outside-folder/stolen.jsonl"):
            watcher.touched(str(session.folder / name))
        watcher.touched(str(paths.projects_dir() / "-linked-project" / "stolen.jsonl"))
        watcher.touched(str(tmp_path / "outside" / "stolen.jsonl"))
        assert sorted(watcher.dirty) == [real] and watcher.known == {real}
        watcher.mine_round(watcher.due())
        # A transcript replaced by a symlink after it was seen is not mined either.
        watcher.touched(str(session.transcript))
        session.transcript.unlink()
        session.transcript.symlink_to(tmp_path / "outside" / "stolen.jsonl")
        watcher.mine_round(watcher.due())
    assert mined == [real]


def test_a_round_of_the_watcher_merges_the_indexes_it_grew(workdir):
    """After a round that mined something, the full-text indexes get a round of merging, as after a Stop's pass."""
    from miner import config

    session = Session(workdir)
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    mined = []

    class Recording:
        def refresh(self):
            pass

        def mine_file(self, transcript):
            mined.append(transcript)

    with Store() as store:
        grown = grow_indexes(store, str(workdir))
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        watcher.miner = Recording()
        watcher.rescan()
        watcher.touched(str(session.transcript))
        watcher.mine_round(watcher.due())
        after = {index: store.index_segments(index) for index in grown}
        merged = merge_rounds_ran(store)
    assert mined == [str(session.transcript.resolve())]
    assert all(after[index] < grown[index] for index in grown), (grown, after)
    assert merged


def test_the_watcher_renders_blocks_with_the_settings_as_they_are_now(workdir, pipeline):
    """The watcher loaded the settings when it started; the user then made the block smaller. What it renders after
    a round is the block SessionStart would render now, not one made with the old settings but stamped as new."""
    from miner import config
    from miner.recall import blockcache
    from miner.runtime.mine import Miner

    session = Session(workdir)
    for n in range(30):
        session.turn(f"Set up the service number {n}.", f"We'll use the queue q{n} with worker pool w{n} for the "
                     f"service number {n}, and keep its retry budget at {n + 2} attempts per job.")
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        paths.config_dir().mkdir(parents=True, exist_ok=True)
        (paths.config_dir() / "config.json").write_text(json.dumps({"max_block_chars": 800}), encoding="utf-8")
        # (the watcher reads the changed settings before it mines: the miner it builds then is given this pipeline)
        watcher.miner.inner.reconfigure = lambda settings: setattr(watcher.miner.inner, "_miner", Miner(
            store, settings, pipeline=pipeline))
        watcher.rescan()
        watcher.mine_round(watcher.due())
    project = str(workdir)
    entry = blockcache.load(blockcache.startup_path(project))
    assert entry is not None
    with Store(readonly=True) as store:
        now, _ = blockcache.render(store, project, config.load(), "startup")
    assert entry["text"] == now and len(now) <= 1000


def test_the_watcher_daemon_ignores_symlinks(workdir, watcher, tmp_path):
    session = Session(workdir)
    plant_symlinks(session, tmp_path / "outside")
    with open(tmp_path / "outside" / "stolen.jsonl", "a", encoding="utf-8") as handle:  # written after the links
        handle.write((tmp_path / "outside" / "stolen.jsonl").read_text(encoding="utf-8"))
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    wait_until(has("pnpm"), timeout=60, what="the memory of the real transcript")
    session.turn("Which queue?", "Let's go with RabbitMQ for the invoice queue.")
    wait_until(has("RabbitMQ"), timeout=60, what="a later memory (every earlier event was handled)")
    assert not [t for t in memory_texts() if "Cassandra" in t]
    with Store(readonly=True) as store:
        assert list(store.watermarks()) == [str(session.transcript.resolve())]
    assert watch.read_status()["errors"] == 0


def test_status_single_instance_and_stop(workdir, watcher):
    status = subprocess.run([*MINER, "watch", "--status"], capture_output=True, text=True, env=dict(os.environ))
    assert status.returncode == 0
    assert f"running, pid {watcher.pid}" in status.stdout and "errors       0" in status.stdout

    second = subprocess.run([*MINER, "watch"], capture_output=True, text=True, env=dict(os.environ), timeout=60)
    assert second.returncode == 1 and "already running" in second.stderr and "Traceback" not in second.stderr

    stopped = subprocess.run([*MINER, "watch", "--stop"], capture_output=True, text=True, env=dict(os.environ),
                             timeout=60)
    assert stopped.returncode == 0 and f"(pid {watcher.pid}) stopped" in stopped.stdout
    assert watcher.wait(timeout=30) == 0
    assert not watch.pid_file().exists()
    final = watch.read_status()
    assert final["running"] is False and final["stopped_at"]
    assert "not running" in CliRunner().invoke(watch_cmd, ["--status"]).output


def test_print_service_for_systemd_and_launchd(monkeypatch):
    monkeypatch.setenv("MINER_HOME", "/data/my miner")
    unit = service.service_definition("linux", python="/opt/venv/bin/python")
    assert "ExecStart=/opt/venv/bin/python -I -m miner.cli watch" in unit
    assert 'Environment="MINER_HOME=/data/my miner"' in unit
    assert "[Install]\nWantedBy=default.target" in unit
    # Where systemd looks for it: under $XDG_CONFIG_HOME when it is set (the header said ~/.config whatever it was).
    monkeypatch.setenv("XDG_CONFIG_HOME", "/data/conf")
    unit = service.service_definition("linux", python="/opt/venv/bin/python")
    assert unit.startswith("# Save as /data/conf/systemd/user/transcript-miner-watch.service, then:"), unit

    plist = service.service_definition("darwin", python="/opt/venv/bin/python")
    parsed = plistlib.loads(plist.encode())
    assert parsed["ProgramArguments"] == ["/opt/venv/bin/python", "-I", "-m", "miner.cli", "watch"]
    assert parsed["EnvironmentVariables"]["MINER_HOME"] == "/data/my miner"
    assert parsed["RunAtLoad"] is True

    printed = CliRunner().invoke(watch_cmd, ["--print-service"])
    assert printed.exit_code == 0
    assert ("[Service]" in printed.output) if sys.platform != "darwin" else ("<plist" in printed.output)


def test_a_service_file_carries_each_setting_as_one_word(monkeypatch):
    """A line break in MINER_HOME wrote a directive of its own into the unit (`ExecStartPre=…`, run by systemd), and
    `%h` in it was read by systemd as the home folder. The line break is refused in one line, `%` doubled."""
    monkeypatch.setenv("MINER_HOME", "/data/100%h")
    unit = service.service_definition("linux", python="/opt/$v/bin/python")
    assert "Environment=MINER_HOME=/data/100%%h\n" in unit
    assert 'ExecStart="/opt/$$v/bin/python" -I -m miner.cli watch' in unit
    monkeypatch.setenv("MINER_HOME", "/tmp/x\nExecStartPre=/bin/touch /tmp/pwned\nX=")
    printed = CliRunner().invoke(watch_cmd, ["--print-service"])
    assert printed.exit_code == 1 and printed.output.count("\n") == 1
    assert "holds a line break or another control character" in printed.output


def test_stop_when_nothing_runs(claude_dir):
    result = CliRunner().invoke(watch_cmd, ["--stop"])
    assert result.exit_code == 0 and "not running" in result.output
    assert paths.data_dir()  # nothing was started


@contextlib.contextmanager
def pidfile_holder(code: str = ""):
    """A process that holds the watcher's pidfile as a watcher does, after running `code`; killed at the end."""
    holder = subprocess.Popen([sys.executable, "-c", f"import time\n{code}from miner.runtime.watch import "
                               "_take_pidfile\n_take_pidfile()\nprint('ready', flush=True)\ntime.sleep(60)\n"],
                              stdout=subprocess.PIPE, env=dict(os.environ), text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        yield holder
    finally:
        holder.kill()
        holder.wait()
        holder.stdout.close()


def test_a_watcher_that_does_not_stop_in_time_is_one_line_and_keeps_running(claude_dir, monkeypatch):
    """A watcher in the middle of a long batch stops once the batch is written: `--stop` said so in a traceback."""
    from miner.runtime import watch as watch_mod

    with pidfile_holder("import signal\nsignal.signal(signal.SIGTERM, signal.SIG_IGN)\n") as holder:
        real_stop = watch_mod.stop
        monkeypatch.setattr(watch_mod, "stop", lambda: real_stop(timeout_s=1.0))
        result = CliRunner().invoke(watch_cmd, ["--stop"])
        assert result.exit_code == 1 and "Traceback" not in result.output
        assert result.output.strip() == (f"Error: the watcher (pid {holder.pid}) did not stop within 1s: it stops once "
                                         "the batch it is mining is written; run `miner watch --stop` again in a "
                                         "moment")
        assert holder.poll() is None


def test_doctor_says_when_the_running_watcher_runs_the_code_from_before_an_update(workdir, watcher):
    """A watcher started before an upgrade went on mining, and redacting, with the older code: nothing said so."""
    from miner.cli.main import main

    assert "the watcher (pid" not in CliRunner().invoke(main, ["doctor"]).stdout  # this install's code
    watcher.send_signal(signal.SIGTERM)
    assert watcher.wait(timeout=30) == 0
    # A watcher of an older version (its status names no code, or other code), holding the pidfile as a watcher does.
    with pidfile_holder("import json\nfrom miner.runtime.watch import status_file\n"
                        "status_file().write_text(json.dumps({'pid': 1, 'running': True}))\n") as older:
        out = CliRunner().invoke(main, ["doctor"]).stdout
        assert (f"FAIL  the watcher (pid {older.pid}) runs the code from before this install was updated" in out
                and "fix: miner watch --stop, then start it again" in out), out


def test_a_watcher_told_to_stop_leaves_a_long_transcript_between_two_batches(workdir, monkeypatch):
    """SIGTERM took 90 to 100 s while a big transcript was mined to its end; now the batch being written is the
    last, and the watermark keeps the place for the next start."""
    from miner.runtime import mine as mine_mod

    monkeypatch.setattr(mine_mod, "BATCH_BYTES", 600)  # a few lines a batch
    from miner import config

    session = Session(workdir)
    for n in range(12):
        session.user(f"We decided to name the queue number {n} after the team that owns it.")
    path = str(session.transcript.resolve())
    size = session.transcript.stat().st_size
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        watcher.stopping.set()  # (told while it mines: `mine_round` itself starts no other transcript then)
        watcher.miner.mine_file(path)
        assert 0 < store.watermark(path)[0] < size
        watcher.stopping.clear()
        watcher.mine_round([path])
        assert store.watermark(path)[0] == size
        assert store.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 12


def test_a_broken_exclusions_file_is_said_once_and_mining_waits_for_it(workdir, capsys):
    """It logged a traceback for every pending transcript at every rescan (51 lines a minute for one)."""
    from miner import config
    from miner.runtime import exclusions

    session = Session(workdir)
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    path = str(session.transcript.resolve())
    broken = exclusions.exclusions_path()
    broken.parent.mkdir(parents=True, exist_ok=True)
    broken.write_text("{not json")
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        for _ in range(3):
            watcher.mine_round([path])
        logged = capsys.readouterr().err.strip().splitlines()
        assert len(logged) == 1 and "nothing is mined until it is fixed" in logged[0] and "not valid JSON" in logged[0]
        assert watcher.status.data["errors"] == 1 and store.watermark(path) is None
        broken.write_text('{"exclude": []}')
        watcher.mine_round([path])
        assert store.watermark(path) is not None
        assert "pnpm" in " ".join(r[0] for r in store.db.execute("SELECT text FROM memories"))


def test_a_transcript_whose_name_is_not_utf8_is_said_once_and_the_others_are_mined(workdir, capsys):
    """Its name cannot be a watermark's key: the watcher stopped on it at every start (a service restarting it for
    ever, and no other transcript mined live). It is named once, as `miner mine` names it, and left."""
    from miner import config

    good = Session(workdir)
    good.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    bad = Session(workdir)
    bad.turn("Pick the proxy.", "We decided to use Caddy as the reverse proxy.")
    misnamed = os.fsencode(bad.transcript).replace(b".jsonl", b"\xff.jsonl")
    os.rename(os.fsencode(bad.transcript), misnamed)
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        for _ in range(2):
            watcher.rescan()
            watcher.mine_round(watcher.due())
        logged = [line for line in capsys.readouterr().err.splitlines() if "not UTF-8" in line]
        assert len(logged) == 1 and "\\udcff.jsonl: its name is not UTF-8, which the store cannot keep; rename it" \
            in logged[0]
        texts = " ".join(r[0] for r in store.db.execute("SELECT text FROM memories"))
        assert "pnpm" in texts and "Caddy" not in texts and watcher.status.data["errors"] == 1


def test_a_rescan_opens_no_transcript_that_is_no_longer_than_its_watermark(workdir, monkeypatch):
    from miner import config
    from miner.runtime import pending

    session = Session(workdir)
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    path = str(session.transcript.resolve())
    opened = []
    real = pending.has_unmined_line
    monkeypatch.setattr(pending, "has_unmined_line", lambda file, offset: opened.append(file) or real(file, offset))
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        watcher.mine_round([path])
        watcher.rescan()
        assert opened == [] and watcher.dirty == {}
        session.user("And the lockfile is committed.")
        watcher.rescan()
        assert [str(p) for p in opened] == [path] and list(watcher.dirty) == [path]


def test_an_idle_watcher_sleeps_until_a_transcript_is_written_or_it_is_told_to_stop(workdir, monkeypatch):
    """It looked for due transcripts ten times a second, idle or not; now a write or a stop wakes it."""
    import threading

    from miner import config

    looked = []
    real_due = watch.Watcher.due
    monkeypatch.setattr(watch.Watcher, "due", lambda self: looked.append(time.monotonic()) or real_due(self))
    started, box = threading.Event(), []

    def serve():
        with Store() as store:
            box.append(watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0))
            started.set()
            box[0].run()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        assert started.wait(30)
        wait_until(lambda: looked, timeout=30, what="the watcher's first look")
        time.sleep(1.5)  # idle: no transcript is written
        assert len(looked) == 1, len(looked)
        session = Session(workdir)
        session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
        wait_until(has("pnpm"), timeout=60, what="the new line mined")
        assert len(looked) >= 2
    finally:
        if box:
            box[0].stop()
        thread.join(timeout=60)
    assert not thread.is_alive()


def test_a_running_watcher_hides_the_secret_kinds_and_applies_the_rules_the_user_adds(workdir, pipeline, capsys):
    """The watcher read secrets.yaml and the rule files once, when it started: a kind the user added while it ran
    (days, as a service) did not hide its secrets, and a rule added or a project's file trusted did not apply."""
    from miner import config
    from miner.extract import redact
    from miner.runtime.mine import Miner

    session = Session(workdir)
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    path = str(session.transcript.resolve())
    key = "ACME-" + "K7Q2M9X4T1P8W3Z6"
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        watcher.miner = Miner(store, watcher.config, pipeline=pipeline)
        watcher.mine_round([path])
        assert redact.redact(key)[0] == key  # no kind knows it yet
        folder = paths.config_dir()
        (folder / "rules").mkdir(parents=True, exist_ok=True)
        (folder / "secrets.yaml").write_text(
            "secrets:\n  - kind: acme-key\n    pattern: '\\bACME-[A-Z0-9]{16}\\b'\n", encoding="utf-8")
        (folder / "rules" / "mine.yaml").write_text(
            "rules:\n  - id: user.gateway\n    category: fact\n    roles: [user, assistant]\n"
            "    patterns: ['(?i)\\bquokka gateway\\b']\n",
            encoding="utf-8")
        session.turn("Where does the quokka gateway read its key?",
                     f"The quokka gateway reads its key {key} from the vault at boot.")
        watcher.mine_round([path])
        rows = store.db.execute("SELECT text, rule_id FROM memories WHERE text LIKE '%quokka%'").fetchall()
        assert rows and all(key not in text and "[REDACTED:acme-key]" in text for text, _ in rows), rows
        assert {rule for _, rule in rows} == {"user.gateway"}
        # A broken file stops mining, said once, until it is fixed.
        (folder / "secrets.yaml").write_text("secrets:\n  - kind: acme-key\n    pattern: '('\n", encoding="utf-8")
        session.turn("And the fallback?", "The quokka gateway falls back to the cached key after a timeout.")
        capsys.readouterr()
        for _ in range(2):
            watcher.mine_round([path])
        logged = capsys.readouterr().err.strip().splitlines()
        assert len(logged) == 1 and "nothing is mined until it is fixed" in logged[0] and "secrets.yaml" in logged[0]
        assert not store.db.execute("SELECT 1 FROM memories WHERE text LIKE '%falls back%'").fetchall()
        # Fixed, it says so (the status still shows the last error), and mines what was held back.
        (folder / "secrets.yaml").write_text(
            "secrets:\n  - kind: acme-key\n    pattern: '\\bACME-[A-Z0-9]{16}\\b'\n", encoding="utf-8")
        watcher.mine_round([path])
        logged = capsys.readouterr().err.strip().splitlines()
        assert len(logged) == 1 and logged[0].endswith("the broken file was fixed: mining again"), logged
        assert store.db.execute("SELECT 1 FROM memories WHERE text LIKE '%falls back%'").fetchall()


def test_a_data_folder_the_watcher_cannot_write_is_one_line(tmp_path, monkeypatch):
    """A read-only data folder (or a file where it should be) gave a traceback from the pidfile."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("MINER_HOME", str(blocked))
    result = CliRunner().invoke(watch_cmd, [])
    assert result.exit_code == 1 and result.output.count("\n") == 1, result.output
    assert f"cannot write {blocked / 'watch.pid'} (" in result.output and "the data folder must be writable" in \
        result.output


def test_a_store_deleted_under_a_running_watcher_stops_it_with_one_line(workdir):
    """It mined on into the deleted file it held open, lost to every other process, and its status said all was well.
    It stops (a service restarts it on the new store)."""
    from miner import config

    session = Session(workdir)
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        for leftover in paths.data_dir().glob("memory.db*"):
            leftover.unlink()
        with pytest.raises(watch.WatchError, match="was deleted or replaced while the watcher ran; start it again"):
            watcher.mine_round([str(session.transcript.resolve())])


def test_a_status_file_that_cannot_be_written_is_said_once_and_the_watcher_goes_on(workdir, capsys):
    """A full disk made writing the status file raise out of the watcher's loop: it died, and nothing written after
    the disk had room again was mined until someone started it again."""
    from miner import config

    blocked = watch.status_file()
    blocked.mkdir(parents=True)  # (a file cannot replace a folder: every write fails, as on a full disk)
    session = Session(workdir)
    session.turn("Pick the package manager.", "Let's go with pnpm as the package manager.")
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        for _ in range(3):
            watcher.status.write(files_watched=1)
        watcher.mine_round([str(session.transcript.resolve())])
        logged = capsys.readouterr().err.strip().splitlines()
        assert len(logged) == 1 and "the status file was not written" in logged[0], logged
        assert "pnpm" in " ".join(r[0] for r in store.db.execute("SELECT text FROM memories"))
        blocked.rmdir()
        watcher.status.write(files_watched=1)
        assert watch.read_status()["mined"] == 1 and not list(blocked.parent.glob(".*.tmp"))


def archived(word: str) -> int:
    with Store(readonly=True) as store:
        return store.db.execute("SELECT COUNT(*) FROM archive WHERE text LIKE ?", (f"%{word}%",)).fetchone()[0]


def test_settings_edited_while_the_watcher_runs_are_used_and_a_broken_file_stops_it_in_one_line(workdir, watcher):
    """The watcher read the settings once, at start: with the archive turned off, what it mined was archived still,
    where a hook's worker would not archive it; a broken settings file was a traceback every round."""
    session = Session(workdir)
    session.turn("Which broker for the invoice events?", "Let's go with NATS as the broker for the invoice events.")
    wait_until(lambda: archived("NATS") > 0, timeout=60, what="the first turn archived")
    paths.config_dir().mkdir(parents=True, exist_ok=True)
    settings = paths.config_dir() / "config.json"
    settings.write_text(json.dumps({"archive": False}), encoding="utf-8")
    session.turn("And the cache for invoices?", "We'll use Memcached as the cache for the invoice lookups.")
    wait_until(has("Memcached"), timeout=60, what="the second turn mined")
    assert archived("Memcached") == 0
    settings.write_text('{"archive": fals', encoding="utf-8")
    session.turn("Queue for refunds?", "Let's go with SQS as the queue for the refund jobs.")
    wait_until(lambda: watch.read_status()["errors"] > 0, timeout=60, what="the broken settings said")
    time.sleep(1.0)  # (a round or two more)
    assert not has("SQS")()  # nothing is mined with settings the user is halfway through writing
    log = (paths.logs_dir() / "watch.log").read_text(encoding="utf-8") if (paths.logs_dir() / "watch.log").exists() \
        else ""
    assert "Traceback" not in log + watch.read_status()["last_error"]
    settings.write_text(json.dumps({"archive": False}), encoding="utf-8")
    wait_until(has("SQS"), timeout=60, what="the turn mined once the file is fixed")


def test_the_watcher_hears_a_projects_folder_made_again(workdir, claude_dir, tmp_path, monkeypatch):
    """Removed (or moved away) and made again, the folder was heard only by the rescan every 30 s: here there is
    none, so only the watch of the new folder can mine what is written there."""
    import threading

    from miner import config

    monkeypatch.setattr(watch, "RESCAN_S", 3600.0)
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.1)
        running = threading.Thread(target=watcher.run)
        running.start()
        try:
            session = Session(workdir)
            session.turn("Which broker?", "Let's go with NATS as the broker for the invoice events.")
            wait_until(has("NATS"), timeout=60, what="the first memory")
            (claude_dir / "projects").rename(tmp_path / "old-projects")
            (claude_dir / "projects").mkdir()
            Session(workdir).turn("Which cache?", "We'll use Memcached as the cache for the invoice lookups.")
            wait_until(has("Memcached"), timeout=60, what="a memory of the new folder")
        finally:
            watcher.stop()
            running.join(timeout=60)


@pytest.mark.parametrize("below", ["", "x"])
def test_a_data_folder_setting_that_names_a_file_is_said_so(tmp_path, below):
    """It said only "cannot write …/watch.pid (File exists); the data folder must be writable", which sent the user
    to the folder's permissions."""
    afile = tmp_path / "afile"
    afile.write_text("not a folder")
    home = afile / below if below else afile
    done = subprocess.run([*MINER, "watch"], capture_output=True, text=True, timeout=60,
                          env=dict(os.environ, MINER_HOME=str(home)))
    assert done.returncode == 1 and done.stderr.count("\n") == 1 and done.stderr.startswith(
        f"Error: cannot write {home / 'watch.pid'} (") and done.stderr.endswith(
        "the data folder must be writable to mine into it, and a file stands where it (or a folder above it) should "
        "be: move the file, or set MINER_HOME to another folder\n"), done.stderr


@pytest.mark.parametrize("written", ['{"last_error": 5, "errors": 1}', "[1, 2]", '"text"'])
def test_a_status_file_that_is_no_status_does_not_break_the_status_command(claude_dir, written):
    paths.data_dir().mkdir(parents=True, exist_ok=True)
    watch.status_file().write_text(written, encoding="utf-8")
    result = CliRunner().invoke(watch_cmd, ["--status"])
    assert result.exit_code == 0 and result.output.startswith("watcher: not running"), result.output


def test_a_store_that_is_no_database_stops_the_watcher_in_one_line(claude_dir):
    """`miner watch` on a damaged store died with a 25-line traceback (a service would print it every 5 s)."""
    paths.data_dir().mkdir(parents=True, exist_ok=True)
    paths.db_path().write_bytes(os.urandom(10_000))
    proc = subprocess.run([*MINER, "watch"], capture_output=True, text=True, env=dict(os.environ), timeout=120)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"Error: cannot use {paths.db_path()}"), proc.stderr


def test_a_store_replaced_under_a_running_watcher_is_said_by_its_status(workdir, watcher):
    """The watcher stopped with one line on its standard error, and `--status` said it had stopped cleanly, with no
    error: a service's user had no way to see why it stopped."""
    session = Session(workdir)
    session.turn("Set up the billing database.", "We'll use PostgreSQL instead of MySQL for the billing database.")
    wait_until(has("PostgreSQL"), timeout=60, what="the first memory")
    for file in paths.data_dir().glob("memory.db*"):
        file.unlink()
    session.turn("Package manager?", "Let's go with pnpm as the package manager for the frontend.")
    watcher.wait(timeout=60)
    lines = watch.status_lines()
    assert lines[0] == "watcher: not running" and any(
        line.startswith("errors       1 (last: the memory store") and "was deleted or replaced" in line
        for line in lines), lines


def test_a_store_locked_past_the_wait_is_mined_when_it_lets_go_and_is_no_error(workdir, monkeypatch):
    """Another process holding the write lock past the wait left a traceback in the log and an error in the
    status, as if the transcript were broken."""
    import sqlite3

    from miner import config

    session = Session(workdir)
    session.turn("Set up the billing database.", "We'll use PostgreSQL instead of MySQL for the billing database.")
    monkeypatch.setattr(Store, "lock_wait_s", 0.2)
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        holder = sqlite3.connect(paths.db_path(), isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")
        try:
            watcher.mine_round([str(session.transcript.resolve())])
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        assert watcher.status.data["errors"] == 0 and not has("PostgreSQL")()
        watcher.mine_round([str(session.transcript.resolve())])
        assert has("PostgreSQL")() and watcher.status.data["errors"] == 0


def _inotify_instances_taken() -> list[int] | None:
    """Every inotify instance this user may still open, held (the limit other programs reach on a busy desktop);
    None where there is no inotify or the limit is too high to reach here."""
    import ctypes
    import errno as errno_mod

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        limit = int(open("/proc/sys/fs/inotify/max_user_instances").read())
    except (OSError, AttributeError, ValueError):
        return None
    if limit > 4096:
        return None
    held = []
    while len(held) <= limit:
        fd = libc.inotify_init1(os.O_CLOEXEC)
        if fd < 0:
            if ctypes.get_errno() == errno_mod.EMFILE:
                return held
            break
        held.append(fd)
    for fd in held:
        os.close(fd)
    return None


def test_a_watcher_past_the_systems_inotify_limit_mines_by_looking_and_says_so(workdir):
    """Other programs had taken every inotify instance: `miner watch` died with a traceback and never started."""
    session = Session(workdir)
    session.turn("Set up the billing database.", "We'll use PostgreSQL instead of MySQL for the billing database.")
    held = _inotify_instances_taken()
    if held is None:
        pytest.skip("no inotify limit to reach on this system")
    proc = subprocess.Popen([*MINER, "watch", "--debounce", "0.2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=dict(os.environ))
    try:
        wait_until(lambda: (watch.read_status() or {}).get("rescan_only") or proc.poll() is not None, timeout=60,
                   what="the watcher's status file")
    finally:
        for fd in held:
            os.close(fd)
    try:
        assert proc.poll() is None, proc.stderr.read().decode()
        wait_until(has("PostgreSQL"), timeout=60, what="the memory its first look finds")
        assert any(line.endswith("by looking every 30s (the system's inotify limit was reached)")
                   for line in watch.status_lines()), watch.status_lines()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
        said = proc.stderr.read().decode()
        proc.stdout.close()
        proc.stderr.close()
        wait_for_workers()
    assert "Traceback" not in said and "fs.inotify.max_user_instances" in said, said


def test_the_status_follows_a_round_transcript_by_transcript(workdir):
    """`--status` said "mined 0 passes" for the whole first round (a minute, over a big backfill): it was written
    only when a round ended."""
    from miner import config

    first, second = Session(workdir), Session(workdir)
    first.turn("Set up the billing database.", "We'll use PostgreSQL instead of MySQL for the billing database.")
    second.turn("Package manager?", "Let's go with pnpm as the package manager for the frontend.")
    with Store() as store:
        watcher = watch.Watcher(store, config.load(), paths.projects_dir(), debounce_s=0.0)
        seen = []
        real_mined = watcher.status.mined

        def mined(transcript: str) -> None:  # what `--status` read as the next transcript's mining began
            seen.append((watch.read_status() or {}).get("mined", 0))
            real_mined(transcript)

        watcher.status.mined = mined
        watcher.mine_round([str(first.transcript.resolve()), str(second.transcript.resolve())])
    assert seen == [0, 1] and watch.read_status()["mined"] == 2, seen


def test_a_watcher_starts_while_status_is_asked_for_again_and_again(claude_dir):
    """`running_pid` (`--status`, `--stop`, doctor) holds the pidfile's lock for a moment: a watcher starting then
    said "a watcher is already running (pid ?)" and exited, with none running."""
    poller = subprocess.Popen([sys.executable, "-c", "import time\nfrom miner.runtime import watch\n"
                               "end = time.monotonic() + 60\nwhile time.monotonic() < end:\n    watch.running_pid()\n"],
                              env=dict(os.environ))
    try:
        time.sleep(1.0)  # (its imports)
        taken = 0
        for _ in range(200):  # (each start raised WatchError: "a watcher is already running (pid ?)")
            fd = watch._take_pidfile()
            taken += int(watch.pid_file().read_text().strip()) == os.getpid()
            watch.pid_file().unlink()
            os.close(fd)
        assert poller.poll() is None, "the poller stopped: nothing looked at the pidfile meanwhile"
    finally:
        poller.kill()
        poller.wait()
    assert taken == 200
