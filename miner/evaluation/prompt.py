"""`miner eval --multi DIR --gold DIR --prompt`: each cross-session question asked as a new session's first prompt.

A question counts when an answer is in the SessionStart block or in the block
the real UserPromptSubmit hook injects for it. Each question is asked in a
session of its own (one that was shown the startup block), so that one
question's block does not hide another's. Beside it, at the prompt block's
size: plain FTS5 BM25 over all the earlier prose of the project (every unit
of the sessions before the cut), the question as the query.

Projects are grouped by the language their user writes in (`language_of`):
the prompt path must beat the baseline in each group, not only overall.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

from .. import paths
from ..extract.clean import turns_to_units
from ..extract.transcript import Watermark, read_transcript
from ..memory.prose_index import ProseIndex
from ..textutil import fts_match, fts_terms
from .transcripts import answered

# Function words that tell Latin-script languages apart (a handful each is enough over a whole project).
_FUNCTION_WORDS = {
    "en": {"the", "and", "to", "of", "is", "we", "it", "that", "for", "with", "this", "you"},
    "es": {"que", "el", "los", "las", "para", "con", "por", "una", "es", "del", "lo", "como"},
    "it": {"che", "il", "per", "con", "non", "una", "sono", "del", "della", "gli", "questo", "come"},
    "pt": {"que", "não", "para", "com", "uma", "os", "as", "é", "do", "da", "isso", "como"},
    "fr": {"que", "le", "les", "pour", "avec", "une", "est", "pas", "et", "des", "du", "ce"},
    "de": {"und", "der", "die", "das", "nicht", "mit", "für", "ist", "ein", "eine", "ich", "wir"},
}


def language_of(texts: list[str]) -> str:
    """The language a project's user writes in: a script's share of the letters, then function words."""
    letters = han = kana = hangul = cyrillic = thai = 0
    words: dict[str, int] = {}
    for text in texts:
        for char in text:
            if not char.isalpha():
                continue
            letters += 1
            code = ord(char)
            han += 0x4E00 <= code <= 0x9FFF or 0x3400 <= code <= 0x4DBF
            kana += 0x3040 <= code <= 0x30FF
            hangul += 0xAC00 <= code <= 0xD7A3
            cyrillic += 0x0400 <= code <= 0x04FF
            thai += 0x0E00 <= code <= 0x0E7F
        for word in text.lower().split():
            words[word] = words.get(word, 0) + 1
    if not letters:
        return "unknown"
    for name, count in (("ja", kana), ("ko", hangul), ("zh", han), ("ru", cyrillic), ("th", thai)):
        if count / letters >= 0.15:
            return name
    scores = {lang: sum(words.get(w, 0) for w in ws) for lang, ws in _FUNCTION_WORDS.items()}
    return max(scores, key=scores.get) if any(scores.values()) else "unknown"


TYPED_CHARS = 600  # a prompt longer than this is mostly pasted (a log, a document), not the user's language


def user_texts(sessions) -> list[str]:
    """The prompts the user typed (their own words: no wrappers, commands, fillers or long pastes)."""
    from ..extract.clean import clean_prose
    from ..recall.checkpoint import request_text

    texts = []
    for _, path, _ in sessions:
        for turn in read_transcript(str(path), Watermark(), seen=set()).turns:
            if turn.role == "user" and not turn.is_sidechain:
                text = clean_prose(turn.text)
                if request_text(text) and len(text) < TYPED_CHARS:
                    texts.append(text)
    return texts


def bm25_baseline(sessions, questions: list[dict], chars: int) -> int:
    """Questions answered by the best units (plain FTS5 BM25 over every earlier unit) up to `chars` characters."""
    with ProseIndex() as index:
        for _, path, subagents in sessions:
            for file in [path, *subagents]:
                units = turns_to_units(read_transcript(str(file), Watermark(), seen=set()).turns)
                index.add(u.text for u in units)
        found = 0
        for question in questions:
            match = fts_match(fts_terms(question["question"]), limit=64)
            text = ""
            if match:
                for unit in index.search(match, 100):
                    if len(text) + len(unit) + 1 > chars:
                        continue
                    text += unit + "\n"
            found += answered([question], text)
        return found


def run_prompt_hook(cwd: str, home: Path, claude: Path, session_id: str, prompt: str) -> str:
    """The additionalContext the real UserPromptSubmit hook injects for `prompt` ('' when it prints nothing)."""
    env = dict(os.environ, MINER_HOME=str(home), CLAUDE_CONFIG_DIR=str(claude))
    settings = home.parent / "config"
    if settings.is_dir():
        env["XDG_CONFIG_HOME"] = str(settings)
    payload = {"session_id": session_id, "transcript_path": str(claude / "projects" / "none.jsonl"), "cwd": cwd,
               "hook_event_name": "UserPromptSubmit", "prompt": prompt}
    done = subprocess.run([sys.executable, "-I", "-m", "miner.hooks", "user-prompt-submit"], input=json.dumps(payload),
                          capture_output=True, text=True, env=env, timeout=60, check=False)
    if not done.stdout.strip():
        return ""
    return json.loads(done.stdout)["hookSpecificOutput"]["additionalContext"]


def prompt_cut(questions: list[dict], startup_block: str, cwd: str, home: Path, claude: Path, config: dict,
               earlier_sessions) -> dict:
    """Per cut: questions answered by the startup block or the prompt block, and by the BM25 baseline."""

    budget = int(config["prompt_block_chars"])
    startup_shown = home / "cache" / f"shown-{paths.file_stem('eval-new-session')}.json"
    hit = chars = 0
    for n, question in enumerate(questions):
        session_id = f"eval-question-{n}"
        if startup_shown.is_file():  # a new session that was shown the startup block, and asks this first
            shutil.copy(startup_shown, home / "cache" / f"shown-{paths.file_stem(session_id)}.json")
        block = run_prompt_hook(cwd, home, claude, session_id, question["question"])
        chars = max(chars, len(block))
        hit += answered([question], startup_block + "\n" + block)
    return {"prompt_answered": hit, "prompt_chars": chars,
            "bm25_answered": bm25_baseline(earlier_sessions, questions, budget)}
