"""Rule files are tested like code: schema, compilation, every example, overrides."""

from __future__ import annotations

import pytest

from miner.extract import regex_analysis, rule_matching
from miner.extract import rules as rules_mod
from miner.extract.rules import RuleError, load_file, load_rules

DEFAULT = rules_mod.load_rules(rules_mod.default_rule_files())


def _examples():
    for rule in DEFAULT.rules:
        for text in rule.match_examples:
            yield pytest.param(rule, text, True, id=f"{rule.id}+{text[:30]}")
        for text in rule.no_match_examples:
            yield pytest.param(rule, text, False, id=f"{rule.id}-{text[:30]}")


def test_default_rules_cover_all_categories_and_languages():
    assert {r.category for r in DEFAULT.rules} == {"decision", "preference", "fact", "todo"}
    langs = {r.lang for r in DEFAULT.rules}
    assert {"en", "zh"} <= langs
    for rule in DEFAULT.rules:
        assert rule.match_examples and rule.no_match_examples, f"{rule.id} needs match and no_match examples"


@pytest.mark.parametrize("rule,text,should_match", list(_examples()))
def test_rule_example(rule, text, should_match):
    assert bool(rule.search(text)) is should_match


def test_no_preference_rule_listens_to_the_assistant():
    assert not [r.id for r in DEFAULT.rules if r.category == "preference" and "assistant" in r.roles]


def write(tmp_path, name, text):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
rules:
  - id: t.use
    category: decision
    lang: en
    patterns: ['(?i)\\bwe use (?P<value>\\w+)']
    examples: {match: ['we use pnpm'], no_match: ['they like pnpm']}
"""


@pytest.mark.parametrize(
    "body,fragment",
    [
        ("rules:\n  - id: t.x\n    category: nonsense\n    patterns: [a]\n", "rule t.x: `category`"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: ['(unclosed']\n", "does not compile"),
        ("rules:\n  - id: t.x\n    category: fact\n", "at least one pattern"),
        ("rules:\n  - id: t.x\n    category: preference\n    roles: [assistant]\n    patterns: [a]\n", "preferences come from the user"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: [a]\n    colour: red\n", "unknown key"),
        ("rules:\n  - category: fact\n    patterns: [a]\n", "needs an `id`"),
        ("rules:\n  - id: 42\n    category: fact\n    patterns: [a]\n", "`id` must be a string"),
        ("rules:\n  - id: t.x\n    category: fact\n    pattern: [a]\n", "pattern (did you mean `patterns`?)"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: [a]\n    description: [a]\n",
         "`description` must be a string"),
        ("rule:\n  - id: t.x\n", "unknown key(s) rule (did you mean `rules`?)"),
        ("rules: [\n", "not valid YAML"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: [a]\n    tentative: 'no'\n", "`tentative` must be"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: [a]\n    confidence: true\n", "`confidence` must"),
        # A pattern Python cannot build: a repeat count past C's, groups nested past the parser's recursion.
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: ['a{1,4294967295}']\n", "too large or too deeply"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: ['" + "(" * 2000 + "a" + ")" * 2000 + "']\n",
         "does not compile"),
        # A key given twice: YAML keeps the last, and the first block's rules would never run.
        (GOOD + "rules:\n  - id: t.y\n    category: fact\n    patterns: [b]\n", "key 'rules' is given twice"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: [a]\n    patterns: [b]\n",
         "'patterns' is given twice"),
        # A regex in double quotes; a top-level key wrong, on its own line (it was line 1, or the first rule's).
        ('rules:\n  - id: t.x\n    category: fact\n    patterns: ["port \\d+"]\n',
         "bad.yaml:4: not valid YAML: found unknown escape character; write patterns in single quotes"),
        ("rules:\n  - id: t.x\n    category: fact\n    patterns: [a]\nlang: english\n",
         "bad.yaml:5: top-level `lang` must be one of"),
        ("rules: []\n\ndisable: t.x\n", "bad.yaml:3: `disable` must be a list"),
        ("rules: []\n\ncolour: red\n", "bad.yaml:3: top-level unknown key"),
    ],
)
def test_broken_rule_file_names_file_line_and_rule(tmp_path, body, fragment):
    path = write(tmp_path, "bad.yaml", body)
    with pytest.raises(RuleError) as info:
        load_file(path)
    message = str(info.value)
    assert str(path) in message and fragment in message
    assert "\n" not in message


@pytest.mark.parametrize("pattern", ["'[[:alpha:]]+ is our (?P<value>\\w+)'", "'we use [^[:space:]]+'"])
def test_a_posix_class_is_refused_with_what_to_write_instead(tmp_path, pattern, recwarn):
    """Python reads `[[:alpha:]]` as a set of the characters `[:alph`, and only warns (on standard error, once): the
    rule matched something else than it says, and `rules check` passed it."""
    body = f"rules:\n  - id: t.x\n    category: fact\n    patterns: [{pattern}]\n"
    with pytest.raises(RuleError, match=r"uses the POSIX class \[:(alpha|space):\], which Python's regular "
                                        r"expressions do not know: write \\w, \\d, \\s or a set such as"):
        load_file(write(tmp_path, "posix.yaml", body))
    assert not [w for w in recwarn if issubclass(w.category, FutureWarning)]
    literal = "rules:\n  - id: t.x\n    category: fact\n    patterns: ['the \\\\[:alpha:\\\\] marker']\n"
    assert [rule.id for rule in load_file(write(tmp_path, "literal.yaml", literal))[0]] == ["t.x"]


@pytest.mark.parametrize("pattern", ["'(?i)(?:todo:)?'", "'\\b(?:todo)?'", "'x*'", "'(?=\\d)(?:ticket)?'",
                                     "'(?=.*\\bdeploy\\b)(?=.*\\bfriday\\b)'"])
def test_a_pattern_that_matches_empty_text_is_refused(tmp_path, pattern):
    """It fired on every unit of every transcript (or of every one with a digit), and `rules check` said it was
    valid."""
    body = f"rules:\n  - id: t.x\n    category: todo\n    patterns: [{pattern}]\n"
    with pytest.raises(RuleError, match=r"bad.yaml:2: rule t.x: pattern .* can match empty text, so it would match "
                                        r"any text"):
        load_file(write(tmp_path, "bad.yaml", body))
    both = "rules:\n  - id: t.x\n    category: todo\n    patterns: ['(?=.*\\bfriday\\b)\\bdeploy\\b']\n"
    assert [rule.id for rule in load_file(write(tmp_path, "both.yaml", both))[0]] == ["t.x"]  # it must find a word


def test_an_alias_bomb_is_refused_in_one_line_before_it_is_expanded(tmp_path):
    """608 bytes of nested aliases made every rules command, `miner mine` and the trust review of a cloned
    repository's file run for ever and take gigabytes (the description was turned into a string)."""
    levels = ["a0: &a0 [" + ", ".join(["lol"] * 10) + "]"]
    levels += [f"a{n}: &a{n} [" + ", ".join([f"*a{n - 1}"] * 10) + "]" for n in range(1, 10)]
    body = "version: {" + ", ".join(levels) + "}\n" + GOOD.replace("lang: en", "lang: en\n    description: *a9")
    path = write(tmp_path, "bomb.yaml", body)
    assert len(body) < 1000
    with pytest.raises(RuleError, match=rf"{path}:\d+: aliases \(`\*name`\) are not allowed in a rule file"):
        load_file(path)


def test_error_names_the_line_of_the_rule(tmp_path):
    body = GOOD + "  - id: t.bad\n    category: fact\n    patterns: ['(']\n"
    path = write(tmp_path, "bad.yaml", body)
    with pytest.raises(RuleError, match=rf"{path}:8: rule t.bad"):
        load_file(path)


def test_override_by_id_and_disable(tmp_path):
    base = write(tmp_path, "a.yaml", GOOD)
    override = write(tmp_path, "b.yaml", GOOD.replace("we use", "we adopt").replace("'we use pnpm'", "'we adopt pnpm'"))
    ruleset = load_rules([base, override])
    assert len(ruleset.rules) == 1 and ruleset.rules[0].search("we adopt yarn")
    disabled = write(tmp_path, "c.yaml", "disable: [t.use]\n")
    assert load_rules([base, disabled]).rules == []


def test_named_groups_give_subject_and_value(tmp_path):
    path = write(tmp_path, "a.yaml", GOOD.replace("lang: en", "lang: en\n    subject: package manager"))
    hit = load_rules([path]).match("we use pnpm now", "user", ["en"])[0]
    assert (hit.subject, hit.value) == ("package manager", "pnpm")


def test_roles_and_langs_filter_matches(tmp_path):
    ruleset = load_rules([write(tmp_path, "a.yaml", GOOD)])
    assert ruleset.match("we use pnpm", "assistant", ["en"]) == []
    assert ruleset.match("we use pnpm", "user", ["zh"]) == []


def test_user_and_project_rule_files_are_found(tmp_path):
    config_dir = tmp_path / "cfg"
    (config_dir / "rules").mkdir(parents=True)
    write(config_dir / "rules", "mine.yaml", GOOD)
    project = tmp_path / "proj"
    (project / ".claude").mkdir(parents=True)
    own = write(project / ".claude", "miner-rules.yaml", "disable: [t.use]\n")
    assert rules_mod.project_rule_file(str(project), config_dir) == []  # not trusted yet: left out
    rules_mod.trust(own, config_dir)
    files = rules_mod.user_rule_files(config_dir) + rules_mod.project_rule_file(str(project), config_dir)
    assert [f.name for f in files] == ["mine.yaml", "miner-rules.yaml"]
    assert load_rules(files).rules == []


def test_a_user_rule_file_named_yml_is_read_like_a_yaml_one(tmp_path):
    """`mine.yml` was passed over without a word: its rules never applied, and `rules check` said all was well."""
    config_dir = tmp_path / "cfg"
    (config_dir / "rules").mkdir(parents=True)
    write(config_dir / "rules", "mine.yml", GOOD)
    write(config_dir / "rules", "notes.txt", "not rules")
    files = rules_mod.user_rule_files(config_dir)
    assert [f.name for f in files] == ["mine.yml"]
    assert [rule.id for rule in load_rules(files).rules] == ["t.use"]


def test_hidden_files_in_the_rules_folder_are_not_read(tmp_path):
    """Emacs' lock of a file with unsaved edits (`.#mine.yaml`, a link to nowhere) stopped all mining: every
    transcript failed with "cannot read"; macOS' `._mine.yaml` would not be UTF-8."""
    folder = tmp_path / "cfg" / "rules"
    folder.mkdir(parents=True)
    write(folder, "mine.yaml", GOOD)
    (folder / ".#mine.yaml").symlink_to("user@host.12345:1700000000")
    (folder / "._mine.yaml").write_bytes(b"\x00\x05\x16\x07\xff\xfe")
    files = rules_mod.user_rule_files(tmp_path / "cfg")
    assert [f.name for f in files] == ["mine.yaml"]
    assert [rule.id for rule in load_rules(files).rules] == ["t.use"]


def test_a_veto_without_roles_holds_for_the_assistants_words_too(tmp_path):
    """`effect: drop` took the default roles of a rule that keeps (the user's only): the assistant's "We deploy to
    Fly.io" was still kept, though a veto is "never a memory"."""
    veto = write(tmp_path, "veto.yaml",
                 "rules:\n  - id: my.drop\n    effect: drop\n    patterns: ['(?i)\\bfly\\.io\\b']\n")
    ruleset = load_rules([veto])
    for role in ("user", "assistant"):
        assert [hit.rule.id for hit in ruleset.match("We deploy to Fly.io from main.", role, ["en"])] == ["my.drop"]
    kept = write(tmp_path, "keep.yaml", GOOD)
    assert load_rules([kept]).match("we use pnpm", "assistant", ["en"]) == []  # (a rule that keeps: the user's)


def test_a_typographic_apostrophe_in_a_pattern_matches_as_the_texts_does(tmp_path):
    """The texts' "don’t" is read as "don't": a pattern written with "don’t" never fired, and `rules check` said its
    example did not match."""
    path = write(tmp_path, "a.yaml", "rules:\n  - id: t.not\n    category: decision\n    lang: en\n"
                 "    patterns: ['(?i)\\bwe don\u2019t use (?P<value>\\w+)']\n"
                 "    examples: {match: ['We don\u2019t use Docker here.']}\n")
    ruleset = load_rules([path])
    assert rules_mod.check_examples(ruleset) == []
    said = rule_matching.as_rules_read("We don\u2019t use Docker here.")
    assert [hit.value for hit in ruleset.match(said, "user", ["en"])] == ["Docker"]


def test_a_projects_rule_file_applies_only_as_the_user_trusted_it(tmp_path, monkeypatch):
    """A cloned repository brings its author's rule file: a rule that would make its text recalled in every project
    (or a pattern that would hang the miner) does nothing until the user has read the file and trusted it; changed
    since (a pull), it is left out again."""
    from click.testing import CliRunner

    from miner import paths
    from miner.cli.main import main

    project = tmp_path / "cloned"
    (project / ".claude").mkdir(parents=True)
    (project / ".git").mkdir()
    own = write(project / ".claude", "miner-rules.yaml", GOOD.replace("t.use", "cloned.use") +
                "    scope: global\n")
    monkeypatch.chdir(project)
    runner = CliRunner()
    listed = runner.invoke(main, ["rules", "list"])
    assert "cloned.use" not in listed.stdout and f"note: {own} is not applied: it is not trusted" in listed.stderr
    assert rules_mod.project_rule_file(str(project)) == []
    trusted = runner.invoke(main, ["rules", "trust"])
    assert trusted.exit_code == 0 and f"{own} trusted as it is now: 1 rule," in trusted.output
    assert "cloned.use" in trusted.output and "(global: recalled in every project)" in trusted.output
    assert "cloned.use" in runner.invoke(main, ["rules", "list"]).stdout
    assert (paths.config_dir() / rules_mod.TRUST_FILE).is_file()
    own.write_text(own.read_text(encoding="utf-8") + "# changed by a pull\n", encoding="utf-8")
    assert "cloned.use" not in runner.invoke(main, ["rules", "list"]).stdout
    runner.invoke(main, ["rules", "trust"])
    assert "cloned.use" in runner.invoke(main, ["rules", "list"]).stdout
    revoked = runner.invoke(main, ["rules", "trust", "--revoke"])
    assert revoked.exit_code == 0 and "no longer applied" in revoked.output
    assert "cloned.use" not in runner.invoke(main, ["rules", "list"]).stdout
    missing = runner.invoke(main, ["rules", "trust", "--project", str(tmp_path)])
    assert missing.exit_code == 1 and "has no .claude/miner-rules.yaml; nothing to trust" in missing.output


@pytest.mark.parametrize("pattern,text", [
    (r"(?i)\bwe(?:'ll| will) use (?P<value>\w+)", "We'll use Bun"),
    (r"(?i)\b(?:instead of|rather than)\b", "Bun RATHER THAN node"),
    (r"(?:[\w-]+\.){2,}[\w-]+\s*:\s*\w+", "spring.jackson.inclusion: x"),
    (r"(?i)port\s+\d+", "PORT 8080"),
    (r"(?:foo|b)ar", "a bar"),
])
def test_prefilter_never_hides_a_match(pattern, text):
    """The literal prefilter is only a shortcut: a rule matches exactly when its regex does."""
    literals = regex_analysis.required_literals(pattern)
    assert literals is None or any(lit in text.lower() for lit in literals)
    rule = rules_mod.parse_rule({"id": "t", "category": "fact", "patterns": [pattern]}, "t", 1, "any")
    assert rule.search(text)


def test_prefilter_agrees_with_plain_regex_on_every_default_example():
    for rule in DEFAULT.rules:
        for text in rule.match_examples + rule.no_match_examples:
            read = rule_matching.as_rules_read(text)
            plain = any(p.search(read) for p in rule.patterns) and not any(u.search(read) for u in rule.unless)
            assert bool(rule.search(text)) == plain, (rule.id, text)


# --- the matching engine: prefilters and memo never change the hits ----------------------------


def _plain_hits(ruleset, text, role, langs, bold_off=False):
    """What matching must return: every applicable rule's regexes run in full on the text as rules read it (its
    apostrophes straight), best confidence first; if none fires, the same on the text without its bold markers."""
    text = rule_matching.as_rules_read(text)
    hits = []
    for rule in ruleset.rules:
        if not rule.applies(role, langs):
            continue
        found = next((m for m in (p.search(text) for p in rule.patterns) if m), None)
        if found and not any(u.search(text) for u in rule.unless):
            hits.append((rule.id, found.span(), found.groupdict()))
    hits.sort(key=lambda h: (not ruleset.get(h[0]).own, -ruleset.get(h[0]).confidence))
    if not hits and not bold_off and "**" in text:
        return _plain_hits(ruleset, text.replace("**", ""), role, langs, bold_off=True)
    return hits


def test_bold_is_looked_past_when_no_rule_reads_it():
    ruleset = rule_matching.RuleSet(DEFAULT.rules)
    plain = "- `RETRY_LIMIT` env var caps the number of upload attempts"
    bold = "- **`RETRY_LIMIT`** env var caps the number of upload attempts"
    assert [h.rule.id for h in ruleset.match(bold, "assistant", ("en",))] == \
        [h.rule.id for h in ruleset.match(plain, "assistant", ("en",))] != []
    # A rule that reads bold as a label still matches the text as written, first.
    labelled = "- **Storage**: uploads go to the `media` bucket, one folder per tenant"
    assert ruleset.match(labelled, "assistant", ("en",))[0].match.string == labelled


def _all_examples():
    texts = [t for r in DEFAULT.rules for t in r.match_examples + r.no_match_examples]
    # Characters a case-insensitive regex reads as s and i although lower-casing does not show them so.
    odd = [t.replace("s", "ſ").replace("i", "ı") for t in texts] + [t.replace("I", "İ") for t in texts]
    return texts + [t.upper() for t in texts] + odd + ["", "   ", "ok", "`x`: 1", "**Note:** keep it", "我们决定用 Redis。"]


def test_a_case_insensitive_rule_matches_what_lower_casing_does_not_show():
    rule = rules_mod.parse_rule({"id": "t", "category": "decision", "patterns": [r"(?i)\buse\s+postgres\b"]},
                                "t", 1, "any")
    ruleset = rule_matching.RuleSet([rule])
    for text in ("We uſe Postgres now.", "we USE POſTGRES", "We use Postgres."):
        assert rule.patterns[0].search(text)
        assert rule.search(text) and [h.rule.id for h in ruleset.match(text, "user", ("en",))] == ["t"], text


def test_a_rule_whose_own_literal_lower_casing_does_not_show_still_matches():
    # The odd character in the rule this time: its lower-cased literal "uſe postgres" is in no lower-cased text.
    rule = rules_mod.parse_rule({"id": "t", "category": "decision", "patterns": [r"(?i)\buſe\s+postgres\b"]},
                                "t", 1, "any")
    ruleset = rule_matching.RuleSet([rule])
    for text in ("We USE POSTGRES now.", "we use postgres"):
        assert rule.patterns[0].search(text)
        assert rule.search(text) and [h.rule.id for h in ruleset.match(text, "user", ("en",))] == ["t"], text


@pytest.mark.parametrize("role", ["user", "assistant"])
@pytest.mark.parametrize("langs", [("en",), ("zh",), ("zh", "en"), ()])
def test_match_gives_the_hits_of_running_every_rule(role, langs):
    ruleset = rule_matching.RuleSet(DEFAULT.rules)
    for text in _all_examples():
        got = [(h.rule.id, h.match.span(), h.match.groupdict()) for h in ruleset.match(text, role, langs)]
        assert got == _plain_hits(ruleset, text, role, langs), text


def test_a_remembered_text_gives_the_same_hits_in_a_new_list():
    ruleset = rule_matching.RuleSet(DEFAULT.rules)
    text = "We decided to use Postgres instead of MySQL."
    first, again = ruleset.match(text, "user", ("en",)), ruleset.match(text, "user", ("en",))
    assert first and [(h.rule.id, h.match.span()) for h in again] == [(h.rule.id, h.match.span()) for h in first]
    again.clear()
    assert ruleset.match(text, "user", ("en",)) == first


@pytest.mark.parametrize("text", [
    "abcd", "xabcx", "bc", "ab bc", "use user used", "the cat sat", "我们决定用 pnpm", "", "a",
])
def test_literal_scan_finds_exactly_the_literals_that_occur(text):
    literals = ["ab", "abc", "bc", "b", "cd", "use", "user", "users", "at", "cat", "the ", "决定", "用", "pnpm"]
    scan = rule_matching.LiteralScan(literals)
    assert scan.present(text) == {lit for lit in literals if lit in text}


@pytest.mark.parametrize("pattern,requirements", [
    (r"(?i)\bwe use (?P<value>\w+) for", [{"we use "}, {" for"}]),
    (r"(?:foo|bar)baz", [{"foo", "bar"}, {"baz"}]),
    (r"(?:foo|b)ar", [{"ar"}]),  # a one-letter branch filters nothing and is left out
    (r"xy(?=z)(?!no)", [{"xy"}]),  # lookarounds require nothing
    (r"(?:ab)?cd", [{"cd"}]),  # nor does an optional part
    (r"(?:ab)+", [{"ab"}]),
    (r"\d+", []),
    # A character lower-casing does not show as the regex compares it cuts the run: "artık" also matches "ARTIK".
    (r"(?i)\bartık olarak", [{"art"}, {"k olarak"}]),
    (r"(?i)(?:şimdi|artık)\b", [{"şimdi", "art"}]),
])
def test_literal_requirements(pattern, requirements):
    assert [set(r) for r in regex_analysis.literal_requirements(pattern)] == requirements


def plain_literal(literal: str) -> bool:
    return all(map(regex_analysis.plain_char, literal))


@pytest.mark.parametrize("text", ["artık olarak", "ARTIK OLARAK", "artik olarak", "Artİk olarak"])
def test_a_rule_whose_word_holds_a_dotless_i_matches_as_its_regex_does(text):
    """The word's literal requirements stop at the dotless i, so the rule's gate still lets every spelling that
    the case-insensitive regex matches through, in one rule alone or among the default rules."""
    rule = rules_mod.parse_rule({"id": "tr.state", "category": "fact", "patterns": [r"(?i)\bartık olarak\b"]},
                                "t", 1, "any")
    assert all(plain_literal(lit) for lit in rule.literals())
    assert rule.patterns[0].search(text)
    assert rule.search(text)
    matcher = rule_matching.Matcher([*DEFAULT.rules, rule])
    assert "tr.state" in [hit.rule.id for hit in matcher.match(text)]


def test_every_literal_of_the_default_rules_and_cues_lowers_plainly():
    """One literal that lower-casing cannot show as the regex compares it would turn the literal pass off for every
    rule (or cue family) beside it: each would then be searched in every unit."""
    from miner.extract import cues

    assert all(plain_literal(lit) for rule in DEFAULT.rules for lit in rule.literals())
    cues.cue_families("")
    assert all(plain_literal(lit) for gate in cues._SCAN.gates.values() for lit in gate)
    assert cues._SCAN._scan.present_in("plain text, no cue word in it") is not None


def test_every_default_example_meets_the_requirements_of_the_pattern_it_matches():
    for rule in DEFAULT.rules:
        for text in rule.match_examples:
            for pattern, requirements in zip(rule.patterns, rule.required):
                if pattern.search(text):
                    assert all(any(o in text.lower() for o in options) for options in requirements), (rule.id, text)


def test_rulesets_with_other_rules_never_share_hits(tmp_path):
    own = load_rules(rules_mod.default_rule_files() + [write(tmp_path, "own.yaml", GOOD)])
    plain = load_rules(rules_mod.default_rule_files())
    assert "t.use" in [h.rule.id for h in own.match("we use pnpm", "user", ("en",))]
    assert "t.use" not in [h.rule.id for h in plain.match("we use pnpm", "user", ("en",))]


def test_a_typographic_apostrophe_reads_as_the_straight_one():
    """macOS and phone keyboards type "don’t": the rules, written with "don't", fire the same, and a hit's
    offsets still point into the text as given."""
    straight = "I don't want any new dependencies in this service, and let's keep it that way."
    curly = straight.replace("'", "\u2019")
    expected = [h.rule.id for h in DEFAULT.match(straight, "user", ("en",))]
    hits = DEFAULT.match(curly, "user", ("en",))
    assert expected and [h.rule.id for h in hits] == expected
    for hit in hits:
        assert curly[hit.match.start():hit.match.end()].replace("\u2019", "'") == hit.match.group(0)


def test_the_fast_yaml_loader_reads_every_shipped_file_as_the_pure_python_one():
    """Rule, secret, synonym and glossary files are read with libyaml's loader where PyYAML has it (every miner
    process reads them): the values are those of `yaml.safe_load`."""
    import yaml

    assert rules_mod.YAML_LOADER is (yaml.CSafeLoader if yaml.__with_libyaml__ else yaml.SafeLoader)
    files = sorted(rules_mod.default_rules_dir().glob("*.yaml"))
    assert {"secrets.yaml", "synonyms.yaml", "glossary.yaml", "en.yaml"} <= {f.name for f in files}
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert yaml.load(text, Loader=rules_mod.YAML_LOADER) == yaml.safe_load(text), path.name


@pytest.mark.parametrize("effect,decided", [("hint", "my.say"), ("keep", "my.say"), ("drop", None)])
def test_where_a_users_rule_and_a_shipped_one_fire_the_users_decides_a_hint_too(isolated_home, store, pipeline,
                                                                                effect, decided):
    """A user's `hint` was overruled by a shipped rule that keeps, though "where one of your rules and a shipped one
    both fire on a unit, yours decides". (No classifier here: a hint then keeps, with its own category.)"""
    from miner import config as config_mod
    from miner.runtime.mine import Miner
    from tests.builders import Session

    folder = isolated_home / ".config" / "miner" / "rules"
    folder.mkdir(parents=True)
    write(folder, "mine.yaml", f"rules:\n  - id: my.say\n    category: fact\n    effect: {effect}\n"
          "    roles: [user, assistant]\n    patterns: ['(?i)\\bwe deploy to\\b']\n")
    said = "We deploy to Render from main."
    shipped = load_rules(rules_mod.default_rule_files())
    assert [h.rule.id for h in shipped.match(said, "assistant", ["en"]) if h.rule.effect == "keep"]  # (it fires)
    session = Session(isolated_home / "s.jsonl", cwd="/work/shop")
    session.user("Where do we ship the app?")
    session.assistant(said)
    Miner(store, config_mod.load(), pipeline=pipeline, classifier=False).mine_file(session.path)
    stored = {m.text: (m.rule_id, m.category) for m in store.list_memories(limit=50)}
    assert stored.get(said) == ((decided, "fact") if decided else None), stored


def test_a_top_level_key_yaml_reads_as_another_type_is_one_clear_error(tmp_path):
    """`on:` is a boolean to YAML: sorting it beside a string key for the message raised a TypeError, a traceback in
    `rules check` and in every background miner."""
    with pytest.raises(RuleError, match="top-level unknown key"):
        load_file(write(tmp_path, "bad.yaml", "rules: []\non: 1\nfoo: 2\n"))
    with pytest.raises(RuleError, match=r"bad\.yaml:3: top-level unknown key\(s\) on"):  # (its line, as written)
        load_file(write(tmp_path, "bad.yaml", "rules: []\n\non: 1\n"))


def test_things_said_side_by_side_either_way_round_are_no_change_of_mind():
    from miner.memory.lexicon import load_synonyms
    from miner.memory.similarity import Comparer
    from miner.memory.text_features import Statement

    comparer = Comparer(load_synonyms())
    for before, after in [("We run Redis alongside Postgres in docker compose.",
                           "We run Postgres alongside Redis in docker compose."),
                          ("The code owners of billing are Alice, Bob, Carol and Dan.",  # (a list: in no order)
                           "The code owners of billing are Carol, Bob, Alice and Dan.")]:
        old = Statement(before, "fact", "", "", False, "2026-01-01")
        new = Statement(after, "fact", "", "", False, "2026-01-02")
        assert comparer.supersedes(new, old) is None and comparer.is_duplicate(new, old), after
    old = Statement("The build treats warnings as errors in CI.", "fact", "", "", False, "2026-01-01")
    new = Statement("The build treats errors as warnings in CI.", "fact", "", "", False, "2026-01-02")
    assert comparer.supersedes(new, old).kind == "order" and not comparer.is_duplicate(new, old)
