"""Stage 1, extraction: a transcript's lines become candidate memories.

Data flows through the modules in this order: `transcript` (JSONL → prose turns), `clean` (prose →
units), `rules` (YAML regex rules), `classify` and `refine` (the spaCy classifier and the named
refinement steps), `redact` (secrets out) and `trust` (what the assistant's words may not become).
`model` holds the records passed between them, `nlp` the spaCy pipelines.

Kept import-free: the hooks import single modules of this package (`redact`, `transcript`).
"""
