"""The store's schema, as ordered migrations: append-only, and never edit one that has shipped.

Each migration runs in its own transaction (`Store.migrate`) and is recorded
by name in the `migrations` table, so a store left by any earlier version
upgrades in place (tests/test_migrations.py starts from every one of them).
Standard library only: the hooks open the store.
"""

from __future__ import annotations

import sqlite3

from ..extract.redaction_version import REDACTION_VERSION
from .reader import GLOBAL_SCOPE, RECALLED

# A row of `migrations` named for the redaction that writes the store: "redaction_015". A version of this package
# refuses to write into a store holding a migration it does not know (`unknown`), so a miner of an older redaction
# (a second install's hooks, a watcher started before an update) stops writing there once this version has opened
# it: what it would store, the current redaction would hide, and nothing cleans a row after it is written.
REDACTION_MARK = "redaction_"


def redaction_mark(version: int = REDACTION_VERSION) -> str:
    """The name of the `migrations` row that says code of redaction `version` writes the store."""
    return f"{REDACTION_MARK}{version:03d}"


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Execute statements one by one inside the caller's transaction.

    `executescript` would commit first, which would break a migration's atomicity.
    """
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            db.execute(statement)
            statement = ""
    if statement.strip():
        db.execute(statement)


def m001_core(db: sqlite3.Connection) -> None:
    run_script(
        db,
        """
        CREATE TABLE memories (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            category TEXT NOT NULL,
            text TEXT NOT NULL,
            hash TEXT NOT NULL,
            keywords TEXT NOT NULL DEFAULT '',
            subject TEXT NOT NULL DEFAULT '',
            value TEXT NOT NULL DEFAULT '',
            state TEXT NOT NULL DEFAULT 'active',
            tentative INTEGER NOT NULL DEFAULT 0,
            scope TEXT NOT NULL DEFAULT 'project',
            confidence REAL NOT NULL DEFAULT 0.5,
            pinned INTEGER NOT NULL DEFAULT 0,
            rule_id TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL DEFAULT 'user',
            source TEXT NOT NULL DEFAULT 'mined',
            session_id TEXT NOT NULL DEFAULT '',
            transcript TEXT NOT NULL DEFAULT '',
            entry_uuid TEXT NOT NULL DEFAULT '',
            git_branch TEXT NOT NULL DEFAULT '',
            first_seen TEXT NOT NULL,
            last_seen TEXT NOT NULL,
            valid_from TEXT NOT NULL,
            valid_to TEXT,
            evidence_count INTEGER NOT NULL DEFAULT 1,
            session_count INTEGER NOT NULL DEFAULT 1,
            recall_count INTEGER NOT NULL DEFAULT 0,
            last_recalled TEXT,
            state_reason TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (project, hash)
        );
        CREATE INDEX memories_project_state ON memories (project, state, last_seen);
        CREATE INDEX memories_scope ON memories (scope, state);

        CREATE TABLE evidence (
            id INTEGER PRIMARY KEY,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            session_id TEXT NOT NULL DEFAULT '',
            transcript TEXT NOT NULL DEFAULT '',
            entry_uuid TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL DEFAULT '',
            ts TEXT NOT NULL DEFAULT '',
            rule_id TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL DEFAULT '',
            UNIQUE (memory_id, entry_uuid, text)
        );
        CREATE INDEX evidence_memory ON evidence (memory_id);

        CREATE TABLE links (
            src INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            dst INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            reason TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL,
            PRIMARY KEY (src, dst, kind)
        );

        CREATE TABLE sessions (
            session_id TEXT PRIMARY KEY,
            project TEXT NOT NULL DEFAULT '',
            cwd TEXT NOT NULL DEFAULT '',
            git_branch TEXT NOT NULL DEFAULT '',
            transcript TEXT NOT NULL DEFAULT '',
            first_ts TEXT NOT NULL DEFAULT '',
            last_ts TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX sessions_project ON sessions (project, last_ts);

        CREATE TABLE watermarks (
            transcript TEXT PRIMARY KEY,
            offset INTEGER NOT NULL,
            inode INTEGER NOT NULL DEFAULT 0,
            head TEXT NOT NULL DEFAULT '',
            project TEXT NOT NULL DEFAULT '',
            updated_at TEXT NOT NULL
        );

        CREATE TABLE seen_entries (uuid TEXT PRIMARY KEY) WITHOUT ROWID;

        CREATE TABLE checkpoints (
            session_id TEXT PRIMARY KEY,
            project TEXT NOT NULL,
            created_at TEXT NOT NULL,
            body TEXT NOT NULL
        );

        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL DEFAULT 0);

        CREATE TABLE recall_log (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL,
            project TEXT NOT NULL,
            situation TEXT NOT NULL,
            query TEXT NOT NULL DEFAULT '',
            shown TEXT NOT NULL DEFAULT '[]',
            voided TEXT NOT NULL DEFAULT '[]',
            left_out TEXT NOT NULL DEFAULT '[]',
            chars INTEGER NOT NULL DEFAULT 0,
            elapsed_ms REAL NOT NULL DEFAULT 0
        );

        CREATE VIRTUAL TABLE memories_fts USING fts5 (
            text, keywords, content='memories', content_rowid='id',
            tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER memories_ai AFTER INSERT ON memories BEGIN
            INSERT INTO memories_fts (rowid, text, keywords) VALUES (new.id, new.text, new.keywords);
        END;
        CREATE TRIGGER memories_ad AFTER DELETE ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, keywords)
            VALUES ('delete', old.id, old.text, old.keywords);
        END;
        CREATE TRIGGER memories_au AFTER UPDATE OF text, keywords ON memories BEGIN
            INSERT INTO memories_fts (memories_fts, rowid, text, keywords)
            VALUES ('delete', old.id, old.text, old.keywords);
            INSERT INTO memories_fts (rowid, text, keywords) VALUES (new.id, new.text, new.keywords);
        END;
        """
    )


def m002_history(db: sqlite3.Connection) -> None:
    """Dedup and conflict history: earlier wordings of a memory, a display note per supersede link."""
    run_script(
        db,
        """
        CREATE TABLE memory_hashes (
            project TEXT NOT NULL,
            hash TEXT NOT NULL,
            memory_id INTEGER NOT NULL REFERENCES memories (id) ON DELETE CASCADE,
            text TEXT NOT NULL,
            created_at TEXT NOT NULL,
            PRIMARY KEY (project, hash)
        );
        CREATE INDEX memory_hashes_memory ON memory_hashes (memory_id);
        ALTER TABLE links ADD COLUMN was TEXT NOT NULL DEFAULT '';
        CREATE INDEX links_dst ON links (dst, kind);
        CREATE INDEX memories_subject ON memories (project, subject, state) WHERE subject <> '';
        """
    )


def m003_recall_speed(db: sqlite3.Connection) -> None:
    """Recall without scans: candidates per category by recency, and term frequencies for picking query terms."""
    run_script(
        db,
        """
        CREATE INDEX memories_recall ON memories (project, state, category, last_seen);
        CREATE INDEX memories_pinned ON memories (project, pinned) WHERE pinned = 1;
        CREATE VIRTUAL TABLE memories_vocab USING fts5vocab (memories_fts, 'row');
        """
    )


def m004_session_evidence(db: sqlite3.Connection) -> None:
    """Checkpoints gather a session's decisions and todos from its evidence."""
    run_script(db, "CREATE INDEX evidence_session ON evidence (session_id);")


def m005_session_prompts(db: sqlite3.Connection) -> None:
    """How many prompts the user typed in each session: a busy session must yield something in their words."""
    run_script(db, "ALTER TABLE sessions ADD COLUMN user_prompts INTEGER NOT NULL DEFAULT 0;")


def m006_archive(db: sqlite3.Connection) -> None:
    """Everything said, unit by unit: the prose the memories were drawn from, searchable when a prompt asks.

    `terms` holds what the word index cannot find (character pairs of scripts written without spaces);
    `worth` how likely the classifier found the unit a memory (search ranks by it too); `hidden` marks a unit
    whose memory was forgotten: it is never found again.
    """
    run_script(
        db,
        """
        CREATE TABLE archive (
            id INTEGER PRIMARY KEY,
            project TEXT NOT NULL,
            session_id TEXT NOT NULL DEFAULT '',
            transcript TEXT NOT NULL DEFAULT '',
            entry_uuid TEXT NOT NULL,
            unit INTEGER NOT NULL,
            role TEXT NOT NULL,
            ts TEXT NOT NULL DEFAULT '',
            text TEXT NOT NULL,
            terms TEXT NOT NULL DEFAULT '',
            worth REAL NOT NULL DEFAULT 0.5,
            hidden INTEGER NOT NULL DEFAULT 0,
            UNIQUE (entry_uuid, unit)
        );
        CREATE INDEX archive_project ON archive (project, id);
        CREATE INDEX archive_session ON archive (session_id);
        CREATE VIRTUAL TABLE archive_fts USING fts5 (
            text, terms, content='archive', content_rowid='id', tokenize='unicode61 remove_diacritics 2'
        );
        CREATE TRIGGER archive_ai AFTER INSERT ON archive BEGIN
            INSERT INTO archive_fts (rowid, text, terms) VALUES (new.id, new.text, new.terms);
        END;
        CREATE TRIGGER archive_ad AFTER DELETE ON archive BEGIN
            INSERT INTO archive_fts (archive_fts, rowid, text, terms) VALUES ('delete', old.id, old.text, old.terms);
        END;
        CREATE TRIGGER archive_au AFTER UPDATE OF text, terms ON archive BEGIN
            INSERT INTO archive_fts (archive_fts, rowid, text, terms) VALUES ('delete', old.id, old.text, old.terms);
            INSERT INTO archive_fts (rowid, text, terms) VALUES (new.id, new.text, new.terms);
        END;
        CREATE VIRTUAL TABLE archive_vocab USING fts5vocab (archive_fts, 'row');
        """,
    )


def m007_recall_indexes(db: sqlite3.Connection) -> None:
    """Recall queries that walk an index instead of sorting: the latest global preferences (every project's
    block reads them), and a stretch's latest memories in the user's own words."""
    run_script(
        db,
        """
        DROP INDEX memories_scope;
        CREATE INDEX memories_scope ON memories (scope, state, last_seen);
        CREATE INDEX memories_recall_role ON memories (project, state, category, role, last_seen);
        """
    )


# Recall counts move versions of their own: a new session's block does not weigh them (see `recall.blockcache`).
_NOT_CONTENT = ("recall_count", "last_recalled")


def _bump(key: str) -> str:  # (as m008 made them; m016 makes them move to random values)
    return (f"INSERT INTO block_versions (scope, version) VALUES ({key}, 1) "
            "ON CONFLICT (scope) DO UPDATE SET version = version + 1;")


def _memory_key(row: str) -> str:
    return f"(CASE {row}.scope WHEN 'global' THEN '{GLOBAL_SCOPE}' ELSE {row}.project END)"


def m008_block_versions(db: sqlite3.Connection) -> None:
    """A version per project of what its recall blocks are drawn from, moved by triggers.

    Every write to a project's memories, their links, its sessions or its checkpoints moves the project's
    version (a global memory moves the global one); a change of recall counts alone moves the project's
    `recalled:` version instead. A block rendered ahead stays valid while the versions it was drawn from
    stand still, whatever else is written: the recall record of the hook that showed it, another project's
    mining. The memories' update trigger names the content columns: a migration that adds a column to
    `memories` recreates it.
    """
    columns = [row[1] for row in db.execute("PRAGMA table_info(memories)") if row[1] not in _NOT_CONTENT]
    recalled = ", ".join(_NOT_CONTENT)
    old, new = _memory_key("OLD"), _memory_key("NEW")
    link_key = ("COALESCE((SELECT CASE scope WHEN 'global' THEN '{g}' ELSE project END FROM memories "
                "WHERE id = {row}.src), '{g}')")
    run_script(
        db,
        f"""
        CREATE TABLE block_versions (scope TEXT PRIMARY KEY, version INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TRIGGER memories_version_insert AFTER INSERT ON memories BEGIN {_bump(new)} END;
        CREATE TRIGGER memories_version_delete AFTER DELETE ON memories BEGIN {_bump(old)} END;
        CREATE TRIGGER memories_version_update AFTER UPDATE OF {", ".join(columns)} ON memories
            BEGIN {_bump(old)} {_bump(new)} END;
        CREATE TRIGGER memories_version_recalled AFTER UPDATE OF {recalled} ON memories
            BEGIN {_bump(f"'{RECALLED}' || {new}")} END;
        CREATE TRIGGER links_version_insert AFTER INSERT ON links
            BEGIN {_bump(link_key.format(g=GLOBAL_SCOPE, row="NEW"))} END;
        CREATE TRIGGER links_version_delete AFTER DELETE ON links
            BEGIN {_bump(link_key.format(g=GLOBAL_SCOPE, row="OLD"))} END;
        CREATE TRIGGER sessions_version_insert AFTER INSERT ON sessions BEGIN {_bump("NEW.project")} END;
        CREATE TRIGGER sessions_version_update AFTER UPDATE ON sessions
            BEGIN {_bump("OLD.project")} {_bump("NEW.project")} END;
        CREATE TRIGGER sessions_version_delete AFTER DELETE ON sessions BEGIN {_bump("OLD.project")} END;
        CREATE TRIGGER checkpoints_version_insert AFTER INSERT ON checkpoints BEGIN {_bump("NEW.project")} END;
        CREATE TRIGGER checkpoints_version_update AFTER UPDATE ON checkpoints
            BEGIN {_bump("OLD.project")} {_bump("NEW.project")} END;
        CREATE TRIGGER checkpoints_version_delete AFTER DELETE ON checkpoints BEGIN {_bump("OLD.project")} END;
        """
    )


def m009_unconfirmed_index(db: sqlite3.Connection) -> None:
    """The unconfirmed (hedged) memories of a project, counted without reading every row: the web viewer's
    filters count them beside each state. Partial, so it holds those few rows only."""
    run_script(db, "CREATE INDEX memories_unconfirmed ON memories (project, state) WHERE tentative = 1;")


def m010_browse_index(db: sqlite3.Connection) -> None:
    """A project's memories in every state, newest said first: the web viewer's "every state" list pages
    through this index instead of sorting the project's rows."""
    run_script(db, "CREATE INDEX memories_project_seen ON memories (project, last_seen, id);")


def m011_team(db: sqlite3.Connection) -> None:
    """What `miner team` keeps on this machine: which team memory each local memory is (and what it was
    when the two were last in step), the preferences shared with the team, and how far each project has
    pulled. No URL, password or server name: those stay in the team settings and the environment."""
    run_script(
        db,
        """
        CREATE TABLE team_map (
            local_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE,
            team TEXT NOT NULL,
            remote_id INTEGER NOT NULL,
            synced TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX team_map_remote ON team_map (team, remote_id);
        CREATE TABLE team_shared (local_id INTEGER PRIMARY KEY REFERENCES memories (id) ON DELETE CASCADE);
        CREATE TABLE team_sync (
            team TEXT NOT NULL,
            project TEXT NOT NULL,
            key TEXT NOT NULL,
            value TEXT NOT NULL,
            PRIMARY KEY (team, project, key)
        ) WITHOUT ROWID;
        """
    )


def m012_common_terms(db: sqlite3.Connection) -> None:
    """How many rows of each full-text index hold each of its common terms, as last counted, and how large the
    index was then (`Store.count_common_terms`). FTS5 counts a term by reading its whole list of rows: the
    prompt hook weighs every term of a prompt, and a common one cost it a millisecond per 30,000 rows."""
    run_script(
        db,
        """
        CREATE TABLE common_terms (
            idx TEXT NOT NULL,
            term TEXT NOT NULL,
            docs INTEGER NOT NULL,
            PRIMARY KEY (idx, term)
        ) WITHOUT ROWID;
        CREATE TABLE common_terms_counted (idx TEXT PRIMARY KEY, size INTEGER NOT NULL) WITHOUT ROWID;
        """
    )


def m013_secret_digests(db: sqlite3.Connection) -> None:
    """Salted digests of the secrets mining found by their context (never the secrets), so that a later miner
    process hides a bare repeat of one (`secret_turns`); the salt is this store's own. And the transcripts whose
    mined lines end with the assistant asking for a secret: the user's answer opens the next lines."""
    run_script(
        db,
        """
        CREATE TABLE secret_digests (digest BLOB PRIMARY KEY, added INTEGER NOT NULL) WITHOUT ROWID;
        CREATE TABLE secret_salt (salt BLOB NOT NULL);
        INSERT INTO secret_salt (salt) VALUES (randomblob(16));
        CREATE TABLE secret_asked (transcript TEXT PRIMARY KEY) WITHOUT ROWID;
        """
    )


def m014_purged_entries(db: sqlite3.Connection) -> None:
    """The transcript entries of purged projects (uuids only): an export carries them, so that a store restored
    from it does not mine them again."""
    run_script(db, "CREATE TABLE purged_entries (uuid TEXT PRIMARY KEY) WITHOUT ROWID;")


def m015_sessions_by_transcript(db: sqlite3.Connection) -> None:
    """A transcript's sessions found without a scan: each run of `miner mine` asks, per file, which of them still
    owe their checkpoint (`Store.sessions_without_checkpoint`)."""
    run_script(db, "CREATE INDEX sessions_transcript ON sessions (transcript);")


def m016_unrepeatable_block_versions(db: sqlite3.Connection) -> None:
    """Versions that move to a random value, not up by one: a backup copied back over the store (same file, same
    inode) took the versions back with it, and the writes after it counted up to those of a block rendered before
    the restore, which was then shown as current (a memory forgotten since back in it). Equal versions now mean the
    same rows: the ones a block was rendered from, or a backup of them."""
    triggers = db.execute("SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name LIKE '%\\_version\\_%' "
                          "ESCAPE '\\'").fetchall()
    for name, sql in triggers:
        db.execute(f'DROP TRIGGER "{name}"')
        db.execute(sql.replace(", 1) ON CONFLICT", ", random()) ON CONFLICT")
                   .replace("version = version + 1", "version = random()"))


MIGRATIONS = [m001_core, m002_history, m003_recall_speed, m004_session_evidence, m005_session_prompts,
              m006_archive, m007_recall_indexes, m008_block_versions, m009_unconfirmed_index, m010_browse_index,
              m011_team, m012_common_terms, m013_secret_digests, m014_purged_entries,
              m015_sessions_by_transcript, m016_unrepeatable_block_versions]


def unknown(applied) -> list[str]:
    """The migrations of `applied` (names) this version does not have: a newer version wrote the store (its schema,
    or its redaction: `redaction_mark`)."""
    known = {migration.__name__ for migration in MIGRATIONS}
    known.update(redaction_mark(version) for version in range(REDACTION_VERSION + 1))
    return sorted(set(applied) - known)
