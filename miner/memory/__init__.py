"""Stage 2, memory: what is kept, and the only package that speaks SQL.

`migrations` (the schema), `store` (the narrow store: `atomic()` and every query, in the mixins
`store_memories`, `store_dedup` and `store_sessions`), `records` (what the queries return), `reader` (the
file without the store: the prompt hook, `doctor`), `prose_index` (an in-memory FTS5 baseline),
`dedup` (near-duplicates merge, conflicts supersede) with `similarity`, `supersede`, `text_features`,
`change_words` and `lexicon` (how two texts compare, and when the newer one changes the older one's mind),
`corrections` (forget, correct, pin), `decay` (cold storage), `privacy` (purge, approve, file modes),
`portable` (export, import, backup) and `repair`. `STORE.md` beside this file writes the store's interface down.

Kept import-free: the hooks import `store` (with `records` and its mixins) and `reader` from here, nothing else.
"""
