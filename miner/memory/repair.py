"""A one-shot repair of what is stored: secrets that the current redaction hides, written by an older one.

`scan` counts the rows and files that hold such secrets; `fix` redacts them
in place and says what it changed:

- every text field of the database: memory text, subject, value and
  keywords (redacted together, so a capture never keeps what the text
  lost), evidence, earlier wordings, supersede notes, checkpoints, the
  recall log and the archive of what was said (its search terms with it); a memory whose redacted text equals another's is merged
  into it, as an exact repeat would have been;
- the FTS indexes (rebuilt), and the file itself: `secure_delete` and VACUUM
  so no freed page keeps the old bytes, and the WAL truncated;
- the block caches (deleted: the next write renders them again) and the
  logs (each line redacted);
- the secrets it found, kept as salted digests (never the secrets): a later
  text that repeats one bare is redacted there too (`extract.secret_turns`).

What it hides it learns from the stored rows and, in the first repair after an
upgrade, from the transcripts they were mined from (those of projects not
excluded), read again turn by turn as a miner reads them now: a value named in
one turn and said bare in another is hidden in both.

`miner doctor` runs `scan`; `miner doctor --fix` (which `./install.sh`
runs on every install and upgrade) runs `fix`, then records
`REDACTION_VERSION`, so that a background worker knows the store is clean.

`scrub` is the small repair a miner runs once a batch that learnt a secret
has committed: the rows stored before that hold it. The batch counts itself
in `SCRUB_PENDING` and the scrub counts it off, so a miner that died in
between leaves the count up, and the next worker runs `fix` (`needed`).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths
from ..extract.redact import ensure_extra, redact, redact_memory
from ..extract.redaction_version import COUNTER, REDACTION_VERSION
from ..extract.secret_turns import MAX_DIGESTS, known_in
from ..extract.secret_turns import digest as secret_digest
from ..textutil import char_bigrams, content_hash, map_strings, width_folded
from . import reader
from .store import Store

VERSION_COUNTER = COUNTER
SCRUB_PENDING = "scrub_pending"  # batches committed with a secret new to the store, not yet scrubbed for it
LOG_NAMES = ("hooks.log", "hooks.log.1", "worker.log", "worker.log.1", "watch.log", "watch.log.1")


@dataclass
class Repair:
    """What a scan found, or a fix changed: counts per place."""

    rows: dict[str, int] = field(default_factory=dict)
    files: list[str] = field(default_factory=list)

    def count(self, place: str, n: int = 1) -> None:
        if n:
            self.rows[place] = self.rows.get(place, 0) + n

    @property
    def total(self) -> int:
        return sum(self.rows.values()) + len(self.files)

    def line(self) -> str:
        parts = [f"{n} {place}" for place, n in sorted(self.rows.items())]
        if self.files:
            parts.append(f"{len(self.files)} file(s) ({', '.join(Path(f).name for f in self.files)})")
        return ", ".join(parts) if parts else "nothing"


def learn_secrets(store: Store, transcripts: bool = False) -> set[str]:
    """Secrets that context reveals anywhere in the store ("the password is X"), and with `transcripts` in the
    conversations it was mined from: a first pass, so that the second can hide them where they stand alone
    ("remember X" in a checkpoint)."""
    known = _learnt_from_transcripts(store) if transcripts else set()
    archive = " UNION ALL SELECT text FROM archive" if store.has_table("archive") else ""
    for row in store.db.execute("SELECT text FROM memories UNION ALL SELECT text FROM evidence "
                                "UNION ALL SELECT text FROM memory_hashes UNION ALL SELECT was FROM links" + archive):
        if row[0]:
            redact(row[0], known)
    for (body,) in store.db.execute("SELECT body FROM checkpoints"):
        _redact_json(body, known)
    return known


def _learnt_from_transcripts(store: Store) -> set[str]:
    """What the transcripts the store was mined from (those still there) reveal, read turn by turn as a miner reads
    them now: a reply to the assistant's question for a password, a value named in one turn and said bare in
    another. An older miner may have kept such a value bare wherever no words around it named it, and the stored
    rows alone cannot tell (where it was named, it was hidden)."""
    from ..extract.secret_turns import Conversation
    from ..extract.transcript import read_transcript
    from ..runtime.exclusions import PrivacyError, is_excluded, load_exclusions

    try:
        globs = load_exclusions()  # (read once, not for every transcript and folder)
    except PrivacyError:
        return set()  # a broken exclusions file excludes every project, as it does for mining: nothing is read
    learnt: set[str] = set()
    salt, digests = store.secret_digests()
    for path, project in store.db.execute("SELECT transcript, project FROM watermarks ORDER BY transcript").fetchall():
        if is_excluded(project, globs):  # never mined: what it says is not read (nor learnt) either
            continue
        try:
            turns = read_transcript(path).turns
        except (OSError, ValueError):  # gone, moved or unreadable: what it said stays as the rows say it
            continue
        # (and, as mining, what was said in an excluded folder below the project's root: a session may `cd` there)
        shut = {cwd: is_excluded(cwd, globs) for cwd in {t.cwd for t in turns if t.cwd}}
        Conversation(salt, digests, known=learnt).redact_turns([t for t in turns if not shut.get(t.cwd)])
    return learnt


Secrets = tuple  # the store's salt and digests of the secrets it learnt (`Store.secret_digests`)
_NONE_LEARNT: Secrets = (b"", frozenset())


_HOLDING_CHUNK = 100  # secrets per look-up: SQLite nests an expression 1,000 deep at most


def _rows(store: Store, select: str, columns: tuple[str, ...], holding: list[str]) -> list:
    """The rows of `select` (no WHERE; its first column a key) where one of `columns` holds one of `holding`, each
    once; every row when `holding` is empty."""
    if not holding:
        return store.db.execute(select).fetchall()
    rows: dict = {}
    for start in range(0, len(holding), _HOLDING_CHUNK):
        part = holding[start:start + _HOLDING_CHUNK]
        where = " OR ".join(f"instr({column}, ?)" for column in columns for _ in part)
        for row in store.db.execute(f"{select} WHERE {where}", [s for _ in columns for s in part]):
            rows.setdefault(row[0], row)
    return list(rows.values())


def _with_learnt(text: str, known: set[str], secrets: Secrets) -> set[str]:
    """`known`, and the tokens of `text` that are secrets the store learnt (kept as digests only)."""
    learnt = known_in(text, *secrets)
    return known | learnt if learnt else known


def _memory_changes(store: Store, known: set[str], secrets: Secrets = _NONE_LEARNT, holding: list[str] = ()):
    """(id, project, text, subject, value, keywords) redacted, for each memory that redaction changes (of those
    `holding` one of these strings, if given)."""
    for row in _rows(store, "SELECT id, project, text, subject, value, keywords FROM memories",
                     ("text", "subject", "value"), holding):
        keywords = row["keywords"].split()
        mine = _with_learnt(" ".join(filter(None, (row["text"], row["subject"], row["value"]))), known, secrets)
        text, subject, value, kept, kinds = redact_memory(row["text"], row["subject"], row["value"], keywords,
                                                          known=mine)
        kept_text = " ".join(kept)
        if kinds or kept_text != row["keywords"]:
            yield row["id"], row["project"], text, subject, value, kept_text


def _redact_json(body: str, known: set[str]) -> tuple[str, list[str]]:
    """A JSON document with each string in it redacted (the structure stays valid)."""
    kinds: list[str] = []

    def hidden(text: str) -> str:
        new, found = redact(text, known)
        kinds.extend(found)
        return new

    try:
        data = json.loads(body)
    except ValueError:
        return redact(body, known)
    new = map_strings(data, hidden)
    return (json.dumps(new, ensure_ascii=False) if kinds else body), kinds


def _text_changes(store: Store, table: str, key: str, column: str, known: set[str], secrets: Secrets = _NONE_LEARNT,
                  holding: list[str] = ()):
    """(key, redacted text) of each row of `table` whose `column` redaction changes (of those `holding` one of these
    strings, if given)."""
    if holding and table == "checkpoints":  # (a JSON text: a secret's quote or backslash is escaped there)
        holding = sorted({*holding, *(json.dumps(s, ensure_ascii=False)[1:-1] for s in holding)})
    for row in _rows(store, f"SELECT {key} AS k, {column} AS v FROM {table}", (column,), holding):
        if isinstance(row["v"], str) and row["v"]:
            mine = _with_learnt(row["v"], known, secrets)
            new, kinds = _redact_json(row["v"], mine) if table == "checkpoints" else redact(row["v"], mine)
            if kinds:
                yield row["k"], new


def _files() -> list[Path]:
    found = [paths.logs_dir() / name for name in LOG_NAMES]
    folder = paths.cache_dir()
    if folder.is_dir():
        found += sorted(folder.glob("*.json"))
    return [p for p in found if p.is_file()]


def _file_holds_secret(path: Path, known: set[str]) -> bool:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    if path.suffix == ".json":  # each text as it is shown, not the file's JSON: there an escaped line break joins
        try:  # "the token hourly." to the next line, a value of the token's
            return any(redact(each, known)[1] for each in _strings(json.loads(text)))
        except (ValueError, RecursionError):
            pass
    return bool(redact(text, known)[1])


def _strings(value) -> list[str]:
    """Every string a JSON value holds, its keys too."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [*value, *(s for item in value.values() for s in _strings(item))]
    return [s for item in value for s in _strings(item)] if isinstance(value, list) else []


def scan(store: Store) -> Repair:
    """What `fix` would change (read only). Raises `SecretRuleError` when a secrets file is broken."""
    ensure_extra()  # what mining hides, the YAML files' kinds included
    found = Repair()
    known, secrets = learn_secrets(store), store.secret_digests()
    found.count("memories", sum(1 for _ in _memory_changes(store, known, secrets)))
    for table, key, column in _text_columns(store):
        found.count(f"{table}.{column}", sum(1 for _ in _text_changes(store, table, key, column, known, secrets)))
    found.files = [str(p) for p in _files() if _file_holds_secret(p, known)]
    return found


_TEXT_COLUMNS = (
    ("archive", "id", "text"),
    ("evidence", "id", "text"),
    ("memory_hashes", "rowid", "text"),
    ("links", "rowid", "was"),
    ("checkpoints", "session_id", "body"),
    ("recall_log", "id", "query"),
    ("memories", "id", "state_reason"),
    ("links", "rowid", "reason"),
    ("memories", "id", "git_branch"),  # (a branch name may hold a token)
    ("sessions", "session_id", "git_branch"),
)


def _text_columns(store: Store) -> list[tuple[str, str, str]]:
    """The text columns of the tables this store has (a read-only store opened before a migration may lack one)."""
    return [spec for spec in _TEXT_COLUMNS if store.has_table(spec[0])]


def fix(store: Store) -> Repair:
    """Redact every stored secret in place (see the module note); what was changed. Raises `SecretRuleError` when a
    secrets file is broken."""
    ensure_extra()
    done = Repair()
    # The transcripts are read again once per redaction version (the first repair after an upgrade: a re-read of
    # every transcript, about as long as a backfill's reading), not on every `doctor --fix`.
    upgraded = reader.redaction_version(store.db) < REDACTION_VERSION
    known, secrets = learn_secrets(store, transcripts=upgraded), store.secret_digests()
    with store.atomic() as db:
        _rewrite(store, known, secrets, done)
        for index in _indexes(store):
            db.execute(f"INSERT INTO {index} ({index}) VALUES ('rebuild')")
        salt = secrets[0]
        if salt and known:  # what mining learns next hides a bare repeat of them too (`secret_turns`)
            store.add_secret_digests({secret_digest(salt, secret) for secret in known}, MAX_DIGESTS)
        store.bump(VERSION_COUNTER, REDACTION_VERSION - reader.redaction_version(store.db))
        db.execute("DELETE FROM counters WHERE name = ?", (SCRUB_PENDING,))  # (the digests were looked up)
    if done.total:
        _scrub_file(store)
    for path in _files():
        if _redact_file(path, known):
            done.files.append(str(path))
    return done


def scrub(store: Store, found: set[str]) -> Repair:
    """What the store held from before of secrets just learnt, redacted in place: "the queue is named X", mined
    yesterday, once today's "X is the staging password" is mined. Only the rows that hold one are read (inside the
    caller's transaction, if one is open); the pages they leave are zeroed (secure_delete, no VACUUM), and a block
    rendered ahead that holds one goes too. (A log is left to `fix`: rewritten now, it would lose the lines that
    other processes write to it meanwhile.)"""
    done = Repair()
    if not found:
        return done
    db = store.db
    was = db.execute("PRAGMA secure_delete").fetchone()[0]
    db.execute("PRAGMA secure_delete = ON")
    try:
        with store.atomic():
            _rewrite(store, set(found), _NONE_LEARNT, done, sorted(found))
            db.execute("UPDATE counters SET value = MAX(0, value - 1) WHERE name = ?", (SCRUB_PENDING,))
            # A full-text index keeps a deleted row's terms in its older segments until they are merged.
            for index, table in (("memories_fts", "memories"), ("archive_fts", "archive.text")):
                if any(place.startswith(table) for place in done.rows) and store.has_table(index):
                    db.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
    finally:
        db.execute(f"PRAGMA secure_delete = {int(was)}")
    for path in _files():
        if path.parent != paths.cache_dir():
            continue
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if any(secret in text for secret in found):
            path.unlink(missing_ok=True)
            done.files.append(str(path))
    return done


def _rewrite(store: Store, known: set[str], secrets: Secrets, done: Repair, holding: list[str] = ()) -> None:
    """Redact, inside a transaction, every memory and text that redaction with `known` (and the store's learnt
    `secrets`) changes, of those `holding` one of these strings if given; counted in `done`."""
    db = store.db
    for memory_id, project, text, subject, value, keywords in list(_memory_changes(store, known, secrets, holding)):
        digest = content_hash(text)
        twin = db.execute("SELECT id FROM memories WHERE project = ? AND hash = ? AND id <> ?",
                          (project, digest, memory_id)).fetchone()
        if twin is not None:
            done.count("memories merged into an equal one")
            if _strength(db, memory_id) <= _strength(db, twin["id"]):
                merge_into(db, memory_id, twin["id"])
                continue
            merge_into(db, twin["id"], memory_id)  # the twin goes: this one is pinned, or active where it is not
        db.execute("UPDATE memories SET text = ?, hash = ?, subject = ?, value = ?, keywords = ? WHERE id = ?",
                   (text, digest, subject, value, keywords, memory_id))
        done.count("memories")
    for table, key, column in _text_columns(store):
        for row_key, new in list(_text_changes(store, table, key, column, known, secrets, holding)):
            if table == "archive":  # its search terms are drawn from the text: they change with it
                db.execute("UPDATE archive SET text = ?, terms = ? WHERE id = ?",
                           (new, " ".join(char_bigrams(width_folded(new))), row_key))
            elif table == "memory_hashes":
                # An earlier wording keeps its own hash; one equal to another wording of the project goes.
                row = db.execute("SELECT project FROM memory_hashes WHERE rowid = ?", (row_key,)).fetchone()
                if db.execute("SELECT 1 FROM memory_hashes WHERE project = ? AND hash = ? AND rowid <> ?",
                              (row["project"], content_hash(new), row_key)).fetchone():
                    db.execute("DELETE FROM memory_hashes WHERE rowid = ?", (row_key,))
                else:
                    db.execute("UPDATE memory_hashes SET text = ?, hash = ? WHERE rowid = ?",
                               (new, content_hash(new), row_key))
            else:
                db.execute(f"UPDATE OR REPLACE {table} SET {column} = ? WHERE {key} = ?", (new, row_key))
            done.count(f"{table}.{column}")


def _indexes(store: Store) -> list[str]:
    return [name for name in ("memories_fts", "archive_fts") if store.has_table(name)]


_STATE_STRENGTH = {"active": 4, "cold": 3, "superseded": 2, "quarantined": 1, "forgotten": 0}


def _strength(db, memory_id: int) -> tuple[int, int]:
    """Which of two memories that become equal stays: a pinned one, else the one whose state is the more alive."""
    row = db.execute("SELECT pinned, state FROM memories WHERE id = ?", (memory_id,)).fetchone()
    return int(row["pinned"]), _STATE_STRENGTH.get(row["state"], 0)


def merge_into(db, memory_id: int, twin: int) -> None:
    """A memory that says what another says (its redacted text, or a moved project's): its evidence, links and
    wordings move there, then it goes."""
    db.execute("UPDATE OR IGNORE evidence SET memory_id = ? WHERE memory_id = ?", (twin, memory_id))
    db.execute("UPDATE OR IGNORE links SET src = ? WHERE src = ? AND dst <> ?", (twin, memory_id, twin))
    db.execute("UPDATE OR IGNORE links SET dst = ? WHERE dst = ? AND src <> ?", (twin, memory_id, twin))
    db.execute("UPDATE OR IGNORE memory_hashes SET memory_id = ? WHERE memory_id = ?", (twin, memory_id))
    db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))


def _scrub_file(store: Store) -> None:
    """No freed page or log frame keeps what was overwritten: secure_delete, VACUUM, and an emptied WAL."""
    store.db.execute("PRAGMA secure_delete = ON")
    for index in _indexes(store):
        store.db.execute(f"INSERT INTO {index} ({index}) VALUES ('optimize')")
    store.db.execute("VACUUM")
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")


def _redact_file(path: Path, known: set[str]) -> bool:
    """Block caches go (they are rendered again); a log is rewritten line by line, redacted. True if changed."""
    if path.parent == paths.cache_dir():
        if _file_holds_secret(path, known):
            path.unlink(missing_ok=True)
            return True
        return False
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False
    new, kinds = redact(text, known)
    if not kinds:
        return False
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(new)
    os.replace(tmp, path)
    return True


def needed(store: Store) -> bool:
    """True when the store was last repaired by an older redaction (or never), or when a miner died before it
    scrubbed what was stored before a secret it learnt (`SCRUB_PENDING`): a cheap check for workers."""
    return (reader.redaction_version(store.db) < REDACTION_VERSION
            or store.counters().get(SCRUB_PENDING, 0) > 0)
