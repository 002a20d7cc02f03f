"""A small shared-data folder of our own (gold/, transcripts/, multi/, label references), for training and
cross-validation tests: the layout `../shared/data` has, with synthetic sessions in several languages."""

from __future__ import annotations

import json
from pathlib import Path

from builders import Session

# Statements a later session needs, and talk that it does not: the shapes differ, not only the words.
MEMORIES = [
    ("user", "decision", "From now on we always deploy the {x} service with Kamal, never by hand."),
    ("user", "preference", "Please always answer in short bullet points when you explain the {x} module."),
    ("assistant", "fact", "The {x} worker reads its settings from `config/{x}.toml` and listens on port 8{n}00."),
    ("user", "todo", "Later we should add retries to the {x} uploader, not now."),
    ("user", "decision", "Используем всегда PostgreSQL для сервиса {x}, а не MySQL."),
    ("user", "preference", "Siempre escribe los mensajes de commit del módulo {x} en inglés."),
]
TALK = [
    ("assistant", "Let me check the {x} file first."),
    ("assistant", "I've updated the {x} tests and they pass now."),
    ("user", "Thanks, looks good!"),
    ("user", "What does the {x} function return?"),
    ("assistant", "Now I'll run the {x} build again."),
    ("assistant", "Perfect, that worked for {x}."),
]
WORDS = ["billing", "search", "auth", "ledger", "mailer", "export", "import", "gateway", "scheduler", "catalog"]


def conversation(session: Session, seed: int, turns: int = 6) -> list[tuple[dict, str]]:
    """Alternating talk and memories; returns (entry, label) for each entry written."""
    written = []
    for k in range(turns):
        x = WORDS[(seed + k) % len(WORDS)]
        role, text = TALK[(seed + k) % len(TALK)]
        entry = session.user(text.format(x=x)) if role == "user" else session.assistant(text.format(x=x))
        written.append((entry, "none"))
        role, category, text = MEMORIES[(seed * 3 + k) % len(MEMORIES)]
        text = text.format(x=x, n=k)
        entry = session.user(text) if role == "user" else session.assistant(text)
        written.append((entry, category))
    return written


def build(root: Path, transcripts: int = 2, projects: int = 2) -> Path:
    """The folder: `transcripts` dev transcripts with extraction gold, `projects` multi-session projects with
    cross-session questions and label references. Returns `root`."""
    from miner.textutil import content_hash
    from miner.training.dataset import _units

    gold = root / "gold"
    for folder in ("extraction", "restore", "multi"):
        (gold / folder).mkdir(parents=True, exist_ok=True)
    labels_dir = root / "labels"
    labels_dir.mkdir(parents=True, exist_ok=True)
    for t in range(transcripts):
        path = root / "transcripts" / f"dev{t}__repo" / "claude.jsonl"
        session = Session(path, f"/work/dev{t}", start=f"2026-02-0{t + 1}T10:00:00")
        written = conversation(session, seed=t)
        rows = []
        for unit_no, (entry, label) in enumerate(written):
            if label != "none":
                text = entry["message"]["content"]
                text = text if isinstance(text, str) else text[0]["text"]
                rows.append({"unit": unit_no, "uuid": entry["uuid"], "role": entry["message"]["role"],
                             "category": label, "text": text, "tentative": False, "doc": False, "supersedes": []})
        _write_jsonl(gold / "extraction" / f"dev{t}__repo__claude.jsonl", rows)
    for p in range(projects):
        name = f"owner{p}__dotfiles__app{p}"
        folder = root / "multi" / name
        questions, references = [], []
        for s in range(3):
            path = folder / f"session{p}{s}.jsonl"
            session = Session(path, f"/work/app{p}", start=f"2026-03-{10 * p + s + 1:02d}T10:00:00")
            written = conversation(session, seed=10 * p + s)
            source = f"multi/{name}/{path.name}"
            references.append({"source": source, "labelled": "every unit"})
            by_uuid = {entry["uuid"]: label for entry, label in written}
            for unit in _units(path):
                label = by_uuid.get(unit.turn.uuid, "none")
                if label != "none":
                    references.append({"source": source, "uuid": unit.turn.uuid, "unit": unit.index,
                                       "hash": content_hash(unit.text)[3:15], "category": label})
            if s == 0:
                entry, label = next((e, lab) for e, lab in written if lab == "fact")
                text = entry["message"]["content"][0]["text"]
                questions.append({"before": "end", "question": "Where does the worker read its settings?",
                                  "answers": [text.split("`")[1]], "category": "fact",
                                  "evidence_session": path.name, "evidence_uuid": entry["uuid"],
                                  "evidence_unit": 0})
        _write_jsonl(gold / "multi" / f"{name}.jsonl", questions)
        _write_jsonl(labels_dir / f"{name}.jsonl", references)
    return root


def _write_jsonl(path: Path, rows: list[dict]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False) + "\n")
