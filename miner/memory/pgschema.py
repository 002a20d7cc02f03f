"""The team server's schema and the text helpers `PgStore` shares with it (see `pgstore`).

Tables in one schema, `miner`, each row keyed by team id and project key; a sequence
that numbers every change (what a pull reads after); a function the owner's role
runs for members, whose roles may not ANALYZE tables they do not own. The README
gives the grants of the least-privileged role a member needs.
"""

from __future__ import annotations

import re

from ..textutil import fts_terms
from .fts_query import EXPR_TERM


class PgStoreError(RuntimeError):
    """The team server cannot be reached or used; the message says what to do."""


SCHEMA = "miner"
SCHEMA_VERSION = 2  # 2: an insert takes its change's number from the sequence too (`UPGRADE`)
_LEXEME_OK = re.compile(r"^\w+$")

DDL = f"""
CREATE SCHEMA IF NOT EXISTS {SCHEMA};
CREATE SEQUENCE IF NOT EXISTS {SCHEMA}.changes;
CREATE TABLE IF NOT EXISTS {SCHEMA}.meta (key text PRIMARY KEY, value text NOT NULL);
CREATE TABLE IF NOT EXISTS {SCHEMA}.memories (
    id bigserial PRIMARY KEY,
    team text NOT NULL,
    project text NOT NULL,
    category text NOT NULL,
    text text NOT NULL,
    hash text NOT NULL,
    keywords text NOT NULL DEFAULT '',
    terms tsvector NOT NULL,
    subject text NOT NULL DEFAULT '',
    value text NOT NULL DEFAULT '',
    state text NOT NULL DEFAULT 'active',
    state_reason text NOT NULL DEFAULT '',
    tentative boolean NOT NULL DEFAULT false,
    scope text NOT NULL DEFAULT 'project',
    confidence double precision NOT NULL DEFAULT 0.5,
    pinned boolean NOT NULL DEFAULT false,
    rule_id text NOT NULL DEFAULT '',
    role text NOT NULL DEFAULT 'user',
    source text NOT NULL DEFAULT 'mined',
    session_id text NOT NULL DEFAULT '',
    transcript text NOT NULL DEFAULT '',
    entry_uuid text NOT NULL DEFAULT '',
    git_branch text NOT NULL DEFAULT '',
    member text NOT NULL DEFAULT '',
    first_seen text NOT NULL,
    last_seen text NOT NULL,
    valid_from text NOT NULL,
    valid_to text,
    evidence_count integer NOT NULL DEFAULT 1,
    session_count integer NOT NULL DEFAULT 1,
    recall_count integer NOT NULL DEFAULT 0,
    last_recalled text,
    created_at text NOT NULL,
    updated_at text NOT NULL,
    seq bigint NOT NULL DEFAULT nextval('{SCHEMA}.changes'),
    UNIQUE (team, project, hash)
);
-- No pending list: every push looks up what the previous one inserted, and a pending list is read in full.
CREATE INDEX IF NOT EXISTS memories_terms ON {SCHEMA}.memories USING gin (terms) WITH (fastupdate = off);
CREATE INDEX IF NOT EXISTS memories_changes ON {SCHEMA}.memories (team, project, seq);
CREATE INDEX IF NOT EXISTS memories_current ON {SCHEMA}.memories (team, project, state, last_seen);
CREATE INDEX IF NOT EXISTS memories_subject ON {SCHEMA}.memories (team, project, subject) WHERE subject <> '';
CREATE TABLE IF NOT EXISTS {SCHEMA}.memory_hashes (
    team text NOT NULL,
    project text NOT NULL,
    hash text NOT NULL,
    memory_id bigint NOT NULL REFERENCES {SCHEMA}.memories (id),
    text text NOT NULL,
    created_at text NOT NULL,
    PRIMARY KEY (team, project, hash)
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.evidence (
    id bigserial PRIMARY KEY,
    memory_id bigint NOT NULL REFERENCES {SCHEMA}.memories (id),
    member text NOT NULL DEFAULT '',
    session_id text NOT NULL DEFAULT '',
    transcript text NOT NULL DEFAULT '',
    entry_uuid text NOT NULL DEFAULT '',
    role text NOT NULL DEFAULT '',
    ts text NOT NULL DEFAULT '',
    rule_id text NOT NULL DEFAULT '',
    text text NOT NULL DEFAULT '',
    UNIQUE (memory_id, entry_uuid, text)
);
CREATE TABLE IF NOT EXISTS {SCHEMA}.links (
    team text NOT NULL,
    project text NOT NULL,
    src bigint NOT NULL REFERENCES {SCHEMA}.memories (id),
    dst bigint NOT NULL REFERENCES {SCHEMA}.memories (id),
    kind text NOT NULL,
    reason text NOT NULL DEFAULT '',
    was text NOT NULL DEFAULT '',
    member text NOT NULL DEFAULT '',
    created_at text NOT NULL,
    seq bigint NOT NULL DEFAULT nextval('{SCHEMA}.changes'),
    PRIMARY KEY (src, dst, kind)
);
CREATE INDEX IF NOT EXISTS links_dst ON {SCHEMA}.links (dst);
CREATE INDEX IF NOT EXISTS links_changes ON {SCHEMA}.links (team, project, seq);
CREATE TABLE IF NOT EXISTS {SCHEMA}.counters (
    team text NOT NULL,
    name text NOT NULL,
    value bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (team, name)
);
CREATE OR REPLACE FUNCTION {SCHEMA}.next_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.seq := nextval('{SCHEMA}.changes');
    RETURN NEW;
END $$;
CREATE OR REPLACE TRIGGER memories_change BEFORE INSERT OR UPDATE ON {SCHEMA}.memories
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.next_change();
CREATE OR REPLACE TRIGGER links_change BEFORE INSERT OR UPDATE ON {SCHEMA}.links
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.next_change();
-- Members' roles do not own the tables, so they may not ANALYZE them; they may ask the owner's function to,
-- when a push grew the table past what the planner's statistics know (it would scan instead of using the index).
CREATE OR REPLACE FUNCTION {SCHEMA}.refresh_statistics() RETURNS void LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = pg_catalog AS $$
BEGIN
    ANALYZE {SCHEMA}.memories;
END $$;
REVOKE ALL ON FUNCTION {SCHEMA}.refresh_statistics() FROM PUBLIC;
INSERT INTO {SCHEMA}.meta (key, value) VALUES ('schema_version', '{SCHEMA_VERSION}') ON CONFLICT (key) DO NOTHING;
"""


# From schema 1: an insert took the number it gave (a member could give one past every change to come).
UPGRADE = f"""
CREATE OR REPLACE TRIGGER memories_change BEFORE INSERT OR UPDATE ON {SCHEMA}.memories
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.next_change();
CREATE OR REPLACE TRIGGER links_change BEFORE INSERT OR UPDATE ON {SCHEMA}.links
    FOR EACH ROW EXECUTE FUNCTION {SCHEMA}.next_change();
UPDATE {SCHEMA}.meta SET value = '{SCHEMA_VERSION}' WHERE key = 'schema_version';
"""


def upgrade(db) -> bool:
    """Bring a server's tables made by an older miner up to `SCHEMA_VERSION`, when this role may (the tables'
    owner, through `miner team setup`); True when they are (or were) up to date."""
    import psycopg

    row = db.execute(f"SELECT value FROM {SCHEMA}.meta WHERE key = 'schema_version'").fetchone()
    if row is not None and row[0].isdigit() and int(row[0]) > SCHEMA_VERSION:
        raise PgStoreError(f"the team server's tables are of schema {row[0]}, newer than this miner's "
                           f"{SCHEMA_VERSION}: upgrade transcript-miner on this machine (`./install.sh`), then sync "
                           "again (nothing was sent)")
    if row is not None and row[0].isdigit() and int(row[0]) == SCHEMA_VERSION:
        return True
    try:
        with db.transaction():
            db.execute(UPGRADE)
    except psycopg.errors.InsufficientPrivilege:
        return False  # a member's role: readers leave out what an insert could forge meanwhile (`pgstore`)
    return True


def create_schema(db, repair: bool = False) -> None:
    """`PgStore.create_schema` on its connection: tables newer than this miner are refused, older ones upgraded (when
    this role may), missing ones made."""
    import psycopg

    tables, meta = db.execute("SELECT to_regclass(%s), to_regclass(%s)", (f"{SCHEMA}.memories", f"{SCHEMA}.meta")
                              ).fetchone()
    if meta:
        upgrade(db)  # (first: what a newer miner made is never made over by this one's definitions)
    if tables and not repair:
        if not meta:
            raise PgStoreError(f"the team tables on the server are damaged ({SCHEMA}.meta is missing): have the "
                               "database's owner run `miner team setup URL` to make what is missing again")
        return
    try:
        with db.transaction():
            db.execute("SELECT pg_advisory_xact_lock(hashtext('miner schema'))")
            db.execute(DDL)
    except psycopg.errors.InsufficientPrivilege:
        if tables:
            raise PgStoreError("this role may not change the team tables: have the database's owner run `miner "
                               "team setup URL`") from None
        raise PgStoreError("the team tables are missing and this role may not create them: have the "
                           "database's owner run `miner team setup URL` once") from None
    upgrade(db)


def instance(db) -> str:
    """Which tables the server holds: its database's and its memory table's object ids, which tables made again
    (dropped and set up again, or restored from a dump) do not keep."""
    row = db.execute("SELECT (SELECT oid FROM pg_database WHERE datname = current_database())::text || ':' || "
                     "to_regclass(%s)::oid::text", (f"{SCHEMA}.memories",)).fetchone()
    return row[0] if row and row[0] else ""


def terms_text(text: str, keywords: str) -> str:
    """The words the full-text index holds for a memory: the same terms FTS5 gets on SQLite."""
    return " ".join(t for t in dict.fromkeys([*fts_terms(text), *keywords.split()]) if _LEXEME_OK.match(t))


def tsquery(match: str) -> str:
    """An FTS5 OR-expression of quoted terms (what `dedup.match_expression` builds) as a tsquery text:
    each term quoted, a phrase's words joined by `<->`; terms that are not plain words are left out."""
    alternatives = []
    for found in EXPR_TERM.finditer(match):
        words = [w for w in found.group(1).replace('""', '"').lower().split() if _LEXEME_OK.match(w)]
        if words:
            alternatives.append(" <-> ".join(f"'{w}'" for w in words))
    return " | ".join(alternatives)


AT_IN_PASSWORD = ("its user name or password holds an '@' or a '/': write them %40 and %2F in the URL (or give the "
                  "password through PGPASSWORD)")


def without_password(url: str) -> str:
    """A PostgreSQL URL or key=value string with its password, and its client key's passphrase (`sslpassword`),
    left out (libpq's own parser reads it); a URL without either comes back as it was given.
    `psycopg.ProgrammingError` when libpq cannot read it."""
    from psycopg import ProgrammingError
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    params = conninfo_to_dict(url)
    if url.startswith(("postgresql://", "postgres://")):
        # libpq took the password's end for the host ("u:p@ss@host"), or, at a '/', the user and the password's
        # start for a host and a port ("u:Xy7/Secr3t@host"): either would be shown in its errors.
        authority, _, rest = url.partition("://")[2].partition("/")
        if "@" in (params.get("host") or "") or "@" not in authority and "@" in rest.partition("?")[0]:
            raise ProgrammingError(AT_IN_PASSWORD)
    dropped = [params.pop(name, None) for name in ("password", "sslpassword")]
    if dropped == [None, None] and url.startswith(("postgresql://", "postgres://")):
        return url
    return make_conninfo(**params)


def check_url(url: str) -> None:
    """A URL whose password holds an '@' is refused before libpq reads it: it takes the password's end for the host,
    which its errors then show. (Another it cannot read is left to it, whose error is said without the URL.)"""
    from psycopg import ProgrammingError

    try:
        without_password(url)
    except ProgrammingError as exc:
        if str(exc) == AT_IN_PASSWORD:
            raise PgStoreError(f"not a PostgreSQL URL: {AT_IN_PASSWORD}") from None


def describe(url: str) -> str:
    """The URL with any password left out: what may be printed or logged, whatever was given."""
    from psycopg import ProgrammingError

    try:
        return without_password(url)
    except ProgrammingError:
        return "(an unreadable PostgreSQL URL)"
