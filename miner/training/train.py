"""`miner train`: the memory classifier, rebuilt from the training data, seeded and deterministic.

Units become tokens (`classify.unit_tokens`, with the shipped rules' hits),
the text classifier of `textcat.cfg` is fitted on every labelled unit, and
the thresholds on P(none), one for the user's units and one for the
assistant's, are tuned on units the model did not see: the training groups
are split into folds of whole projects, each fold is predicted by a model
fitted without it, and the pair of thresholds that gives the best F1 on
those predictions is kept. The same functions serve
cross-validation (`cv.py`), which calls them without the project it scores.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from ..extract.classify import (
    LABELS,
    LANGUAGE_TOKEN,
    META_FILE,
    RULE_ID_TOKEN,
    RULE_TOKEN,
    THRESHOLD_ROLES,
    contexts,
    threshold_role,
    thresholds_text,
    unit_tokens,
)
from .dataset import Dataset, Document

CONFIG_FILE = Path(__file__).resolve().parent / "textcat.cfg"
FORMAT = 1
THRESHOLDS = tuple(round(0.30 + 0.025 * i, 3) for i in range(25))  # candidate thresholds on P(none)


@dataclass(frozen=True)
class Example:
    group: str
    tokens: tuple[str, ...]
    label: str
    role: str
    ruled: bool = False  # a rule that keeps fired: the unit is kept whatever the classifier says


def load_config(path: Path = CONFIG_FILE):
    from thinc.api import Config

    return Config().from_disk(path)


def default_rules():
    from ..extract import rules as rules_mod

    return rules_mod.load_rules(rules_mod.default_rule_files())


def featurize(dataset: Dataset, ruleset=None, with_rules: bool = True) -> list[Example]:
    """Every labelled unit as an example (tokens, label), its context taken from its whole transcript."""
    from ..runtime.mine import unit_langs

    ruleset = ruleset if ruleset is not None or not with_rules else default_rules()
    examples: list[Example] = []
    for document in dataset.documents:
        for unit, context, label in zip(document.units, contexts(document.units), document.labels):
            if label is None:
                continue
            hits = ruleset.match(unit.text, unit.turn.role, unit_langs(unit.text)) if with_rules else ()
            examples.append(Example(document.group, tuple(unit_tokens(unit, context, hits)), label, unit.turn.role,
                                    any(h.rule.effect == "keep" for h in hits)))
    return examples


RULE_TOKENS = (RULE_TOKEN, RULE_ID_TOKEN)


def without_rules(example: Example) -> Example:
    """The example as a language the shipped rules are not written for would show it: no rule fired, and its
    language tokens say "other" (`classify.ruled_language`)."""
    tokens = []
    for token in example.tokens:
        if token.startswith(RULE_TOKENS):
            continue
        if token.startswith(LANGUAGE_TOKEN):
            _, bar, rest = token.partition("|")
            token = LANGUAGE_TOKEN + "other" + bar + rest
        tokens.append(token)
    return Example(example.group, tuple(tokens), example.label, example.role)


def training_set(examples: Sequence[Example], config) -> list[Example]:
    """What the model is fitted on: the examples and, with `rule_free_copies`, each example a rule fired on
    once more as `without_rules` shows it. The shipped rules are written for English and Chinese; a model that
    sees such a unit both ways learns what its cues and form say in a language with no rules of its own, where
    "a rule fired" is not there to go on, while the language tokens keep that from lowering the bar in English
    and Chinese."""
    examples = list(examples)
    if config["training"].get("rule_free_copies"):
        examples += [without_rules(e) for e in examples if any(t.startswith(RULE_TOKENS) for t in e.tokens)]
    return examples


def fit(examples: Sequence[Example], config=None, seed: int | None = None):
    """A spaCy pipeline with the text classifier fitted on `examples` (seeded: the same input gives the same model)."""
    import spacy
    from spacy.tokens import Doc
    from spacy.training import Example as SpacyExample

    config = config or load_config()
    examples = training_set(examples, config)
    training = config["training"]
    seed = training["seed"] if seed is None else seed
    spacy.util.fix_random_seed(seed)
    nlp_config = {key: value for key, value in config.items() if key != "training"}
    nlp = spacy.util.load_model_from_config(nlp_config, auto_fill=True, validate=True)
    textcat = nlp.get_pipe("textcat")
    for label in LABELS:
        textcat.add_label(label)
    vocab = nlp.vocab
    data = [SpacyExample.from_dict(Doc(vocab, words=list(e.tokens) or ["§empty"]),
                                   {"cats": {label: float(label == e.label) for label in LABELS}})
            for e in examples]
    optimizer = nlp.initialize(lambda: data)
    optimizer.learn_rate = training["learn_rate"]
    rng = random.Random(seed)
    order = list(range(len(data)))
    size = training["batch_size"]
    for _ in range(training["max_epochs"]):
        rng.shuffle(order)
        for start in range(0, len(order), size):
            nlp.update([data[i] for i in order[start:start + size]], sgd=optimizer, drop=training["dropout"])
    return nlp


def predict(nlp, token_lists: Sequence[Sequence[str]]) -> list[dict[str, float]]:
    from ..extract.classify import Classifier

    return Classifier(nlp=nlp).scores([list(tokens) for tokens in token_lists])


def group_folds(groups: Sequence[str], folds: int, seed: int) -> list[list[str]]:
    """Groups dealt into `folds` folds, in a seeded order."""
    order = sorted(groups)
    random.Random(seed).shuffle(order)
    return [order[i::folds] for i in range(folds) if order[i::folds]]


def out_of_fold_scores(examples: Sequence[Example], config=None,
                       progress: Callable[[str], None] | None = None) -> list[dict[str, float]]:
    """Each example's scores from a model fitted without its fold of groups."""
    config = config or load_config()
    training = config["training"]
    groups = sorted({e.group for e in examples})
    scores: list[dict[str, float] | None] = [None] * len(examples)
    for k, fold in enumerate(group_folds(groups, training["threshold_folds"], training["seed"])):
        held = set(fold)
        if progress:
            progress(f"threshold fold {k + 1}: holding out {', '.join(sorted(held))}")
        nlp = fit([e for e in examples if e.group not in held], config)
        index = [i for i, e in enumerate(examples) if e.group in held]
        for i, s in zip(index, predict(nlp, [examples[i].tokens for i in index])):
            scores[i] = s
    return [s or {} for s in scores]


def best_threshold(examples: Sequence[Example], scores: Sequence[dict[str, float]]) -> tuple[dict[str, float], dict]:
    """The thresholds on P(none), one per role (`classify.THRESHOLD_ROLES`), with the best F1 (memory or not)
    over these scored examples, counting what the rules that keep already keep (the classifier adds to them).

    The counts of the two roles add up, so each role's counts are taken once per threshold and every pair of
    thresholds is scored from them; ties go to the lower thresholds, the user's first.
    """
    candidates = (0.0, *THRESHOLDS)
    counts = {role: [[0, 0, 0] for _ in candidates] for role in THRESHOLD_ROLES}  # tp, fp, fn
    for example, score in zip(examples, scores):
        memory = example.label != "none"
        none = score.get("none", 1.0)
        row = counts[threshold_role(example.role)]
        for i, threshold in enumerate(candidates):
            kept = example.ruled or none < threshold
            row[i][0] += kept and memory
            row[i][1] += kept and not memory
            row[i][2] += memory and not kept
    best: tuple[dict[str, float], dict] = (dict.fromkeys(THRESHOLD_ROLES, 0.5), {"f1": -1.0})
    for i, user in enumerate(candidates):
        for j, assistant in enumerate(candidates):
            tp, fp, fn = (a + b for a, b in zip(counts["user"][i], counts["assistant"][j]))
            precision = tp / (tp + fp) if tp + fp else 0.0
            recall = tp / (tp + fn) if tp + fn else 0.0
            f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
            if f1 > best[1]["f1"]:
                best = ({"user": user, "assistant": assistant},
                        {"f1": round(f1, 3), "precision": round(precision, 3), "recall": round(recall, 3)})
    return best


def train_model(examples: Sequence[Example], config=None, progress: Callable[[str], None] | None = None):
    """(fitted pipeline, tuned thresholds by role, their out-of-fold figures)."""
    config = config or load_config()
    threshold, figures = best_threshold(examples, out_of_fold_scores(examples, config, progress))
    if progress:
        progress(f"thresholds on P(none): {thresholds_text(threshold)} (out-of-fold F1 {figures['f1']}); "
                 "fitting on every group")
    return fit(examples, config), threshold, figures


def save(nlp, out: Path, threshold: dict[str, float], figures: dict, dataset_counts: dict, groups: list[str]) -> None:
    """The pipeline and what the miner needs beside it (threshold, what it was trained on)."""
    if (out / META_FILE).is_file():
        import shutil

        shutil.rmtree(out)  # an earlier model: nothing of it may linger beside the new one
    out.mkdir(parents=True, exist_ok=True)
    # Without its vocabulary: the bag of n-grams hashes its features, and the strings of the training units
    # (third-party text) must not ship.
    nlp.to_disk(out, exclude=["vocab"])
    meta = {"format": FORMAT, "threshold": threshold, "threshold_out_of_fold": figures,
            "trained_on": {"projects": len(groups), "units": dataset_counts}}
    (out / META_FILE).write_text(json.dumps(meta, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def train(data: Path, out: Path, progress: Callable[[str], None] | None = None, labels: Path | None = None) -> dict:
    """Rebuild the shipped model from the training data (and the label references in `labels`, default the
    package's own); returns what it was trained on."""
    from . import dataset as dataset_mod

    dataset = dataset_mod.load(data, labels or dataset_mod.LABELS_DIR)
    if progress:
        progress(f"{sum(dataset.counts().values())} labelled units in {len(dataset.groups())} projects "
                 f"({', '.join(f'{k} {v}' for k, v in sorted(dataset.counts().items()))})")
    examples = featurize(dataset)
    nlp, threshold, figures = train_model(examples, progress=progress)
    save(nlp, out, threshold, figures, dataset.counts(), dataset.groups())
    return {"units": dataset.counts(), "groups": dataset.groups(), "threshold": threshold, "out_of_fold": figures,
            "mismatched_labels": dataset.mismatched}


def documents_without(dataset: Dataset, group: str) -> Dataset:
    return Dataset([d for d in dataset.documents if d.group != group], dataset.mismatched)


__all__ = ["Document", "Example", "featurize", "fit", "predict", "train", "train_model"]
