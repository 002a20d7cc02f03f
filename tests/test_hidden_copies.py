"""`memory.hidden_copies`: a wording that is an earlier one with a secret hidden keeps no copy of the earlier one."""

from __future__ import annotations

import pytest

from miner.memory.hidden_copies import hides
from miner.memory.records import NewMemory
from miner.memory.store import Store


@pytest.mark.parametrize("new, old, hidden", [
    ("We connect with [REDACTED:known-secret] to Grafana.", "We connect with kiwi-lantern-93 to Grafana.", True),
    ("x [REDACTED:a] y [REDACTED:b] z", "x s1 y s2 z", True),
    ("a [REDACTED:x][REDACTED:y] b", "a secretword b", True),  # two markers side by side: one word
    ("[REDACTED:password]", "hunter2", True),
    # A marker stands for one word: it hides nothing of a sentence, nor of words that are all different.
    ("[REDACTED:password]", "We decided to deploy on Fridays.", False),
    ("The token is [REDACTED:token].", "The token is rotated weekly by the ops team.", False),
    ("x [REDACTED:a] y [REDACTED:b] z", "x s1 y s 2 z", False),
    ("k=[REDACTED:a]", "k=", False),  # (a word, not nothing)
    ("The same words.", "The same words.", False),
])
def test_what_a_wording_with_markers_hides_of_an_earlier_one(new, old, hidden):
    assert hides(new, old) is hidden


def test_a_run_of_one_letter_is_read_at_once():
    """A regex with a lazy wildcard per marker backtracked over a run of one letter: minutes for one evidence row."""
    assert hides("[REDACTED:a]x[REDACTED:b]x[REDACTED:c]z", "x" * 4999) is False
    assert hides("[REDACTED:a]" * 6, "y" * 4999) is True


def test_a_rewording_that_hides_nothing_of_the_old_words_keeps_them(tmp_path):
    """"The deploy token is [REDACTED:token]." took the place of "…rotated weekly by the ops team": the old wording
    was deleted and its evidence overwritten, as if the new one only hid a secret of it."""
    with Store(tmp_path / "m.db") as store, store.atomic():
        old = "The deploy token is rotated weekly by the ops team."
        memory_id, _ = store.add_memory(NewMemory(
            project="/p", category="fact", text=old, confidence=0.7, rule_id="r", role="user", session_id="s",
            transcript="/t", entry_uuid="u1", ts="2026-01-01T00:00:00Z"))
        store.reword(memory_id, NewMemory(
            project="/p", category="fact", text="The deploy token is [REDACTED:token].", confidence=0.7, rule_id="r",
            role="user", session_id="s", transcript="/t", entry_uuid="u2", ts="2026-01-02T00:00:00Z"))
        assert [w.text for w in store.wordings(memory_id)] == [old]
        assert [e.text for e in store.evidence(memory_id)] == [old]
