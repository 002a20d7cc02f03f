"""The shipped classifier's scores without spaCy: its weights, read once through spaCy, then scored by numpy.

The shipped model is spaCy's TextCatBOW: a bag of the unit's tokens and token
pairs, each hashed into a table of weights, summed, and a softmax. Importing
spaCy and loading the pipeline cost a miner process about 1.5 s before it
scores a unit, and a Stop hook's worker classifies every turn, though most
turns keep nothing and need nothing else of spaCy. So the first process that
loads the model through spaCy also writes what scoring needs (`export`: the
weights, the bias, the labels and spaCy's table of reserved strings) to the
cache folder, keyed by the model file; later processes score from that file
(`load`), with numpy alone, and import spaCy only when a unit is to be refined.

`Scorer.scores` computes what spaCy computes, step by step and with the same
float32 arithmetic in the same order, so the scores are bit for bit the
same (tests/test_bow.py compares the two on thousands of units):

- a token's id is `spacy.strings.get_string_id`: its reserved id, else the
  64-bit MurmurHash64A of its UTF-8 bytes, seed 1;
- a pair's key is MurmurHash64A of the two ids' 16 bytes, seed 0 (thinc's
  `ops.ngrams`);
- each distinct key counts as often as it occurs, in ascending key order;
- a key's two rows of the table are two 32-bit MurmurHash3 of the key, seeds 0
  and 1, modulo the table's length (thinc's `SparseLinear.v2`);
- the scores start at the bias and add weight × count, row by row; then a
  softmax.
"""

from __future__ import annotations

import io
import os
from pathlib import Path
from typing import Sequence

import numpy

_M64 = 0xC6A4A7935BD1E995
_MASK64 = (1 << 64) - 1
FORMAT = 1
MAX_CELLS = 500_000  # units × tokens of the longest in one batch (a grid of 4 × that × labels float32 values)


def murmur64a(data: bytes, seed: int) -> int:
    """MurmurHash64A (Austin Appleby's, as the `murmurhash` package builds it) of `data`."""
    length = len(data)
    h = (seed ^ (length * _M64)) & _MASK64
    end = length - length % 8
    for start in range(0, end, 8):
        k = (int.from_bytes(data[start:start + 8], "little") * _M64) & _MASK64
        k = ((k ^ (k >> 47)) * _M64) & _MASK64
        h = ((h ^ k) * _M64) & _MASK64
    tail = data[end:]
    if tail:
        h = ((h ^ int.from_bytes(tail, "little")) * _M64) & _MASK64
    h = ((h ^ (h >> 47)) * _M64) & _MASK64
    return h ^ (h >> 47)


def _pair_keys(ids: numpy.ndarray) -> numpy.ndarray:
    """MurmurHash64A, seed 0, of each two neighbouring ids' 16 bytes (little-endian), vectorised."""
    m, r = numpy.uint64(_M64), numpy.uint64(47)
    h = numpy.full(len(ids) - 1, numpy.uint64(16 * _M64 & _MASK64), dtype=numpy.uint64)
    for block in (ids[:-1], ids[1:]):
        k = block * m
        k ^= k >> r
        k *= m
        h ^= k
        h *= m
    h ^= h >> r
    h *= m
    h ^= h >> r
    return h


def _murmur3_32(keys: numpy.ndarray, seed: int) -> numpy.ndarray:
    """thinc's MurmurHash3_x86_32 of one 64-bit key (its two 32-bit halves), vectorised."""
    c1, c2 = numpy.uint32(0xCC9E2D51), numpy.uint32(0x1B873593)
    h = numpy.full(len(keys), seed, dtype=numpy.uint32)
    low, high = (keys & numpy.uint64(0xFFFFFFFF)).astype(numpy.uint32), (keys >> numpy.uint64(32)).astype(numpy.uint32)
    for half in (low, high):
        k = half * c1
        k = (k << numpy.uint32(15)) | (k >> numpy.uint32(17))
        k *= c2
        h ^= k
        h = (h << numpy.uint32(13)) | (h >> numpy.uint32(19))
        h = h * numpy.uint32(5) + numpy.uint32(0xE6546B64)
    h ^= numpy.uint32(8)
    h ^= h >> numpy.uint32(16)
    h *= numpy.uint32(0x85EBCA6B)
    h ^= h >> numpy.uint32(13)
    h *= numpy.uint32(0xC2B2AE35)
    h ^= h >> numpy.uint32(16)
    return h


class Scorer:
    """TextCatBOW's forward pass (exclusive classes, n-grams up to pairs) over token strings."""

    def __init__(self, weights: numpy.ndarray, bias: numpy.ndarray, labels: Sequence[str],
                 symbols: dict[str, int]) -> None:
        self.weights = weights  # (labels, table length), float32
        self.bias = bias
        self.labels = list(labels)
        self.symbols = symbols
        self._ids: dict[str, int] = {}

    def string_id(self, token: str) -> int:
        found = self._ids.get(token)
        if found is None:
            if len(self._ids) >= 500_000:
                self._ids.clear()
            symbol = self.symbols.get(token)
            found = self._ids[token] = symbol if symbol is not None else (
                murmur64a(token.encode("utf-8"), 1) if token else 0)
        return found

    def scores(self, token_lists: Sequence[list[str]]) -> list[dict[str, float]]:
        """P(label) of each unit's tokens, in order (an empty unit reads as one placeholder token, as in
        `classify.Classifier.scores`)."""
        out: list[dict[str, float]] = []
        batch: list[list[str]] = []
        longest = 0
        for tokens in token_lists:
            tokens = tokens or ["§empty"]
            longest = max(longest, len(tokens))
            # Summing pads every unit of a batch to its longest: a few long units go in a batch of their own.
            if batch and (len(batch) == 512 or (len(batch) + 1) * longest > MAX_CELLS):
                out += self._batch(batch)
                batch, longest = [], len(tokens)
            batch.append(tokens)
        return out + (self._batch(batch) if batch else [])

    def _batch(self, token_lists: list[list[str]]) -> list[dict[str, float]]:
        count, width = len(token_lists), self.weights.shape[1]
        lengths = numpy.fromiter(map(len, token_lists), dtype=numpy.int64, count=count)
        ids = numpy.fromiter((self.string_id(t) for tokens in token_lists for t in tokens), dtype=numpy.uint64,
                             count=int(lengths.sum()))
        unit = numpy.repeat(numpy.arange(count), lengths)
        within = unit[:-1] == unit[1:]  # the pairs that do not straddle two units
        keys = numpy.concatenate([ids, _pair_keys(ids)[within]]) if len(ids) > 1 else ids
        owner = numpy.concatenate([unit, unit[:-1][within]]) if len(ids) > 1 else unit
        # Each unit's distinct keys in ascending order, with how often each occurs.
        order = numpy.lexsort((keys, owner))
        keys, owner = keys[order], owner[order]
        first = numpy.ones(len(keys), dtype=bool)
        first[1:] = (keys[1:] != keys[:-1]) | (owner[1:] != owner[:-1])
        starts = numpy.flatnonzero(first)
        values = numpy.diff(numpy.append(starts, len(keys))).astype(numpy.float32)
        keys, owner = keys[starts], owner[starts]
        rows = numpy.empty(2 * len(keys), dtype=numpy.int64)
        rows[0::2] = _murmur3_32(keys, 0) % numpy.uint32(width)
        rows[1::2] = _murmur3_32(keys, 1) % numpy.uint32(width)
        terms = self.weights[:, rows].T * numpy.repeat(values, 2)[:, None]  # float32: weight × count, per row
        # Each unit's terms in a row of a grid that opens with the bias and is padded with zeros (adding 0 leaves
        # a float32 as it is), summed one term after the other as spaCy sums them.
        per_unit = 2 * numpy.bincount(owner, minlength=count)
        grid = numpy.zeros((count, int(per_unit.max()) + 1, len(self.labels)), dtype=numpy.float32)
        grid[:, 0] = self.bias
        term_owner = numpy.repeat(owner, 2)
        offset = numpy.arange(len(rows)) - numpy.repeat(numpy.cumsum(per_unit) - per_unit, per_unit)
        grid[term_owner, offset + 1] = terms
        summed = numpy.add.accumulate(grid, axis=1, dtype=numpy.float32)[:, -1]
        # thinc's softmax, on the batch as a whole.
        exp = numpy.exp(summed - summed.max(axis=-1, keepdims=True))
        exp /= exp.sum(axis=-1, keepdims=True)
        return [dict(zip(self.labels, row)) for row in exp.tolist()]


def cache_file(model_file: Path) -> Path | None:
    """Where the weights of `model_file` are kept for numpy, by its path, size and time; None without a cache
    folder to use."""
    import hashlib

    from .. import paths

    try:
        stat = os.stat(model_file)
        key = hashlib.sha256(f"{FORMAT}|{Path(model_file).resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode())
        return paths.cache_dir() / "textcat" / f"bow-{key.hexdigest()[:20]}.npz"
    except (OSError, ValueError):
        return None


def load(model_file: Path) -> Scorer | None:
    """The scorer kept for `model_file`, or None (none kept yet, or a file that does not read)."""
    path = cache_file(model_file)
    if path is None or not path.is_file():
        return None
    try:
        with numpy.load(path, allow_pickle=False) as data:
            weights, bias = data["weights"], data["bias"]
            labels = [str(label) for label in data["labels"]]
            symbols = dict(zip((str(s) for s in data["symbol_names"]), (int(i) for i in data["symbol_ids"])))
    except Exception:  # noqa: BLE001 - a damaged or foreign file (numpy raises zipfile's errors too): use spaCy
        return None
    if weights.dtype != numpy.float32 or weights.ndim != 2 or bias.shape != (weights.shape[0],) \
            or len(labels) != weights.shape[0]:
        return None
    return Scorer(weights, bias, labels, symbols)


def export(textcat, model_file: Path) -> bool:
    """Keep what scoring needs of spaCy's loaded `textcat` (a TextCatBOW) for the processes after this one; False
    when it is not a model this module scores as spaCy does, or the cache cannot be written."""
    from spacy.symbols import IDS

    path = cache_file(model_file)
    if path is None:
        return False
    layers = {layer.name: layer for layer in textcat.model.walk()}
    linear, extract = layers.get("sparse_linear"), layers.get("extract_ngrams")
    if linear is None or extract is None or "softmax_activation" not in layers or linear.attrs.get("v1_indexing") \
            or extract.attrs.get("ngram_size") != 2:
        return False  # (another layout: scored by spaCy)
    labels = list(textcat.labels)
    width = linear.get_dim("length")
    weights = numpy.asarray(linear.get_param("W"), dtype=numpy.float32).reshape(len(labels), width)
    bias = numpy.asarray(linear.get_param("b"), dtype=numpy.float32)
    archive = io.BytesIO()
    numpy.savez(archive, weights=weights, bias=bias, labels=numpy.array(labels), symbol_names=numpy.array(list(IDS)),
                symbol_ids=numpy.array(list(IDS.values()), dtype=numpy.uint64))
    try:
        from .. import paths

        paths.write_private(path, archive.getvalue())
        for older in path.parent.glob("bow-*.npz"):  # an earlier model's (retrained, reinstalled)
            if older != path:
                older.unlink(missing_ok=True)
    except OSError:
        return False
    return True
