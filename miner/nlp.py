"""spaCy pipelines, loaded once per miner process (never on the hook path).

A trained pipeline (default `en_core_web_sm`, configurable) is used when it
is installed; otherwise a blank English pipeline with a sentencizer, which
needs nothing from the network.
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
    if key in _loaded:
        return _loaded[key]
    import spacy

    pipeline = None
    if key:
        try:
            nlp = spacy.load(key, exclude=["ner"])
            if not nlp.has_pipe("parser") and not nlp.has_pipe("senter") and not nlp.has_pipe("sentencizer"):
                nlp.add_pipe("sentencizer")
            pipeline = Pipeline(nlp, key, True)
        except (OSError, ImportError, ValueError):
            pipeline = None
    if pipeline is None:
        nlp = spacy.blank("en")
        nlp.add_pipe("sentencizer")
        pipeline = Pipeline(nlp, "blank:en (sentencizer)", False)
    _loaded[key] = pipeline
    return pipeline


def describe(model: str | None = DEFAULT_MODEL) -> str:
    """One line naming the pipeline the miner will use."""
    try:
        import importlib.util

        if model and importlib.util.find_spec(model) is not None:
            return f"trained spaCy pipeline {model}"
    except (ImportError, ValueError):
        pass
    return f"blank spaCy pipeline with a sentencizer ({model or 'no model'} not installed)"
