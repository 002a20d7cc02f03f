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
    # A secret with blanks is one when it is quoted (the quotes hidden with it, or left around it) or a key's block.
    ("The wifi passphrase is [REDACTED:passphrase] now.", 'The wifi passphrase is "amber fox river 7" now.', True),
    ("my password is '[REDACTED:password]'.", "my password is 'open the gate 99'.", True),
    ("x \u201c[REDACTED:a]\u201d y", "x \u201cleft right\u201d y", True),
    ("key:\n[REDACTED:private-key]\nend", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIab\ncd==\n"
     "-----END RSA PRIVATE KEY-----\nend", True),
    ("say [REDACTED:a] now", 'say "one" and "two" now', False),  # (two quoted runs, not one)
    ("say '[REDACTED:a]' now", "say 'one' and 'two' now", False),
    ("The token is [REDACTED:token].", 'The token is "rotated" weekly.', False),
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


@pytest.mark.parametrize("old, hidden", [
    ('The backup passphrase is "amber fox river 7" until March.',
     "The backup passphrase is [REDACTED:passphrase] until March."),
    ("Deploy key:\n-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXk\nAAAAB3Nza==\n"
     "-----END OPENSSH PRIVATE KEY-----", "Deploy key:\n[REDACTED:private-key]"),
])
def test_a_secret_with_blanks_hidden_later_leaves_no_copy(tmp_path, old, hidden):
    """A quoted passphrase or a private key hidden in a later wording left the earlier one, secret and all, as a
    wording and as the evidence (only a marker for one word was taken for a secret hidden)."""
    with Store(tmp_path / "m.db") as store, store.atomic():
        memory_id, _ = store.add_memory(NewMemory(
            project="/p", category="fact", text=old, confidence=0.7, rule_id="r", role="user", session_id="s",
            transcript="/t", entry_uuid="u1", ts="2026-01-01T00:00:00Z"))
        store.reword(memory_id, NewMemory(
            project="/p", category="fact", text=hidden, confidence=0.7, rule_id="r", role="user", session_id="s",
            transcript="/t", entry_uuid="u1", ts="2026-01-02T00:00:00Z"))
        assert store.get(memory_id).text == hidden
        assert old not in [w.text for w in store.wordings(memory_id)]
        assert [e.text for e in store.evidence(memory_id)] == [hidden]
