"""`miner move OLD NEW`: a moved or renamed project folder keeps its memories."""

from __future__ import annotations

import json
import subprocess
import sys

from click.testing import CliRunner

from miner.cli.main import main
from miner.memory.store import Store
from tests.builders import Session
from tests.conftest import subprocess_env


def mined(tmp_path, cwd: str, *said: str, name: str = "s1") -> Session:
    """A session in `cwd` that said `said` (the user's words, each answered), mined."""
    session = Session(tmp_path / "t" / f"{name}.jsonl", cwd=cwd)
    for text in said:
        session.user(text)
        session.assistant("Done.")
    result = CliRunner().invoke(main, ["mine", str(session.path)])
    assert result.exit_code == 0, result.output
    return session


def rows_of(project: str) -> dict[str, int]:
    with Store(readonly=True) as store:
        return {table: store.db.execute(f"SELECT COUNT(*) FROM {table} WHERE project = ?", (project,)).fetchone()[0]
                for table in ("memories", "sessions", "checkpoints", "watermarks", "archive", "memory_hashes")}


def session_start(cwd: str) -> str:
    """The block a new session in `cwd` is given, from the hook run as Claude Code runs it."""
    payload = json.dumps({"session_id": "a-new-session", "transcript_path": "", "cwd": cwd, "source": "startup",
                          "hook_event_name": "SessionStart"})
    done = subprocess.run([sys.executable, "-I", "-c", "import sys; from miner.hooks import main; sys.exit(main())",
                           "session-start"], input=payload, capture_output=True, text=True, env=subprocess_env(),
                          timeout=60)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"] if done.stdout else ""


def test_a_moved_project_gets_its_memories_sessions_and_checkpoints_back_under_its_new_folder(tmp_path):
    mined(tmp_path, "/work/shop", "We'll use PostgreSQL instead of MySQL for the main database.",
          "Please always run the linter before you commit.")
    mined(tmp_path, "/work/shop/api", "We decided to keep the API on port 8080.", name="s2")
    before = rows_of("/work/shop")
    assert before["memories"] and before["sessions"] and before["checkpoints"] and before["archive"]
    assert "PostgreSQL" not in session_start("/srv/shop")  # the new folder is a project of its own

    result = CliRunner().invoke(main, ["move", "/work/shop", "/srv/shop"])
    assert result.exit_code == 0, result.output
    assert result.output.startswith(f"moved /work/shop to /srv/shop: {before['memories'] + 1} memories, 2 sessions")
    assert rows_of("/srv/shop") == before and not any(rows_of("/work/shop").values())
    assert rows_of("/srv/shop/api")["memories"] == 1  # a folder inside it goes to the same folder inside the new one
    with Store(readonly=True) as store:
        assert {row[0] for row in store.db.execute("SELECT cwd FROM sessions")} == {"/srv/shop", "/srv/shop/api"}
        assert {store.checkpoint(s)["project"] for (s,) in store.db.execute("SELECT session_id FROM checkpoints")} \
            == {"/srv/shop", "/srv/shop/api"}
    block = session_start("/srv/shop")
    assert "PostgreSQL" in block and "Where the last session left off" in block
    assert "PostgreSQL" not in session_start("/work/shop")  # (the user's global preferences go everywhere)
    again = CliRunner().invoke(main, ["move", "/work/shop", "/srv/shop"])  # nothing is left there
    assert again.exit_code == 1 and "nothing is stored for /work/shop" in again.output


def test_joining_a_project_that_holds_memories_asks_first_and_joins_the_same_words(tmp_path):
    mined(tmp_path, "/work/shop", "We'll use PostgreSQL instead of MySQL for the main database.")
    mined(tmp_path, "/srv/shop", "We'll use PostgreSQL instead of MySQL for the main database.",
          "We decided to deploy on Fridays only.", name="s2")
    old, new = rows_of("/work/shop"), rows_of("/srv/shop")
    refused = CliRunner().invoke(main, ["move", "/work/shop", "/srv/shop"], input="n\n")
    assert refused.exit_code == 1 and "/srv/shop holds memories of its own" in refused.output
    assert rows_of("/work/shop") == old and rows_of("/srv/shop") == new  # nothing moved

    joined = CliRunner().invoke(main, ["move", "/work/shop", "/srv/shop", "--yes"])
    assert joined.exit_code == 0, joined.output
    assert "1 memory joined the one /srv/shop held in the same words" in joined.output
    after = rows_of("/srv/shop")
    assert after["memories"] == old["memories"] + new["memories"] - 1 and not any(rows_of("/work/shop").values())
    with Store(readonly=True) as store:
        (kept,) = [m for m in store.list_memories(project="/srv/shop") if "PostgreSQL" in m.text]
        assert kept.evidence_count == 2 and kept.session_count == 2  # said in both folders' sessions
    decisions = session_start("/srv/shop").split("## Decisions", 1)[1]
    assert decisions.count("PostgreSQL instead of MySQL") == 1 and "Fridays" in decisions


def test_what_the_user_decided_of_a_joined_memory_goes_with_it(tmp_path):
    """A memory forgotten in the old folder that the new one holds in the same words stays forgotten; one pinned
    there stays pinned."""
    mined(tmp_path, "/work/shop", "We'll use PostgreSQL instead of MySQL for the main database.",
          "We decided to keep the API on port 8080.")
    mined(tmp_path, "/srv/shop", "We'll use PostgreSQL instead of MySQL for the main database.",
          "We decided to keep the API on port 8080.", name="s2")
    with Store(readonly=True) as store:
        old = {m.text: m.id for m in store.list_memories(project="/work/shop")}
    runner = CliRunner()
    assert runner.invoke(main, ["forget", str(old["We'll use PostgreSQL instead of MySQL for the main database."])]) \
        .exit_code == 0
    assert runner.invoke(main, ["pin", str(old["We decided to keep the API on port 8080."])]).exit_code == 0
    assert runner.invoke(main, ["move", "/work/shop", "/srv/shop", "--yes"]).exit_code == 0
    with Store(readonly=True) as store:
        states = {m.text: (m.state, m.pinned) for m in store.list_memories(project="/srv/shop", states=())}
    assert states == {"We'll use PostgreSQL instead of MySQL for the main database.": ("forgotten", False),
                      "We decided to keep the API on port 8080.": ("active", True)}
    assert "PostgreSQL" not in session_start("/srv/shop")


def test_a_project_in_a_team_syncs_from_its_new_folder(tmp_path):
    from miner.team import settings as team_settings

    mined(tmp_path, "/work/shop", "We'll use PostgreSQL instead of MySQL for the main database.")
    mined(tmp_path, "/work/shop/api", "We decided to keep the API on port 8080.", name="s2")
    settings = team_settings.TeamSettings(url="postgresql://db.example.test/team", team="core",
                                      projects={"/work/shop": "shop", "/work/shop/api": "shop-api"})
    team_settings.save(settings)
    result = CliRunner().invoke(main, ["move", "/work/shop", "/srv/shop", "--yes"])
    assert result.exit_code == 0 and result.output.splitlines()[-2:] == [
        "/srv/shop syncs with team 'core' as 'shop' now", "/srv/shop/api syncs with team 'core' as 'shop-api' now"]
    assert team_settings.load().projects == {"/srv/shop": "shop", "/srv/shop/api": "shop-api"}  # (and inside it)


def test_what_cannot_be_moved_is_said_in_one_line(tmp_path):
    mined(tmp_path, "/work/shop", "We'll use PostgreSQL instead of MySQL for the main database.")
    for args, said in ((["/work/nowhere", "/srv/shop"], "nothing is stored for /work/nowhere (a typo in the path?"),
                       (["/work/shop", "/work/shop/"], "/work/shop is already the project's folder"),
                       (["/work/shop", "/work/shop/v2"], "/work/shop/v2 is inside /work/shop"),
                       (["", "/srv/shop"], "give the folder the project was in and the one it is in now")):
        result = CliRunner().invoke(main, ["move", *args])
        assert result.exit_code == 1 and said in result.output and len(result.output.splitlines()) == 1, \
            (args, result.output)
    assert rows_of("/work/shop")["memories"]


def stored_at(project: str, text: str, ts: str) -> int:
    from miner.memory.records import NewMemory

    with Store() as store, store.atomic():
        return store.add_memory(NewMemory(project=project, category="decision", text=text, confidence=0.8,
                                          rule_id="r", role="user", session_id=f"s-{ts}", transcript="/t.jsonl",
                                          entry_uuid=f"{project}-{ts}", ts=ts))[0]


def test_a_folder_that_is_gone_is_taken_as_written_not_as_the_git_root_above_it(tmp_path):
    """OLD went through the look-up of its git root: gone, it climbed to the first folder above it with a `.git`
    (a home folder's dotfiles), and every project under that folder was moved without a question."""
    home = tmp_path / "home-folder"
    (home / ".git").mkdir(parents=True)
    gone, other = home / "code" / "proj", home / "code" / "other"
    stored_at(str(gone), "We decided to keep the API on port 8080.", "2026-01-01T10:00:00Z")
    stored_at(str(other), "We decided to deploy the other project on Fridays.", "2026-01-01T10:00:00Z")
    result = CliRunner().invoke(main, ["move", str(gone), "/srv/proj"])
    assert result.exit_code == 0 and result.output.startswith(f"moved {gone} to /srv/proj: 1 memory"), result.output
    assert rows_of(str(other))["memories"] == 1 and rows_of("/srv/proj")["memories"] == 1


def test_moving_a_folder_that_holds_several_projects_asks_first(tmp_path):
    for name in ("a", "b"):
        stored_at(f"/work/{name}", f"We decided to name the service {name} after its team.", "2026-01-01T10:00:00Z")
    refused = CliRunner().invoke(main, ["move", "/work", "/srv"], input="n\n")
    assert refused.exit_code == 1 and "/work holds 2 projects (/work/a, /work/b): move them under /srv?" in \
        refused.output
    assert rows_of("/work/a")["memories"] == 1 and not rows_of("/srv/a")["memories"]
    assert CliRunner().invoke(main, ["move", "/work", "/srv", "--yes"]).exit_code == 0
    assert rows_of("/srv/a")["memories"] == rows_of("/srv/b")["memories"] == 1


def test_a_memory_replaced_in_the_old_folder_and_said_again_in_the_new_one_since_stays_current(tmp_path):
    """Joined, the new folder's memory took on the old one's close: a decision said again in March was closed by a
    change of mind of January."""
    mysql = "We decided to use MySQL for the main database."
    first = stored_at("/work/shop", mysql, "2026-01-01T10:00:00Z")
    later = stored_at("/work/shop", "We'll use PostgreSQL instead of MySQL for the main database.",
                      "2026-01-02T10:00:00Z")
    with Store() as store, store.atomic():
        assert store.supersede(later, first, "changed mind", "MySQL", at="2026-01-02T10:00:00Z")
    again = stored_at("/srv/shop", mysql, "2026-03-01T10:00:00Z")
    assert CliRunner().invoke(main, ["move", "/work/shop", "/srv/shop", "--yes"]).exit_code == 0
    with Store(readonly=True) as store:
        assert store.get(again).state == "active"
        assert store.get(later).state == "superseded"  # what replaced it there is closed in turn: one is current
    decisions = CliRunner().invoke(main, ["recall", "--project", "/srv/shop"]).output
    assert "use MySQL" in decisions and "- We'll use PostgreSQL" not in decisions  # (only as what it "was")


def test_a_memory_corrected_by_hand_in_the_old_folder_is_found_through_the_archive_of_neither(tmp_path):
    """The new folder's own sentence of a memory corrected by hand in the old one stayed in its archive: the prompt
    hook showed "port 8080" again after the move (a forget was hidden; a correction was not)."""
    said = "We decided to keep the API on port 8080 in staging."
    mined(tmp_path, "/work/shop", said)
    mined(tmp_path, "/srv/shop", said, name="s2")
    with Store(readonly=True) as store:
        old = {m.text: m.id for m in store.list_memories(project="/work/shop")}
    runner = CliRunner()
    assert runner.invoke(main, ["correct", str(old[said]), "We decided to keep the API on port 9090 in staging."]) \
        .exit_code == 0
    assert runner.invoke(main, ["move", "/work/shop", "/srv/shop", "--yes"]).exit_code == 0
    with Store(readonly=True) as store:
        shown = store.db.execute("SELECT COUNT(*) FROM archive WHERE text LIKE '%port 8080%' AND hidden = 0")
        assert shown.fetchone()[0] == 0
