"""The shipped classifier scored by numpy from the weights a first miner keeps (`miner.extract.bow`), not by spaCy."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import spacy
from spacy.strings import get_string_id

from miner.extract import bow
from miner.extract.classify import MODEL_DIR, Classifier, contexts, unit_tokens
from miner.extract.clean import turns_to_units
from miner.extract.model import Turn

REPO = Path(__file__).resolve().parent.parent
MODEL_FILE = MODEL_DIR / "textcat" / "model"

TEXTS = [
    ("user", "We decided to deploy the billing service with Kamal, not by hand."),
    ("user", "- **Never** commit straight to `main`; open a pull request first."),
    ("assistant", "The API now listens on port 8443 and the worker restarts on failure."),
    ("assistant", "TODO: add a retry around the webhook call once the release is out."),
    ("user", "以后都用 pnpm，不要再用 npm 了。"),
    ("user", "앞으로는 항상 테스트를 먼저 돌려 주세요."),
    ("assistant", "| Stage | Image |\n|---|---|\n| runtime | `temurin:17-jre` |"),
    ("user", "ok thanks"),
]


def synthetic_token_lists(count: int = 600) -> list[list[str]]:
    """Units' tokens as the miner makes them, and random ones: words of several scripts, spaCy's reserved
    strings ("ORTH", "nsubj"), an empty string, repeats (a key counted twice), one token, none, a long unit."""
    turns = [Turn(f"u{n}", "s1", role, text, "2026-01-01T00:00:00Z", "/p", "main", False, "/t.jsonl")
             for n, (role, text) in enumerate(TEXTS)]
    units = turns_to_units(turns)
    lists = [unit_tokens(unit, context) for unit, context in zip(units, contexts(units))]
    rng = random.Random(7)
    vocabulary = ["deploy", "the", "case", "ORTH", "nsubj", "IS_ALPHA", "", "§role:user", "§list", "数据库",
                  "配置", "테스트", "ñandú", "x", "1234567", "12345678", "123456789", "a" * 17, "🙂", "port",
                  "8443"]
    vocabulary += [token for tokens in lists for token in tokens]
    for _ in range(count):
        lists.append([rng.choice(vocabulary) for _ in range(rng.randint(1, 60))])
    return lists + [[], ["only"], ["same", "same", "same"], [rng.choice(vocabulary) for _ in range(3000)]]


@pytest.fixture(scope="module")
def shipped():
    return spacy.load(MODEL_DIR)


def test_a_token_id_is_spacys_string_id():
    scorer = bow.Scorer(bow.numpy.zeros((1, 8), dtype=bow.numpy.float32), bow.numpy.zeros(1, dtype=bow.numpy.float32),
                        ["none"], {"ORTH": 65})
    for token in ["", "a", "ab", "abcdefg", "abcdefgh", "abcdefghi", "数据库配置", "ñ" * 9, "🙂", "ORTH"]:
        assert scorer.string_id(token) == get_string_id(token), token


def test_numpy_scores_are_spacys_bit_for_bit(shipped, tmp_path):
    assert bow.export(shipped.get_pipe("textcat"), MODEL_FILE)
    scorer = bow.load(MODEL_FILE)
    assert scorer is not None
    lists = synthetic_token_lists()
    expected = Classifier(nlp=shipped).scores(lists)
    assert scorer.scores(lists) == expected
    assert [scorer.scores([tokens])[0] for tokens in lists[:50]] == expected[:50]  # batches do not matter
    assert {max(row, key=row.get) for row in expected} >= {"none", "decision"}  # not a constant model


def _score_in_a_new_process(home: Path, lists: list[list[str]]) -> tuple[list[dict], bool]:
    code = ("import json, sys\nfrom miner.extract.classify import Classifier\n"
            "scores = Classifier().scores(json.load(sys.stdin))\n"
            "print(json.dumps([scores, 'spacy' in sys.modules]))\n")
    env = dict(os.environ, MINER_HOME=str(home))
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps(lists), capture_output=True, text=True,
                          env=env, cwd=REPO, timeout=300, check=True)
    scores, imported = json.loads(done.stdout)
    return scores, imported


def test_the_first_miner_keeps_the_weights_and_the_next_scores_without_spacy(tmp_path):
    lists = synthetic_token_lists(40)
    first, first_imported = _score_in_a_new_process(tmp_path, lists)
    kept = list((tmp_path / "cache" / "textcat").glob("bow-*.npz"))
    assert first_imported and len(kept) == 1
    second, second_imported = _score_in_a_new_process(tmp_path, lists)
    assert not second_imported
    assert second == first


def test_a_damaged_kept_file_is_scored_through_spacy_and_written_again(shipped):
    path = bow.cache_file(MODEL_FILE)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"PK\x03\x04 not a numpy archive")
    assert bow.load(MODEL_FILE) is None
    lists = synthetic_token_lists(20)
    assert Classifier().scores(lists) == Classifier(nlp=shipped).scores(lists)
    assert bow.load(MODEL_FILE) is not None


def test_only_the_shipped_model_is_kept_and_an_earlier_models_file_goes(shipped, tmp_path):
    cache = bow.cache_file(MODEL_FILE).parent
    lists = synthetic_token_lists(5)
    Classifier(nlp=shipped).scores(lists)  # a pipeline handed in (a fold's, in training)
    copy = tmp_path / "model"
    shutil.copytree(MODEL_DIR, copy)
    Classifier(copy).scores(lists)  # a model elsewhere (a fold's folder)
    assert not cache.exists() or not list(cache.glob("bow-*.npz"))
    cache.mkdir(parents=True, exist_ok=True)
    (cache / "bow-0123456789abcdef0123.npz").write_bytes(b"an earlier model's")
    Classifier().scores(lists)
    assert [p.name for p in cache.glob("bow-*.npz")] == [bow.cache_file(MODEL_FILE).name]


def test_another_model_file_is_another_key(tmp_path):
    model = tmp_path / "model"
    model.write_bytes(b"weights")
    before = bow.cache_file(model)
    os.utime(model, ns=(1, 1))
    assert bow.cache_file(model) != before


@pytest.mark.parametrize("changed", [{"no_output_layer": True}, {"ngram_size": 3}, {"exclusive_classes": False}])
def test_a_model_of_another_layout_is_not_kept(changed):
    """Only the layout this module computes as spaCy does (pairs, a softmax over exclusive classes) is kept."""
    model = {"@architectures": "spacy.TextCatBOW.v3", "exclusive_classes": True, "ngram_size": 2,
             "no_output_layer": False, **changed}
    nlp = spacy.blank("xx")
    textcat = nlp.add_pipe("textcat_multilabel" if not model["exclusive_classes"] else "textcat",
                           config={"model": model})
    for label in ("none", "fact"):
        textcat.add_label(label)
    nlp.initialize()
    assert not bow.export(textcat, MODEL_FILE)
    assert bow.load(MODEL_FILE) is None
