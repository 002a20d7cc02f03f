"""Stage 3, recall: what a session is told.

`rank` decides which memories are candidates and how each scores (with `void` marking weak clusters),
`history` picks memories from every stretch of a long history, `block` renders the token-budgeted block
from that ranking, `blockcache` keeps blocks rendered ahead for SessionStart, `checkpoint` writes and
reads what a session was doing at a compaction, and `prompt` answers a typed prompt from the memories
and the archive.

Kept import-free: the hooks import single modules of this package.
"""
