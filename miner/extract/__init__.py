"""Stage 1, extraction: a transcript's lines become candidate memories.

Data flows through the modules in this order: `transcript` (JSONL → prose turns), `clean` (prose →
units), `rules` (YAML regex rules: loading; `rule_matching` matches them, `regex_analysis` reads their
patterns, `rule_trust` says which projects' own files the user trusted), `classify` and `refine` (the spaCy classifier and the named refinement steps, with the
plain-text tests of `sentences`, `program_output` and `check_report`), `redact` (secrets out: `secret_patterns`,
`secret_shapes` with `secret_commands` and `secret_calls`, `secret_finders` with `secret_values`, `secret_numbers`
and `secret_tables`, `secret_rules`) and `trust`
(what the assistant's words may not become). `model` holds the records passed between them, `nlp` the
spaCy pipelines.

Kept import-free: the hooks import single modules of this package (`redact`, `transcript`).
"""
