"""Heat, cold storage and search --all."""

from __future__ import annotations

from click.testing import CliRunner

from miner import config as config_mod
from miner.cli.main import main
from miner.memory import corrections
from miner.memory.decay import cold_candidates, go_cold, heat
from miner.memory.records import NewMemory, now_iso
from miner.memory.store import Store

CONFIG = config_mod.load()


def worked_in_now(store, project="/p"):
    """A session of `project` today: its memories age up to now (an idle project's stop ageing)."""
    with store.atomic():
        store.upsert_session(f"today-{project}", project, project, "main", "/t", now_iso())


def add(store, text, ts, **kw):
    fields = dict(project="/p", category="fact", text=text, confidence=0.6, rule_id="t", role="user",
                  session_id="s", transcript="/t", entry_uuid=text[:8], ts=ts)
    fields.update(kw)
    with store.atomic():
        return store.add_memory(NewMemory(**fields))[0]


def test_heat_decays_with_age_and_grows_with_use(tmp_path):
    with Store(tmp_path / "m.db") as store:
        fresh = add(store, "The fresh fact about the build cache.", "2026-11-20T00:00:00Z")
        old = add(store, "The old fact about the legacy cron job.", "2025-01-01T00:00:00Z")
        now = 1796000000.0  # 2026-11-30
        hot, cold = heat(store.get(fresh), CONFIG, now), heat(store.get(old), CONFIG, now)
        assert hot.heat > 10 * cold.heat
        store.note_recalled([old])
        assert heat(store.get(old), CONFIG, now).heat > cold.heat  # recalled just now: warm again


def test_gc_dry_run_then_gc_and_search_all():
    with Store() as store:
        add(store, "The old fact about the legacy cron job.", "2024-01-01T00:00:00Z")
        pinned = add(store, "The pinned fact about the release train.", "2024-01-01T00:00:00Z")
        add(store, "The recent fact about the build cache.", "2099-01-01T00:00:00Z")
        with store.atomic():
            store.set_pinned(pinned, True)
        assert [h.memory.text for h in cold_candidates(store, CONFIG)] == ["The old fact about the legacy cron job."]
    runner = CliRunner()
    dry = runner.invoke(main, ["gc", "--dry-run"])
    assert dry.exit_code == 0 and "1 memories would go cold" in dry.stdout and "legacy cron" in dry.stdout
    assert "legacy cron" in runner.invoke(main, ["search", "legacy cron"]).stdout  # still active
    done = runner.invoke(main, ["gc"])
    assert "1 memories moved to cold storage" in done.stdout
    assert "legacy cron" not in runner.invoke(main, ["search", "legacy cron"]).stdout
    assert "legacy cron job. [cold]" in runner.invoke(main, ["search", "legacy cron", "--all"]).stdout
    recall = runner.invoke(main, ["recall", "--project", "/p"]).stdout
    assert "legacy cron" not in recall and "release train" in recall


def test_gc_of_one_project_says_the_session_files_it_removes_are_of_every_project():
    """`--project` kept the memories of other projects as they were, but the files of stale sessions went for every
    project without a word."""
    with Store() as store:
        add(store, "The old fact about the legacy cron job.", "2024-01-01T00:00:00Z")
    done = CliRunner().invoke(main, ["gc", "--project", "/p"])
    assert done.exit_code == 0 and "removed (of every project: they name no project)." in done.stdout, done.stdout
    assert CliRunner().invoke(main, ["gc"]).stdout.rstrip().endswith("(and of runs cut short) removed.")


def test_search_never_errors_on_fts_syntax():
    with Store() as store:
        add(store, "The API listens on port 8080 in development.", "2026-01-01T00:00:00Z")
    for hostile in ['"foo', "NEAR(", "*", "port AND", ")"]:
        result = CliRunner().invoke(main, ["search", hostile])
        assert result.exit_code == 0, result.output


def test_standing_kinds_stay_warm_longer(tmp_path):
    with Store(tmp_path / "m.db") as store:
        rule = add(store, "Always open a pull request before merging.", "2026-07-01T00:00:00Z", category="preference")
        detail = add(store, "The nightly export wrote 120 rows on the first run.", "2026-07-01T00:00:00Z")
        now = 1796000000.0  # 2026-11-30: five months later
        worked_in_now(store)
        cold = {h.memory.id for h in cold_candidates(store, CONFIG, now=now)}
        assert detail in cold and rule not in cold
        assert heat(store.get(rule), CONFIG, now).heat > 4 * heat(store.get(detail), CONFIG, now).heat


def test_gc_weighs_each_memory_again_when_it_writes(tmp_path):
    """Another process forgets, pins or recalls a memory after gc chose it and before gc could write (it waits for
    the write lock while a miner holds it): the forget is not undone, the pinned one never goes cold, the one used
    again stays warm."""
    path = tmp_path / "m.db"
    with Store(path) as store:
        texts = ("The old fact about the legacy cron job.", "The old fact about the fax gateway.",
                 "The old fact about the tape backups.", "The old fact about the mainframe bridge.")
        ids = [add(store, text, "2024-01-01T00:00:00Z") for text in texts]
        worked_in_now(store)
        chosen = cold_candidates(store, CONFIG)
        assert sorted(h.memory.id for h in chosen) == sorted(ids)
        with Store(path) as other:  # the other process
            corrections.forget(other, ids[0], "wrong")
            corrections.pin(other, ids[1])
            other.note_recalled([ids[2]])
        moved = go_cold(store, chosen, CONFIG)
        assert [h.memory.id for h in moved] == [ids[3]]
        after = {i: (store.get(i).state, store.get(i).pinned) for i in ids}
    assert after == {ids[0]: ("forgotten", False), ids[1]: ("active", True), ids[2]: ("active", False),
                     ids[3]: ("cold", False)}


def test_looking_at_the_block_is_no_recall():
    """`miner recall` is a person looking: it is logged for `miner zones`, but the memories it shows do not warm up
    (a session's block counts; so would the assistant asking through MCP)."""
    from miner.recall.block import build

    with Store() as store:
        old = add(store, "The old fact about the legacy cron job.", "2024-01-01T00:00:00Z")
        worked_in_now(store)
    result = CliRunner().invoke(main, ["recall", "--project", "/p"])
    assert result.exit_code == 0 and "legacy cron" in result.output
    assert "last recall" in CliRunner().invoke(main, ["zones", "--project", "/p"]).output
    with Store() as store:
        assert store.get(old).recall_count == 0 and cold_candidates(store, CONFIG)
        build(store, "/p", CONFIG, "startup")  # a session's block
        assert store.get(old).recall_count == 1


def test_a_project_left_alone_for_months_keeps_what_it_knew():
    """Heat counted its age to today: `miner gc` after a long break from a project sent nearly all of its memories
    cold, and its next session started without them. A memory ages while its project is worked in."""
    with Store() as store:
        for n in range(3):
            add(store, f"The fact number {n} about the archived billing service.", "2025-03-01T00:00:00Z",
                project="/idle")
        add(store, "The fact about the billing service's first host.", "2024-03-01T00:00:00Z",
                     project="/idle")  # a year older than the project's last work: it did age
        add(store, "The fact about the parser of the active project.", "2025-03-01T00:00:00Z")
        worked_in_now(store)  # (the other project is worked in today: its year-old fact ages)
        cold = {h.memory.text for h in cold_candidates(store, CONFIG)}
    assert cold == {"The fact about the billing service's first host.",
                    "The fact about the parser of the active project."}
    done = CliRunner().invoke(main, ["gc"])
    assert "2 memories moved to cold storage" in done.stdout, done.stdout
    recall = CliRunner().invoke(main, ["recall", "--project", "/idle"]).stdout
    assert all(f"The fact number {n} about" in recall for n in range(3)) and "first host" not in recall
