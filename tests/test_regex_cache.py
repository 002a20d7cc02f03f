"""Compiled rules kept on disk between miner processes (`regex_cache`): the same patterns, never a wrong one.

A pattern built from cached engine code must be the pattern `re.compile` builds: `re.Pattern` equality compares
the flags, the text and the compiled code, so every test compares against `re.compile` itself. A miner process
writes what it compiled as it exits, and the next one compiles none of it again.
"""

from __future__ import annotations

import json
import marshal
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import subprocess_env

from miner.extract import regex_cache
from miner.extract.rule_matching import LiteralScan, _scan_pattern
from miner.extract.rules import default_rule_files, load_file, load_rules

REPO = Path(__file__).resolve().parent.parent
FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(autouse=True)
def fresh_cache(isolated_home):
    """Each test starts from its own (empty) data folder, and leaves no cache state behind."""
    Path(os.environ["MINER_HOME"]).mkdir(parents=True, exist_ok=True)
    regex_cache.reset()
    yield
    regex_cache.reset()


def shipped_patterns() -> list[tuple[str, int]]:
    """Every pattern of the shipped rules, and the literal scans of their matchers, with its flags (read with the
    cache off, and forgotten)."""
    regex_cache.reset(enabled=False)
    found = []
    for path in default_rule_files():
        rules, _ = load_file(path)
        for rule in rules:
            found += [(p.pattern, 0) for p in rule.patterns + rule.unless]
    rules = load_rules(default_rule_files()).rules
    for role in ("user", "assistant"):
        for langs in (("en",), ("zh",), ("en", "zh")):
            literals = {lit for rule in rules if rule.applies(role, langs) for lit in rule.literals()}
            found.append((_scan_pattern(literals), re.DOTALL))
    regex_cache.reset()
    return list(dict.fromkeys(found))


def test_cached_patterns_are_the_ones_re_compiles():
    patterns = shipped_patterns()
    assert len(patterns) > 300
    learnt = [regex_cache.compile(p, f) for p, f in patterns]
    assert regex_cache.counts["compiled"] == len(patterns)
    assert learnt == [re.compile(p, f) for p, f in patterns]
    assert regex_cache.save()
    file = Path(regex_cache.path())
    assert file.parent == Path(os.environ["MINER_HOME"]) / "cache" / "regex"
    assert f"{sys.version_info[0]}.{sys.version_info[1]}.{sys.version_info[2]}" in file.name
    for path in (file, file.parent, file.parent.parent):
        assert path.stat().st_mode & 0o077 == 0, path  # private, like the rest of the data folder

    regex_cache.reset()  # as a new process: everything from the file, nothing compiled
    loaded = [regex_cache.compile(p, f) for p, f in patterns]
    assert regex_cache.counts == {"cached": len(patterns), "compiled": 0}
    assert loaded == [re.compile(p, f) for p, f in patterns]
    # They behave as what they are, groups included.
    scan = LiteralScan(["always", "alway", "use"])
    assert scan.present("we always use it") == {"always", "alway", "use"}
    rules = load_rules(default_rule_files())
    text = "Always use pnpm, never npm."
    assert [h.rule.id for h in rules.match(text, "user", ("en",))] == \
        [r.id for r in sorted((r for r in rules.rules if r.applies("user", ("en",)) and r.search(text)),
                              key=lambda r: -r.confidence)]


def test_a_pattern_that_does_not_compile_raises_as_re_does_and_is_not_kept():
    with pytest.raises(re.error) as ours:
        regex_cache.compile("(?P<value>unclosed")
    with pytest.raises(re.error) as theirs:
        re.compile("(?P<value>unclosed")
    assert str(ours.value) == str(theirs.value)
    assert regex_cache.counts["compiled"] == 0
    assert not regex_cache.save()  # nothing learnt, nothing written
    assert not Path(regex_cache.path()).exists()


def test_a_damaged_file_is_compiled_around_and_written_again():
    pattern = r"\b(?:use|prefer)\s+(?P<value>\w+)"
    regex_cache.compile(pattern)
    regex_cache.save()
    file = Path(regex_cache.path())
    blob = bytearray(file.read_bytes())
    blob[len(blob) // 2] ^= 0xFF  # one flipped byte: the checksum no longer holds
    file.write_bytes(bytes(blob))

    regex_cache.reset()
    assert regex_cache.compile(pattern) == re.compile(pattern)
    assert regex_cache.counts == {"cached": 0, "compiled": 1}
    assert regex_cache.save()
    regex_cache.reset()
    assert regex_cache.compile(pattern) == re.compile(pattern)
    assert regex_cache.counts == {"cached": 1, "compiled": 0}


def test_engine_code_the_engine_refuses_is_compiled_again(tmp_path):
    """An entry whose code the regex engine rejects (a foreign build, a hand-edit with a valid checksum)."""
    pattern = r"(?P<subject>\w+) is (?P<value>\w+)"
    regex_cache.compile(pattern)
    regex_cache.save()
    file = Path(regex_cache.path())
    table = regex_cache._read(str(file))
    key = ("re", pattern, 0)
    flags, code, groups, groupindex, indexgroup = table[key]
    table[key] = (flags, [999999] + code[1:], groups, groupindex, indexgroup)
    payload = marshal.dumps(table)
    file.write_bytes(regex_cache._digest(payload) + payload)

    regex_cache.reset()
    assert regex_cache.compile(pattern) == re.compile(pattern)
    assert regex_cache.counts == {"cached": 0, "compiled": 1}


def test_a_kept_result_of_the_wrong_shape_is_worked_out_again():
    """Another version of the miner's analysis (or a hand-edit with a valid checksum) must not break loading."""
    rules, _ = load_file(default_rule_files()[0])
    pattern = rules[0].patterns[0].pattern
    regex_cache.save()
    file = Path(regex_cache.path())
    table = regex_cache._read(str(file))
    table[("memo", "rule-pattern", pattern)] = ("unsafe?", "not requirements", 3)
    payload = marshal.dumps(table)
    file.write_bytes(regex_cache._digest(payload) + payload)

    regex_cache.reset()  # as a new process
    again, _ = load_file(default_rule_files()[0])
    assert again[0].required == rules[0].required and again[0].gate == rules[0].gate


def test_another_version_of_the_miner_uses_another_file(monkeypatch):
    name = regex_cache.file_name()
    assert regex_cache.file_name() == name  # stable for one version
    monkeypatch.setattr(regex_cache, "SOURCES", regex_cache.SOURCES[:-1])  # as if a module read differently
    assert regex_cache.file_name() != name


def test_another_versions_file_goes_once_it_is_old():
    regex_cache.compile("x+")
    regex_cache.save()
    folder = Path(regex_cache.path()).parent
    old, recent = folder / "regex-cpython-3.0.0-1-1-000000000000.bin", folder / "regex-cpython-3.0.1-1-1-0.bin"
    other = folder / "notes.txt"
    for path in (old, recent, other):
        path.write_bytes(b"x")
    month = time.time() - 31 * 86400
    os.utime(old, (month, month))
    os.utime(other, (month, month))
    regex_cache.compile("y+")
    assert regex_cache.save()
    assert not old.exists() and recent.exists() and other.exists() and Path(regex_cache.path()).exists()


def run_process(*patterns: str) -> None:
    """One process: compile `patterns`, save as it exits; the next call starts as a new process."""
    for pattern in patterns:
        regex_cache.compile(pattern)
    regex_cache.save()
    regex_cache.reset()


def kept_patterns() -> list[str]:
    return sorted(key[1] for key in regex_cache._read(regex_cache.path()))


def test_the_entries_used_last_are_kept(monkeypatch):
    monkeypatch.setattr(regex_cache, "MAX_ENTRIES", 3)
    run_process(*(f"old{n}" for n in range(5)))
    run_process("new", "old2")  # old2 used again: kept although it is old
    assert kept_patterns() == ["new", "old2", "old4"]


def test_a_process_with_an_older_view_does_not_bring_back_what_others_dropped(monkeypatch):
    monkeypatch.setattr(regex_cache, "MAX_ENTRIES", 4)
    run_process(*(f"old{n}" for n in range(4)))
    regex_cache.compile("old0")
    snapshot = (regex_cache._table, regex_cache._file)  # process A has read the file, and used old0
    regex_cache.reset()
    run_process("b1", "b2", "b3")  # process B uses three new patterns, and saves
    regex_cache._table, regex_cache._file = snapshot  # A learns one more, and saves last
    regex_cache._used.update({("re", "old0", 0): None})
    run_process("a1")
    assert kept_patterns() == ["a1", "b2", "b3", "old0"]  # what A used, and B's newest: nothing unused came back


def test_nothing_is_written_when_the_data_folder_is_gone(tmp_path, monkeypatch):
    home = tmp_path / "gone"
    home.mkdir()
    monkeypatch.setenv("MINER_HOME", str(home))
    regex_cache.reset()
    regex_cache.compile("x+y")
    home.rmdir()
    assert not regex_cache.save()
    assert not home.exists()


def test_off_compiles_as_re_does():
    regex_cache.reset(enabled=False)
    assert regex_cache.compile(r"\d+") == re.compile(r"\d+")
    assert regex_cache.memo("kind", "key", lambda: 41 + 1) == 42
    assert regex_cache.counts == {"cached": 0, "compiled": 0}
    assert not regex_cache.save()


PROBE = """
import json, sys
from miner.extract import regex_cache
from miner.extract.rules import default_rule_files, load_rules
rules = load_rules(default_rule_files())
hits = [h.rule.id for h in rules.match(sys.argv[1], "user", ("en",))]
print(json.dumps({"counts": regex_cache.counts, "hits": hits}))
"""


def test_a_miner_process_keeps_what_it_compiled_for_the_next(tmp_path):
    """Real processes: the background miner writes the cache as it exits; the next process compiles nothing."""
    project = tmp_path / "projects" / "-work-demo"
    project.mkdir(parents=True)
    transcript = project / "s.jsonl"
    transcript.write_bytes((FIXTURES / "transcripts" / "chinese.jsonl").read_bytes())
    env = subprocess_env()
    done = subprocess.run([sys.executable, "-m", "miner.worker", "mine", "--no-render", str(transcript)],
                          env=env, capture_output=True, text=True, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr
    assert Path(regex_cache.path()).is_file()

    text = "We always use pnpm here, never npm."
    runs = [json.loads(subprocess.run([sys.executable, "-c", PROBE, text], env=env, capture_output=True, text=True,
                                      timeout=120, cwd=REPO, check=True).stdout) for _ in range(2)]
    for run in runs:
        assert run["counts"]["compiled"] == 0 and run["counts"]["cached"] > 300
    regex_cache.reset(enabled=False)
    expected = [h.rule.id for h in load_rules(default_rule_files()).match(text, "user", ("en",))]
    assert expected and runs[0]["hits"] == runs[1]["hits"] == expected


TEXT_FEATURES_PROBE = """
import json, re
from miner.extract import regex_cache
from miner.extract.regex_analysis import required_literals
from miner.memory import text_features as tf
gated = tf._GATED_REPLACED + tf._GATED_NEGATED_TERMS + [tf._GATED_LOOSE_NEGATION, tf._GATED_MARKER, tf._GATED_NEGATION]
for group in (tf._OTHER_MARKER, tf._OTHER_REPLACED, tf._OTHER_REMOVED):
    for value in group.values():
        gated += value if isinstance(value, list) else [value]
patterns = [p for p, _ in gated] + [tf._TOKEN_RE, tf._CAPITAL_RE, tf._NEGATION_RE, tf._NUMBER_RE, tf._CLITIC_RE]
same = all(p == re.compile(p.pattern, p.flags) for p in patterns)
literals = all(gate == required_literals(p.pattern) for p, gate in gated)
print(json.dumps({"counts": regex_cache.counts, "patterns": len(patterns), "same": same, "literals": literals}))
"""


def test_the_memory_layers_text_patterns_come_from_the_cache_as_they_would_compile():
    """`text_features` compiles some seventy patterns on import: the second process takes them, and their literals,
    from the file, and they are the patterns and literals worked out afresh."""
    env = subprocess_env()
    runs = [json.loads(subprocess.run([sys.executable, "-c", TEXT_FEATURES_PROBE], env=env, capture_output=True,
                                      text=True, timeout=120, cwd=REPO, check=True).stdout) for _ in range(2)]
    assert runs[0]["counts"]["compiled"] >= runs[0]["patterns"] > 60
    assert runs[1]["counts"]["compiled"] == 0 and runs[1]["counts"]["cached"] >= runs[1]["patterns"]
    assert all(run["same"] and run["literals"] for run in runs)


REDACTION_PROBE = """
import json, re, sys
from miner.extract import regex_cache
from miner.extract.redact import redact
from miner.extract.secret_patterns import patterns
text = sys.argv[1]
redacted = redact(text)[0]
compiled = patterns()
found = [p for p in vars(compiled).values() if isinstance(p, re.Pattern)] + list(compiled._shapes.values())
found = list({id(p): p for p in found + [compiled.prompted, compiled.typed_at_prompt]}.values())
same = all(p == re.compile(p.pattern, p.flags) for p in found)
print(json.dumps({"counts": regex_cache.counts, "patterns": len(found), "same": same, "redacted": redacted}))
"""


def test_redactions_patterns_come_from_the_cache_as_they_would_compile():
    """The context passes and shapes of `secret_patterns` (some sixty milliseconds of compiling, in every miner and
    in a hook that logs a line) are taken from the file by the second process, and redact as before."""
    env = subprocess_env()
    text = "The staging password is Xq7!vR2#pL9 and the key AKIAIOSFODNN7EXAMPLE. Type it when it asks for the pin."
    runs = [json.loads(subprocess.run([sys.executable, "-c", REDACTION_PROBE, text], env=env, capture_output=True,
                                      text=True, timeout=120, cwd=REPO, check=True).stdout) for _ in range(2)]
    assert runs[0]["patterns"] > 20 and runs[0]["counts"]["compiled"] >= runs[0]["patterns"]
    assert runs[1]["counts"]["compiled"] == 0 and runs[1]["counts"]["cached"] >= runs[1]["patterns"]
    assert all(run["same"] for run in runs)
    assert runs[0]["redacted"] == runs[1]["redacted"] and "Xq7!vR2#pL9" not in runs[1]["redacted"]
    assert "AKIAIOSFODNN7EXAMPLE" not in runs[1]["redacted"]
