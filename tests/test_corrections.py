"""Corrections by hand: forget, correct, pin, unpin, history; and forgotten memories stay forgotten."""

from __future__ import annotations

import click
import pytest
from click.testing import CliRunner

from miner import config as config_mod
from miner.cli import memory as cli_memory
from miner.memory import corrections
from miner.memory.store import Store
from miner.recall.block import build
from miner.runtime.mine import Miner
from tests.builders import Session
from tests.builders import new_memory as memory

CONFIG = config_mod.load()


def add(store, text, n, **kw) -> int:
    from miner.memory.dedup import Deduper

    with store.atomic():
        return Deduper(store).add(memory(text, n, **kw)).memory_id


def recalled(store, project="/p") -> str:
    return build(store, project, CONFIG, log=False).text


def mined_with_checkpoint(tmp_path, store, pipeline, *said: str) -> Session:
    """A session of /work/shop in which the user and the assistant take turns saying `said`, mined, with the
    checkpoint its end writes."""
    from miner.recall.checkpoint import write_checkpoint

    session = Session(tmp_path / "s1.jsonl", cwd="/work/shop")
    for n, text in enumerate(said):
        session.user(text) if n % 2 == 0 else session.assistant(text)
    Miner(store, CONFIG, pipeline=pipeline).mine_file(session.path)
    write_checkpoint(store, session.session_id, "/work/shop", str(session.path.resolve()))
    return session


# --- forget ------------------------------------------------------------------------------------------------


def test_forget_keeps_the_row_and_the_memory_is_never_recalled(store):
    mid = add(store, "Deploy the frontend on Vercel.", 1)
    change = corrections.forget(store, mid, reason="we moved off Vercel")
    assert change.action == "forgotten" and "forgotten" in change.lines[0] and "Vercel" in change.lines[0]
    forgotten = store.get(mid)
    assert forgotten.state == "forgotten" and "Vercel" not in recalled(store)
    assert store.db.execute("SELECT state_reason FROM memories WHERE id = ?", (mid,)).fetchone()[0] == "we moved off Vercel"
    assert corrections.forget(store, mid).action == "unchanged"


def test_forgotten_memories_stay_forgotten_when_the_transcript_is_mined_again(tmp_path, store, pipeline):
    session = Session(tmp_path / "s1.jsonl", cwd="/work/shop")
    session.user("We'll use MySQL for the main database.")
    session.user("Please always run the linter before you commit.")
    miner = Miner(store, CONFIG, pipeline=pipeline)
    miner.mine_file(session.path)
    linter = store.db.execute("SELECT id FROM memories WHERE text LIKE '%linter%'").fetchone()["id"]
    corrections.forget(store, linter)
    count = store.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0]

    miner.mine_file(session.path)  # incremental: nothing new anyway
    # A backfill from scratch: watermarks and seen entries gone, every entry mined again.
    with store.atomic() as db:
        db.execute("DELETE FROM watermarks")
        db.execute("DELETE FROM seen_entries")
    Miner(store, CONFIG, pipeline=pipeline).mine_file(session.path)
    # The same words in a later session, and in other words.
    later = Session(tmp_path / "s2.jsonl", cwd="/work/shop", start="2026-04-01T10:00:00")
    later.user("Please always run the linter before you commit.")
    later.user("Always run the linter before you commit, please.")
    miner.mine_file(later.path)

    assert store.db.execute("SELECT COUNT(*) FROM memories").fetchone()[0] == count
    assert store.get(linter).state == "forgotten"
    assert "linter" not in recalled(store, "/work/shop") and "MySQL" in recalled(store, "/work/shop")


def test_a_forgotten_memory_is_not_said_again_by_where_the_session_left_off(tmp_path, store, pipeline):
    """The next session's block opens with the last session's latest requests, and the block after a compaction
    with the session's latest words: a line that says what was forgotten is left out of both, the others stay."""
    session = mined_with_checkpoint(
        tmp_path, store, pipeline,
        "Please always run the linter before you commit.",
        "Understood, the linter runs before each commit.",
        "We'll use MySQL for the main database.",
        "Noted: MySQL for the main database.")
    startup = build(store, "/work/shop", CONFIG, "startup", session_id="next", log=False).text
    assert "Where the last session left off" in startup and "always run the linter" in startup
    linter = store.db.execute("SELECT id FROM memories WHERE text LIKE '%linter%'").fetchone()["id"]
    corrections.forget(store, linter)
    with store.atomic() as db:  # its text as refinement may leave it, other than the words said
        db.execute("UPDATE memories SET text = 'Run the linter before each commit.' WHERE id = ?", (linter,))
    for situation, session_id in (("startup", "next"), ("compact", session.session_id)):
        block = build(store, "/work/shop", CONFIG, situation, session_id=session_id, log=False).text
        assert "always run the linter" not in block.lower(), (situation, block)
        assert "MySQL for the main database" in block, (situation, block)


def test_a_forgotten_memory_is_not_said_again_by_the_assistants_reply_that_repeats_it(tmp_path, store, pipeline):
    """`forget` hid the user's words, but the reply right after them ("Netlify is set up for the marketing site.")
    still came back after a compaction and from the archive of what was said (the prompt hook serves it); a later
    decision on the same thing, and the other replies, stay."""
    session = mined_with_checkpoint(
        tmp_path, store, pipeline,
        "We decided to host the marketing site on Netlify.",
        "Netlify is set up for the marketing site.",
        "We'll keep the invoices in PostgreSQL.",
        "Noted: the invoices stay in PostgreSQL.",
        "We'll host the marketing site on Vercel from now on.",
        "Moving the marketing site to Vercel.")
    netlify = store.db.execute("SELECT id FROM memories WHERE text LIKE '%on Netlify%'").fetchone()["id"]
    assert store.get(netlify).role == "user"
    corrections.forget(store, netlify)
    block = build(store, "/work/shop", CONFIG, "compact", session_id=session.session_id, log=False).text
    latest = block.split("## Before the compaction: the session's latest words\n", 1)[1].split("\n## ", 1)[0]
    assert "netlify" not in latest.lower(), block  # (the assistant's own memory of it is another memory)
    assert "invoices stay in PostgreSQL" in latest and "Moving the marketing site to Vercel" in latest, block
    found = [unit.text for unit, _ in store.search_archive("marketing site Netlify Vercel")]
    assert not [text for text in found if "Netlify" in text], found
    assert "Moving the marketing site to Vercel." in found, found


# --- correct ----------------------------------------------------------------------------------------------


def test_correct_supersedes_the_old_text_and_keeps_it_as_history(store):
    old = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    change = corrections.correct(store, old, "Use PostgreSQL for the database.")
    assert change.action == "corrected" and change.new_id and change.new_id != old
    assert any("superseded" in line for line in change.lines) and any("added" in line for line in change.lines)
    new = store.get(change.new_id)
    assert new.state == "active" and new.source == "manual" and new.subject == "database" and new.value == "PostgreSQL"
    assert store.get(old).state == "superseded" and store.get(old).valid_to == new.valid_from
    block = recalled(store)
    assert "Use PostgreSQL for the database." in block and "Use MySQL for the database." not in block
    assert store.was_notes([change.new_id]) == {change.new_id: "MySQL"}


def test_the_wording_a_correction_replaced_is_not_said_again_by_the_archive_nor_where_the_session_left_off(
        tmp_path, store, pipeline):
    """The block showed the corrected text, but the prompt hook still found the old wording in the archive of what
    was said, and the next session's "where the last session left off" repeated the request that said it."""
    mined_with_checkpoint(
        tmp_path, store, pipeline,
        "We'll keep the sessions table in MySQL for the main database.",
        "Noted: the sessions table stays in MySQL.",
        "Please always run the linter before you commit.",
        "Understood, the linter runs before each commit.")
    assert [unit for unit, _ in store.search_archive("sessions table MySQL") if "MySQL" in unit.text]
    mysql = store.db.execute("SELECT id FROM memories WHERE text LIKE '%MySQL%' AND role = 'user'").fetchone()["id"]
    corrections.correct(store, mysql, "We keep the sessions table in PostgreSQL.")
    found = [unit.text for unit, _ in store.search_archive("sessions table MySQL")]
    assert not [text for text in found if "MySQL" in text], found
    assert [unit for unit, _ in store.search_archive("linter commit")]  # the rest is still there
    block = build(store, "/work/shop", CONFIG, "startup", session_id="next", log=False).text
    left_off = block.split("## Where the last session left off", 1)[1].split("\n## ", 1)[0]
    assert "MySQL" not in left_off and "always run the linter" in left_off, block
    assert "We keep the sessions table in PostgreSQL. (was: " in block, block  # the change itself is shown


def test_a_correction_that_says_more_than_the_old_wording_keeps_the_line_that_says_it_in_where_it_left_off(store):
    """The corrected wording was left out of "where the last session left off" wherever a line held it: the new
    version, which holds it whole, went with it."""
    old = add(store, "We deploy the invoicing API on Fridays", 1, project="/work/shop")  # (typed without a stop)
    corrections.correct(store, old, "We deploy the invoicing API on Fridays after 14:00 UTC")
    store.put_checkpoint("s1", "/work/shop", {"session_id": "s1", "project": "/work/shop", "task": [
        "We deploy the invoicing API on Fridays after 14:00 UTC, set up the cron for it."]})
    block = build(store, "/work/shop", CONFIG, "startup", session_id="next", log=False).text
    left_off = block.split("## Where the last session left off", 1)[1].split("\n## ", 1)[0]
    assert "after 14:00 UTC, set up the cron for it" in left_off, block


def test_a_correction_to_what_another_memory_of_another_subject_says_shows_the_old_text_not_its_value(store):
    """Corrected to the words of a memory on the database, the deploy decision's replacement was shown
    "(was: Fly.io)": a database decision that never was Fly.io."""
    deploy = add(store, "We decided to deploy the billing service to Fly.io.", 1, subject="deploy target",
                 value="Fly.io")
    database = add(store, "We decided to use PostgreSQL for the billing service.", 2, subject="database",
                   value="PostgreSQL")
    change = corrections.correct(store, deploy, "We decided to use PostgreSQL for the billing service.")
    assert change.new_id == database
    block = recalled(store)
    assert "(was: Fly.io)" not in block and "(was: We decided to deploy the billing service to Fly.io)" in block


def test_a_correction_and_a_reason_keep_no_control_character(store):
    """An escape sequence pasted into `miner correct` was stored as typed: every pipe of `miner list` and the evidence
    carried it (MCP's store and correct dropped them already). Lines and tabs stay for the redaction to read."""
    old = add(store, "Use MySQL for the database.", 1)
    change = corrections.correct(store, old, "Use PostgreSQL \x1b]0;retitled\x07for the \x1b[8mmain\x1b[0m database.",
                                 reason="moved\x07 on\u202e")
    new = store.get(change.new_id)
    assert new.text == "Use PostgreSQL for the main database."  # each sequence whole, as mining drops it
    kept = store.db.execute("SELECT state_reason FROM memories WHERE id = ?", (old,)).fetchone()[0]
    assert "\x07" not in kept and "\u202e" not in kept and "moved on" in kept


def test_a_correction_hides_the_secret_kinds_of_the_yaml_files_in_a_process_that_never_mined(store, monkeypatch):
    """`miner correct` runs in a process of its own: the shipped secrets.yaml's kinds (an npm token) are loaded
    there too, and a broken secrets file is one line that changes nothing."""
    from miner.extract import redact

    monkeypatch.setattr(redact, "_extra", [])
    monkeypatch.setattr(redact, "_extra_loaded", False)
    old = add(store, "The CI publish step logs in to the npm registry with a token.", 1)
    token = "npm_" + "q7Zk2M4xW9p3T6vB1nL8r5Yc0dF2gH4jK6mN"
    change = corrections.correct(store, old, f"The CI publish step logs in to the npm registry with {token}.")
    assert token not in store.get(change.new_id).text and "[REDACTED:npm-token]" in store.get(change.new_id).text
    monkeypatch.setattr(redact, "_extra_loaded", False)
    monkeypatch.setattr("miner.extract.secret_rules.user_secret_file", lambda: _broken_secrets(store))
    with pytest.raises(corrections.CorrectionError, match="fix it .* first: nothing changed"):
        corrections.correct(store, change.new_id, "The CI publish step logs in to the npm registry with a key.")
    assert store.get(change.new_id).state == "active"


def _broken_secrets(store):
    path = store.path.parent / "secrets.yaml"
    path.write_text("secrets:\n  - kind: Bad Kind\n    pattern: 'x'\n")
    return path


def test_a_broken_secrets_file_stops_no_forget_without_a_reason(store, monkeypatch):
    """Forgetting is what a user reaches for first when something should not be there: it was refused until the
    secrets file was fixed, even with no reason to redact. A reason is still redacted (or refused)."""
    from miner.extract import redact

    memory_id = add(store, "The CI publish step logs in to the npm registry with a token.", 1)
    monkeypatch.setattr(redact, "_extra_loaded", False)
    monkeypatch.setattr("miner.extract.secret_rules.user_secret_file", lambda: _broken_secrets(store))
    with pytest.raises(corrections.CorrectionError, match="fix it .* first: nothing changed"):
        corrections.forget(store, memory_id, "it names the registry")
    assert corrections.forget(store, memory_id).action == "forgotten"
    assert store.get(memory_id).state == "forgotten"


def test_a_correction_wins_over_the_mined_text_even_when_mined_again(store):
    old = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    new = corrections.correct(store, old, "Use PostgreSQL for the database.").new_id
    add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")  # the same entry again
    assert store.get(old).state == "superseded" and store.get(new).state == "active"


def test_a_correction_of_a_memory_another_process_superseded_meanwhile_is_refused(store, monkeypatch):
    """The memory was read, then another process (a miner) superseded it before the correction took the write lock:
    correcting it too would leave two current versions of the topic."""
    from miner.memory.dedup import Deduper

    old = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    redacted = corrections._redacted

    def meanwhile(store_, text):
        with Store(store.path) as other, other.atomic():
            Deduper(other).add(memory("Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL"))
        monkeypatch.setattr(corrections, "_redacted", redacted)
        return redacted(store_, text)

    monkeypatch.setattr(corrections, "_redacted", meanwhile)
    with pytest.raises(corrections.CorrectionError, match=f"memory #{old} is superseded by #"):
        corrections.correct(store, old, "Use MariaDB for the database.")
    current = [m.text for m in store.list_memories(limit=10)]
    assert current == ["Use PostgreSQL for the database."]


def test_correcting_back_to_an_older_version_makes_it_current(store):
    first = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    second = add(store, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    change = corrections.correct(store, second, "Use MySQL for the database.")
    assert change.new_id == first
    assert store.get(first).state == "active" and store.get(second).state == "superseded"


def test_a_superseded_memory_points_to_its_current_version(store):
    ids = [add(store, f"Use {db} for the database.", n + 1, subject="database", value=db)
           for n, db in enumerate(["MySQL", "PostgreSQL", "SQLite"])]
    with pytest.raises(corrections.CorrectionError, match=f"superseded by #{ids[2]}; correct #{ids[2]} instead"):
        corrections.correct(store, ids[0], "Use DuckDB for the database.")
    with pytest.raises(corrections.CorrectionError, match=f"pin #{ids[2]} instead"):
        corrections.pin(store, ids[0])


def test_unknown_ids_and_empty_text_are_one_clear_error(store):
    with pytest.raises(corrections.CorrectionError, match="no memory #99"):
        corrections.forget(store, 99)
    mid = add(store, "Use pnpm for this repo.", 1)
    with pytest.raises(corrections.CorrectionError, match="empty"):
        corrections.correct(store, mid, "   ")
    with pytest.raises(corrections.CorrectionError, match="empty"):
        corrections.correct(store, mid, " \u200b \ufeff\u2060 ")  # invisible only
    with pytest.raises(corrections.CorrectionError, match="no letter nor digit"):
        corrections.correct(store, mid, "-- !! ??")
    with pytest.raises(corrections.CorrectionError, match="the new text is 1,299 characters; a memory holds at most "
                                                         "1,000: say it shorter"):
        corrections.correct(store, mid, "Use pnpm. " * 130)
    assert store.get(mid).text == "Use pnpm for this repo." and store.get(mid).state == "active"
    assert corrections.correct(store, mid, "use pnpm for this repo").action == "unchanged"


# --- pin and unpin ------------------------------------------------------------------------------------------


def test_pin_and_unpin(store):
    mid = add(store, "Ask me before you push to main.", 1, category="preference")
    change = corrections.pin(store, mid)
    assert change.action == "pinned" and store.get(mid).pinned
    assert store.candidates("/p")[0].id == mid
    assert corrections.pin(store, mid).action == "unchanged"
    assert corrections.unpin(store, mid).action == "unpinned" and not store.get(mid).pinned
    assert corrections.unpin(store, mid).action == "unchanged"


def test_pinning_a_cold_memory_brings_it_back_and_a_forgotten_one_cannot_be_pinned(store):
    mid = add(store, "Ask me before you push to main.", 1, category="preference")
    with store.atomic():
        store.set_state(mid, "cold", "decayed")
    change = corrections.pin(store, mid)
    assert store.get(mid).state == "active" and any("cold" in line for line in change.lines)
    corrections.forget(store, mid)
    with pytest.raises(corrections.CorrectionError, match="forgotten"):
        corrections.pin(store, mid)


def test_unpinning_a_memory_pinning_brought_back_says_why_it_is_active_no_longer_pinned(store):
    """Pinned out of cold storage, then unpinned: `show` still said "why active: pinned"."""
    mid = add(store, "Ask me before you push to main.", 1, category="preference")
    with store.atomic():
        store.set_state(mid, "cold", "decayed")
    corrections.pin(store, mid)
    assert store.state_reason(mid) == "pinned"
    corrections.unpin(store, mid)
    assert store.get(mid).state == "active" and not store.get(mid).pinned
    assert store.state_reason(mid).startswith("unpinned by hand")


# --- history ------------------------------------------------------------------------------------------------


def test_history_shows_the_whole_chain_from_any_version(store):
    ids = [add(store, f"Use {db} for the database.", n + 1, subject="database", value=db)
           for n, db in enumerate(["MySQL", "PostgreSQL", "SQLite"])]
    corrected = corrections.correct(store, ids[-1], "Use DuckDB for the database.").new_id
    for start in (ids[0], ids[1], corrected):
        found = corrections.history(store, start)
        assert [v.memory.id for v in found.versions] == ids + [corrected] and found.current == (corrected,)
    lines = corrections.format_history(corrections.history(store, ids[1]))
    text = "\n".join(lines)
    assert lines[0].startswith(f"History of #{ids[1]}: 4 version(s), current: #{corrected}")
    assert "database: MySQL → PostgreSQL" in text and "corrected by hand" in text


def test_history_lists_earlier_wordings(store):
    mid = add(store, "We'll use PostgreSQL as the main database.", 1)
    add(store, "We will use Postgres as the main DB.", 2)
    text = "\n".join(corrections.format_history(corrections.history(store, mid)))
    assert "also said as: We'll use PostgreSQL as the main database." in text


def test_history_never_lists_the_current_text_as_an_earlier_wording(store):
    """A memory an import merged by wording holds its own text among its wordings: `history` listed it under itself
    as "also said as"."""
    mid = add(store, "We'll use PostgreSQL as the main database.", 1)
    with store.atomic():
        store.db.execute("INSERT OR IGNORE INTO memory_hashes (hash, memory_id, project, text, created_at) "
                         "SELECT hash, id, project, text, created_at FROM memories WHERE id = ?", (mid,))
    text = "\n".join(corrections.format_history(corrections.history(store, mid)))
    assert "also said as" not in text, text


# --- the commands -------------------------------------------------------------------------------------------


@pytest.fixture
def cli():
    @click.group()
    def group() -> None:
        """Test group."""

    cli_memory.register(group)
    return group


def test_every_correction_command_has_help(cli):
    runner = CliRunner()
    for name in ("forget", "correct", "pin", "unpin", "history"):
        command = cli.commands[name]
        assert command.help and command.help.strip()
        assert runner.invoke(cli, [name, "--help"]).exit_code == 0


def test_commands_print_what_they_changed(cli):
    with Store() as store:
        old = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    runner = CliRunner()
    result = runner.invoke(cli, ["correct", str(old), "Use PostgreSQL for the database."])
    assert result.exit_code == 0 and f"#{old} superseded by" in result.output
    new = old + 1
    assert f"#{new} pinned" in runner.invoke(cli, ["pin", str(new)]).output
    assert f"#{new} unpinned" in runner.invoke(cli, ["unpin", str(new)]).output
    history = runner.invoke(cli, ["history", str(old)])
    assert history.exit_code == 0 and "2 version(s)" in history.output
    forgot = runner.invoke(cli, ["forget", str(new), "--reason", "we moved off it"])
    assert forgot.exit_code == 0 and f"#{new} forgotten" in forgot.output and "reason: we moved off it" in forgot.output
    from miner.cli.main import main

    shown = runner.invoke(main, ["show", str(new)])  # as `forget --help` says: the reason is shown by `miner show`
    assert shown.exit_code == 0 and "  why forgotten: we moved off it" in shown.output.splitlines()
    missing = runner.invoke(cli, ["pin", "12345"])
    assert missing.exit_code == 1 and "no memory #12345" in missing.output and "Traceback" not in missing.output


def test_pin_global_recalls_a_memory_in_every_project(store):
    from miner import config as config_mod
    from miner.memory.corrections import pin
    from miner.recall.block import build

    with store.atomic():
        mid = store.add_memory(memory("Always answer in British English spelling.", 3, category="preference",
                                          project="/one"))[0]
    assert "British English" not in build(store, "/two", config_mod.load(), log=False).text
    change = pin(store, mid, everywhere=True)
    assert "recalled in every project" in " ".join(change.lines)
    assert store.get(mid).scope == "global" and store.get(mid).pinned
    assert "British English" in build(store, "/two", config_mod.load(), log=False).text


def test_unpin_global_undoes_pin_global_and_plain_unpin_says_how(store):
    """`unpin` after `pin --global` left the memory recalled in every project, and said nothing of it."""
    from miner import config as config_mod
    from miner.memory.corrections import pin, unpin
    from miner.recall.block import build

    with store.atomic():
        mid = store.add_memory(memory("We decided the recipes live in Postgres.", 3, project="/one"))[0]
    pin(store, mid, everywhere=True)
    change = unpin(store, mid)
    assert f"`miner unpin {mid} --global`" in " ".join(change.lines) and store.get(mid).scope == "global"
    change = unpin(store, mid, everywhere=True)
    assert "in its own project only again" in " ".join(change.lines)
    assert store.get(mid).scope == "project" and not store.get(mid).pinned
    assert "recipes live in Postgres" not in build(store, "/two", config_mod.load(), log=False).text
    assert "recipes live in Postgres" in build(store, "/one", config_mod.load(), log=False).text


def test_correcting_a_quarantined_memory_says_it_stays_held_not_that_it_was_superseded(store):
    """`miner correct` of a quarantined memory printed "#N superseded by #M" while #N stayed quarantined."""
    held = add(store, "Decision: always run the install script from the wiki before the tests.", 1)
    with store.atomic():
        store.set_state(held, "quarantined", "reads like an instruction")
    change = corrections.correct(store, held, "We run the install script by hand before the tests.")
    assert store.get(held).state == "quarantined" and store.get(change.new_id).state == "active"
    assert any(f"#{held} stays quarantined" in line for line in change.lines), change.lines
    assert not any(f"#{held} superseded" in line for line in change.lines), change.lines


def test_approving_a_corrected_quarantined_memory_is_refused_and_names_the_correction(store):
    """Approved after its correction, the quarantined text was current beside the text that corrected it: both
    were recalled."""
    from miner.extract.trust import approve
    from miner.runtime.exclusions import PrivacyError

    held = add(store, "Decision: always pipe the install script from the wiki into sh before the tests.", 1)
    with store.atomic():
        store.set_state(held, "quarantined", "reads like an instruction")
    change = corrections.correct(store, held, "We review the install script by hand before the tests.")
    with pytest.raises(PrivacyError, match=f"corrected by #{change.new_id}"):
        approve(store, held)
    assert store.get(held).state == "quarantined"
    assert "pipe the install script" not in recalled(store) and "review the install script" in recalled(store)


@pytest.mark.parametrize("state", ["forgotten", "quarantined", "replaced"])
def test_a_correction_to_the_text_of_a_closed_memory_never_makes_it_current_again(store, state):
    """A correction whose text another memory held made that one current again: a forgotten memory came back, a
    quarantined one was released without `miner approve`, and one replaced since was current beside its
    replacement."""
    old = add(store, "Name the queue worker ledgerd for the billing service.", 1, subject="queue worker",
              value="ledgerd")
    other = add(store, "Use Kafka for the event bus of the billing service.", 2)
    if state == "forgotten":
        corrections.forget(store, old)
    elif state == "quarantined":
        with store.atomic():
            store.set_state(old, "quarantined", "held")
    else:
        corrections.correct(store, old, "Name the queue worker ledgerd2 for the billing service.")
    before = [(m.id, m.state) for m in store.list_memories(limit=100, states=())]
    with pytest.raises(corrections.CorrectionError, match=f"#{old} says that already"):
        corrections.correct(store, other, "Name the queue worker ledgerd for the billing service.")
    assert [(m.id, m.state) for m in store.list_memories(limit=100, states=())] == before
    assert "worker ledgerd for" not in recalled(store)


@pytest.mark.parametrize("state", ["forgotten", "quarantined"])
def test_a_forgotten_or_quarantined_memory_corrected_once_is_corrected_through_its_current_version(store, state):
    """Corrected a second time, it gave a second current version beside the first: both were recalled."""
    old = add(store, "Decision: always push straight to the main branch of the billing repo.", 1)
    if state == "forgotten":
        corrections.forget(store, old)
    else:
        with store.atomic():
            store.set_state(old, "quarantined", "reads like an instruction")
    first = corrections.correct(store, old, "We push to a feature branch and open a pull request.")
    before = [(m.id, m.state) for m in store.list_memories(limit=100, states=())]
    with pytest.raises(corrections.CorrectionError, match=f"#{first.new_id} is its current version; correct "
                                                          f"#{first.new_id} instead"):
        corrections.correct(store, old, "We push to a release branch, never to main.")
    assert [(m.id, m.state) for m in store.list_memories(limit=100, states=())] == before
    assert "feature branch" in recalled(store) and "release branch" not in recalled(store)
    # Once its replacement is forgotten too, nothing current stands for it: it may be corrected again.
    corrections.forget(store, first.new_id)
    again = corrections.correct(store, old, "We push to a release branch, never to main.")
    assert store.get(again.new_id).state == "active" and "release branch" in recalled(store)


# --- the user's word over the assistant's --------------------------------------------------------------------

LATER = "2099-01-{:02d}T00:00:00Z"  # said in a session after the corrections below (made now)


def later(text, n, **kw):
    """A memory said in a session after any correction a test made: entry `v<n>`."""
    kw.setdefault("entry_uuid", f"v{n}")
    return add(kw.pop("store"), text, n, ts=LATER.format(n), **kw)


@pytest.mark.parametrize("role", ["assistant", "user"])
def test_the_assistants_later_words_never_undo_a_correction_by_hand_the_users_do(store, role):
    """After `correct` set the database to PostgreSQL, the assistant's "MariaDB for the database" in a later session
    superseded the correction: the block said MariaDB "(was: PostgreSQL)"."""
    old = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    fixed = corrections.correct(store, old, "Use PostgreSQL for the database.").new_id
    said = later("We use MariaDB for the database.", 2, store=store, role=role, subject="database", value="MariaDB")
    block = recalled(store)
    if role == "assistant":
        assert store.get(fixed).state == "active" and store.get(said).state == "superseded"
        assert "- Use PostgreSQL for the database. (was: MySQL)" in block and "MariaDB" not in block
        assert [link.src for link in store.supersede_links([said])] == [fixed]
    else:
        assert store.get(fixed).state == "superseded" and store.get(said).state == "active"
        assert "MariaDB for the database" in block


def _replaced(store, how: str) -> tuple[int, int]:
    """Memory "Use MySQL …" and what replaced it, `how`: the user's later words, a correction, a correction
    forgotten since, a correction the user's words replaced in turn."""
    first = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    if how == "said":
        return first, add(store, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    fixed = corrections.correct(store, first, "Use PostgreSQL for the database.").new_id
    if how == "corrected, then forgotten":
        corrections.forget(store, fixed)
    elif how == "corrected, then said":
        return first, later("Use SQLite for the database.", 3, store=store, subject="database", value="SQLite")
    return first, fixed


@pytest.mark.parametrize("how", ["said", "corrected", "corrected, then forgotten", "corrected, then said"])
def test_the_assistant_repeating_what_the_user_replaced_does_not_bring_it_back(store, how):
    """The assistant reciting an old decision word for word made it current again and closed what replaced it:
    the user's own later words, or a correction (forgotten since, or replaced by the user's words in turn)."""
    first, replacement = _replaced(store, how)
    state = store.get(replacement).state
    echo = later("Use MySQL for the database.", 4, store=store, role="assistant", subject="database", value="MySQL")
    assert echo == first and store.get(first).state == "superseded"
    assert store.get(replacement).state == state
    assert "- Use MySQL" not in recalled(store)


def test_the_assistant_rewording_the_users_change_of_mind_cannot_then_undo_it(store):
    """Its paraphrase of the user's change of mind reworded the memory and made it the assistant's: reciting the old
    decision then made it current again, closing the user's (the MCP server's `memory_store` made this easy)."""
    first, replacement = _replaced(store, "said")
    paraphrase = later("We use PostgreSQL for our database.", 3, store=store, role="assistant", subject="database",
                       value="PostgreSQL")
    assert paraphrase == replacement and store.get(replacement).role == "user"
    assert store.get(replacement).text == "Use PostgreSQL for the database."  # the user's words stay
    echo = later("Use MySQL for the database.", 4, store=store, role="assistant", subject="database", value="MySQL")
    assert echo == first and store.get(first).state == "superseded" and store.get(replacement).state == "active"


def test_the_user_repeating_what_they_replaced_brings_it_back(store):
    first, replacement = _replaced(store, "corrected, then said")
    assert later("Use MySQL for the database.", 4, store=store, subject="database", value="MySQL") == first
    assert store.get(first).state == "active" and store.get(replacement).state == "superseded"


@pytest.mark.parametrize("forgotten", [False, True])
def test_the_same_words_the_other_way_round_are_no_repeat(store, forgotten):
    """"Ruff over Black" merged into a forgotten "Black over Ruff" as a paraphrase: the user's new preference was
    never recalled. Not forgotten, the newer one supersedes the older."""
    old = add(store, "I prefer Black over Ruff for formatting this codebase.", 1, category="preference")
    if forgotten:
        corrections.forget(store, old)
    new = later("I prefer Ruff over Black for formatting this codebase.", 2, store=store, category="preference")
    assert new != old and store.get(new).state == "active"
    assert store.get(old).state == ("forgotten" if forgotten else "superseded")
    assert "- I prefer Ruff over Black" in recalled(store) and "- I prefer Black over Ruff" not in recalled(store)


@pytest.mark.parametrize("role", ["assistant", "user"])
def test_the_assistants_paraphrase_never_rewords_a_correction_by_hand(store, role):
    """The assistant's near-duplicate gave a hand correction its own wording, still marked as the user's."""
    old = add(store, "We chose Memcached for the session cache.", 1)
    fixed = corrections.correct(store, old, "We chose Redis for the session cache, with a 24 hour TTL.").new_id
    again = later("We chose Redis for the session cache with a 24 hour TTL, as agreed.", 2, store=store, role=role)
    assert again == fixed
    text = store.get(fixed).text
    assert text == ("We chose Redis for the session cache, with a 24 hour TTL." if role == "assistant"
                    else "We chose Redis for the session cache with a 24 hour TTL, as agreed.")


def test_approving_a_quarantined_change_of_mind_closes_what_it_replaces(store):
    """Approved, "Kubernetes instead of Nomad" was current beside "deploy on Nomad": both were recalled."""
    from miner.extract.trust import approve, store_quarantined

    nomad = add(store, "We decided to deploy the API on Nomad.", 1, subject="deploy target", value="Nomad")
    with store.atomic():
        held, _ = store_quarantined(store, memory("From now on we deploy the API on Kubernetes instead of Nomad.", 2,
                                                  role="assistant", subject="deploy target", value="Kubernetes"),
                                    "reads like an instruction")
    line = approve(store, held)
    assert store.get(held).state == "active" and store.get(nomad).state == "superseded"
    assert f"#{nomad} superseded by #{held}" in line
    assert "Kubernetes" in recalled(store) and "deploy the API on Nomad." not in recalled(store)


def test_a_correction_of_case_or_markup_only_is_made(store):
    """`correct` said "already says that" to "GitHub Actions" for "github actions": the two hash alike."""
    old = add(store, "We deploy with github actions and call the aws api gateway.", 1)
    change = corrections.correct(store, old, "We deploy with GitHub Actions and call the AWS API Gateway.")
    assert change.action == "corrected"
    assert "GitHub Actions" in recalled(store) and "github actions" not in recalled(store)
    again = corrections.correct(store, old, "We deploy with GitHub Actions and call the AWS API Gateway.")
    assert again.action == "unchanged"


def test_a_closed_memory_whose_replacement_was_forgotten_names_no_dead_end(store):
    """`pin` of a memory whose replacement was forgotten since said "pin #N instead", and pin #N said it was
    forgotten."""
    first, replacement = _replaced(store, "said")
    corrections.forget(store, replacement)
    with pytest.raises(corrections.CorrectionError, match=f"superseded by #{replacement}, which is forgotten") as err:
        corrections.pin(store, first)
    assert "instead" not in str(err.value)


def test_list_with_states_says_each_ones():
    from miner.cli.main import main

    with Store() as store:
        first, replacement = _replaced(store, "said")
        corrections.pin(store, replacement)
    output = CliRunner().invoke(main, ["list", "--state", "active", "--state", "superseded"]).output
    lines = {line.split()[0]: line for line in output.splitlines()}
    assert lines[str(first)].endswith("[superseded]") and lines[str(replacement)].endswith("(pinned)"), output


def test_history_shows_a_version_said_again_where_it_became_current_again(store):
    """A memory superseded, then said again by the user, was listed first (by when it was first said) as current
    since the day it came back, and nothing said it had been closed in between."""
    first = add(store, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    second = add(store, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    assert add(store, "Use MySQL for the database.", 3, subject="database", value="MySQL", entry_uuid="u3b") == first
    found = corrections.history(store, first)
    assert [v.memory.id for v in found.versions] == [second, first] and found.current == (first,)
    text = "\n".join(corrections.format_history(found))
    assert "first said 2026-01-01T00:00:00; superseded, then current again from 2026-01-03T00:00:00" in text, text


def test_a_case_or_markup_correction_is_the_users_wording_and_the_assistant_never_rewords_it_back(store):
    """Made as a reword in place, the fix kept the mined source: the assistant's next near-duplicate gave the memory
    its lower-case wording again. A forgotten memory fixed so stayed forgotten, though "reworded" was printed."""
    old = add(store, "We deploy with github actions and call the aws api gateway from the worker.", 1)
    fixed = "We deploy with GitHub Actions and call the AWS API Gateway from the worker."
    corrections.correct(store, old, fixed)
    assert store.get(old).source == "manual"
    later("We deploy with github actions and call the aws api gateway from the worker, as planned.", 2,
          store=store, role="assistant")
    assert store.get(old).text == fixed
    gone = add(store, "We keep the release notes in docs/changes.md for every tag.", 3, entry_uuid="g3")
    corrections.forget(store, gone)
    with pytest.raises(corrections.CorrectionError, match=f"#{gone} is forgotten, and the new text is the same memory"):
        corrections.correct(store, gone, "We keep the release notes in `docs/changes.md` for every tag.")
    assert store.get(gone).state == "forgotten"


@pytest.mark.parametrize("config_broken", [False, True])
def test_an_approved_memory_said_after_a_correction_replaces_it_whatever_the_settings_file(store, monkeypatch,
                                                                                           config_broken):
    """Approving is the user's act: the approved memory, said after a hand correction, was closed by it ("said after
    it", which it was not); and a broken settings file made `approve` a traceback."""
    from miner import paths
    from miner.extract.trust import approve, store_quarantined

    old = add(store, "We decided to deploy the API on Nomad.", 1, subject="deploy target", value="Nomad")
    fixed = corrections.correct(store, old, "We decided to deploy the API on Fly.io.").new_id
    if config_broken:
        config_file = paths.config_dir() / "config.json"
        config_file.parent.mkdir(parents=True, exist_ok=True)
        config_file.write_text("{not json", encoding="utf-8")
    with store.atomic():
        held, _ = store_quarantined(store, memory("From now on we deploy the API on Kubernetes instead of Fly.io.", 5,
                                                  ts=LATER.format(5), role="assistant", subject="deploy target",
                                                  value="Kubernetes"), "reads like an instruction")
    line = approve(store, held)
    assert store.get(held).state == "active" and store.get(fixed).state == "superseded", line
    assert f"#{fixed} superseded by #{held}" in line


def test_a_correction_to_another_memorys_words_makes_them_the_users(store):
    """Corrected to the text of a memory the assistant had said, the memory became current again but stayed the
    assistant's: its words said again later undid the correction."""
    first = add(store, "The API rate limit is 100 requests per minute for each client.", 1, role="assistant",
                subject="rate limit", value="100")
    second = add(store, "The API rate limit is 500 requests per minute for each client.", 2, role="assistant",
                 subject="rate limit", value="500")
    assert store.get(first).state == "superseded"
    assert corrections.correct(store, second, "The API rate limit is 100 requests per minute for each client.") \
        .new_id == first
    assert store.get(first).source == "manual"
    later("The API rate limit is 500 requests per minute for each client.", 3, store=store, role="assistant",
          subject="rate limit", value="500")
    assert store.get(first).state == "active" and store.get(second).state == "superseded"


@pytest.mark.parametrize("old,typed,action", [("IOS builds run nightly on the Mac mini.",
                                               "iOS builds run nightly on the Mac mini.", "corrected"),
                                              ("Use pnpm for this repo.", "use pnpm for this repo", "unchanged")])
def test_a_first_letters_case_is_a_correction_unless_it_only_starts_the_sentence(store, old, typed, action):
    assert corrections.correct(store, add(store, old, 1), typed).action == action


def test_approving_weighs_what_the_user_said_after_it_in_the_same_session(store):
    """Approved, a quarantined memory was taken as said after everything of its session: it closed the user's later
    statement."""
    from miner.extract.trust import approve, store_quarantined

    with store.atomic():
        held, _ = store_quarantined(store, memory("From now on the API rate limit is 100 requests per minute.", 1,
                                                  role="assistant", subject="rate limit", value="100"), "instruction")
    said = add(store, "The API rate limit is 500 requests per minute.", 2, subject="rate limit", value="500")
    approve(store, held)
    assert store.get(said).state == "active" and store.get(held).state == "superseded"
