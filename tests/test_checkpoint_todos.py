"""Checkpoints: a session that reports a todo done closes it, and what a checkpoint reads stays bounded."""

from __future__ import annotations

import random

import pytest

from miner.extract import secret_turns
from miner.extract.model import Turn
from miner.memory.records import NewMemory
from miner.recall import checkpoint
from miner.recall.checkpoint import close_done_todos, done_todos
from miner.textutil import keywords
from tests.builders import Session

TODOS = ("Later we should add pagination to the plant list endpoint.",
         "Remaining: wire the CI job for the release build.",
         "待办：给设置页加上暗色模式")


def stored_todos(store, texts: tuple[str, ...], entry: str) -> list[int]:
    """The todos said in the first session, one entry each (`entry` + its number); their ids."""
    ids = []
    with store.atomic():
        for n, text in enumerate(texts):
            ids.append(store.add_memory(NewMemory(
                project="/p", category="todo", text=text, confidence=0.7, rule_id="t", role="user", session_id="s1",
                transcript="/t.jsonl", entry_uuid=f"{entry}{n}", ts="2026-03-01T10:00:00.000Z",
                keywords=tuple(keywords(text))))[0])
    return ids


@pytest.fixture
def todos(store):
    return stored_todos(store, TODOS, "u")


def turn(text: str, ts: str = "2026-03-02T10:00:00.000Z", role: str = "assistant", sidechain: bool = False) -> Turn:
    return Turn("x", "s2", role, text, ts, "/p", "main", sidechain, "/t.jsonl")


@pytest.mark.parametrize("text, done", [
    ("Pagination for the plant list endpoint is done now.", 0),
    ("I added pagination to the plant list endpoint, 50 rows a page.", 0),
    ("The CI job for the release build is wired up.", 1),
    ("设置页的暗色模式已完成。", 2),
])
def test_a_report_of_the_work_done_closes_its_todo(store, todos, text, done):
    assert [t.id for t, _ in done_todos(store, "/p", [turn(text)])] == [todos[done]]


def test_a_pinned_todo_reported_done_stays_open(store, todos):
    """A pinned todo went cold on a report of its work (pinned and cold: never recalled, though pinned ones never go
    cold); the user pinned it, the user closes it."""
    with store.atomic():
        store.set_pinned(todos[0], True)
    assert done_todos(store, "/p", [turn("Pagination for the plant list endpoint is done now.")]) == []


@pytest.mark.parametrize("text", [
    "Once pagination on the plant list endpoint is done, we can ship.",   # a condition
    "The pagination of the plant list endpoint is not done yet.",          # not done
    "Should I add pagination to the plant list endpoint?",                 # a question
    "I'll add pagination to the plant list endpoint next.",                # a plan
    "Fixed the plant watering bug.",                                       # another subject
    "设置页的暗色模式还没完成。",                                              # not done
])
def test_plans_questions_and_other_work_close_nothing(store, todos, text):
    assert done_todos(store, "/p", [turn(text)]) == []


def test_only_what_was_said_after_the_todo_counts(store, todos):
    assert done_todos(store, "/p", [turn("Pagination for the plant list endpoint is done now.",
                                         ts="2026-02-28T10:00:00.000Z")]) == []
    assert done_todos(store, "/p", [turn("Pagination for the plant list endpoint is done now.", sidechain=True)]) == []


def test_todos_come_whole_in_the_order_their_reports_were_said(store, todos):
    said = turn("The CI job for the release build is wired up. Pagination for the plant list endpoint is done now.")
    found = done_todos(store, "/p", [said])
    assert [(t.id, t.text, t.state) for t, _ in found] == [(todos[1], TODOS[1], "active"),
                                                           (todos[0], TODOS[0], "active")]
    assert [sentence for _, sentence in found] == ["The CI job for the release build is wired up.",
                                                   "Pagination for the plant list endpoint is done now."]


def test_only_reports_of_work_done_that_name_two_things_are_weighed(store, todos):
    turns = [turn("Done. Once the endpoint is done, we ship."), turn("Pagination is done.", sidechain=True),
             turn("All good. Pagination for the plant list endpoint is done now.")]
    assert [(t.text, written) for t, written, _ in checkpoint.done_sentences(turns)] == [
        (turns[2].text, "Pagination for the plant list endpoint is done now.")]
    assert {"pagination", "plant", "endpoint"} <= checkpoint.done_sentences(turns)[0][2]
    # No sentence that could name a todo: the store is not read at all (a closed one would fail the read).
    store.close()
    assert done_todos(store, "/p", turns[:2]) == []


def test_the_lemmas_stored_beside_a_todos_words_ask_no_more_shared_words(store):
    """Refinement stores a word's lemma beside it ("data", "datum"): each lemma counted as one more word of the todo
    that a report had to name, and "The March backfill script is done." left "write a backfill script for March
    data" open for good."""
    text = "TODO: write a backfill script for March data."
    with store.atomic():
        todo = store.add_memory(NewMemory(
            project="/p", category="todo", text=text, confidence=0.7, rule_id="t", role="user", session_id="s1",
            transcript="/t.jsonl", entry_uuid="b1", ts="2026-03-01T10:00:00.000Z",
            keywords=(*keywords(text), "datum", "writing")))[0]
    assert [t.id for t, _ in done_todos(store, "/p", [turn("The March backfill script is done.")])] == [todo]


def test_a_closed_todo_goes_cold_with_the_reason(store, todos):
    # Cold: out of recall, kept, found by `miner search --all`; the miner makes it active again when it is
    # said again (tests/test_multi.py checks that through the session-start hook).
    assert close_done_todos(store, "/p", [turn("Pagination for the plant list endpoint is done now.")]) == [todos[0]]
    row = store.db.execute("SELECT state, state_reason FROM memories WHERE id = ?", (todos[0],)).fetchone()
    assert row["state"] == "cold" and row["state_reason"].startswith("done: Pagination for the plant list")
    assert sorted(m.id for m in store.candidates("/p") if m.category == "todo") == todos[1:]


# --- hostile sizes: what a checkpoint reads is bounded ----------------------------------------------

@pytest.mark.parametrize("seed", range(30))
def test_the_tail_is_read_backwards_line_by_line_within_its_budget(tmp_path, seed):
    rng = random.Random(seed)
    lines = [bytes(rng.choice(b"ab{}") for _ in range(rng.randint(0, 40))) for _ in range(rng.randint(0, 12))]
    unfinished = bytes(rng.choice(b"xy") for _ in range(rng.choice([0, 0, 3, 90])))
    data = b"".join(line + b"\n" for line in lines) + unfinished
    path = tmp_path / "t.jsonl"
    path.write_bytes(data)
    block, budget = rng.randint(1, 50), rng.choice([10**6, rng.randint(1, len(data) + 5)])
    got = list(checkpoint._tail_lines(str(path), budget=budget, block=block))
    # The complete lines, newest first, each one that fits in what is left of the budget; the others passed over.
    expected, left = [], budget
    for line in reversed(lines):
        if len(line) + 1 <= left:
            expected.append(line)
            left -= len(line) + 1
    assert got == expected
    # Reading stops after `scan` bytes.
    assert list(checkpoint._tail_lines(str(path), block=block, scan=len(unfinished))) == []


def test_a_huge_prompt_costs_the_checkpoint_a_bounded_read_and_a_cut_before_cleaning(tmp_path, monkeypatch):
    session = Session(tmp_path / "t.jsonl", "/srv/app")
    session.user("First: sketch the billing schema.")
    session.assistant("Sketched.")
    session.user("Third: fix the exporter; the log follows. " + "The exporter wrote invoice 42 to disk. " * 60_000)
    session.assistant("The exporter fails because the queue is full.")
    cleaned, redacted = [], []
    clean, redact = checkpoint.clean_prose, checkpoint.redact
    monkeypatch.setattr(checkpoint, "clean_prose", lambda text: cleaned.append(len(text)) or clean(text))
    spy = lambda text, known=None, words=None: redacted.append(len(text)) or redact(text, known, words)  # noqa: E731
    monkeypatch.setattr(checkpoint, "redact", spy)
    monkeypatch.setattr(secret_turns, "redact", spy)  # the pass that learns the secrets the turns name
    requests, reply = checkpoint.session_context(str(session.path), session.session_id)
    assert requests[0] == "First: sketch the billing schema."
    assert requests[1].startswith("Third: fix the exporter; the log follows.") and len(requests[1]) <= 600
    assert reply == "The exporter fails because the queue is full."
    assert max(cleaned) <= checkpoint.REQUEST_SCAN_CHARS
    assert max(redacted) <= max(checkpoint.MAX_REPLY_CHARS, checkpoint.RECENT_TURN_CHARS) + checkpoint.REDACT_MARGIN
    # A line longer than the whole budget is passed over, never kept whole, let alone parsed.
    monkeypatch.setattr(checkpoint, "MAX_TAIL_BYTES", 1024 * 1024)
    assert max(len(line) for line in checkpoint._tail_lines(str(session.path))) < 1024
    requests, reply = checkpoint.session_context(str(session.path), session.session_id)
    assert requests == ["First: sketch the billing schema."]
    assert reply == "The exporter fails because the queue is full."
    monkeypatch.setattr(checkpoint, "MAX_SCAN_BYTES", 2 * 1024 * 1024)  # and no more than this is read
    assert checkpoint.session_context(str(session.path), session.session_id) == (
        [], "The exporter fails because the queue is full.")


def test_a_huge_turn_costs_done_todos_a_cut_before_cleaning(store, todos, monkeypatch):
    cleaned = []
    clean = checkpoint.clean_prose
    monkeypatch.setattr(checkpoint, "clean_prose", lambda text: cleaned.append(len(text)) or clean(text))
    text = "Pagination for the plant list endpoint is done now. " + "Some log line without an end " * 100_000
    assert [t.id for t, _ in done_todos(store, "/p", [turn(text)])] == [todos[0]]
    assert max(cleaned) <= checkpoint.DONE_SCAN_CHARS


def test_the_recent_state_is_the_sessions_own_latest_words_redacted_and_bounded(tmp_path, store, monkeypatch):
    earlier = Session(tmp_path / "t.jsonl", "/srv/app", session_id="old")
    earlier.user("An old request from the session this one resumed.")
    session = Session(tmp_path / "t.jsonl", "/srv/app", session_id="new")
    session.user("Set up the exporter for the invoices, please.")
    session.assistant("Done: the exporter writes one CSV row per invoice line.")
    session.user("ok")  # a filler: no task of its own
    session.user("The staging password is Hx7#kQ9!vL2$ and the host is db.internal; connect the exporter to it.")
    session.assistant("Connected. " + "The exporter streams rows in batches of 500. " * 200)
    body = checkpoint.write_checkpoint(store, "new", "/srv/app", str(session.path))
    recent = body["recent"]
    assert [role for role, _ in recent] == ["user", "assistant", "user", "assistant"]
    assert recent[0][1] == "Set up the exporter for the invoices, please."
    assert "Hx7#kQ9!vL2$" not in recent[2][1] and "db.internal" in recent[2][1]
    assert len(recent[3][1]) <= checkpoint.RECENT_TURN_CHARS
    assert sum(len(text) for _, text in recent) <= checkpoint.RECENT_CHARS + checkpoint.RECENT_TURN_CHARS
    # Under an id no entry carries (a resumed session writes under a new one), the transcript's words stand in.
    other = checkpoint.write_checkpoint(store, "elsewhere", "/srv/app", str(session.path))["recent"]
    assert other[0] == ["user", "An old request from the session this one resumed."]
    # The oldest words give way first when there are more than a checkpoint keeps.
    monkeypatch.setattr(checkpoint, "RECENT_CHARS", 100)
    assert [role for role, _ in checkpoint.write_checkpoint(store, "new", "/srv/app", str(session.path))["recent"]] == [
        "assistant"]


@pytest.mark.parametrize("said", ["good, thanks", "thanks, that's it", "ok bye", "good. bye", "ok", "continue",
                                  "Perfect, thank you so much!", "gracias, perfecto", "yes, go ahead", "do it"])
def test_a_sign_off_or_an_acknowledgement_is_no_task_of_the_recent_state(said):
    """Only a reply that was one of a few phrases exactly was taken for a filler: "good, thanks" and "ok bye" were
    most of "where the last session left off" in a month of sessions."""
    assert checkpoint.request_text(said) == ""


@pytest.mark.parametrize("said", ["yes, split it", "not today, do the exports first", "good, now add the tests",
                                  "I'll be away next week", "ok, use Redis", "not today", "that's not right",
                                  "it's not done", "no, not that", "keep it", "do that next", "not good", "no va"])
def test_a_short_reply_with_a_word_of_its_own_is_a_task(said):
    """A refusal or a correction ("that's not right", "no, keep it") is the latest thing the user asked: made of
    words a sign-off uses too, it is kept."""
    assert checkpoint.request_text(said) == said


def test_a_checkpoint_written_on_the_hook_path_hides_the_kinds_the_last_miner_loaded(tmp_path, store, monkeypatch):
    """PreCompact writes the checkpoint in the hook's process, which reads no YAML: the kinds of secrets.yaml (an
    npm token here) come from the copy the last miner kept, and match what the files define."""
    from miner.extract import redact

    kinds = redact.load_extra()  # a miner starting: it keeps a copy for the hook path
    monkeypatch.setattr(redact, "_extra", [])
    monkeypatch.setattr(redact, "_extra_loaded", "")  # a hook's process
    token = "npm_" + "q7Zk2M4xW9p3T6vB1nL8r5Yc0dF2gH4jK6mN"
    session = Session(tmp_path / "t.jsonl", "/srv/app", session_id="hook")
    session.user(f"Publish the package from CI with {token} and tag the release afterwards.")
    body = checkpoint.write_checkpoint(store, "hook", "/srv/app", str(session.path))
    assert body["task"] and token not in body["task"][0] and "[REDACTED:npm-token]" in body["task"][0]
    assert [(kind, pattern.pattern, pattern.flags) for kind, pattern in redact._extra] == \
        [(kind, pattern.pattern, pattern.flags) for kind, pattern in kinds]
    # A damaged copy leaves the built-in kinds alone (no error on the hook path).
    (tmp_path / "miner-home" / "cache" / redact.KEPT_FILE).write_text("[[1, 2")
    monkeypatch.setattr(redact, "_extra_loaded", "")
    monkeypatch.setattr(redact, "_extra", [])
    redact.load_kept_extra()
    assert redact._extra == [] and not redact._extra_loaded


def test_a_transcript_that_opens_with_a_byte_order_mark_still_gives_its_request(tmp_path, monkeypatch):
    """The miner reads past a byte-order mark an editor wrote; the checkpoint's reader did not (in a miner, which
    parses with orjson), and a session whose only request was its first line had no task after a compaction."""
    from miner.extract import transcript

    monkeypatch.setattr(transcript, "_loads", transcript._loads)  # (both put back after the test)
    monkeypatch.setattr(transcript, "_DecodeErrors", transcript._DecodeErrors)
    transcript.use_fast_json()  # (as a miner does)
    session = Session(tmp_path / "s1.jsonl", cwd="/work/shop", session_id="s1")
    session.user("Move the invoice exporter to the scheduler.")
    session.assistant("Moved it; the exporter runs at midnight now.")
    session.path.write_bytes(b"\xef\xbb\xbf" + session.path.read_bytes())
    assert checkpoint.session_requests(str(session.path), "s1") == ["Move the invoice exporter to the scheduler."]


OTHER_TODOS = ("TODO: remove the legacy export route from the reporting API.",
               "Pendiente: migración de la tabla de facturas al nuevo esquema.",
               "Da fare: aggiornare la configurazione del proxy di staging.",
               "할 일: 결제 모듈의 재시도 로직 추가",
               "待办：删除旧的导出接口",
               # languages the dev data lacks
               "Позже: перенести миграции базы на Alembic.",
               "TODO: den CSV-Export der Rechnungen bauen.",
               "あとで画像アップロードを実装する。",
               "Sonra: SMS bildirimi için kuyruk ekle.",
               "Depois: exportação das faturas em CSV.",
               "Plus tard : export CSV des factures.")


@pytest.fixture
def other_todos(store):
    return stored_todos(store, OTHER_TODOS, "o")


@pytest.mark.parametrize("text, done", [
    ("The legacy export route has been removed from the reporting API.", 0),
    ("I deleted the legacy export route of the reporting API.", 0),
    ("La migración de la tabla de facturas al nuevo esquema ya está hecha.", 1),
    ("Migración de la tabla de facturas al nuevo esquema: terminada.", 1),
    ("La configurazione del proxy di staging è stata aggiornata.", 2),
    ("결제 모듈의 재시도 로직 추가 완료했어요.", 3),
    ("旧的导出接口已删除。", 4),
    ("Миграции базы перенесли на Alembic, эта задача закрыта.", 5),
    ("Der CSV-Export der Rechnungen ist erledigt.", 6),
    ("画像アップロードの実装は終わりました。", 7),
    ("SMS bildirimi için kuyruk eklendi, iş tamamlandı.", 8),
    ("A exportação das faturas em CSV está feita.", 9),
    ("L'export CSV des factures est terminé.", 10),
])
def test_work_reported_done_in_other_words_and_languages_closes_its_todo(store, other_todos, text, done):
    """"has been removed", "ya está hecha", 완료: only "done", "added", "fixed" and a few others closed a todo, and
    only in English and Chinese; then only in those and Spanish, Italian and Korean (a Russian or Japanese todo
    stayed open after it was done, in every later block)."""
    assert [t.id for t, _ in done_todos(store, "/p", [turn(text)])] == [other_todos[done]]


@pytest.mark.parametrize("text", [
    "The legacy export route of the reporting API is not removed yet.",
    "La migración de la tabla de facturas al nuevo esquema todavía no está hecha.",
    "La configurazione del proxy di staging non è ancora aggiornata.",
    "결제 모듈의 재시도 로직 추가는 아직 못 했어요.",
    "旧的导出接口还没删除。",
    "The product list of the reporting API is long.",
    "Миграции базы на Alembic пока не переносим, сделаем потом.",
    "Den CSV-Export der Rechnungen machen wir später.",
    "画像アップロードの実装はまだ終わっていません。",
    "SMS bildirimi için kuyruk henüz eklenmedi, sonra yapalım.",
    "A exportação das faturas em CSV ainda não está feita.",
    "L'export CSV des factures n'est pas encore terminé.",
    "Ajoute l'export CSV des factures maintenant.",   # French: a participle has its accent, a request has none
    "Termine l'export CSV des factures, s'il te plaît.",
])
def test_work_not_yet_done_in_other_languages_closes_nothing(store, other_todos, text):
    assert done_todos(store, "/p", [turn(text)]) == []


@pytest.mark.parametrize("todo, report", [
    ("ทีหลัง: เพิ่มการจำกัดอัตรา rate limit ให้ API", "การจำกัดอัตรา rate limit ของ API ทำเสร็จแล้ว"),
    ("لاحقاً: إضافة تصدير CSV للفواتير", "تصدير CSV للفواتير انتهى، تم."),
    ("बाद में: चालानों का CSV निर्यात जोड़ना", "चालानों का CSV निर्यात पूरा हो गया।"),
    ("Później: eksport faktur do CSV.", "Eksport faktur do CSV jest gotowe."),
    ("Nanti: ekspor faktur ke CSV.", "Ekspor faktur ke CSV sudah selesai."),
    ("Sau này: xuất hóa đơn ra CSV.", "Xuất hóa đơn ra CSV đã xong."),
    ("Пізніше: експорт рахунків у CSV.", "Експорт рахунків у CSV зроблено."),
    ("Later: de CSV-export van facturen.", "De CSV-export van facturen is klaar."),
])
def test_a_todo_and_its_report_in_one_language_close_together(store, todo, report):
    """A todo's own "later" is no word of what it is, in any language (as "later" and "todo" are not in English)."""
    (todo_id,) = stored_todos(store, (todo,), "w")
    assert [t.id for t, _ in done_todos(store, "/p", [turn(report)])] == [todo_id]
