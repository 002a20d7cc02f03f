"""Secrets in plain prose never reach storage, caches, logs, exports or a new session's block.

A session in which the user types passwords and keys the way people do, and the assistant echoes them,
runs through the real hooks (separate processes, payloads on stdin); then every file under $MINER_HOME
(the database, its WAL, the block caches, the logs) and every output (SessionStart's block, `miner recall`,
`search`, `list`, `export`) is searched for each secret, case-insensitively, since keywords are lower-cased.
Every secret here is generated at random: none is real.
"""

from __future__ import annotations

import json
import os
import random
import re
import string
import subprocess
import sys
from pathlib import Path

import pytest
from test_hooks import Session, additional_context, run_hook, wait_for_workers

from miner import paths
from miner.extract.secret_turns import digest
from miner.memory.store import Store


def generated(rng: random.Random, n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(rng.choice(alphabet) for _ in range(n))


def secrets_for(seed: int) -> dict[str, str]:
    rng = random.Random(seed)
    return {
        "sudo": generated(rng, 7) + "#" + generated(rng, 4),
        "initial": generated(rng, 5) + "!" + generated(rng, 6),
        "admin": generated(rng, 10) + "7",
        "listed": generated(rng, 9) + "%2",
        "chinese": generated(rng, 12) + "8",
        "aws_id": "AKIA" + generated(rng, 16, string.ascii_uppercase + string.digits),
        "aws_secret": generated(rng, 18) + "/" + generated(rng, 21),
        "env": "blue" + generated(rng, 6, string.ascii_lowercase),
        "cloudflare": generated(rng, 32) + "5",
        "full_width": generated(rng, 9) + "!3",
        "table": generated(rng, 10) + "#7",
    }


def run_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "miner", *args], capture_output=True, env=dict(os.environ),
                          timeout=120)


def stop_after_each(session: Session, steps: list[tuple[str, str]]) -> None:
    """Each (request, reply) said in turn, and the Stop hook run after each, its worker waited for."""
    for request, reply in steps:
        session.turn(request, reply)
        assert run_hook("stop", session.payload("stop.json")).returncode == 0
        wait_for_workers()


@pytest.fixture(autouse=True)
def no_stray_workers():
    yield
    wait_for_workers()


def test_secrets_typed_and_echoed_leave_no_byte_anywhere(tmp_path, claude_dir):
    cwd = tmp_path / "work" / "infra"
    cwd.mkdir(parents=True)
    s = secrets_for(17)
    session = Session(cwd)
    session.turn(f"We'll deploy the staging box with NixOS; my sudo password is {s['sudo']}.",
                 f"Your password `{s['sudo']}` is in `users/alice/user.nix`, next to the SSH keys.")
    session.turn(f"Use {s['initial']} as the initial password for now, and we always log in as root.",
                 "The initial password goes into the deploy script; root login stays enabled for now.")
    session.turn(f"For the admin panel we'll use the default account: login with admin / {s['admin']} until SSO.",
                 "We'll keep the admin account until SSO lands.")
    session.turn(f"Here are the test account passwords:\n1. {s['listed']}\n2. {s['initial']}\n"
                 "We'll rotate them every month.", "Noted: the test passwords rotate monthly.")
    session.turn(f"数据库密码是 {s['chinese']}，我们以后都用 PostgreSQL 做主库。",
                 "好的，主库改用 PostgreSQL。")
    session.turn(f"The AWS key {s['aws_id']} and secret {s['aws_secret']} belong to the deploy user; "
                 "we deploy with that user from now on.",
                 f"We keep STAGING_DATABASE_PASSWORD={s['env']} and CLOUDFLARE_API_TOKEN={s['cloudflare']} in "
                 "the `.env` file, which the deploy script reads.")
    session.turn(f"邮件服务配好了，MAIL_PASSWORD＝{s['full_width']}，以后都走这个 SMTP。",
                 f"| Variable | Value |\n|---|---|\n| MAIL_PASSWORD | {s['full_width']} |\n"
                 f"| REPORTS_DB_PASSWORD | {s['table']} |\n\nWe keep both in the `.env` file from now on.")
    for _ in range(2):
        assert run_hook("stop", session.payload("stop.json")).returncode == 0
        wait_for_workers()
    assert run_hook("pre-compact", session.payload("pre-compact.auto.json")).returncode == 0
    assert run_hook("session-end", session.payload("session-end.json")).returncode == 0
    wait_for_workers()

    # Mining happened: the statements around the secrets are stored, with the secrets hidden.
    with Store(readonly=True) as store:
        texts = [m.text for m in store.list_memories(limit=1000)]
    assert any("[REDACTED:" in t for t in texts), texts
    assert any("PostgreSQL" in t for t in texts), texts

    outputs = []
    new_session = Session(cwd)
    block = additional_context(run_hook("session-start", new_session.payload("session-start.startup.json")))
    assert "PostgreSQL" in block or "deploy" in block, block
    outputs.append(block)
    wait_for_workers()
    for args in (("recall", "--project", str(cwd)), ("recall", "password", "--project", str(cwd)),
                 ("search", "password"), ("search", "deploy", "--all"), ("list", "--project", str(cwd)),
                 ("export",)):
        result = run_cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        outputs.append(result.stdout.decode("utf-8"))
    files = [p for p in Path(os.environ["MINER_HOME"]).rglob("*") if p.is_file() and "venv" not in p.parts]
    assert any(p.name == "memory.db" for p in files)
    contents = {str(p): p.read_bytes().lower() for p in files}
    for name, secret in s.items():
        needle = secret.lower()
        for i, out in enumerate(outputs):
            assert needle not in out.lower(), (name, i)
        for path, data in contents.items():
            assert needle.encode("utf-8") not in data, (name, path)


def test_a_secret_used_bare_in_a_later_stop_or_given_on_request_leaves_no_byte_anywhere(tmp_path, claude_dir):
    """Each Stop's miner mines only the lines added since the last, in a process of its own: a password named
    in one prompt and used bare three Stops later, and a value the user gives when the assistant asks for one
    (question and answer mined by different processes), are hidden everywhere all the same."""
    cwd = tmp_path / "work" / "billing"
    cwd.mkdir(parents=True)
    rng = random.Random(23)
    named, given = generated(rng, 8) + "!" + generated(rng, 3), generated(rng, 6) + "#" + generated(rng, 5)
    session = Session(cwd)
    steps = [(f"Connect to staging; the staging db password is {named} and the user is app.",
              "Connected to the staging database. Which password should I set for the new admin account?"),
             (given, "Done: the admin account exists now, and we'll use PostgreSQL for the reports too."),
             ("Add an export of the invoices to CSV, one row per line item.", "Added the CSV export."),
             (f"now try {named} against the prod database as well", "Prod accepted it.")]
    stop_after_each(session, steps)
    assert run_hook("pre-compact", session.payload("pre-compact.manual.json")).returncode == 0
    wait_for_workers()
    with Store(readonly=True) as store:
        salt, digests = store.secret_digests()
    assert salt and len(digests) >= 2  # what the processes learnt was kept, as digests
    session.compaction("This session is being continued from a previous conversation.")
    block = additional_context(run_hook("session-start", session.payload("session-start.compact.json")))
    assert "the staging db password is [REDACTED:password]" in block  # the session's latest words are there
    assert "now try [REDACTED:known-secret] against the prod database" in block
    outputs = [block]
    for args in (("search", "prod", "--all"), ("recall", "prod database", "--project", str(cwd)), ("export",)):
        result = run_cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        outputs.append(result.stdout.decode("utf-8"))
    assert "[REDACTED:known-secret] against the prod database" in outputs[1]  # the archive holds the later prompt
    files = [p for p in Path(os.environ["MINER_HOME"]).rglob("*") if p.is_file()]
    for secret in (named, given):
        assert not any(secret.lower() in out.lower() for out in outputs), secret
        for path in files:
            assert secret.lower().encode("utf-8") not in path.read_bytes().lower(), (secret, path)


def test_doctor_fix_repairs_a_store_mined_before_redaction_knew_the_shape(tmp_path):
    """Rows written raw (as an older version stored them) are found by `doctor` and cleaned by `doctor --fix`:
    text, subject, value, keywords, evidence, earlier wordings, supersede notes, checkpoints, recall log,
    the FTS index and the block caches; nothing of the secret is left in the database file afterwards."""
    from miner.memory.records import NewMemory

    secret = "Wq4!" + generated(random.Random(5), 10)
    text = f"The staging password is {secret} and we deploy with it from now on."
    with Store() as store:
        with store.atomic() as db:
            memory_id, _ = store.add_memory(NewMemory(
                project="/p", category="fact", text=text, confidence=0.8, rule_id="r", role="user",
                session_id="s1", transcript="/t.jsonl", entry_uuid="u1", ts="2025-01-01T00:00:00Z",
                subject="staging password", value=secret, keywords=("staging", secret.lower(), "deploy")))
            db.execute("UPDATE memory_hashes SET text = ? WHERE memory_id = ?", (text, memory_id))
            db.execute("INSERT INTO links (src, dst, kind, reason, created_at, was) VALUES (?, ?, 'supersedes', '', "
                       "'2025-01-01', ?)", (memory_id, memory_id, text))
            db.execute("INSERT INTO recall_log (created_at, project, situation, query) VALUES ('2025', '/p', 'x', ?)",
                       (f"why {secret}",))
        store.put_checkpoint("s1", "/p", {"task": [f"remember {secret}"], "decisions": [memory_id]})
    from miner.recall.blockcache import cache_dir

    cache = cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "startup-x.json").write_text(json.dumps({"text": text}))
    logs = paths.logs_dir()
    logs.mkdir(parents=True, exist_ok=True)
    (logs / "worker.log").write_text(f"mined: {text}\n")

    found = run_cli("doctor")
    assert found.returncode == 1
    assert b"secret" in found.stdout.lower() and b"doctor --fix" in found.stdout
    fixed = run_cli("doctor", "--fix")
    assert fixed.returncode in (0, 1), fixed.stderr
    assert b"redacted" in fixed.stdout.lower()
    again = run_cli("doctor")
    assert b"stored secrets" not in again.stdout.lower() or b"no stored secret" in again.stdout.lower(), \
        again.stdout.decode()

    needle = secret.lower().encode()
    for path in Path(os.environ["MINER_HOME"]).rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes().lower(), path
    with Store(readonly=True) as store:
        memory = store.get(memory_id)
        assert "[REDACTED:" in memory.text and secret not in memory.value and secret.lower() not in memory.keywords
        hits = store.db.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?",
                                ('"' + secret.lower().strip("!") + '"',)).fetchall()
        assert hits == []
        salt, digests = store.secret_digests()
    assert digest(salt, secret) in digests  # what mining learns next hides a bare repeat of it too


def test_doctor_fix_hides_what_an_older_version_kept_bare_where_only_the_conversation_named_it(tmp_path, claude_dir):
    """An older miner hid "the admin password is X" where it was said, but kept X bare in a later session's decision,
    and kept bare a password given in reply to the assistant's question for it; the repair read only the stored
    rows, where nothing named them any more, and left both in clear after the upgrade."""
    from miner.memory import repair
    from miner.memory.records import NewMemory

    cwd = tmp_path / "work" / "app"
    cwd.mkdir(parents=True)
    first, second = Session(cwd), Session(cwd)
    first.turn("For the record, the admin password is Sw0rdfish77 on the staging box.", "Noted.")
    first.turn("What's next?", "What's the root password for the gateway box?")
    first.user("Use Kp9xW2mQ7vLt for the gateway box, and restart nginx.")
    second.user("We decided that Sw0rdfish77 also unlocks the encrypted backup archive.")
    bare = ("We decided that Sw0rdfish77 also unlocks the encrypted backup archive.",
            "Use Kp9xW2mQ7vLt for the gateway box, and restart nginx.")
    with Store() as store:  # what the older miner stored
        with store.atomic() as db:
            for n, (text, session) in enumerate(zip(bare, (second, first))):
                store.add_memory(NewMemory(project=str(cwd), category="decision", text=text, confidence=0.8,
                                           rule_id="r", role="user", session_id=session.session_id,
                                           transcript=str(session.transcript), entry_uuid=f"u{n}",
                                           ts="2025-01-01T00:00:00Z"))
            for session in (first, second):
                store.set_watermark(str(session.transcript), session.transcript.stat().st_size,
                                    session.transcript.stat().st_ino, "", str(cwd))
            db.execute("DELETE FROM counters WHERE name = ?", (repair.VERSION_COUNTER,))  # repaired by none since
    found = run_cli("doctor")  # (it reads no transcript: it says the store awaits the repair that reads them)
    assert b"cleaned by an older redaction" in found.stdout and b"doctor --fix" in found.stdout, found.stdout
    assert run_cli("doctor", "--fix").returncode in (0, 1)
    assert b"cleaned by an older redaction" not in run_cli("doctor").stdout
    with Store(readonly=True) as store:
        texts = [m.text for m in store.list_memories(limit=10)]
    assert not any("Sw0rdfish77" in t or "Kp9xW2mQ7vLt" in t for t in texts), texts
    assert any("also unlocks the encrypted backup archive" in t for t in texts)  # the rest of the words stay


def test_the_repairs_reading_of_the_transcripts_skips_an_excluded_projects_and_comes_once(tmp_path, claude_dir,
                                                                                             monkeypatch):
    """The repair read every transcript with a watermark, those of excluded projects too (mining records a watermark
    for them and reads nothing of them), and learnt their secrets; and it read them all at every `doctor --fix`."""
    from miner.memory import repair
    from miner.runtime.exclusions import add_exclusion

    cwd = tmp_path / "work" / "secret-project"
    cwd.mkdir(parents=True)
    session = Session(cwd)
    session.user("For the record, the staging db password is Qz8vLm3xTr21 on that box.")
    add_exclusion(str(cwd))
    app = tmp_path / "work" / "app"  # and an excluded folder inside a repository, whose root is not excluded
    (app / ".git").mkdir(parents=True)
    (app / "vault").mkdir()
    inside = Session(app / "vault")
    inside.user("For the record, the vault's unseal key is Wv7pLm2xKq94 on that box.")
    add_exclusion(str(app / "vault"))
    with Store() as store:
        with store.atomic() as db:
            for each, project in ((session, cwd), (inside, app)):
                store.set_watermark(str(each.transcript), each.transcript.stat().st_size,
                                    each.transcript.stat().st_ino, "", str(project))
            db.execute("DELETE FROM counters WHERE name = ?", (repair.VERSION_COUNTER,))
        assert repair._learnt_from_transcripts(store) == set()
        repair.fix(store)
        assert store.secret_digests()[1] == frozenset()  # nothing of it learnt
        reads = []
        real = repair._learnt_from_transcripts
        monkeypatch.setattr(repair, "_learnt_from_transcripts", lambda s: reads.append(1) or real(s))
        repair.fix(store)  # repaired by this version already: the transcripts are not read again
        assert reads == []


def test_doctor_finds_and_fixes_a_secret_of_a_kind_the_yaml_files_add(tmp_path):
    """The shipped secrets.yaml's kinds (an npm token) were loaded only by the miner: doctor neither counted nor
    fixed them."""
    from miner.memory.records import NewMemory

    token = "npm_" + generated(random.Random(11), 36)
    with Store() as store, store.atomic():
        store.add_memory(NewMemory(
            project="/p", category="fact", text=f"The CI publish step logs in to the registry with {token} today.",
            confidence=0.8, rule_id="r", role="user", session_id="s1", transcript="/t.jsonl", entry_uuid="u1",
            ts="2025-01-01T00:00:00Z"))
    found = run_cli("doctor")
    assert re.search(rb"stored secrets that redaction now hides: .*\b1 memories\b", found.stdout), found.stdout
    assert run_cli("doctor", "--fix").returncode in (0, 1)
    with Store(readonly=True) as store:
        texts = [row[0] for row in store.db.execute("SELECT text FROM memories")]
    assert texts and all(token not in text and "[REDACTED:npm-token]" in text for text in texts)


def test_the_first_worker_after_an_upgrade_repairs_the_store(tmp_path, claude_dir):
    """A plugin update runs no installer: the next background miner applies the repair once."""
    from miner.extract.redaction_version import REDACTION_VERSION
    from miner.memory import repair
    from miner.memory.records import NewMemory

    secret = "Pz7#" + generated(random.Random(9), 10)
    with Store() as store, store.atomic() as db:  # as an older version left it: raw, no repair recorded
        store.add_memory(NewMemory(
            project="/old", category="fact", text=f"The wifi password is {secret} for the office network.",
            confidence=0.8, rule_id="r", role="user", session_id="s0", transcript="/t.jsonl", entry_uuid="u0",
            ts="2025-01-01T00:00:00Z"))
        db.execute("DELETE FROM counters WHERE name = ?", (repair.VERSION_COUNTER,))
    cwd = tmp_path / "work" / "app"
    cwd.mkdir(parents=True)
    session = Session(cwd)
    session.turn("We'll use pnpm as the package manager from now on.", "Noted: pnpm from now on.")
    assert run_hook("stop", session.payload("stop.json")).returncode == 0
    wait_for_workers()
    with Store(readonly=True) as store:
        texts = [m.text for m in store.list_memories(limit=100)]
        assert store.counters()[repair.VERSION_COUNTER] == REDACTION_VERSION
    assert not any(secret in t for t in texts) and any("[REDACTED:" in t for t in texts), texts
    assert secret.lower().encode() not in (Path(os.environ["MINER_HOME"]) / "memory.db").read_bytes().lower()


def two_memories_equal_once_redacted(seed: int) -> list[int]:
    """Two memories an older version stored raw, which differ only in the password; their ids."""
    from miner.memory.records import NewMemory

    rng = random.Random(seed)
    ids = []
    with Store() as store, store.atomic():
        for n in range(2):
            secret = "Kv3#" + generated(rng, 10)
            ids.append(store.add_memory(NewMemory(
                project="/old", category="preference", confidence=0.8, rule_id="r", role="user", session_id="s0",
                text=f"Always unlock the signing keychain with password {secret} before a release build.",
                transcript="/t.jsonl", entry_uuid=f"u{n}", ts="2025-01-01T00:00:00Z"))[0])
    return ids


@pytest.mark.parametrize("first_state", ["active", "forgotten"])
def test_two_memories_equal_once_redacted_keep_the_pinned_one(tmp_path, first_state):
    """An older version stored two sentences that differ only in the password; redacted they are equal and one goes.
    The one the user pinned stays, pinned and active (not the first one found, forgotten or not)."""
    from miner.memory import repair

    ids = two_memories_equal_once_redacted(21)
    with Store() as store:
        with store.atomic():
            store.set_pinned(ids[1], True)
            if first_state == "forgotten":
                store.set_state(ids[0], "forgotten", "the one with my password")
        repair.fix(store)
        memories = store.list_memories(limit=10, states=())
    assert [(m.id, m.pinned, m.state) for m in memories] == [(ids[1], True, "active")]
    assert "[REDACTED:" in memories[0].text


def test_the_hooks_print_no_secret_an_older_version_stored_before_the_repair_has_run(tmp_path):
    """After a plugin update, the first SessionStart rendered its block, and every prompt its recall, from rows an
    older redaction let through, until a background miner had repaired the store: both now redact what they print
    while the repair is pending."""
    from miner.memory import repair
    from miner.memory.records import NewMemory

    secret = "Hq8#" + generated(random.Random(31), 10)
    cwd = tmp_path / "work" / "app"
    cwd.mkdir(parents=True)
    project = str(cwd)
    with Store() as store, store.atomic() as db:  # as an older version left it: raw, no repair recorded
        store.add_memory(NewMemory(
            project=project, category="fact", text=f"The staging keychain password is {secret} for release builds.",
            confidence=0.9, rule_id="r", role="user", session_id="s0", transcript="/t.jsonl", entry_uuid="u0",
            ts="2025-01-01T00:00:00Z", keywords=("staging", "keychain", "password", "release", "builds")))
        db.execute("DELETE FROM counters WHERE name = ?", (repair.VERSION_COUNTER,))
    session = Session(cwd)
    block = additional_context(run_hook("session-start", session.payload("session-start.startup.json")))
    prompt = json.dumps({"session_id": "s9", "transcript_path": str(session.transcript), "cwd": project,
                         "hook_event_name": "UserPromptSubmit", "prompt": "what is the staging keychain password?"})
    done = run_hook("user-prompt-submit", prompt.encode())
    assert done.returncode == 0, done.stderr
    recalled = json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]
    for printed in (block, recalled):
        assert "staging keychain password is [REDACTED:" in printed and secret not in printed, printed


def old_store_with_a_secret(seed: int, project: str) -> tuple[str, int]:
    """A store as an older version left it: a memory holding a password raw, no repair recorded; (secret, id)."""
    from miner.memory import repair
    from miner.memory.records import NewMemory

    secret = "Hq8#" + generated(random.Random(seed), 10)
    with Store() as store, store.atomic() as db:
        memory_id, _ = store.add_memory(NewMemory(
            project=project, category="fact", text=f"The staging keychain password is {secret} for release builds.",
            confidence=0.9, rule_id="r", role="user", session_id="s0", transcript="/t.jsonl", entry_uuid="u0",
            ts="2025-01-01T00:00:00Z", keywords=("staging", "keychain", "password", "release", "builds")))
        db.execute("DELETE FROM counters WHERE name = ?", (repair.VERSION_COUNTER,))
    return secret, memory_id


def test_the_commands_print_no_secret_an_older_version_stored_before_the_repair_has_run(tmp_path):
    """The hooks redacted on the way out while the repair of an upgrade was pending; `recall`, `list`, `show`,
    `search`, `history` and `pin` printed the password in clear until it had run. (`export` redacts its records.)"""
    project = str(tmp_path / "app")
    secret, memory_id = old_store_with_a_secret(33, project)
    for args in (("recall", "--project", project), ("list",), ("show", str(memory_id)), ("search", "keychain"),
                 ("history", str(memory_id)), ("pin", str(memory_id)), ("export",)):
        result = run_cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        out = result.stdout.decode("utf-8")
        assert "[REDACTED:" in out and secret not in out, (args, out)


def test_hand_edits_never_keep_a_secret(tmp_path):
    """The memory tools (MCP store with keywords, correct, forget with a reason) go through redaction too."""
    from miner import config
    from miner.mcp import tools as mcp_tools
    from miner.memory import corrections

    secret = "Qz9!" + generated(random.Random(3), 9)
    session = mcp_tools.Session(project=str(tmp_path), config=config.load())
    stored = mcp_tools.store_memory(session, f"The staging deploy password is {secret} for the bastion host.",
                                    "fact", keywords=["staging", secret, "bastion"])
    with Store() as store:
        corrections.forget(store, stored["id"], reason=f"rotated: the password is now {secret}x")
        other = mcp_tools.store_memory(session, "We deploy the billing service with Kamal from now on.", "decision")
        corrections.correct(store, other["id"], f"We deploy billing with Kamal; its registry password is {secret}.")
    needle = secret.lower().encode()
    for path in Path(os.environ["MINER_HOME"]).rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes().lower(), path
    with Store(readonly=True) as store:
        memory = store.get(stored["id"])
        assert "[REDACTED:" in memory.text and "staging" in memory.keywords and secret.lower() not in memory.keywords


def test_private_text_nested_or_never_closed_leaves_no_byte_anywhere(tmp_path, claude_dir):
    """`<private>` holds everything up to its own closing tag: one nested inside it does not end it, and one
    never closed holds the rest of the turn. What it holds is nowhere after the hooks ran, the words around it are
    mined."""
    cwd = tmp_path / "work" / "ledger"
    cwd.mkdir(parents=True)
    hidden = ("quokkamarmalade", "wombatcustard", "numbatbrioche")
    session = Session(cwd)
    session.turn(f"<private>first note <private>second note</private> the vault code is {hidden[0]}</private> "
                 "We'll keep the ledger export nightly.", "Noted: the ledger export stays nightly.")
    session.turn(f"We decided to bill in euros. <PRIVATE note>my manager is {hidden[1]} <private>x</private> "
                 f"and he signs off on {hidden[2]}", "Billing is in euros from now on.")
    assert run_hook("stop", session.payload("stop.json")).returncode == 0
    wait_for_workers()
    assert run_hook("pre-compact", session.payload("pre-compact.manual.json")).returncode == 0
    wait_for_workers()
    session.compaction("This session is being continued from a previous conversation.")
    outputs = [additional_context(run_hook("session-start", session.payload("session-start.compact.json"))),
               additional_context(run_hook("session-start", Session(cwd).payload("session-start.startup.json")))]
    wait_for_workers()
    assert "ledger export" in outputs[0] and "euros" in outputs[0], outputs[0]
    for args in (("search", "ledger", "--all"), ("search", "euros", "--all"), ("export",)):
        result = run_cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        outputs.append(result.stdout.decode("utf-8"))
    assert "ledger export" in outputs[2] and "euros" in outputs[3], outputs[2:4]
    files = [p for p in Path(os.environ["MINER_HOME"]).rglob("*") if p.is_file()]
    for word in hidden:
        assert not any(word in out for out in outputs), word
        for path in files:
            assert word.encode("utf-8") not in path.read_bytes(), (word, path)


def test_what_the_hooks_redact_before_the_repair_includes_the_kinds_of_the_secrets_file(tmp_path):
    """The hooks redacted on the way out with the built-in kinds only: a Hugging Face or SendGrid token (kinds of
    rules/secrets.yaml, the version 9 repair) stored by an older version was printed at every SessionStart."""
    from miner.memory import repair
    from miner.memory.records import NewMemory

    token = "hf_" + generated(random.Random(41), 34)
    # A miner ran since the upgrade and kept the kinds it loaded for the hooks, as every miner does.
    subprocess.run([sys.executable, "-c", "from miner.extract import redact; redact.load_extra()"], check=True,
                   env=dict(os.environ), timeout=120)
    cwd = tmp_path / "work" / "app"
    cwd.mkdir(parents=True)
    with Store() as store, store.atomic() as db:
        store.add_memory(NewMemory(
            project=str(cwd), category="fact", text=f"The model downloads in CI use the read token {token} today.",
            confidence=0.9, rule_id="r", role="user", session_id="s0", transcript="/t.jsonl", entry_uuid="u0",
            ts="2025-01-01T00:00:00Z"))
        db.execute("DELETE FROM counters WHERE name = ?", (repair.VERSION_COUNTER,))
    block = additional_context(run_hook("session-start", Session(cwd).payload("session-start.startup.json")))
    assert "[REDACTED:huggingface-token]" in block and token not in block, block


def test_two_unpinned_memories_equal_once_redacted_keep_the_active_one():
    """Without a pin, the active memory stays over a forgotten one met first: the repair kept whichever it met first,
    and a rule the user still keeps was buried as forgotten."""
    from miner.memory import repair

    ids = two_memories_equal_once_redacted(22)
    with Store() as store:
        with store.atomic():
            store.set_state(ids[0], "forgotten", "an old wording")
        repair.fix(store)
        memories = store.list_memories(limit=10, states=())
    assert [(m.id, m.state) for m in memories] == [(ids[1], "active")]


def test_a_value_stored_before_it_was_known_as_a_secret_leaves_no_byte_anywhere(tmp_path, claude_dir):
    """A value said in passing is stored as any other word ("the consumer group is named X"); a later Stop's prompt
    says it is a password. Everything stored from before that holds it is redacted then, and nothing shows it again:
    not the next session's block, the files, `recall`, `export`, nor a team's server (`team.sync`)."""
    from miner.memory.store import Store
    from miner.team.sync import _secret_free

    cwd = tmp_path / "work" / "ledger"
    cwd.mkdir(parents=True)
    value = generated(random.Random(41), 14) + "7"
    session = Session(cwd)
    steps = [(f"We decided the billing consumer group is named {value} for the invoice events.",
              f"Noted: the consumer group {value} handles the invoice events."),
             ("Add a retry with backoff to the invoice worker.", "Added the retry."),
             (f"by the way the staging db password is {value}, the same string", "Understood.")]
    stop_after_each(session, steps)
    with Store(readonly=True) as store:
        assert store.list_memories(limit=100), "nothing was mined"
        assert all(_secret_free(m, store.secret_digests()) for m in store.list_memories(limit=100, states=()))
    session2 = Session(cwd)
    block = additional_context(run_hook("session-start", session2.payload("session-start.startup.json")))
    assert "[REDACTED:" in block and "consumer group" in block, block
    outputs = [block]
    for args in (("search", "consumer", "--all"), ("recall", "consumer group", "--project", str(cwd)), ("export",)):
        result = run_cli(*args)
        assert result.returncode == 0, (args, result.stderr)
        outputs.append(result.stdout.decode("utf-8"))
    assert not any(value.lower() in out.lower() for out in outputs)
    for path in (p for p in Path(os.environ["MINER_HOME"]).rglob("*") if p.is_file()):
        assert value.lower().encode("utf-8") not in path.read_bytes().lower(), path


def learnt_later(seed: int) -> tuple[str, int]:
    """A value an older version stored bare in a memory and a checkpoint, which the store has since learnt is a
    secret (its digest only, as mining keeps it); the value and the memory's id."""
    from miner.memory.records import NewMemory

    value = generated(random.Random(seed), 13) + "4"
    with Store() as store:
        with store.atomic():
            memory_id, _ = store.add_memory(NewMemory(
                project="/p", category="decision", text=f"We decided the consumer group is named {value} for now.",
                confidence=0.8, rule_id="r", role="user", session_id="s1", transcript="/t.jsonl", entry_uuid="u1",
                ts="2025-01-01T00:00:00Z"))
            store.add_secret_digests({digest(store.secret_digests()[0], value)}, 100)
        store.put_checkpoint("s1", "/p", {"task": [f"rename {value} next"], "decisions": [memory_id]})
    return value, memory_id


def test_doctor_fix_hides_what_the_store_learnt_is_a_secret_after_it_was_stored(tmp_path):
    """An older version stored the value before a later text taught that it was a password: `doctor` counts it,
    `doctor --fix` hides it, by its digest, everywhere in the store."""
    value, memory_id = learnt_later(43)
    found = run_cli("doctor")
    assert found.returncode == 1 and b"doctor --fix" in found.stdout, found.stdout.decode()
    assert run_cli("doctor", "--fix").returncode in (0, 1)
    with Store(readonly=True) as store:
        assert "[REDACTED:known-secret]" in store.get(memory_id).text
    assert value.lower().encode() not in (Path(os.environ["MINER_HOME"]) / "memory.db").read_bytes().lower()


def test_export_and_a_teams_push_hide_what_the_store_learnt_is_a_secret(tmp_path):
    """What is stored bare from before (no repair run yet) leaves neither in an export, its checkpoints included,
    nor for a team's server: a push withholds the memory."""
    from miner.team.sync import _secret_free

    value, memory_id = learnt_later(47)
    exported = run_cli("export")
    assert exported.returncode == 0 and b"rename [REDACTED:known-secret] next" in exported.stdout
    assert value.lower().encode() not in exported.stdout.lower()
    with Store(readonly=True) as store:
        memory = store.get(memory_id)
        assert not _secret_free(memory, store.secret_digests())
        assert _secret_free(memory)  # (what it was before: no learnt secret looked up)


def test_hundreds_of_secrets_learnt_at_once_are_looked_for_in_what_was_stored(tmp_path):
    """A batch that learnt 400 secrets (an .env file pasted whole) built one look-up of 1,200 conditions, which SQLite
    refused ("Expression tree is too large"): the batch rolled back, and the transcript could never be mined."""
    from miner.memory import repair

    value, memory_id = learnt_later(53)
    rng = random.Random(59)
    found = {generated(rng, 14) + "9" for _ in range(400)} | {value}
    with Store() as store:
        done = repair.scrub(store, found)
        assert done.rows.get("memories") == 1 and "[REDACTED:known-secret]" in store.get(memory_id).text, done.rows
        body = store.db.execute("SELECT body FROM checkpoints WHERE session_id = 's1'").fetchone()[0]
    assert value not in body


def test_a_miner_that_dies_before_its_scrub_leaves_it_to_the_next_worker(tmp_path, claude_dir, pipeline, monkeypatch):
    """A batch that learnt a secret commits first, then the rows stored before it are scrubbed. A miner killed in
    between left the value bare, and only `doctor --fix` looked for it: the batch now counts itself as pending, and
    the next background worker runs the repair."""
    from miner import config as config_mod
    from miner.memory import repair
    from miner.runtime import mine

    cwd = tmp_path / "work" / "ledger"
    cwd.mkdir(parents=True)
    value = generated(random.Random(61), 14) + "3"
    session = Session(cwd)
    session.turn(f"We decided the billing consumer group is named {value} for the invoice events.", "Noted.")
    with Store() as store:
        mine.Miner(store, config_mod.load(), pipeline=pipeline).mine_file(str(session.transcript))
    session.turn(f"by the way the staging db password is {value}, the same string", "Understood.")

    def killed(store, fresh):
        raise SystemExit(9)

    with monkeypatch.context() as patched, Store() as store, pytest.raises(SystemExit):
        patched.setattr(mine, "scrub_learnt", killed)
        mine.Miner(store, config_mod.load(), pipeline=pipeline).mine_file(str(session.transcript))
    with Store(readonly=True) as store:
        assert store.counters()[repair.SCRUB_PENDING] == 1
        assert any(value in m.text for m in store.list_memories(limit=100)), "the earlier memory was not stored bare"
    other = Session(cwd)
    other.turn("Add a retry with backoff to the invoice worker.", "Added the retry.")
    assert run_hook("stop", other.payload("stop.json")).returncode == 0
    wait_for_workers()
    with Store(readonly=True) as store:
        assert store.counters().get(repair.SCRUB_PENDING, 0) == 0
        assert any("[REDACTED:known-secret]" in m.text for m in store.list_memories(limit=100))
    assert value.lower().encode() not in (Path(os.environ["MINER_HOME"]) / "memory.db").read_bytes().lower()


def test_a_scrub_counts_its_batch_off_and_never_below_zero(tmp_path):
    """Two miners that learnt secrets at once each count their batch; each scrub counts one off, so the count stays
    up while one of them has not scrubbed yet."""
    from miner.memory import repair

    value, memory_id = learnt_later(67)
    with Store() as store:
        with store.atomic():
            store.bump(repair.SCRUB_PENDING, 2)
        repair.scrub(store, {value})
        assert store.counters()[repair.SCRUB_PENDING] == 1 and repair.needed(store)
        repair.scrub(store, {value})
        repair.scrub(store, {value})
        assert store.counters()[repair.SCRUB_PENDING] == 0 and not repair.needed(store)


def test_a_token_in_a_branch_name_is_never_stored_and_doctor_fix_cleans_one_stored_before(tmp_path):
    """`git checkout -b fix/ghp_…`: the branch went raw into the sessions' and the memories' rows (and from there
    into the startup block's cached query), and `doctor --fix` left both columns as they were."""
    from miner.memory.records import NewMemory

    token = "ghp_" + "R7t2Y9u4I1o6P3a8S5d2F7g4H9j1K6l3Z8x5"
    cwd = tmp_path / "work" / "app"
    cwd.mkdir(parents=True)
    session = Session(cwd)
    session.turn("We decided to retry the upload three times.", "Retries are set to three for the upload.")
    text = session.transcript.read_text().replace('"gitBranch": "main"', f'"gitBranch": "fix/{token}"')
    session.transcript.write_text(text)
    assert token in session.transcript.read_text()
    assert run_cli("mine", str(session.transcript)).returncode == 0
    with Store(readonly=True) as store:
        branches = [row[0] for row in store.db.execute(
            "SELECT git_branch FROM sessions UNION ALL SELECT git_branch FROM memories")]
    assert branches and all(b == "fix/[REDACTED:github-token]" for b in branches), branches
    with Store() as store, store.atomic() as db:  # as an older version stored them
        store.add_memory(NewMemory(
            project="/p", category="fact", text="The upload client retries three times.", confidence=0.8,
            rule_id="r", role="user", session_id="old-1", transcript="/t.jsonl", entry_uuid="u-old", ts="2025-01-01",
            git_branch=f"fix/{token}"))
        store.upsert_session("old-1", "/p", "/p", f"fix/{token}", "/t.jsonl", "2025-01-01T00:00:00Z")
        db.execute("DELETE FROM counters WHERE name = 'redaction_version'")
    assert run_cli("doctor", "--fix").returncode in (0, 1)
    needle = token.lower().encode()
    for path in Path(os.environ["MINER_HOME"]).rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes().lower(), path


def test_a_secret_that_cleaning_brings_next_to_its_name_leaves_no_byte_anywhere(tmp_path, claude_dir):
    """The turn is redacted before it is cleaned: a comment, an escape sequence or a run of blanks between a
    password's name and its value kept them apart then, and cleaning takes them out. The units so changed are
    redacted again, for the archive (what the prompt hook, `search` and MCP read) as for the memories."""
    cwd = tmp_path / "work" / "demo"
    cwd.mkdir(parents=True)
    rng = random.Random(41)
    commented, escaped, spaced = (generated(rng, 8) + "!" + generated(rng, 3) for _ in range(3))
    session = Session(cwd)
    stop_after_each(session, [
        (f"Decision: the staging DB password <!-- rotate in May --> is {commented} for the whole team.", "Noted."),
        (f"From the setup script output: \x1b[1;32madmin password:\x1b[0m {escaped} — we keep that for the demo box.",
         "Understood, the demo box keeps it."),
        (f"staging db password:{' ' * 70}{spaced}\nWe decided to keep the staging database on PostgreSQL 16.",
         "PostgreSQL 16 it is."),
    ])
    with Store(readonly=True) as store:
        archived = [row[0] for row in store.db.execute("SELECT text FROM archive")]
    assert any("[REDACTED:" in text and "staging DB password" in text for text in archived), archived
    searched = run_cli("search", "password", "--all")
    assert searched.returncode == 0, searched.stderr
    outputs = [searched.stdout.decode("utf-8")]
    prompt = run_hook("user-prompt-submit", json.dumps({
        "session_id": "prompt-session", "transcript_path": str(session.transcript), "cwd": str(cwd),
        "hook_event_name": "UserPromptSubmit", "prompt": "what is the admin password for the demo box?"}).encode())
    assert prompt.returncode == 0
    outputs.append(prompt.stdout.decode("utf-8"))
    files = [p for p in Path(os.environ["MINER_HOME"]).rglob("*") if p.is_file() and "venv" not in p.parts]
    for secret in (commented, escaped, spaced):
        for out in outputs:
            assert secret.lower() not in out.lower(), (secret, out)
        for path in files:
            assert secret.lower().encode("utf-8") not in path.read_bytes().lower(), (secret, path)


def test_a_secret_announced_or_given_after_a_failure_never_reaches_where_the_session_left_off(tmp_path, claude_dir):
    """Two secrets the miner hides without a word around them naming one: the user says a password comes in the
    next message, and the next message is the password alone; the assistant says a token expired, and the user
    gives a fresh one. The checkpoint shows the session's latest words: it hides them as the miner does."""
    cwd = tmp_path / "work" / "deploy"
    cwd.mkdir(parents=True)
    rng = random.Random(43)
    announced, fresh = generated(rng, 6) + "!" + generated(rng, 7), generated(rng, 6) + "93"
    session = Session(cwd)
    session.turn("We decided to keep the deploy scripts in the ops folder from now on.", "Noted.")
    session.turn("I'll paste the new prod DB password in my next message, put it in the vault config.", "Sure.")
    session.turn(announced, "Stored in the vault config.")
    session.user("Now run the staging deploy job.")
    session.assistant("The deploy failed. The token seems to have expired.")
    session.turn(f"here's a fresh one {fresh} for the staging deploy job", "The staging deploy passed.")
    for event, payload in (("stop", "stop.json"), ("pre-compact", "pre-compact.auto.json"),
                           ("session-end", "session-end.json")):
        assert run_hook(event, session.payload(payload)).returncode == 0
        wait_for_workers()
    startup = additional_context(run_hook("session-start", Session(cwd).payload("session-start.startup.json")))
    assert "deploy" in startup, startup
    wait_for_workers()
    compact = additional_context(run_hook("session-start", session.payload("session-start.compact.json")))
    files = [p for p in Path(os.environ["MINER_HOME"]).rglob("*") if p.is_file() and "venv" not in p.parts]
    for secret in (announced, fresh):
        for block in (startup, compact):
            assert secret.lower() not in block.lower(), (secret, block)
        for path in files:
            assert secret.lower().encode("utf-8") not in path.read_bytes().lower(), (secret, path)


def test_a_plain_word_password_said_again_in_a_later_stop_reaches_no_block_of_any_project(tmp_path, claude_dir):
    """Hidden where it was given, it was stored bare where the next prompt used it for a login: a global preference
    then showed it at the start of every project's sessions."""
    cwd, elsewhere = tmp_path / "work" / "stage", tmp_path / "work" / "brandnew"
    cwd.mkdir(parents=True)
    elsewhere.mkdir(parents=True)
    word = generated(random.Random(47), 9, string.ascii_lowercase)
    session = Session(cwd)
    stop_after_each(session, [
        (f"Decision: the staging admin password is {word}, we keep it until launch.", "Noted."),
        (f"From now on always try {word} first on the staging login page, and I prefer short answers.", "Will do."),
    ])
    blocks = [additional_context(run_hook("session-start", Session(place).payload("session-start.startup.json")))
              for place in (cwd, elsewhere)]
    wait_for_workers()
    files = [p for p in Path(os.environ["MINER_HOME"]).rglob("*") if p.is_file() and "venv" not in p.parts]
    assert "staging" in blocks[0], blocks[0]
    for block in blocks:
        assert word not in block.lower(), block
    for path in files:
        assert word.encode() not in path.read_bytes().lower(), path


def test_a_block_rendered_ahead_is_read_text_by_text_for_secrets(tmp_path):
    """A block that says "Always refresh the token hourly." then another line was flagged by doctor on a good
    install, and removed by every `doctor --fix`: read as the file's JSON, the escaped line break made "hourly." and
    the next line one value of the token's. A block holding a secret is still found, and goes."""
    from miner.memory import repair

    Store().close()
    paths.cache_dir().mkdir(parents=True, exist_ok=True)
    clean = paths.cache_dir() / "startup-clean.json"
    clean.write_text(json.dumps({"text": "- Always refresh the token hourly.\n- We use Redis for the cache."}),
                     encoding="utf-8")
    leaking = paths.cache_dir() / "startup-leaking.json"
    leaking.write_text(json.dumps({"text": "- The deploy token is ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"}),
                       encoding="utf-8")
    with Store(readonly=True) as store:
        assert repair.scan(store).files == [str(leaking)]
    with Store() as store:
        repair.fix(store)
    assert clean.exists() and not leaking.exists()


def test_a_secret_another_miner_learns_while_a_batch_is_redacted_without_it_is_scrubbed_from_that_batch(
        tmp_path, claude_dir, pipeline, monkeypatch):
    """Two miners at once (two sessions' Stop hooks): the first redacted its batch, the second learnt a password and
    scrubbed the store, then the first committed its batch with the password bare, and the next SessionStart showed
    it. Mined one after the other, in either order, it was hidden."""
    from miner import config as config_mod
    from miner.memory import repair
    from miner.runtime import mine

    value = generated(random.Random(71), 14) + "7"
    said = Session(tmp_path / "work" / "ledger")
    said.turn(f"We decided the billing consumer group is named {value} for the invoice events.", "Noted.")
    teaching = Session(tmp_path / "work" / "infra")
    teaching.turn(f"by the way the staging db password is {value}, the same string", "Understood.")
    with Store() as store, Store() as other:
        first = mine.Miner(store, config_mod.load(), pipeline=pipeline)
        redacted = first.extract

        def meanwhile(*args, **kwargs):  # the other miner runs between this batch's redaction and its write
            mine.Miner(other, config_mod.load(), pipeline=pipeline).mine_file(str(teaching.transcript))
            monkeypatch.setattr(first, "extract", redacted)
            return redacted(*args, **kwargs)

        monkeypatch.setattr(first, "extract", meanwhile)
        summary = first.mine_file(str(said.transcript))
        assert summary.scrubbed > 0
        texts = [m.text for m in store.list_memories(limit=100)]
        assert any("billing consumer group" in t and "[REDACTED:known-secret]" in t for t in texts), texts
        assert store.counters().get(repair.SCRUB_PENDING, 0) == 0
    assert value.lower().encode() not in (Path(os.environ["MINER_HOME"]) / "memory.db").read_bytes().lower()
