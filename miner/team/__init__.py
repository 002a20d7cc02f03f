"""Team memory: a project's decisions, facts and todos shared through a PostgreSQL server (`miner team`).

Each machine keeps its own SQLite store as the only source of its hooks: they never
touch the network. `sync` pushes what changed here to the team's `PgStore` (through
the same three dedup layers, serialised per project by an advisory lock) and pulls
what changed there; `settings` holds which server, team and projects, never a
password. Needs the `team` extra (psycopg).
"""
