"""Layer 3 on its own: a newer memory supersedes an older one; the old one is closed, linked, never deleted."""

from __future__ import annotations

import shutil

import pytest
from conftest import all_memories

from miner import config as config_mod
from miner.extract import rules as rules_mod
from miner.memory import lexicon
from miner.memory.corrections import history
from miner.memory.dedup import Deduper
from miner.memory.similarity import Comparer
from miner.memory.text_features import Statement
from miner.recall.block import build, format_item
from miner.runtime.mine import Miner, unit_langs
from tests.builders import Session
from tests.builders import new_memory as memory

CONFIG = config_mod.load()


@pytest.fixture
def store(any_store):
    """Conflicts are marked the same way on each backend: SQLite, and the team's PostgreSQL store."""
    return any_store


@pytest.fixture
def deduper(store):
    return Deduper(store)


def add(store, deduper, text, n, **kw):
    with store.atomic():
        return deduper.add(memory(text, n, **kw))


def states(store) -> dict[str, str]:
    return {m.text: m.state for m in all_memories(store)}


# --- by subject and value ------------------------------------------------------------------------------


def test_same_subject_another_value_supersedes_and_keeps_the_old_row(store, deduper):
    old = add(store, deduper, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    new = add(store, deduper, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    assert new.created and new.superseded == (old.memory_id,)
    closed = store.get(old.memory_id)
    assert closed.state == "superseded" and closed.valid_to == "2026-01-02T00:00:00Z"
    assert store.get(new.memory_id).state == "active" and store.get(new.memory_id).valid_to is None
    (link,) = store.links(old.memory_id)
    assert (link.src, link.dst, link.kind, link.was) == (new.memory_id, old.memory_id, "supersedes", "MySQL")
    assert len(all_memories(store)) == 2  # nothing deleted


def test_a_subject_about_another_thing_does_not_supersede(store, deduper):
    add(store, deduper, "The API listens on port 3216.", 1, category="fact", subject="port", value="3216")
    add(store, deduper, "The admin panel listens on port 4400.", 2, category="fact", subject="port", value="4400")
    add(store, deduper, "Redis runs on port 6379.", 3, category="fact", subject="port", value="6379")
    add(store, deduper, "Postgres runs on port 5432.", 4, category="fact", subject="port", value="5432")
    assert set(states(store).values()) == {"active"}


def test_a_changed_number_under_the_same_words_supersedes(store, deduper):
    add(store, deduper, "The API server listens on port 3216.", 1, category="fact", subject="port", value="3216")
    new = add(store, deduper, "The API server listens on port 3220.", 2, category="fact", subject="port", value="3220")
    assert new.superseded
    add(store, deduper, "Animation duration is 800ms per bar.", 3, category="fact")
    shorter = add(store, deduper, "Animation duration is 400ms per bar.", 4, category="fact")
    assert shorter.superseded and states(store)["Animation duration is 800ms per bar."] == "superseded"


def test_another_numbered_thing_is_not_another_value(store, deduper):
    for n, module in enumerate(("1-0", "2-0", "3-1"), start=1):
        add(store, deduper, f"We decided the module {module} scheduler runs every 2 minutes.", n)
    add(store, deduper, "Step 2 of the import takes 10 minutes.", 4, category="fact")
    add(store, deduper, "Step 3 of the import takes 10 minutes.", 5, category="fact")
    assert set(states(store).values()) == {"active"}
    # The same numbered thing with another value still supersedes.
    changed = add(store, deduper, "We decided the module 2-0 scheduler runs every 5 minutes.", 6)
    assert changed.superseded and states(store)["We decided the module 2-0 scheduler runs every 2 minutes."] == "superseded"


def test_a_restatement_that_leaves_a_number_out_changes_no_number(store, deduper):
    """The assistant says again part of the user's fact, without its second number: no number changed, and the
    user's memory (the only one to hold Django's version) stayed closed with "(was: 5.0.6)"."""
    add(store, deduper, "The dev server runs on port 8000, and we are on Django 5.0.6.", 1, category="fact")
    shorter = add(store, deduper, "The dev server runs on port 8000 now.", 2, category="fact", role="assistant")
    assert not shorter.superseded
    assert states(store)["The dev server runs on port 8000, and we are on Django 5.0.6."] == "active"


@pytest.mark.parametrize("old, new", [
    ("Для очереди сообщений берём RabbitMQ.", "Я передумал: переходим на Kafka вместо RabbitMQ."),
    ("Для фоновых задач будем использовать Celery.", "Вместо Celery будем использовать arq, он проще и асинхронный."),
    ("Mesaj kuyruğu için RabbitMQ kullanıyoruz.", "Fikrimi değiştirdim: RabbitMQ yerine Kafka kullanalım."),
    ("سنستخدم Vue للواجهة الأمامية.", "غيرت رأيي: سنستخدم React بدلاً من Vue للواجهة الأمامية."),
    ("PDF के लिए हम ReportLab इस्तेमाल करेंगे।", "PDF के लिए ReportLab की जगह WeasyPrint इस्तेमाल करेंगे।"),
])
def test_a_change_of_mind_in_russian_turkish_arabic_or_hindi_supersedes_as_in_english(store, deduper, old, new):
    """The words left once the replaced name is out ("для", "берём", "переходим") counted as content in Russian, where
    in English their like are light; Turkish "yerine", Arabic "بدلاً من" and Hindi "की जगह" were read as no change:
    the two said different things, and both stayed active."""
    add(store, deduper, old, 1)
    assert add(store, deduper, new, 2).superseded and states(store)[old] == "superseded"


@pytest.mark.parametrize("old, new", [
    ("Mesaj kuyruğu için RabbitMQ kullanıyoruz.", "Önbellek için Redis kullanıyoruz."),
    ("سنستخدم Vue للواجهة الأمامية.", "سنستخدم PostgreSQL لقاعدة البيانات."),
    ("PDF के लिए हम ReportLab इस्तेमाल करेंगे।", "कैश के लिए हम Redis इस्तेमाल करेंगे।"),
])
def test_another_choice_in_those_languages_supersedes_nothing(store, deduper, old, new):
    add(store, deduper, old, 1)
    assert not add(store, deduper, new, 2).superseded and set(states(store).values()) == {"active"}


def test_a_version_change_supersedes(store, deduper):
    add(store, deduper, "The app runs on Node 18.", 1, category="fact", subject="node", value="18")
    new = add(store, deduper, "The app runs on Node 20.", 2, category="fact", subject="node", value="20")
    assert new.superseded


def test_a_tentative_memory_supersedes_nothing(store, deduper):
    add(store, deduper, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    maybe = add(store, deduper, "Maybe use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL",
                tentative=True)
    assert not maybe.superseded and set(states(store).values()) == {"active"}


# --- correction markers ----------------------------------------------------------------------------------

RULES = rules_mod.load_rules(rules_mod.default_rule_files())


def statement(text: str, category: str) -> Statement:
    """A text as mining stores it: with the subject and value the default rules find."""
    for role in ("user", "assistant"):
        hits = RULES.match(text, role, unit_langs(text))
        if hits:
            return Statement(text, category, hits[0].subject.lower(), hits[0].value)
    return Statement(text, category)


@pytest.mark.parametrize("marker,category,old,new", [
    ("instead of", "decision", "Timestamps are stored as epoch seconds.", "Store timestamps as ISO strings instead of epoch seconds."),
    ("not X but Y", "decision", "The cache lives in process memory.", "The cache lives not in process memory but in Redis."),
    ("actually", "decision", "We use MySQL.", "Actually, we use PostgreSQL."),
    ("switch to", "decision", "We use Jest for unit tests.", "Switch the unit tests to Vitest."),
    ("no longer", "decision", "We deploy the docs to GitHub Pages.", "We no longer deploy the docs to GitHub Pages."),
    ("changed to", "decision", "Reports are emailed as PDF files.", "Reports changed to HTML emails."),
    ("from X to", "fact", "The animation uses 800ms per item.", "Reduced the animation from 800ms to 400ms per item."),
    ("改用", "decision", "数据库用 MySQL。", "数据库改用 PostgreSQL。"),
    ("不是…而是", "decision", "数据库用 MySQL。", "数据库不是 MySQL，而是 PostgreSQL。"),
    ("换成", "decision", "包管理器用 npm。", "包管理器换成 pnpm。"),
    ("不再", "preference", "每次提交前运行 lint。", "不再在提交前运行 lint。"),
    ("drop", "decision", "Show dual legends for circle size and year.", "Drop the year legend."),
    ("antonym", "decision", "Exclude bot accounts from the leaderboard.", "Include bot accounts in the leaderboard."),
])
def test_correction_markers_supersede(marker, category, old, new):
    comparer = Comparer(lexicon.load_synonyms())
    older, newer = statement(old, category), statement(new, category)
    assert not comparer.is_duplicate(newer, older)
    assert comparer.supersedes(newer, older) is not None, marker


@pytest.mark.parametrize("old,new", [
    ("Use PostgreSQL for the database.", "Use Redis for the cache."),
    ("We use SQLite for tests.", "Production runs on PostgreSQL."),
    ("Use SQLite for the test database.", "Use PostgreSQL for the main database."),
    ("Row missing from the old report → mark: ADDED",
     "Row in the old report but not in the new one → mark: KEPT, keep the old total"),
    ("I want a nightly export and to check the column names.",
     "The weekly export is actually returning the same columns as the nightly export."),
    ("Use the actual order ID ORD-5521.", "The path parameter got the docs URL instead of the actual order ID."),
    ("Actually the tests are slow.", "The build is actually fast."),
])
def test_related_statements_without_a_correction_stay_current(old, new):
    comparer = Comparer(lexicon.load_synonyms())
    assert comparer.supersedes(statement(new, "decision"), statement(old, "decision")) is None


@pytest.mark.parametrize("old,new", [
    # A short negated statement that shares only a light verb ("tengo", "ho": I have) and a name with a plan.
    ("Quiero usar Postgres para la base de datos, aunque tengo poca experiencia con Postgres.",
     "No tengo Postgres instalado."),
    ("Voglio usare Redis per la cache, anche se ho poca esperienza con Redis.", "Non ho Redis installato."),
])
def test_not_having_a_thing_does_not_rule_out_a_plan_to_use_it(old, new):
    comparer = Comparer(lexicon.load_synonyms())
    assert comparer.supersedes(statement(new, "decision"), statement(old, "decision")) is None


def test_a_rule_turned_around_in_spanish_still_supersedes():
    comparer = Comparer(lexicon.load_synonyms())
    older, newer = statement("Usamos Jest para los tests.", "decision"), statement("No usamos Jest para los tests.",
                                                                                   "decision")
    assert comparer.supersedes(newer, older) is not None


# The same prohibition typed with a straight apostrophe, a curly one (macOS and phone keyboards) or none.
@pytest.mark.parametrize("newer", ["Don't use Redis for the session store.",
                                   "Don\u2019t use Redis for the session store.",
                                   "dont use Redis for the session store."])
def test_a_rule_turned_around_however_the_apostrophe_is_typed_supersedes(newer):
    comparer = Comparer(lexicon.load_synonyms())
    older, turned = statement("Use Redis for the session store.", "decision"), statement(newer, "decision")
    assert not comparer.is_duplicate(turned, older)
    assert comparer.supersedes(turned, older) is not None


def test_the_same_value_written_another_way_is_no_change():
    comparer = Comparer(lexicon.load_synonyms())
    older = Statement("The worker limit comes from `config.toml:8`.", "fact", "config.toml", "8")
    newer = Statement("`config.toml:8` sets the worker limit.", "fact", "config.toml", "8")
    assert comparer.supersedes(newer, older) is None
    assert comparer.supersedes(Statement(newer.text, "fact", "config.toml", "9"), older) is not None


# --- chains, time order, restatement ---------------------------------------------------------------------

CHAIN = [("Use MySQL for the database.", "MySQL"), ("Use PostgreSQL for the database.", "PostgreSQL"),
         ("Use SQLite for the database.", "SQLite"), ("Use DuckDB for the database.", "DuckDB")]


def test_a_chain_of_four_versions_keeps_one_current_and_all_history(store, deduper):
    ids = [add(store, deduper, text, n + 1, subject="database", value=value).memory_id for n, (text, value) in enumerate(CHAIN)]
    assert [store.get(i).state for i in ids] == ["superseded"] * 3 + ["active"]
    for older, newer in zip(ids, ids[1:]):
        assert store.get(older).valid_to == store.get(newer).valid_from
    found = history(store, ids[0])
    assert [v.memory.id for v in found.versions] == ids and found.current == (ids[-1],)
    if not hasattr(store, "latest_checkpoint"):
        return  # a team store holds no sessions: recall blocks are rendered from the local store only
    block = build(store, "/p", CONFIG, log=False).text
    # Only the current version is an item; the one it replaced appears only as its "(was: …)" note.
    assert "- Use DuckDB for the database. (was: SQLite)" in block
    assert not any(word in block for word in ("MySQL", "PostgreSQL"))


def test_recall_notes_what_the_current_memory_replaced(store, deduper):
    add(store, deduper, "Use SQLite for the database.", 1, subject="database", value="SQLite")
    new = add(store, deduper, "Use DuckDB for the database.", 2, subject="database", value="DuckDB")
    notes = store.was_notes([new.memory_id])
    assert notes == {new.memory_id: "SQLite"}
    line = format_item(store.get(new.memory_id), notes[new.memory_id])
    assert line == "- Use DuckDB for the database. (was: SQLite)"
    # Nothing to add when the text already says it.
    assert "(was:" not in format_item(store.get(new.memory_id), "DuckDB")


def test_an_older_statement_mined_later_is_stored_already_closed(store, deduper):
    newer = add(store, deduper, "Use PostgreSQL for the database.", 5, subject="database", value="PostgreSQL")
    older = add(store, deduper, "Use MySQL for the database.", 2, subject="database", value="MySQL",
                session_id="s0", transcript="/older.jsonl")  # a backfill of an older session
    assert older.superseded_by == newer.memory_id
    assert store.get(older.memory_id).state == "superseded" and store.get(newer.memory_id).state == "active"
    assert store.get(older.memory_id).valid_to == "2026-01-05T00:00:00Z"


def test_a_superseded_memory_said_again_later_is_current_again(store, deduper):
    first = add(store, deduper, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    second = add(store, deduper, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    again = add(store, deduper, "Use MySQL for the database.", 3, subject="database", value="MySQL")
    assert again.action == "exact" and again.reopened
    assert store.get(first.memory_id).state == "active" and store.get(second.memory_id).state == "superseded"
    replay = add(store, deduper, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    assert not replay.reopened and store.get(second.memory_id).state == "superseded"  # the old entry again: nothing


def test_a_superseded_memory_said_again_before_its_replacement_became_current_stays_history(store, deduper):
    """An older session mined late says MySQL again: after the switch to PostgreSQL, but before the change to what is
    current now (a later change, or a correction made since). What is current stays current; the span stays whole."""
    mysql = add(store, deduper, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    add(store, deduper, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    current = add(store, deduper, "Use CockroachDB for the database.", 8, subject="database", value="CockroachDB")
    late = add(store, deduper, "Use MySQL for the database.", 5, subject="database", value="MySQL")
    assert late.action == "exact" and not late.reopened
    assert store.get(mysql.memory_id).state == "superseded"
    assert store.get(current.memory_id).state == "active" and store.get(current.memory_id).valid_to is None
    again = add(store, deduper, "Use MySQL for the database.", 9, subject="database", value="MySQL")
    assert again.reopened and store.get(current.memory_id).state == "superseded"  # said after it: current again


def test_a_superseded_memory_said_again_after_its_replacement_was_forgotten_is_current_again(store, deduper):
    """The user forgot the version that replaced MySQL, then says MySQL again: MySQL is current again (the forgotten
    one stays forgotten), not absorbed into history with nothing current."""
    mysql = add(store, deduper, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    postgres = add(store, deduper, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    with store.atomic():
        store.set_state(postgres.memory_id, "forgotten", "forgotten by hand")
    again = add(store, deduper, "Use MySQL for the database.", 5, subject="database", value="MySQL")
    assert again.action == "exact" and again.reopened
    assert store.get(mysql.memory_id).state == "active" and store.get(postgres.memory_id).state == "forgotten"


def test_a_pin_moves_to_the_replacement(store, deduper):
    old = add(store, deduper, "Use MySQL for the database.", 1, subject="database", value="MySQL")
    with store.atomic():
        store.set_pinned(old.memory_id, True)
    new = add(store, deduper, "Use PostgreSQL for the database.", 2, subject="database", value="PostgreSQL")
    assert store.get(new.memory_id).pinned and not store.get(old.memory_id).pinned


# --- through the miner: chains and idempotence -----------------------------------------------------------


@pytest.fixture
def miner(sqlite_store, pipeline):
    return Miner(sqlite_store, CONFIG, pipeline=pipeline)


def changing_session(path, start="2026-03-01T10:00:00"):
    s = Session(path, cwd="/work/shop", start=start)
    s.user("We'll use MySQL for the main database.")
    s.assistant("Noted. The API server listens on port 3216 in development.")
    s.user("Actually, switch to PostgreSQL for the main database.")
    s.user("The API server listens on port 3220 now.")
    s.user("No, let's go with SQLite for the main database instead.")
    s.user("Please always run the linter before you commit.")
    s.user("改用 DuckDB 作为数据库。")
    return s


def snapshot(store) -> tuple:
    db = store.db
    return (
        db.execute("SELECT id, state, text, valid_to, evidence_count FROM memories ORDER BY id").fetchall(),
        db.execute("SELECT COUNT(*) FROM evidence").fetchone()[0],
        db.execute("SELECT src, dst, kind FROM links ORDER BY src, dst").fetchall(),
    )


def test_mining_a_session_that_changes_its_mind_builds_the_chain(tmp_path, sqlite_store, miner):
    store = sqlite_store  # mining writes the local SQLite store
    session = changing_session(tmp_path / "s1.jsonl")
    miner.mine_file(session.path)
    current = {r["text"] for r in store.db.execute("SELECT text FROM memories WHERE state = 'active'")}
    assert current == {"The API server listens on port 3220 now.", "Please always run the linter before you commit.",
                       "改用 DuckDB 作为数据库。"}
    duck = store.db.execute("SELECT id FROM memories WHERE text LIKE '%DuckDB%'").fetchone()["id"]
    assert [v.memory.value for v in history(store, duck).versions] == ["MySQL", "PostgreSQL", "SQLite", "DuckDB"]
    block = build(store, "/work/shop", CONFIG, log=False).text
    assert "DuckDB" in block and "MySQL" not in block
    assert "3216" not in block.replace("(was: 3216)", "")  # the old port only as the note beside the new one


def test_mining_twice_replaying_or_backfilling_adds_nothing(tmp_path, sqlite_store, miner, pipeline):
    store = sqlite_store  # mining writes the local SQLite store
    session = changing_session(tmp_path / "s1.jsonl")
    miner.mine_file(session.path)
    before = snapshot(store)
    miner.mine_file(session.path)  # the same file again
    assert snapshot(store) == before
    # A resumed session replays its entries into a new file.
    replay = tmp_path / "resumed.jsonl"
    shutil.copy(session.path, replay)
    miner.mine_file(replay)
    assert snapshot(store) == before
    # The hooks mined it, and now a backfill starts from scratch: no watermark, no seen entries.
    with store.atomic() as db:
        db.execute("DELETE FROM watermarks")
        db.execute("DELETE FROM seen_entries")
    Miner(store, CONFIG, pipeline=pipeline).mine_file(session.path)
    assert snapshot(store) == before


def test_a_backfill_of_an_older_session_after_a_newer_one_ends_in_the_same_state(tmp_path, sqlite_store, miner):
    store = sqlite_store  # mining writes the local SQLite store
    old = Session(tmp_path / "old.jsonl", cwd="/work/shop", start="2026-02-01T10:00:00")
    old.user("We'll use MySQL for the main database.")
    new = Session(tmp_path / "new.jsonl", cwd="/work/shop", start="2026-03-01T10:00:00")
    new.user("Actually, switch to PostgreSQL for the main database.")
    miner.mine_file(new.path)  # the hooks saw the newer session first
    miner.mine_file(old.path)  # the backfill comes later
    assert states(store) == {"Actually, switch to PostgreSQL for the main database.": "active",
                             "We'll use MySQL for the main database.": "superseded"}


def test_in_one_session_a_change_of_mind_later_in_the_file_supersedes_whatever_its_clock_says(tmp_path,
                                                                                               sqlite_store, miner):
    """The machine's clock stepped back an hour between two lines of one session: the later line was taken for a
    backfill of something said earlier, and both decisions stayed current."""
    store = sqlite_store
    session = Session(tmp_path / "s.jsonl", cwd="/work/shop", start="2026-02-01T10:00:00")
    session.user("Let's use Postgres for the job queue.", timestamp="2026-02-01T10:00:00.000Z")
    session.user("Let's switch the job queue to Redis instead of Postgres.", timestamp="2026-02-01T09:00:00.000Z")
    miner.mine_file(session.path)
    assert states(store) == {"Let's switch the job queue to Redis instead of Postgres.": "active",
                             "Let's use Postgres for the job queue.": "superseded"}
    closed = store.db.execute("SELECT valid_from, valid_to FROM memories WHERE state = 'superseded'").fetchone()
    assert closed[1] >= closed[0]  # it ends no earlier than it began


# --- scoring against the gold's `supersedes` -------------------------------------------------------------


def test_supersede_links_are_scored_against_gold_units():
    from miner.evaluation.transcripts import link_prf, memory_units, score_links

    def unit(n, uuid, text, supersedes=(), **kw):
        return {"unit": n, "uuid": uuid, "role": "user", "category": "decision", "text": text, "tentative": False,
                "doc": False, "supersedes": list(supersedes), **kw}

    gold = [unit(1, "a", "Use MySQL for the database."), unit(2, "b", "Use PostgreSQL for the database.", [1]),
            unit(3, "c", "Port is 3216."), unit(4, "d", "Port is 3220 now.", [3]),
            unit(5, "e", "Maybe use Redis.", tentative=True), unit(6, "f", "Use Memcached then.", [5], tentative=True)]
    mined = [{"memory_id": 10, "uuid": "a", "text": "Use MySQL for the database."},
             {"memory_id": 11, "uuid": "b", "text": "Use PostgreSQL for the database."},
             {"memory_id": 12, "uuid": "c", "text": "Port is 3216."},
             {"memory_id": 13, "uuid": "x", "text": "Something unrelated entirely."},
             {"memory_id": 14, "uuid": "f", "text": "Use Memcached then."},
             {"memory_id": 15, "uuid": "e", "text": "Maybe use Redis."}]
    units_of = memory_units(mined, gold)
    assert units_of[10] == {1} and units_of[11] == {2} and 13 not in units_of
    counts = score_links([(11, 10), (13, 12), (14, 15)], units_of, gold)
    # right: 11 → 10; wrong: 13 → 12; neutral: a link from a tentative unit. Gold 2 → 1 found; 4 → 3 never mined.
    assert counts == {"tp": 1, "fp": 1, "gold": 2, "found": 1, "reachable": 1}
    scores = link_prf(counts)
    assert scores["precision"] == 0.5 and scores["recall"] == 0.5 and scores["recall_reachable"] == 1.0


@pytest.mark.parametrize("older, newer, subject, values", [
    ("We'll use Poetry for the payments service.", "We'll use uv for the indexing service.", "package manager",
     ("Poetry", "uv")),
    ("We'll use Jest for the checkout tests.", "We'll use Vitest for the reporting tests.", "framework",
     ("Jest", "Vitest")),
])
def test_the_same_kind_of_tool_for_two_parts_of_a_project_is_no_change_of_mind(store, deduper, older, newer,
                                                                                subject, values):
    """The two shared the subject and one word of context ("service"): the later closed the earlier, and the block
    said the payments service's tool had been replaced by the indexing service's."""
    first = add(store, deduper, older, 1, subject=subject, value=values[0])
    second = add(store, deduper, newer, 2, subject=subject, value=values[1])
    assert second.superseded == () and store.get(first.memory_id).state == "active"
    third = add(store, deduper, older.replace(values[0], "Hatch"), 3, subject=subject, value="Hatch")
    assert third.superseded == (first.memory_id,)  # the same part's tool changed: that is one


def test_a_number_changed_supersedes_across_a_decision_and_a_preference(store, deduper):
    """The classifier filed the first as a decision and the second as a preference: a changed number had to be of
    the same category, and both limits were recalled as current."""
    first = add(store, deduper, "I want the line length limit of the formatter set to 100 characters.", 1,
                category="decision")
    second = add(store, deduper, "I want the line length limit of the formatter set to 120 characters now.", 2,
                 category="preference")
    assert second.superseded == (first.memory_id,) and store.get(first.memory_id).state == "superseded"


def test_the_assistants_acknowledgement_never_closes_the_users_preference_but_the_users_words_do(store, deduper):
    """"Understood, I replaced print calls with the logging module." closed the user's "Don't use print for logging,
    use the logging module." as "print again": from then on the rule was shown as one that no longer held."""
    rule = add(store, deduper, "Don't use print for logging, use the logging module.", 1, category="preference")
    echo = add(store, deduper, "Understood, I replaced print calls with the logging module.", 2, role="assistant")
    assert echo.superseded == () and store.get(rule.memory_id).state == "active"
    earlier = add(store, deduper, "Understood, I replaced print calls with the logging module in the CLI.", 3,
                  role="assistant", session_id="s0", transcript="/t0.jsonl", ts="2025-12-01T00:00:00Z")
    assert earlier.superseded_by is None and store.get(rule.memory_id).state == "active"  # nor backfilled later
    changed = add(store, deduper, "Actually, use print for logging in the CLI scripts, not the logging module.", 4,
                  category="preference")
    assert rule.memory_id in changed.superseded  # the user's own words change it


def test_the_same_change_made_in_another_file_replaces_nothing(store, deduper):
    """"Rename the variable tmp to buffer in billing/api.py" was closed by the same words about billing/models.py,
    then brought back by a repeat: the history went round in circles, each time with a wrong "(was: …)"."""
    first = add(store, deduper, "Rename the variable tmp to buffer in billing/api.py.", 1)
    second = add(store, deduper, "Rename the variable tmp to buffer in billing/models.py.", 2)
    assert second.superseded == () and store.get(first.memory_id).state == "active"
    moved = add(store, deduper, "Use config/app.yaml instead of config/api.yaml for the API settings.", 3)
    settings = add(store, deduper, "Use config/db.yaml instead of config/app.yaml for the API settings.", 4)
    assert settings.superseded == (moved.memory_id,)  # a file replaced by another is a change, still


def test_the_same_replacement_said_again_is_no_change_of_mind_but_another_replacement_is(store, deduper):
    """The assistant's "Migrated the DAG to Dagster instead of Airflow." closed the user's "Let's use Dagster
    instead of Airflow for scheduling.", shown as "(was: …Dagster…)": as if Dagster were the old choice."""
    chosen = add(store, deduper, "Let's use Dagster instead of Airflow for scheduling.", 1)
    again = add(store, deduper, "Migrated the DAG to Dagster instead of Airflow.", 2, role="assistant")
    assert again.superseded == () and store.get(chosen.memory_id).state == "active"
    other = add(store, deduper, "Let's use Prefect instead of Airflow for scheduling.", 3)
    assert chosen.memory_id in other.superseded


@pytest.mark.parametrize("switch", ["Let's switch the database from MySQL to PostgreSQL.",
                                    "I switched the main database to PostgreSQL instead of MySQL.",
                                    "We're moving the billing store off MySQL to PostgreSQL."])
def test_a_database_switched_in_the_usual_words_replaces_the_one_chosen_before(tmp_path, sqlite_store, miner, switch):
    """"Switch the database from X to Y" matched no rule: the classifier alone dropped it or kept it without a
    subject, and the block went on giving the database chosen first as the current one."""
    first = Session(tmp_path / "s1.jsonl", cwd="/work/shop", start="2026-02-01T10:00:00")
    first.user("Let's use MySQL as the database for the billing API.")
    later = Session(tmp_path / "s2.jsonl", cwd="/work/shop", start="2026-03-01T10:00:00")
    later.user(switch)
    miner.mine_file(first.path)
    miner.mine_file(later.path)
    assert states(sqlite_store) == {"Let's use MySQL as the database for the billing API.": "superseded",
                                    switch: "active"}
