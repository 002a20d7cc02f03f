"""Session checkpoints: what a session was doing when its context was compacted or it ended (standard library only).

A checkpoint holds the current task (the latest user requests of the
session, cleaned and redacted), the session's recent state as it was said
(its latest requests and the assistant's replies, newest last, up to
`RECENT_CHARS`: after a compaction or a resume the block opens with a share
of it), and the ids of the decisions and open todos
that this session stated or restated. PreCompact writes it so that the block
after the compaction opens with it; the SessionEnd miner writes it so that
the next session of the project is ranked against it.

Writing it also closes the project's todos that the session reports done
("Pagination of the plant list is done now", 已完成): such a todo goes cold
(out of recall, kept, and active again if it is ever said again), so that a
new session sees only the todos still open.

Requests are read from the end of the transcript: a long session's file can
be tens of megabytes, and only its last few requests matter. The PreCompact
hook writes a checkpoint, so what it reads is bounded whatever the file
holds: lines are parsed from the end up to `MAX_TAIL_BYTES` in all (a line
that does not fit, a pasted 50 MB log, is passed over unparsed), no more
than `MAX_SCAN_BYTES` are read, and each text is cut before it is cleaned or
redacted (`REQUEST_SCAN_CHARS`, `DONE_SCAN_CHARS`).
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from typing import Callable

from ..extract.clean import clean_prose
from ..extract.model import Turn
from ..extract.redact import load_kept_extra, redact
from ..extract.secret_turns import Conversation
from ..extract.transcript import ReadStats, Watermark, cut_text, entry_to_turn, parse_line, read_transcript
from ..extract.trust import instruction_reason, relayed_attack
from ..memory.records import StoredMemory, now_iso
from ..memory.store import Store
from ..textutil import char_bigrams, clip, keywords, simple_stem

MAX_REQUESTS = 3
MAX_REQUEST_CHARS = 600
MAX_REPLY_CHARS = 1200
MAX_IDS = 60
RECENT_CHARS = 8000  # of the session's latest prose kept in a checkpoint: more than a block's share of it
RECENT_TURN_CHARS = 4000  # of each turn (whole sentences)
TAIL_BYTES = 256 * 1024  # read from the end in blocks of this size, until enough requests are found;
MAX_TAIL_BYTES = 4 * 1024 * 1024  # lines kept and parsed: never more than this,
MAX_SCAN_BYTES = 64 * 1024 * 1024  # bytes read, passing over lines too long to keep: never more than this
# A text is cut to this many characters before it is cleaned: enough for wrappers and code before the words
# that say what was asked, far less than a pasted log.
REQUEST_SCAN_CHARS = 32 * 1024
DONE_SCAN_CHARS = 64 * 1024  # of each turn, when looking for reports of work done
MAX_DONE_SENTENCE_CHARS = 2000  # a longer "sentence" is pasted data, not a report
# Redacted beyond what is kept: a secret that straddles the cut is still whole when it is redacted.
REDACT_MARGIN = 2048
_SLASH_COMMAND_RE = re.compile(r"^/\S+\s*$")
# Replies that ask nothing: one of these phrases ("continue"), acknowledgement and sign-off words ("good, thanks",
# "gracias, perfecto"), or both ("yes, go ahead"). One word more ("not", "keep") and a reply may ask something.
_FILLER = frozenset(
    {"no", "n", "nope", "continue", "go", "go on", "go ahead", "proceed", "carry on", "do it", "done", "next",
     "keep going", "sounds good", "right", "that s it", "that s all", "that s all for now", "see you", "继续"})
_ACKNOWLEDGED = frozenset(
    {"ok", "okay", "k", "yes", "y", "yep", "yeah", "yup", "sure", "fine", "alright", "cool", "great", "perfect",
     "nice", "good", "awesome", "excellent", "thanks", "thank", "you", "ty", "thx", "cheers", "bye", "goodbye", "cya",
     "lgtm", "please", "so", "much", "very", "hi", "hello", "hey", "gracias", "vale", "perfecto", "adiós", "adios",
     "grazie", "ciao", "perfetto", "ottimo", "merci", "danke", "tschüss", "谢谢", "好", "好的", "可以", "是的", "再见"})
_PUNCT_RE = re.compile(r"[^\w\s]+", re.UNICODE)


def request_text(raw: str, known: set[str] | None = None) -> str:
    """A user prompt as a task line: wrappers, code, commands and secrets out (and the secrets of `known`, which
    earlier turns named); '' when nothing is left."""
    cleaned = clean_prose(cut_text(raw, REQUEST_SCAN_CHARS))
    text = " ".join(cleaned.split())
    if len(text) < 3 or _SLASH_COMMAND_RE.match(text):
        return ""
    if len(text) < 40 and _filler(_PUNCT_RE.sub(" ", text).lower().split()):
        return ""
    return clip(_redacted(cleaned, MAX_REQUEST_CHARS, known), MAX_REQUEST_CHARS)


def _filler(words: list[str]) -> bool:  # (a short reply's words, lower case, without punctuation: see `_FILLER`)
    while words and " ".join(words) not in _FILLER and (words[0] in _ACKNOWLEDGED or words[-1] in _ACKNOWLEDGED):
        words = words[1:] if words[0] in _ACKNOWLEDGED else words[:-1]
    return not words or " ".join(words) in _FILLER


def _redacted(cleaned: str, keep: int, known: set[str] | None = None) -> str:
    """Cleaned text redacted as it was written (its lines tell a password list from prose), a margin past `keep`."""
    return redact(cut_text(cleaned.strip(), keep + REDACT_MARGIN), known)[0]


def _secrets_said(turns, secrets: tuple[bytes, frozenset[bytes]] | None) -> set[str]:
    """The secrets these turns name, read in order: by the words around them, as the answer to the assistant's
    request for one, or as a bare repeat of one an earlier miner found (`secrets`: the store's salt and digests).
    Each turn is redacted with them, so that a password named in one prompt is hidden where a later one repeats
    it."""
    conversation = Conversation(*(secrets or (b"", frozenset())))
    for turn in turns:
        if not turn.is_sidechain:  # (as much of each as any part of the checkpoint shows)
            conversation.redact(turn.role, cut_text(turn.text, max(MAX_REPLY_CHARS, RECENT_TURN_CHARS) + REDACT_MARGIN))
    return conversation.known | conversation.hidden | conversation.words  # (each turn shown: with all of them)


def _requests_from_turns(turns, session_id: str, texts: dict | None = None) -> tuple[list[str], list[str]]:
    """(requests of `session_id`, requests of any session), oldest first; a repeated request counts once, last.

    `texts` holds the `request_text` of turns already worked out, by turn uuid. A request that relays an attempt on
    the assistant (`trust.relayed_attack`) is none: the restore would recall it as the task.
    """
    own: dict[str, None] = {}
    anyone: dict[str, None] = {}
    for turn in turns:
        if turn.role != "user" or turn.is_sidechain:
            continue
        text = texts[turn.uuid] if texts and turn.uuid in texts else request_text(turn.text)
        if not text or relayed_attack(text):
            continue
        anyone.pop(text, None)
        anyone[text] = None
        if _is_own(turn, session_id):
            own.pop(text, None)
            own[text] = None
    return list(own), list(anyone)


def _is_own(turn, session_id: str) -> bool:
    return not session_id or not turn.session_id or turn.session_id == session_id


def _tail_lines(transcript: str, budget: int | None = None, block: int | None = None, scan: int | None = None):
    """The complete lines at the end of a transcript, newest first: at most `budget` bytes of them.

    Read backwards in blocks, so that a caller that has found what it needs
    stops early. A last line still being written (no newline yet) is left
    out, and so is a line that does not fit in what is left of the budget (a
    pasted 50 MB prompt): it is passed over without being kept, let alone
    parsed, and the lines before it are read. No more than `scan` bytes are
    read in all.
    """
    budget = MAX_TAIL_BYTES if budget is None else budget
    block = TAIL_BYTES if block is None else block
    scan = MAX_SCAN_BYTES if scan is None else scan
    with open(transcript, "rb") as handle:
        position = os.fstat(handle.fileno()).st_size
        read = kept = 0
        carry = b""  # the start of the line that ends where the previous block began
        skipping = True  # passing over a line until the newline before it: first the unfinished last line
        while position > 0 and read < scan and kept < budget:
            step = min(block, position, scan - read)
            position -= step
            read += step
            handle.seek(position)
            data = handle.read(step)
            if skipping:
                newline = data.rfind(b"\n")
                if newline < 0:
                    continue
                data, skipping = data[:newline], False
            lines = (data + carry).split(b"\n")
            carry = lines.pop(0) if position > 0 else b""
            for line in reversed(lines):
                if kept + len(line) + 1 <= budget:
                    kept += len(line) + 1
                    yield line
            if len(carry) + 1 > budget - kept:
                carry, skipping = b"", True  # too long to be kept whole: pass over the rest of it


def _tail_turns(transcript: str, budget: int | None = None):
    """Prose turns from the end of a transcript, newest first (see `_tail_lines`)."""
    stats = ReadStats()
    for line in _tail_lines(transcript, budget):
        if not line.strip():
            continue
        try:  # (without the byte-order mark an editor may open the file with, as the miner reads it)
            entry = parse_line(line.removeprefix(b"\xef\xbb\xbf"))
        except (ValueError, TypeError, RecursionError):
            continue
        try:
            turn = entry_to_turn(entry, transcript, stats)
        except (TypeError, ValueError, AttributeError, RecursionError):
            continue  # a shape nothing foresaw: the checkpoint goes on without it
        if turn is not None:
            yield turn


def _last_reply(turns, known: set[str] | None = None) -> str:
    """The assistant's latest prose of the main thread, cleaned, redacted and clipped (not one that reads like an
    instruction to the assistant: a memory would be quarantined for it, and the restore is recalled too)."""
    for turn in reversed(turns):
        if turn.role == "assistant" and not turn.is_sidechain:
            cleaned = clean_prose(cut_text(turn.text, REQUEST_SCAN_CHARS))
            if len(" ".join(cleaned.split())) >= 20 and not instruction_reason(cleaned):
                return clip(_redacted(cleaned, MAX_REPLY_CHARS, known), MAX_REPLY_CHARS)
    return ""


def _said(turn, texts: dict | None = None, known: set[str] | None = None) -> str:
    """A main-thread turn as the recent state shows it: a request as a task line, a reply cleaned; redacted,
    clipped to whole sentences; '' for a filler, a command, a turn without prose, and for what a memory would be
    quarantined or left out for: the assistant's prose that reads like an instruction to it, anyone's relaying of an
    attempt on it (`trust`)."""
    if turn.is_sidechain:
        return ""
    if turn.role == "user":
        text = texts[turn.uuid] if texts and turn.uuid in texts else request_text(turn.text, known)
        return "" if text and relayed_attack(text) else text
    cleaned = clean_prose(cut_text(turn.text, REQUEST_SCAN_CHARS))
    if len(" ".join(cleaned.split())) < 20 or instruction_reason(cleaned):
        return ""
    return clip(_redacted(cleaned, RECENT_TURN_CHARS, known), RECENT_TURN_CHARS)


def _recent(turns, texts: dict | None = None, session_id: str = "",
            known: set[str] | None = None) -> list[list[str]]:
    """The latest [role, text] of the session's main thread, oldest first, up to `RECENT_CHARS` in all."""
    if session_id and not any(turn.session_id == session_id for turn in turns):
        session_id = ""  # a resumed session may write under another id: the transcript's latest words stand in
    recent: list[list[str]] = []
    size = 0
    for turn in reversed(turns):
        if size >= RECENT_CHARS:
            break
        if not _is_own(turn, session_id):
            continue
        text = _said(turn, texts, known)
        if text and not (recent and recent[-1] == [turn.role, text]):
            recent.append([turn.role, text])
            size += len(text)
    return recent[::-1]


def _context(transcript: str, session_id: str = "", stop_after_uuid: str | None = None,
             limit: int = MAX_REQUESTS, secrets: tuple[bytes, frozenset[bytes]] | None = None,
             keep: Callable[[Turn], bool] | None = None) -> tuple[list, list[str], str, list[list[str]], set[str]]:
    """(the turns read, oldest first; the latest requests; the assistant's latest reply; the recent state; the
    secrets the turns name): see `session_context`, `_recent` and `_secrets_said`."""
    if stop_after_uuid is not None:
        # Evaluation cuts: everything up to the cut, read from the start.
        turns = read_transcript(transcript, Watermark(), seen=set(), stop_after_uuid=stop_after_uuid).turns
        turns = [t for t in turns if keep is None or keep(t)]
        known = _secrets_said(turns, secrets)
        texts = {t.uuid: request_text(t.text, known) for t in turns if t.role == "user" and not t.is_sidechain}
        own, anyone = _requests_from_turns(turns, session_id, texts)
        return (turns, (own or anyone)[-limit:], _last_reply(turns, known), _recent(turns, texts, session_id, known),
                known)
    newest_first = []
    texts: dict[str, str] = {}
    own: set[str] = set()
    replied = False
    prose = 0
    for turn in _tail_turns(transcript):
        if keep is not None and not keep(turn):
            continue
        newest_first.append(turn)
        if turn.is_sidechain:
            continue
        if turn.role == "assistant":
            replied = True
            prose += len(turn.text)
        else:
            texts[turn.uuid] = text = request_text(turn.text)
            prose += len(text)
            if text and _is_own(turn, session_id):
                own.add(text)
        if len(own) >= limit and replied and prose >= RECENT_CHARS:
            break  # the latest requests, reply and state are in: the rest of the file is not read
    turns = newest_first[::-1]
    known = _secrets_said(turns, secrets)
    if known:  # worked out again with what the turns taught
        texts = {uuid: request_text(turn.text, known) if text else text
                 for uuid, text, turn in ((t.uuid, texts.get(t.uuid, ""), t) for t in turns if t.uuid in texts)}
    own_requests, anyone = _requests_from_turns(turns, session_id, texts)
    return (turns, (own_requests or anyone)[-limit:], _last_reply(turns, known),
            _recent(turns, texts, session_id, known), known)


def session_context(transcript: str, session_id: str = "", stop_after_uuid: str | None = None,
                    limit: int = MAX_REQUESTS) -> tuple[list[str], str]:
    """(the latest user requests of a session, oldest first; the assistant's latest reply).

    Requests are cleaned of wrappers, commands and secrets. When no entry carries
    `session_id` (a resumed session may write under another id), the transcript's
    latest requests stand in for it.
    """
    return _context(transcript, session_id, stop_after_uuid, limit)[1:3]


def session_requests(transcript: str, session_id: str = "", stop_after_uuid: str | None = None,
                     limit: int = MAX_REQUESTS) -> list[str]:
    """The latest user requests of a session, oldest first (see `session_context`)."""
    return session_context(transcript, session_id, stop_after_uuid, limit)[0]


def session_memory_ids(store: Store, session_id: str, project: str) -> tuple[list[int], list[int]]:
    """(decisions, open todos) this session stated or restated, latest first."""
    said = store.session_memory_ids(session_id, project, 2 * MAX_IDS)
    decisions = [memory_id for memory_id, category in said if category == "decision"][:MAX_IDS]
    todos = [memory_id for memory_id, category in said if category == "todo"][:MAX_IDS]
    return decisions, todos


def session_project(store: Store, session_id: str, fallback: str = "") -> str:
    """The project the miner filed a session under (fixed by its first cwd), else `fallback`."""
    session = store.session(session_id) if session_id else None
    return session.project if session and session.project else fallback


# A sentence reporting work as finished, and what makes one a plan, a question or a condition instead.
_DONE_RE = re.compile(
    r"(?i)\b(?:done|finished|completed?|implemented|added|fixed|resolved|merged|shipped|deployed|wired(?: up)?|"
    r"in place|taken care of|works now|working now|closed|removed|deleted|dropped|written|created|upgraded|updated|"
    r"migrated|renamed|moved|set up|configured|installed|enabled|disabled|replaced|refactored|cleaned up|switched|"
    r"converted|published|released|rolled out|landed|up and running|live now|"
    # Spanish and Italian: a participle of finished work ("ya está hecha", "è stato rimosso")
    r"(?:está|esta|ya|quedó|queda)\s+(?:hech|list)[oa]s?|(?:terminad|completad|arreglad|corregid|añadid|implementad|"
    r"eliminad|borrad|actualizad|solucionad|completat|sistemat|aggiunt|rimoss|implementat|aggiornat|eliminat)[oaie]s?|"
    r"resuelt[oa]s?|risolt[oaie]|"
    # Portuguese, French, German, Dutch, Polish, Turkish, Indonesian, Vietnamese, Russian, Ukrainian, Arabic
    r"feit[oa]s?|conclu[íi]d[oa]s?|corrigid[oa]s?|adicionad[oa]s?|removid[oa]s?|resolvid[oa]s?|atualizad[oa]s?|"
    r"terminée?s?|finie?s?|réglée?s?|corrigée?s?|ajoutée?s?|supprimée?s?|implémentée?s?|déployée?s?|"
    r"erledigt|abgeschlossen|umgesetzt|behoben|hinzugefügt|entfernt|gelöscht|aktualisiert|"
    r"implementiert|eingebaut|klaar|gedaan|opgelost|zrobion[eya]|gotowe|skończon[eya]|zakończon[eya]|naprawion[eya]|"
    r"dodan[eya]|usunięt[eya]|tamamlandı|bitti|hallettim|halledildi|yapıldı|düzeltildi|eklendi|kaldırıldı|silindi|"
    r"güncellendi|selesai|beres|diperbaiki|ditambahkan|dihapus|xong|hoàn thành|hoàn tất|"
    r"сделан[оаы]?|сделал[аи]?|готово|выполнен[оаы]?|завершен[оаы]?|закрыт[оаы]?|исправлен[оаы]?|исправил[аи]?|"
    r"добавлен[оаы]?|добавил[аи]?|удален[оаы]?|удалил[аи]?|реализован[оаы]?|реализовал[аи]?|починил[аи]?|"
    r"обновлен[оаы]?|обновил[аи]?|зроблено|виконано|завершено|виправлено|додано|видалено|"
    r"تم|تمت|انتهى|انتهت|اكتمل|اكتملت|أنجزت|أنجزنا|أصلحت|أضفت|حذفت)\b"
    r"|已完成|完成了|搞定|已(?:添加|修复|实现|加上|处理|合并|上线|删除|更新|迁移|升级|移除|配置|部署|解决)|"
    r"(?:改|做|弄|修)好了|删掉了|완료|끝났|끝냈|마쳤|(?:추가|수정|삭제|제거|구현|해결|반영|적용|변경|설정)(?:했|됐|되었)|고쳤|"
    # Japanese, Thai, Hindi (no word boundaries to lean on)
    r"終わりました|終わった|完了し|完了です|対応済み|実装済み|済みです|(?:直|追加|削除|実装|対応|修正|更新|移行)(?:し)?ました|"
    r"できました|เสร็จแล้ว|เสร็จเรียบร้อย|เรียบร้อยแล้ว|แก้แล้ว|แก้ไขแล้ว|เพิ่มแล้ว|ลบแล้ว|"
    r"पूरा हो गया|पूरा कर दिया|पूरा किया|ठीक कर दिया|जोड़ दिया|हटा दिया|हो गया है")
_NOT_DONE_RE = re.compile(
    r"(?i)\b(?:not|never|still|yet|todo|later|should|shall|will|would|could|going to|need to|needs to|have to|"
    r"has to|must|remaining|pending|once|when|whenever|if|after|until|before|let's|let me|i'll|we'll|"
    r"no|todavía|aún|pendiente|cuando|falta|faltan|hay que|tengo que|tenemos que|vamos a|voy a|"
    r"non|ancora|quando|dopo|bisogna|dobbiamo|devo|da fare|"
    r"não|ainda|depois|precisa|precisamos|vamos|vou|pas|encore|faut|doit|quand|après|"
    r"nicht|noch|später|muss|müssen|sollte|wenn|bevor|nachdem|wird|werden|niet|nog|later|moet|"
    r"nie|jeszcze|później|trzeba|musimy|będzie|değil|henüz|sonra|gerek|lazım|"
    r"belum|nanti|harus|perlu|akan|kalau|tidak|chưa|sẽ|cần|phải|"
    r"не|ещё|еще|пока|потом|позже|надо|нужно|будем|когда|если|ще|поки|потім|треба|"
    r"لم|لا|ليس|لاحقا|لاحقاً|سوف|يجب|عندما|إذا)\b|n't\b|\?|؟|"
    r"还没|未完成|尚未|没有|待|要|需要|以后|之后|아직|안\s|못|나중|예정|해야|하자|할게|할\s?것|"
    r"まだ|未対応|未完了|予定|後で|あとで|後回し|必要|ない|ません|ยัง|ไม่|จะ|ต้อง|ค่อย|ทีหลัง|ไว้ก่อน|"
    r"नहीं|अभी|बाद में|करेंगे|होगा|चाहिए|अगर")
_SENTENCE_RE = re.compile(r"(?<=[.!?。！？।؟])\s+|\n+")
# Words every todo uses: they say that something is open, not what it is.
_TODO_WORDS = frozenset(
    """later todo to-do eventually should need needs remaining still next step steps add adding follow
    follow-up up open pending item items work left maybe also someday soon future
    позже потом пізніше später tard depois sonra nanti później sau này ทีหลัง لاحقاً لاحقا بعد बाद""".split())
MIN_SHARED = 2
SHARED_SHARE = 0.6  # of the todo's words; of its CJK character pairs, CJK_SHARE (pairs overlap, words do not)
CJK_SHARE = 0.4


_stem = lru_cache(maxsize=1 << 16)(simple_stem)  # a store's todos repeat their words: each is stemmed once


def _stems(words) -> set[str]:
    return {_stem(w) for w in words if not w.isdigit() and w not in _TODO_WORDS}


def done_sentences(turns) -> list[tuple[Turn, str, set[str]]]:
    """The sentences of these turns that report something finished (see `done_todos`), in order, each with its
    turn, its words as written and their stems; only those with MIN_SHARED stems or more (no other can name a
    todo)."""
    found = []
    for turn in turns:
        if turn.is_sidechain:
            continue
        for written in _SENTENCE_RE.split(clean_prose(cut_text(turn.text, DONE_SCAN_CHARS))):
            if len(written) > MAX_DONE_SENTENCE_CHARS:
                continue
            sentence = " ".join(written.split())
            if not sentence or not _DONE_RE.search(sentence) or _NOT_DONE_RE.search(sentence):
                continue
            stems = _stems(keywords(sentence, limit=64))
            if len(stems) >= MIN_SHARED:
                found.append((turn, written, stems))
    return found


def done_todos(store: Store, project: str, turns, known: set[str] | None = None) -> list[tuple[StoredMemory, str]]:
    """The project's open todos that a later sentence of these turns reports done, with that sentence.

    A sentence counts when it reports something finished ("…is done now", "added …", 已完成), is no
    plan, question or condition ("once … is done", "not done yet"), was said after the todo was
    last said, and names most of what the todo names (at least two of its words).

    The cost follows the sentences: without one that reports something done, no todo is read; with
    some, only the todos' words are read (not whole memories), and only a todo that shares two stems
    with them is weighed further.
    """
    said = done_sentences(turns)
    if not said:
        return []
    wanted = set().union(*(stems for _, _, stems in said))
    todos = []  # (id, its stems, its text, last seen), for a todo that shares two stems with the sentences
    # Which of those todos use each word: a sentence is checked against the todos it shares two words with.
    index: dict[str, list[int]] = {}
    for memory_id, words, text, last_seen in store.open_todo_words(project):
        # The words the todo says, not the lemmas stored beside them ("datum" for "data"): a sentence says words as
        # written, and a lemma more asked it for one more shared word.
        lowered = text.lower()
        own = _stems([w for w in words.split() if w in lowered] or keywords(text))
        named = own & wanted
        if len(named) >= MIN_SHARED:
            for word in named:
                index.setdefault(word, []).append(len(todos))
            todos.append((memory_id, own, text, last_seen))
    found: dict[int, str] = {}
    for turn, written, stems in said:
        shared: dict[int, int] = {}
        for word in stems:
            for k in index.get(word, ()):
                shared[k] = shared.get(k, 0) + 1
        for k in sorted(k for k, n in shared.items() if n >= MIN_SHARED):
            memory_id, own, text, last_seen = todos[k]
            if memory_id in found or not turn.ts or turn.ts <= (last_seen or ""):
                continue
            cjk = len(own & set(char_bigrams(text)))  # character pairs of scripts written without spaces
            needed = SHARED_SHARE * (len(own) - cjk) + CJK_SHARE * cjk
            if shared[k] >= needed:
                found[memory_id] = clip(redact(written.strip(), known)[0], 200)
    memories = {m.id: m for m in store.memories_by_id(found)}
    return [(memories[memory_id], sentence) for memory_id, sentence in found.items() if memory_id in memories]


def close_done_todos(store: Store, project: str, turns, known: set[str] | None = None) -> list[int]:
    """Move the todos these turns report done to cold storage (said again, they come back); their ids. `known`:
    secrets the turns named (`_secrets_said`), hidden in the sentence kept as the reason."""
    done = done_todos(store, project, turns, known)
    if done:
        with store.atomic():
            for todo, sentence in done:
                store.set_state(todo.id, "cold", f"done: {sentence}")
    return [todo.id for todo, _ in done]


def write_now(session_id: str, cwd: str, transcript: str, busy_ms: int,
              has_work: Callable[[Store, str], bool]) -> tuple[str, bool]:
    """A hook's checkpoint, written at once from the transcript's tail and what is stored (PreCompact: the compaction
    may start any moment; SessionEnd: the next session, after a `/clear`, reads it at once). Returns (its project, or
    '' when none is known; whether every line was mined already: the caller's `pending.has_work` says none is left). Raises
    `sqlite3.Error` or `StoreError` when the store stays locked past `busy_ms`, or cannot be read: the miner writes
    it then."""
    from .. import paths

    project = paths.project_root(cwd) if cwd else ""
    with Store(busy_ms=busy_ms) as store:
        project = session_project(store, session_id, project)
        if project:
            write_checkpoint(store, session_id, project, transcript)
        return project, bool(project) and not has_work(store, transcript)


def _shown_turns(store: Store) -> Callable[[Turn], bool]:
    """Which turns a checkpoint may say: not one said in an excluded folder (a session may `cd` into one, below its
    project's root), nor an entry of a project purged since (its session went on: the transcript still holds it)."""
    from ..runtime import exclusions

    try:
        globs = exclusions.load_exclusions()
    except exclusions.PrivacyError:
        globs = None  # (a broken exclusions file: `is_excluded` excludes everything)
    excluded = lru_cache(maxsize=256)(lambda cwd: exclusions.is_excluded(cwd, globs))
    return lambda turn: not (turn.cwd and excluded(turn.cwd)) and not store.is_purged(turn.uuid)


def write_checkpoint(store: Store, session_id: str, project: str, transcript: str,
                     stop_after_uuid: str | None = None) -> dict:
    """Close the todos the session reports done, then build and store the checkpoint of a session; returns it."""
    load_kept_extra()  # the secret kinds of secrets.yaml, as the last miner kept them (a hook reads no YAML)
    turns, requests, last_reply, recent, known = _context(transcript, session_id, stop_after_uuid,
                                                          secrets=store.secret_digests(), keep=_shown_turns(store))
    if not store.readonly:
        close_done_todos(store, project, turns, known)
    decisions, todos = session_memory_ids(store, session_id, project)
    body = {
        "session_id": session_id,
        "project": project,
        "created_at": now_iso(),
        "task": requests,
        "last_reply": last_reply,
        "recent": recent,
        "decisions": decisions,
        "todos": todos,
    }
    store.put_checkpoint(session_id, project, body)
    return body
