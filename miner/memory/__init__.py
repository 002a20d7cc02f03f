"""Stage 2, memory: what is kept, and the only package that speaks SQL.

`migrations` (the schema), `store` (the narrow store: typed records, `atomic()`, every query),
`dedup` with `similarity` and `lexicon` (near-duplicates merge, conflicts supersede), `corrections`
(forget, correct, pin), `decay` (cold storage), `privacy` (purge, approve, file modes), `portable`
(export, import, backup) and `repair`. `STORE.md` beside this file writes the store's interface down.

Kept import-free: the hooks open the store read-only and import nothing else from here.
"""
