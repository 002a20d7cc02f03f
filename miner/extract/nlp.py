"""spaCy pipelines for refinement, loaded once per miner process (never on the hook path).

A trained pipeline (default `en_core_web_sm`, configurable with the
`spacy_model` setting: a package name or a path) is used when it is
installed; its tags and parse then sharpen refinement. Otherwise a blank
English pipeline: tokenizer and lookup lemmas from `spacy-lookups-data`,
all offline (units arrive already split, so no sentencizer is needed).
"""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_MODEL = "en_core_web_sm"


@dataclass(frozen=True)
class Pipeline:
    nlp: object
    name: str
    trained: bool


_loaded: dict[str, Pipeline] = {}


def load(model: str | None = DEFAULT_MODEL, blank_only: bool = False) -> Pipeline:
    """The trained pipeline `model` if installed, else a blank one (cached per process)."""
    key = "" if blank_only else (model or "")
    if key not in _loaded:
        _loaded[key] = (_trained(key) if key else None) or _blank()
    return _loaded[key]


def _trained(model: str) -> Pipeline | None:
    import spacy

    if not _is_path(model) and not spacy.util.is_package(model):
        # A bare name is an installed package or nothing: spaCy would otherwise try it as a folder, relative
        # to wherever the miner runs (a project folder could hold one of that name).
        return None
    try:
        nlp = spacy.load(model, exclude=["ner"])
    except (OSError, ImportError, ValueError):
        return None
    if not nlp.has_pipe("parser") and not nlp.has_pipe("senter") and not nlp.has_pipe("sentencizer"):
        nlp.add_pipe("sentencizer")
    return Pipeline(nlp, model, True)


def _is_path(model: str) -> bool:
    import os

    return os.path.isabs(os.path.expanduser(model)) or os.sep in model or model.startswith(".")


def _blank() -> Pipeline:
    """Blank English with lookup lemmas (lower-case text when the tables are missing)."""
    import spacy

    nlp = spacy.blank("en")  # refinement sees one unit at a time: tokens and lemmas, no sentence splitting
    lemmas = "lookup lemmas"
    try:
        from spacy.lookups import load_lookups

        tables = load_lookups("en", ["lemma_lookup"])
        nlp.add_pipe("lemmatizer", config={"mode": "lookup"}).initialize(lookups=tables)
        _register_components()
        # The table is keyed by the word as written: "Checking" at a sentence start has no entry.
        nlp.add_pipe("miner_capital_lemmas", config={})
        nlp.get_pipe("miner_capital_lemmas").table = tables.get_table("lemma_lookup")
    except (ImportError, ValueError, OSError):  # spacy-lookups-data missing: lemmas fall back to the lower case
        _register_components()
        nlp.add_pipe("miner_lower_lemmas")
        lemmas = "no lemma tables"
    return Pipeline(nlp, f"blank:en ({lemmas})", False)


class _CapitalLemmas:
    """Lemmas of words capitalised at a sentence start ("Checking") looked up by their lower case."""

    def __init__(self):
        self.table = None

    def __call__(self, doc):
        if self.table is not None:
            for i, token in enumerate(doc):
                if (i == 0 or doc[i - 1].is_punct) and token.text != token.lower_ and token.lemma_ == token.text:
                    token.lemma_ = self.table.get(token.lower_, token.lower_)
        return doc


def _register_components() -> None:
    from spacy.language import Language

    if "miner_lower_lemmas" in Language.factories:
        return

    @Language.component("miner_lower_lemmas")
    def lower_lemmas(doc):
        for token in doc:
            token.lemma_ = token.lower_
        return doc

    @Language.factory("miner_capital_lemmas")
    def capital_lemmas(nlp, name):
        return _CapitalLemmas()


def describe(model: str | None = DEFAULT_MODEL) -> str:
    """One line naming the pipeline the miner will use."""
    try:
        import importlib.util

        if model and importlib.util.find_spec(model) is not None:
            return f"trained spaCy pipeline {model}"
    except (ImportError, ValueError):
        pass
    return f"blank spaCy pipeline with lookup lemmas ({model or 'no model'} not installed)"


def has_parse(doc) -> bool:
    """Whether `doc` carries a trained pipeline's tags and dependency parse.

    A parser labels every token, so the first one tells (`Doc.has_annotation`
    walks every token in Python, and this runs several times per unit).
    """
    return len(doc) > 0 and doc[0].dep != 0 and doc[0].tag != 0
