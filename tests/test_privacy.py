"""Privacy end to end: no secret anywhere, exclusions, purge, file modes, hostile transcript paths.

The secrets are generated fakes (tests/test_redact.py `fake_secrets`), embedded in
synthetic transcripts in user prose, assistant prose and tool output.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from builders import Session
from click.testing import CliRunner
from test_redact import embed, fake_secrets

from miner import config as config_mod
from miner import hooks, paths
from miner.cli.main import main
from miner.memory import privacy
from miner.memory.store import Store
from miner.recall.block import build
from miner.runtime import exclusions
from miner.runtime.mine import Miner

CONFIG = config_mod.load()
SITUATIONS = ("startup", "resume", "compact", "clear")

# `miner` with the privacy commands, built here so that importing this module leaves `cli.main` as it is.


@pytest.fixture
def store():
    with Store() as s:
        yield s


def mine(store, pipeline, *sessions: Session) -> None:
    miner = Miner(store, CONFIG, pipeline=pipeline)
    for session in sessions:
        miner.mine_file(session.path)


def all_recall_text(store, project: str) -> str:
    out = []
    for situation in SITUATIONS:
        out.append(build(store, project, CONFIG, situation=situation, session_id="s-1", log=False).text)
    out.append(build(store, project, CONFIG, situation="query", query="staging deploy key database",
                     log=False).text)
    return "\n".join(out)


def data_bytes() -> bytes:
    """Every byte under $MINER_HOME: database, WAL, logs, cached blocks."""
    blob = b""
    for folder, _, files in os.walk(paths.data_dir()):
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                blob += handle.read()
    return blob


def secret_session(tmp_path, cwd: str = "/work/shop") -> tuple[Session, list[str], list[str]]:
    session = Session(tmp_path / "claude" / "s1.jsonl", cwd=cwd, session_id="s-1")
    secrets, sentences = [], []
    for kind, values in fake_secrets(3).items():
        for secret in values:
            secrets.append(secret)
            sentence = embed(kind, secret)
            sentences.append(sentence)
            session.user(f"We decided to deploy staging first. {sentence} Always run the linter before you commit.")
            session.user(f"TODO: rotate the staging credentials. {sentence}")
            session.assistant(f"We'll use the staging database for the deploy. {sentence} "
                              f"Decision: we use Postgres 16 for staging.")
            session.tool_result(f"config dump:\n{sentence}\nRemember: the staging key is {secret}")
    return session, secrets, sentences


def test_no_secret_is_left_anywhere(tmp_path, store, pipeline):
    session, secrets, sentences = secret_session(tmp_path)
    mine(store, pipeline, session)
    # Something was mined, and redaction markers were kept in what was mined.
    texts = [r[0] for r in store.db.execute("SELECT text FROM memories")]
    assert texts and any("[REDACTED:" in t for t in texts), texts
    # Logs: the hook log redacts what it is told, even a whole secret-laden payload.
    for sentence in sentences:
        hooks.log("stop", f"refused transcript_path '/tmp/x.jsonl' with payload {sentence!r}")
    recall_text = all_recall_text(store, "/work/shop")
    runner = CliRunner()
    shown = [runner.invoke(main, ["list", "--limit", "1000", "--state", "active", "--state", "quarantined"]).output,
             runner.invoke(main, ["search", "staging", "--all"]).output,
             runner.invoke(main, ["quarantine"]).output]
    shown += [runner.invoke(main, ["show", str(i)]).output for i, in store.db.execute("SELECT id FROM memories")]
    exported = store.path.parent / "export.jsonl"
    assert runner.invoke(main, ["export", "-o", str(exported)]).exit_code == 0
    shown.append(exported.read_text(encoding="utf-8"))
    exported.unlink()
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    blob = data_bytes()
    for secret in secrets:
        for piece in {secret, secret[-16:]}:  # the whole secret, and its tail (a part is a leak too)
            assert piece.encode() not in blob, f"{piece[:8]}… in the data files"
            assert piece not in recall_text
            assert not any(piece in out for out in shown)


def test_keywords_subject_and_value_never_keep_a_secret(tmp_path, store, pipeline):
    secret = "ghp_" + "Zq4" * 12
    session = Session(tmp_path / "s.jsonl", cwd="/work/shop")
    session.user(f"Let's use the deploy token {secret} for the release workflow from now on.")
    session.user(f"GITHUB_TOKEN={secret}")
    mine(store, pipeline, session)
    for row in store.db.execute("SELECT text, keywords, subject, value FROM memories"):
        assert all(secret.lower() not in (v or "").lower() for v in row), dict(row)


def test_data_folder_and_files_are_private(tmp_path, store, pipeline):
    session, _, _ = secret_session(tmp_path)
    mine(store, pipeline, session)
    hooks.log("stop", "a line")
    build(store, "/work/shop", CONFIG)  # logs a recall: the WAL grows
    root = paths.data_dir()
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    for folder, dirs, files in os.walk(root):
        for name in dirs:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o700, name
        for name in files:
            assert stat.S_IMODE(os.stat(os.path.join(folder, name)).st_mode) == 0o600, name
    assert paths.db_path().exists() and (paths.logs_dir() / "hooks.log").exists()


def test_a_private_folder_loses_what_others_may_do_and_keeps_what_its_owner_took_away(tmp_path):
    """A data folder its owner made read-only was made writable again by the next command that opened it."""
    opened, locked = tmp_path / "opened", tmp_path / "locked"
    opened.mkdir(mode=0o755)
    locked.mkdir()
    os.chmod(locked, 0o555)
    assert paths.ensure_private_dir(opened) == opened and paths.ensure_private_dir(str(locked)) == str(locked)
    assert stat.S_IMODE(opened.stat().st_mode) == 0o700 and stat.S_IMODE(locked.stat().st_mode) == 0o500
    made = paths.ensure_private_dir(tmp_path / "new" / "folder")
    assert stat.S_IMODE(made.stat().st_mode) == 0o700


def test_secure_files_fixes_modes(tmp_path):
    root = paths.ensure_private_dir(paths.data_dir())
    loose = root / "loose.txt"
    loose.write_text("x")
    os.chmod(loose, 0o644)
    os.chmod(root, 0o755)
    assert set(privacy.secure_files()) == {str(root), str(loose)}
    assert stat.S_IMODE(loose.stat().st_mode) == 0o600 and stat.S_IMODE(root.stat().st_mode) == 0o700


# --- exclusions ------------------------------------------------------------------------------


def test_exclude_add_list_remove(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["exclude", "add", "~/clients/*"])
    assert result.exit_code == 0, result.output
    target = str(paths.home() / "clients" / "*")
    assert f"excluded {target}" in result.output
    assert runner.invoke(main, ["exclude", "add", "~/clients/*"]).output.startswith(f"{target} was already")
    assert runner.invoke(main, ["exclude", "add", "/work/secret/"]).exit_code == 0
    assert runner.invoke(main, ["exclude", "list"]).output.splitlines() == [target, "/work/secret"]
    assert exclusions.is_excluded(str(paths.home() / "clients" / "acme"))
    assert exclusions.is_excluded("/work/secret") and exclusions.is_excluded("/work/secret/sub/dir")
    assert not exclusions.is_excluded("/work/secretive") and not exclusions.is_excluded("/work/shop")
    assert stat.S_IMODE(exclusions.exclusions_path().stat().st_mode) == 0o600
    result = runner.invoke(main, ["exclude", "remove", "/work/secret"])
    assert result.exit_code == 0 and "no longer excluded: /work/secret" in result.output
    result = runner.invoke(main, ["exclude", "remove", "/work/secret"])
    assert result.exit_code == 1 and "is not excluded" in result.output
    assert runner.invoke(main, ["exclude", "list"]).output.splitlines() == [target]


def test_a_glob_not_in_utf8_is_refused_in_one_line():
    """`miner exclude add $'/work/x\\xffy'` stored a glob that no folder Claude Code names can match."""
    result = CliRunner().invoke(main, ["exclude", "add", "/work/x\udcffy"])  # (the shell's bytes, as Python reads them)
    assert result.exit_code == 1 and result.output == (
        "Error: the glob is not UTF-8: Claude Code names every folder in UTF-8, so it would exclude nothing; give it "
        "in UTF-8\n"), result.output
    assert not exclusions.exclusions_path().exists()


def test_excluding_a_project_removes_the_blocks_rendered_ahead_and_keeps_the_other_caches():
    """`exclude add` emptied the whole cache folder: the compiled glossary (the prompt hook's words across
    languages), the secret kinds the hooks read and what each session was shown went with the blocks."""
    folder = paths.cache_dir()
    folder.mkdir(parents=True, exist_ok=True)
    blocks = ["startup-abc.json", "session-def.json"]
    others = ["recall-terms.db", "secret-kinds.json", "shown-s1.json"]
    for name in blocks + others:
        (folder / name).write_text("{}")
    assert CliRunner().invoke(main, ["exclude", "add", "/work/secret"]).exit_code == 0
    assert sorted(p.name for p in folder.iterdir()) == sorted(others)


def test_a_folder_whose_name_looks_like_a_pattern_is_excluded_as_named(tmp_path, monkeypatch):
    """`miner exclude add .` in `clients[old]`: the folder is named, not a pattern whose `[old]` would match one
    letter; it and what is below it are excluded, and its neighbours are not."""
    folder = tmp_path / "clients[old]"
    (folder / "sub").mkdir(parents=True)
    (tmp_path / "clientso").mkdir()
    monkeypatch.chdir(folder)
    result = CliRunner().invoke(main, ["exclude", "add", "."])
    assert result.exit_code == 0 and f"excluded {str(tmp_path)}/clients[[]old]" in result.output  # as a glob
    assert exclusions.is_excluded(str(folder)) and exclusions.is_excluded(str(folder / "sub"))
    assert not exclusions.is_excluded(str(tmp_path / "clientso"))
    assert CliRunner().invoke(main, ["exclude", "remove", "."]).exit_code == 0
    assert not exclusions.is_excluded(str(folder))


def test_a_broken_exclusions_file_excludes_everything_and_the_cli_says_why():
    path = exclusions.exclusions_path()
    path.parent.mkdir(parents=True)
    path.write_text("{not json")
    assert exclusions.is_excluded("/any/project")
    result = CliRunner().invoke(main, ["exclude", "list"])
    assert result.exit_code == 1 and "not valid JSON" in result.output and "Traceback" not in result.output
    doctor = CliRunner().invoke(main, ["doctor"])
    assert doctor.exit_code == 1 and "until then every project is excluded" in doctor.output


def test_a_broken_exclusions_file_is_said_at_session_start_and_nothing_is_mined(tmp_path, claude_dir):
    """Every hook did nothing, silently: no block, no mining, no log line; only `miner doctor` knew why."""
    import json
    import subprocess
    import sys

    path = exclusions.exclusions_path()
    path.parent.mkdir(parents=True)
    path.write_text('{"exclude": ["/x",')
    cwd = tmp_path / "work" / "shop"
    cwd.mkdir(parents=True)
    payload = json.dumps({"session_id": "s1", "transcript_path": "", "cwd": str(cwd), "source": "startup",
                          "hook_event_name": "SessionStart"}).encode()
    result = subprocess.run([sys.executable, "-m", "miner.hooks", "session-start"], input=payload,
                            capture_output=True, env=dict(os.environ), timeout=60)
    said = json.loads(result.stdout)["systemMessage"]
    assert result.returncode == 0 and "exclusions.json" in said and "no project is mined or recalled" in said, said
    assert "no project is mined or recalled" in (paths.data_dir() / "logs" / "hooks.log").read_text()
    stop = subprocess.run([sys.executable, "-m", "miner.hooks", "stop"], input=payload, capture_output=True,
                          env=dict(os.environ), timeout=60)
    assert stop.returncode == 0 and stop.stdout == b""
    assert not paths.db_path().exists()


def test_an_excluded_project_is_never_mined(tmp_path, store, pipeline):
    exclusions.add_exclusion("/work/secret")
    hidden = Session(tmp_path / "a.jsonl", cwd="/work/secret/api", session_id="hidden")
    hidden.user("We decided to use MySQL for the billing service.")
    shown = Session(tmp_path / "b.jsonl", cwd="/work/shop", session_id="shown")
    shown.user("We decided to use MySQL for the billing service.")
    mine(store, pipeline, hidden, shown)
    projects = {r[0] for r in store.db.execute("SELECT project FROM memories")}
    assert projects == {"/work/shop"}
    assert store.session("hidden") is None and store.session("shown") is not None
    assert store.watermark(str(hidden.path.resolve())) is not None  # read once, never again
    # Removing the exclusion mines what is said from then on, not the past.
    exclusions.remove_exclusion("/work/secret")
    hidden.user("We decided to use Redis for the session cache.")
    mine(store, pipeline, hidden)
    texts = [r[0] for r in store.db.execute("SELECT text FROM memories WHERE project = '/work/secret/api'")]
    assert texts == ["We decided to use Redis for the session cache."]


def test_a_project_excluded_while_a_batch_is_made_gets_nothing_of_it(tmp_path, store, pipeline, monkeypatch):
    """`miner exclude` (then `purge`) while the watcher mines a big transcript: the batch read before the exclusion
    is written after it, and brought the project's memories and archive back (the purge had found nothing)."""
    from miner.memory.dedup import Deduper

    session = Session(tmp_path / "a.jsonl", cwd="/work/secret/api", session_id="racing")
    session.user("We decided to use MySQL for the billing service.")
    prepare = Deduper.prepare

    def excluded_meanwhile(self, texts):
        exclusions.add_exclusion("/work/secret")  # the user, between the read and the write
        return prepare(self, texts)

    monkeypatch.setattr(Deduper, "prepare", excluded_meanwhile)
    summary = Miner(store, CONFIG, pipeline=pipeline).mine_file(session.path)
    assert store.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    assert store.db.execute("SELECT count(*) FROM archive").fetchone()[0] == 0
    assert store.session("racing") is None and store.watermark(str(session.path.resolve())) is not None
    assert summary.dropped.get("excluded-project") == 1


@pytest.fixture
def linked(tmp_path):
    """(a project folder, the same folder through a symbolic link to its parent)."""
    real = tmp_path / "disk" / "clients" / "acme"
    real.mkdir(parents=True)
    (tmp_path / "clients").symlink_to(tmp_path / "disk" / "clients")
    return real, tmp_path / "clients" / "acme"


@pytest.mark.parametrize("excluded, used", [("link", "real"), ("real", "link"), ("link's parent/*", "real"),
                                            ("real's parent/*", "link")])
def test_a_folder_excluded_by_one_path_is_excluded_by_another_through_a_symbolic_link(linked, excluded, used):
    real, link = linked
    folder = {"real": real, "link": link}
    name, _, pattern = excluded.partition("'s parent")
    glob = str(folder[name].parent) + pattern if pattern else str(folder[name])
    assert not exclusions.is_excluded(str(folder[used]))
    exclusions.add_exclusion(glob)
    assert exclusions.is_excluded(str(folder[used])) and exclusions.is_excluded(str(folder[used] / "api"))
    assert not exclusions.is_excluded(str(real.parent.parent / "other"))


def test_a_session_in_a_folder_excluded_through_a_symbolic_link_is_never_mined(tmp_path, linked, store, pipeline):
    real, link = linked
    exclusions.add_exclusion(str(link))
    hidden = Session(tmp_path / "a.jsonl", cwd=str(real), session_id="hidden")
    hidden.user("We decided to use MySQL for the billing service.")
    mine(store, pipeline, hidden)
    assert store.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == 0
    assert store.session("hidden") is None


def test_purge_by_another_path_to_the_folder_deletes_its_rows(tmp_path, linked, store, pipeline):
    real, link = linked
    for n, cwd in enumerate((real, link)):  # sessions started from either path: stored under both
        session = Session(tmp_path / f"{n}.jsonl", cwd=str(cwd), session_id=f"acme-{n}")
        session.user(f"We decided to use Zanzibarquux for the permission service, step {n}.")
        mine(store, pipeline, session)
    kept = Session(tmp_path / "kept.jsonl", cwd="/work/kept", session_id="kept-1")
    kept.user("We decided to use MySQL for the billing service.")
    mine(store, pipeline, kept)
    assert {r[0] for r in store.db.execute("SELECT project FROM memories")} == {str(real), str(link), "/work/kept"}
    result = CliRunner().invoke(main, ["purge", "--project", str(link)], input="y\n")
    assert result.exit_code == 0, result.output
    assert f"(and {real}, the same folder)?" in result.output
    assert f"purged {link}:" in result.output and f"purged {real}:" in result.output
    assert {r[0] for r in store.db.execute("SELECT project FROM memories")} == {"/work/kept"}
    assert b"zanzibarquux" not in data_bytes().lower()


def test_is_excluded_reads_only_the_standard_library():
    import json
    import subprocess
    import sys

    probe = ("import sys, json; from miner.runtime import exclusions; exclusions.is_excluded('/x'); "
             "print(json.dumps(sorted(sys.modules)))")
    modules = set(json.loads(subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                                            check=True).stdout))
    assert not modules & {"yaml", "click", "spacy", "miner.memory.store", "miner.extract.rules"}


# --- purge ------------------------------------------------------------------------------------


def test_purge_deletes_every_row_of_a_project_and_vacuums(tmp_path, store, pipeline):
    gone = Session(tmp_path / "gone.jsonl", cwd="/work/gone", session_id="gone-1")
    gone.user("We decided to use Zanzibarquux for the permission service.")
    gone.user("TODO: migrate the Zanzibarquux tables before Friday.")
    kept = Session(tmp_path / "kept.jsonl", cwd="/work/kept", session_id="kept-1")
    kept.user("We decided to use MySQL for the billing service.")
    mine(store, pipeline, gone, kept)
    store.put_checkpoint("gone-1", "/work/gone", {"task": ["Zanzibarquux migration"]})
    build(store, "/work/gone", CONFIG)
    before = store.db.execute("SELECT COUNT(*) FROM memories WHERE project = '/work/gone'").fetchone()[0]
    assert before == 2
    gone_id = store.db.execute("SELECT id FROM memories WHERE project = '/work/gone'").fetchone()[0]
    with store.atomic():  # the project had joined a team: its sync state goes too
        store.set_team_state("acme", "/work/gone", {"memories": 12})
        store.set_team_map("acme", [(gone_id, 7, "synced")])
        for session in (gone, kept):  # each ended on a request for a password, which names its transcript
            store.set_secret_asked(str(session.path.resolve()), True)
    result = CliRunner().invoke(main, ["purge", "--project", "/work/gone", "--yes"])
    assert result.exit_code == 0, result.output
    assert "purged /work/gone:" in result.output and "database vacuumed." in result.output
    assert f"{before:>8} memories" in result.output and "evidence" in result.output
    for table in ("memories", "sessions", "checkpoints", "watermarks", "recall_log", "archive", "team_sync"):
        assert store.db.execute(f"SELECT COUNT(*) FROM {table} WHERE project = '/work/gone'").fetchone()[0] == 0
    assert store.team_map("acme") == {}
    assert not store.secret_asked(str(gone.path.resolve())) and store.secret_asked(str(kept.path.resolve()))
    assert store.db.execute("SELECT COUNT(*) FROM archive WHERE project = '/work/kept'").fetchone()[0] == 1
    assert store.search_archive("Zanzibarquux") == [] and len(store.search_archive("MySQL")) == 1
    assert store.db.execute("SELECT COUNT(*) FROM evidence WHERE session_id = 'gone-1'").fetchone()[0] == 0
    assert store.search("Zanzibarquux") == [] and len(store.search("MySQL")) == 1
    assert store.integrity_ok()
    assert b"zanzibarquux" not in data_bytes().lower()
    # The purged transcript is not mined again: not a memory, not a session of the project comes back.
    mine(store, pipeline, gone)
    for table in ("memories", "sessions", "archive"):
        assert store.db.execute(f"SELECT COUNT(*) FROM {table} WHERE project = '/work/gone'").fetchone()[0] == 0
    assert store.db.execute("SELECT COUNT(*) FROM purged_entries").fetchone()[0] == 2


def test_purge_asks_first_without_yes(store):
    result = CliRunner().invoke(main, ["purge", "--project", "/work/gone"], input="n\n")
    assert result.exit_code == 1 and "Aborted" in result.output


# --- hostile transcript paths (the hooks' gate; the hook tests run them as real processes) -------------


def test_safe_transcript_refuses_what_is_not_a_transcript_under_the_claude_folder(tmp_path, claude_dir):
    folder = claude_dir / "projects" / "-work-shop"
    folder.mkdir()
    good = folder / "s.jsonl"
    good.write_text("{}\n")
    assert hooks.safe_transcript(str(good)) == str(good.resolve())
    outside = tmp_path / "outside.jsonl"
    outside.write_text("{}\n")
    (folder / "link.jsonl").symlink_to(outside)
    (folder / "dir.jsonl").mkdir()
    os.mkfifo(folder / "fifo.jsonl")
    (folder / "notes.txt").write_text("x")
    hostile = {
        "traversal": str(folder / ".." / ".." / ".." / "outside.jsonl"),
        "symlink outside": str(folder / "link.jsonl"),
        "directory": str(folder / "dir.jsonl"),
        "fifo": str(folder / "fifo.jsonl"),
        "not jsonl": str(folder / "notes.txt"),
        "outside": str(outside),
        "missing": str(folder / "missing.jsonl"),
        "empty": "",
    }
    for what, path in hostile.items():
        with pytest.raises(hooks.HookInputError):
            hooks.safe_transcript(path)
        assert what  # named for the failure message


def test_the_claude_folder_is_configurable(tmp_path, monkeypatch):
    other = tmp_path / "elsewhere"
    (other / "projects" / "p").mkdir(parents=True)
    transcript = other / "projects" / "p" / "s.jsonl"
    transcript.write_text("{}\n")
    with pytest.raises(hooks.HookInputError):
        hooks.safe_transcript(str(transcript))
    monkeypatch.setenv("CLAUDE_CONFIG_DIR", str(other))
    assert hooks.safe_transcript(str(transcript)) == str(transcript.resolve())


@pytest.mark.parametrize("module", ["memory.privacy", "extract.trust"])
def test_sql_is_parameterised_in_the_privacy_modules(module):
    import importlib
    import inspect
    import re

    source = inspect.getsource(importlib.import_module(f"miner.{module}"))
    # f-strings in SQL only ever interpolate table names from a fixed tuple, never values.
    for line in source.splitlines():
        if re.search(r'f"[^"]*(?:SELECT|DELETE|UPDATE|INSERT)', line):
            assert "{table}" in line or "{where}" in line, line


def test_an_excluded_project_gets_no_block(store):
    from miner.recall import blockcache

    with store.atomic():
        store.add_memory(_memory("/work/secret", "We decided to use MySQL for the billing service."))
    assert "MySQL" in build(store, "/work/secret", CONFIG, log=False).text
    assert blockcache.render(store, "/work/secret", CONFIG, "startup")[0]
    cached = Path(blockcache.startup_path("/work/secret"))
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text("{}")
    assert CliRunner().invoke(main, ["exclude", "add", "/work/secret"]).exit_code == 0
    assert not cached.exists()  # blocks rendered ahead of time are dropped
    for situation in SITUATIONS:
        assert build(store, "/work/secret", CONFIG, situation=situation, log=False).text == ""
    assert blockcache.render(store, "/work/secret", CONFIG, "startup") == ("", None)
    # A question asked explicitly is still answered.
    assert "MySQL" in build(store, "/work/secret", CONFIG, situation="query", query="MySQL", log=False).text


def _memory(project: str, text: str):
    from miner.memory.records import NewMemory

    return NewMemory(project=project, category="decision", text=text, confidence=0.9, rule_id="t", role="user",
                     session_id="s", transcript="/t.jsonl", entry_uuid="u-" + text[:8], ts="2026-03-01T10:00:00.000Z")


def test_session_start_injects_nothing_for_an_excluded_project(tmp_path, claude_dir):
    workdir = tmp_path / "secret-project"
    workdir.mkdir()
    with Store() as store, store.atomic():
        store.add_memory(_memory(str(workdir), "We decided to use MySQL for the billing service."))
    event = hooks.HookEvent("session-start", session_id="s-9", cwd=str(workdir), source="startup")
    assert "MySQL" in hooks.recall_block(event, CONFIG)[0]
    exclusions.add_exclusion(str(workdir))
    assert hooks.recall_block(event, CONFIG) == ("", None)


def test_export_output_holds_no_secret(tmp_path, store, pipeline):
    """`miner export` (miner/memory/portable.py): no secret in what it writes, file 0600."""
    import io

    portable = pytest.importorskip("miner.memory.portable")
    session, secrets, _ = secret_session(tmp_path)
    mine(store, pipeline, session)
    out = io.StringIO()
    portable.export(store, out)
    path = tmp_path / "export.jsonl"
    portable.export_to_file(store, path)
    dumped = out.getvalue() + path.read_text(encoding="utf-8")
    assert "REDACTED" in dumped
    for secret in secrets:
        assert secret not in dumped and secret[-16:] not in dumped
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


def test_a_glob_under_the_home_of_no_such_user_is_refused():
    result = CliRunner().invoke(main, ["exclude", "add", "~no-such-user-here/clients"])
    assert result.exit_code == 1 and "cannot expand '~no-such-user-here': no such user" in result.output
    assert exclusions.load_exclusions() == []


def test_a_private_file_is_written_whole_for_its_owner_alone(tmp_path):
    """`paths.write_private`, which the block cache, the ids shown, the exclusions, the trusted rule files and the
    kept secret kinds and classifier weights are written with."""
    import stat

    from miner import paths

    target = tmp_path / "new" / "file.json"
    paths.write_private(target, "first")
    paths.write_private(str(target), b"second")
    assert target.read_bytes() == b"second" and list(target.parent.iterdir()) == [target]
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and stat.S_IMODE(target.parent.stat().st_mode) == 0o700
    rules_dir = tmp_path / "config"
    rule_file = tmp_path / "repo" / ".claude" / "miner-rules.yaml"
    rule_file.parent.mkdir(parents=True)
    rule_file.write_text("rules: []\n")
    from miner.extract import rules as rules_mod

    rules_mod.trust(rule_file, rules_dir)
    assert stat.S_IMODE((rules_dir / rules_mod.TRUST_FILE).stat().st_mode) == 0o600


def test_a_purge_interrupted_while_compacting_says_its_rows_are_gone_and_how_to_finish(tmp_path, store, pipeline,
                                                                                      monkeypatch):
    """Ctrl-C during the VACUUM, after the deletion was committed, printed "Aborted!", as if nothing had happened."""
    gone = Session(tmp_path / "gone.jsonl", cwd="/work/gone", session_id="gone-1")
    gone.user("We decided to use Zanzibarquux for the permission service.")
    mine(store, pipeline, gone)
    cleared = privacy.clear_block_cache

    def interrupted() -> int:  # the user's Ctrl-C, right after the cached blocks went
        cleared()
        raise KeyboardInterrupt

    monkeypatch.setattr(privacy, "clear_block_cache", interrupted)
    result = CliRunner().invoke(main, ["purge", "--project", "/work/gone", "--yes"])
    assert result.exit_code == 1 and result.output.splitlines() == [
        "Error: interrupted after /work/gone's rows were deleted (that is done), while the database was compacted: "
        "run the same purge again to finish compacting it"], result.output
    assert store.db.execute("SELECT COUNT(*) FROM memories WHERE project = '/work/gone'").fetchone()[0] == 0
    monkeypatch.setattr(privacy, "clear_block_cache", cleared)
    again = CliRunner().invoke(main, ["purge", "--project", "/work/gone", "--yes"])
    assert again.exit_code == 0 and again.output.endswith("database vacuumed.\n"), again.output
    assert b"zanzibarquux" not in data_bytes().lower()


def test_a_purge_while_a_batch_of_the_project_is_made_leaves_nothing_of_it(claude_dir, store, pipeline, monkeypatch):
    """A purge while a miner read the project's transcript for the first time found nothing to delete and said so;
    the miner then wrote the whole batch (15,000 memories of an 18 MB transcript, in the audit)."""
    from miner.memory.dedup import Deduper

    folder = claude_dir / "projects" / paths.encode_project("/work/racing")
    folder.mkdir(parents=True)
    session = Session(folder / "s.jsonl", cwd="/work/racing", session_id="racing")
    session.user("We decided to use Quokkabase for the billing service.")
    prepare = Deduper.prepare

    def purged_meanwhile(self, texts):
        privacy.purge(store, "/work/racing")  # the user, between the read and the write
        return prepare(self, texts)

    monkeypatch.setattr(Deduper, "prepare", purged_meanwhile)
    Miner(store, CONFIG, pipeline=pipeline).mine_file(session.path)
    assert store.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0
    assert store.db.execute("SELECT count(*) FROM archive").fetchone()[0] == 0
    monkeypatch.setattr(Deduper, "prepare", prepare)
    session.user("We decided to use Wombatdb for the report service.")  # said after the purge: mined
    Miner(store, CONFIG, pipeline=pipeline).mine_file(session.path)
    texts = [row[0] for row in store.db.execute("SELECT text FROM memories")]
    assert texts == ["We decided to use Wombatdb for the report service."], texts


@pytest.mark.parametrize("committed", [True, False])
def test_ctrl_c_as_a_purge_commits_says_what_was_done(tmp_path, store, pipeline, monkeypatch, committed):
    """Ctrl-C that came as the deletion committed printed "Aborted!" with the rows gone; before it, nothing changed
    (and "Aborted!" is right)."""
    gone = Session(tmp_path / "gone.jsonl", cwd="/work/gone", session_id="gone-1")
    gone.user("We decided to use Zanzibarquux for the permission service.")
    mine(store, pipeline, gone)
    delete = privacy._delete

    def interrupt(*args):
        raise KeyboardInterrupt

    if committed:  # the deletion done, the interrupt on its way out
        monkeypatch.setattr(privacy, "_delete", lambda *args: (delete(*args), interrupt()))
    else:  # the interrupt inside the transaction: it rolls back
        monkeypatch.setattr(Store, "forget_term_counts", interrupt)
    result = CliRunner().invoke(main, ["purge", "--project", "/work/gone", "--yes"])
    left = store.db.execute("SELECT COUNT(*) FROM memories WHERE project = '/work/gone'").fetchone()[0]
    if committed:
        assert result.exit_code == 1 and "run the same purge again" in result.output and left == 0, result.output
    else:
        assert result.exit_code == 1 and "Aborted" in result.output and left == 1, result.output


def test_a_purge_leaves_no_version_row_naming_the_project_and_says_when_nothing_was_stored(tmp_path, store, pipeline):
    gone = Session(tmp_path / "gone.jsonl", cwd="/work/gone", session_id="gone-1")
    gone.user("We decided to use Zanzibarquux for the permission service.")
    mine(store, pipeline, gone)
    assert CliRunner().invoke(main, ["purge", "--project", "/work/gone", "--yes"]).exit_code == 0
    assert store.db.execute("SELECT COUNT(*) FROM block_versions WHERE scope LIKE '%/work/gone%'").fetchone()[0] == 0
    assert b"/work/gone" not in data_bytes()
    typo = CliRunner().invoke(main, ["purge", "--project", "/work/goen", "--yes"])
    assert typo.exit_code == 0 and "nothing was stored for /work/goen" in typo.output, typo.output
    assert "vacuumed" not in typo.output  # (a typo compacted the whole store: minutes, for a big one)


def test_a_purge_marks_only_its_own_sessions_entries_in_a_folder_another_project_shares(claude_dir, store, pipeline):
    """/work/my-app and /work/my_app are kept in one Claude Code folder: a purge of the first marked the second's
    entries purged too, so its transcript was never mined (and an import dropped what it had)."""
    folder = claude_dir / "projects" / paths.encode_project("/work/my-app")
    folder.mkdir(parents=True)
    assert paths.encode_project("/work/my_app") == folder.name
    gone = Session(folder / "a.jsonl", cwd="/work/my-app", session_id="gone")
    gone.user("We decided to use Quokkabase for the billing service.")
    kept = Session(folder / "b.jsonl", cwd="/work/my_app", session_id="kept")
    kept.user("We decided to use Redis for the session cache.")
    mine(store, pipeline, gone)
    privacy.purge(store, "/work/my-app")
    mine(store, pipeline, kept)
    texts = [row[0] for row in store.db.execute("SELECT text FROM memories WHERE project = '/work/my_app'")]
    assert texts == ["We decided to use Redis for the session cache."], texts


def test_a_purge_marks_the_sessions_started_in_a_folder_inside_the_project(tmp_path, claude_dir, store, pipeline):
    """A session started in a subfolder of the repository is kept in a Claude Code folder of its own: a purge looked
    only in the project's, and a miner's batch of that session made before it was written after it."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "api").mkdir()
    folder = claude_dir / "projects" / paths.encode_project(str(root / "api"))
    folder.mkdir(parents=True)
    session = Session(folder / "s.jsonl", cwd=str(root / "api"), session_id="inside")
    session.user("We decided to use Quokkabase for the billing service.")
    privacy.purge(store, str(root))  # before anything of it was mined
    mine(store, pipeline, session)
    assert store.db.execute("SELECT count(*) FROM memories").fetchone()[0] == 0


def test_what_was_said_in_an_excluded_folder_below_a_projects_root_is_never_stored(tmp_path, store, pipeline):
    """`miner exclude add` of a folder inside a git repository: the hooks left a session there alone, but the miner
    checked the session's project (the repository's root), and stored, archived and recalled its words; a session
    that went into the folder and came back had its words there archived under the root."""
    from miner.recall.checkpoint import write_checkpoint

    root = tmp_path / "monorepo"
    (root / ".git").mkdir(parents=True)
    (root / "clients" / "acme").mkdir(parents=True)
    exclusions.add_exclusion(str(root / "clients" / "acme"))
    inside = Session(tmp_path / "t" / "inside.jsonl", cwd=str(root / "clients" / "acme"), session_id="inside-1")
    inside.user("We decided that the quokkapelican client gets the legacy discount.")
    moving = Session(tmp_path / "t" / "moving.jsonl", cwd=str(root), session_id="moving-1")
    moving.user("We decided to keep the build on Bazel for the monorepo.")
    moving.cwd = str(root / "clients" / "acme")
    moving.user("We decided the wombatheron invoices go out on Mondays.")
    moving.cwd = str(root)
    moving.user("Let's add a lint step to the monorepo build.")
    mine(store, pipeline, inside, moving)
    write_checkpoint(store, "moving-1", str(root), str(moving.path))
    said = "\n".join(row[0] for row in store.db.execute(
        "SELECT text FROM memories UNION ALL SELECT text FROM archive UNION ALL SELECT body FROM checkpoints"))
    assert "Bazel" in said and "lint step" in said
    assert "quokkapelican" not in said and "wombatheron" not in said, said
    assert "wombatheron" not in all_recall_text(store, str(root))


def test_a_purged_projects_session_that_goes_on_never_brings_its_purged_words_back(tmp_path, store, pipeline):
    """The transcript of a session still open holds what was purged: its next checkpoint (PreCompact, SessionEnd)
    was built from the transcript's tail, purged turns and all, and the block after the compaction showed them."""
    from miner.recall.checkpoint import write_checkpoint

    session = Session(tmp_path / "open.jsonl", cwd="/work/gone", session_id="open-1")
    session.user("We decided to rename the service to quixoticmarmot.")
    mine(store, pipeline, session)
    assert CliRunner().invoke(main, ["purge", "--project", "/work/gone", "--yes"]).exit_code == 0
    session.user("Let's add retries to the upload client.")  # the session goes on
    mine(store, pipeline, session)
    body = write_checkpoint(store, "open-1", "/work/gone", str(session.path))
    assert body["task"] == ["Let's add retries to the upload client."], body
    assert "quixoticmarmot" not in str(body)
    block = build(store, "/work/gone", CONFIG, situation="compact", session_id="open-1", log=False).text
    assert "retries to the upload client" in block and "quixoticmarmot" not in block
