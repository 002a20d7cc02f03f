"""Stage 3, recall: what a session is told.

`block` ranks the memories and renders the token-budgeted block (with `void` marking stale clusters),
`blockcache` keeps blocks rendered ahead for SessionStart, `checkpoint` writes and reads what a session
was doing at a compaction, and `prompt` answers a typed prompt from the memories and the archive.

Kept import-free: the hooks import single modules of this package.
"""
