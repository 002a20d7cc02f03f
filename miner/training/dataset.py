"""Labelled units for the classifier, rebuilt from `../shared/data` and the label references kept here.

Three sources, each read with the miner's own reader and splitter, so that
training sees units exactly as mining will:

- the dev transcripts' extraction gold (`gold/extraction/`): every unit of
  the transcript is labelled (a unit that matches no gold unit is `none`);
  tentative and pasted-document units are left out;
- the sessions of the multi-session projects labelled by `GUIDELINES.md`
  (`miner/training/labels/<project>.jsonl`): references only (session file,
  entry uuid, unit index within the entry, a short hash of the unit's text,
  category), never the third-party text; every unit of a listed session is
  labelled, a unit not listed is `none`;
- the evidence of the cross-session questions (`gold/multi/`): the unit of
  the evidence entry that holds an answer is a memory of the question's
  category.

Each example belongs to a group (a transcript or a project): cross-validation
leaves one group out at a time.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from ..evaluation.transcripts import read_jsonl, texts_match, transcript_for
from ..extract.clean import turns_to_units
from ..extract.model import Unit
from ..extract.transcript import Watermark, read_transcript
from ..textutil import content_hash

LABELS_DIR = Path(__file__).resolve().parent / "labels"


class DataError(ValueError):
    """The training data is missing or does not match the label references; one line says which."""


class NoDataError(DataError):
    """The folder given holds no training data at all (the command says which option names it)."""


@dataclass
class Document:
    """One transcript's units in order, with a label for those that have one (None: unlabelled)."""

    group: str
    path: Path
    units: list[Unit]
    labels: list[str | None]

    def labelled(self) -> int:
        return sum(label is not None for label in self.labels)


@dataclass
class Dataset:
    documents: list[Document] = field(default_factory=list)
    mismatched: int = 0  # label references whose unit's text hash no longer matches (the splitter changed)

    def groups(self) -> list[str]:
        return sorted({d.group for d in self.documents})

    def counts(self) -> dict[str, int]:
        found: dict[str, int] = defaultdict(int)
        for document in self.documents:
            for label in document.labels:
                if label is not None:
                    found[label] += 1
        return dict(found)


def _units(path: Path) -> list[Unit]:
    # Claude Code's notices in the assistant's place (API errors, usage limits) too: the miner never reads them, and
    # the classifier learns from them what it is not to keep.
    return turns_to_units(read_transcript(str(path), Watermark(), seen=set(), notices=True).turns)


def gold_transcripts(data: Path) -> list[Document]:
    """The dev transcripts, every unit labelled from the extraction gold."""
    documents = []
    for gold_file in sorted((data / "gold" / "extraction").glob("*.jsonl")):
        source = gold_file.stem
        path = transcript_for(source, data / "transcripts")
        if path is None:
            raise DataError(f"{gold_file}: its transcript is not under {data / 'transcripts'}")
        by_uuid: dict[str, list[dict]] = defaultdict(list)
        for unit in read_jsonl(gold_file):
            by_uuid[unit["uuid"]].append(unit)
        units = _units(path)
        labels: list[str | None] = []
        for unit in units:
            match = [g for g in by_uuid.get(unit.turn.uuid, []) if texts_match(unit.text, g["text"])]
            if not match:
                labels.append("none")
            elif match[0].get("tentative") or match[0].get("doc"):
                labels.append(None)  # neutral in scoring, left out of training
            else:
                labels.append(match[0]["category"])
        documents.append(Document(source, path, units, labels))
    return documents


def labelled_sessions(data: Path, labels_dir: Path = LABELS_DIR) -> tuple[list[Document], int]:
    """The multi-project sessions labelled here, and how many references no longer match their unit."""
    documents = []
    mismatched = 0
    for label_file in sorted(labels_dir.glob("*.jsonl")):
        group = label_file.stem
        sessions: list[str] = []
        references: dict[tuple[str, int], dict] = {}  # a resumed session replays entries: a unit is keyed once
        for record in read_jsonl(label_file):
            if record["source"] not in sessions:
                sessions.append(record["source"])
            if "labelled" not in record:
                references[(record["uuid"], record["unit"])] = record
        seen: set[tuple[str, int]] = set()
        found = set()
        for source in sessions:
            path = data / source
            if not path.is_file():
                raise DataError(f"{label_file}: {source} is not under {data}")
            units = _units(path)
            labels: list[str | None] = []
            for unit in units:
                key = (unit.turn.uuid, unit.index)
                record = references.get(key)
                if key in seen:
                    labels.append(None)  # a resumed session replays entries: each unit counts once
                    continue
                seen.add(key)
                if record is None:
                    labels.append("none")
                    continue
                found.add(key)
                if record["hash"] != content_hash(unit.text)[3:15]:
                    mismatched += 1
                    labels.append(None)
                elif record.get("tentative") or record.get("doc"):
                    labels.append(None)
                else:
                    labels.append(record["category"])
            documents.append(Document(group, path, units, labels))
        mismatched += len(set(references) - found)
    return documents, mismatched


def question_evidence(data: Path) -> list[Document]:
    """The units that answer the cross-session questions, as memories of the question's category."""
    documents = []
    gold = data / "gold" / "multi"
    for question_file in sorted(gold.glob("*.jsonl")):
        group = question_file.stem
        by_session: dict[str, list[dict]] = defaultdict(list)
        for question in read_jsonl(question_file):
            by_session[question["evidence_session"]].append(question)
        for session, questions in sorted(by_session.items()):
            path = data / "multi" / group / session
            if not path.is_file():
                continue
            units = _units(path)
            labels: list[str | None] = [None] * len(units)
            for question in questions:
                answers = [a.lower() for a in question["answers"]]
                for i, unit in enumerate(units):
                    if unit.turn.uuid == question["evidence_uuid"] and any(a in unit.text.lower() for a in answers):
                        labels[i] = question["category"]
                        break
            if any(label is not None for label in labels):
                documents.append(Document(group, path, units, labels))
    return documents


def load(data: Path, labels_dir: Path = LABELS_DIR) -> Dataset:
    """Every labelled unit of the training data (see the module note)."""
    if not (data / "gold").is_dir():
        raise NoDataError(f"no training data at {data} (expected gold/, transcripts/ and multi/ there)")
    documents = gold_transcripts(data)
    sessions, mismatched = labelled_sessions(data, labels_dir)
    documents += sessions
    documents += _without_labelled(question_evidence(data), sessions)
    return Dataset(documents, mismatched)


def _without_labelled(evidence: list[Document], sessions: list[Document]) -> list[Document]:
    """Evidence documents minus the units a labelled session already labels (a unit is trained on once)."""
    labelled = {(u.turn.uuid, u.index) for d in sessions for u, label in zip(d.units, d.labels) if label is not None}
    out = []
    for document in evidence:
        labels = [None if (u.turn.uuid, u.index) in labelled else label
                  for u, label in zip(document.units, document.labels)]
        if any(label is not None for label in labels):
            out.append(Document(document.group, document.path, document.units, labels))
    return out
