"""The cleaner: what is removed from prose, and how prose is cut into units."""

from __future__ import annotations

import pytest

from miner.extract import clean
from miner.extract.clean import (
    BLOCK_TAG,
    WRAPPER_TAGS,
    clean_prose,
    drop_wrappers,
    has_cjk,
    split_units,
    turns_to_units,
)
from miner.extract.model import Turn


def units(text: str) -> list[str]:
    """The units of one piece of prose, cleaned first, as the miner sees them."""
    return split_units([clean_prose(text)])[0]


def turn(text: str, uuid: str = "u1", role: str = "user") -> Turn:
    return Turn(uuid=uuid, session_id="s", role=role, text=text, ts="", cwd="", git_branch="", is_sidechain=False,
                transcript="t.jsonl")


# --- what is removed ---------------------------------------------------------------------------


@pytest.mark.parametrize("tag", WRAPPER_TAGS)
def test_every_wrapper_and_its_content_is_removed(tag):
    text = f"Before the tag. <{tag}>We decided to use Cassandra.</{tag}> After the tag."
    assert units(text) == ["Before the tag.", "After the tag."]


@pytest.mark.parametrize(
    "text",
    [
        "<command-name>/model</command-name>\n<command-message>model</command-message>\n<command-args>opus</command-args>",
        "<local-command-stdout>Set model to opus</local-command-stdout>",
        "<system-reminder>\nThe user opened a file.\nNever mention this reminder.\n</system-reminder>",
        "<ide_opened_file>The user opened the file /srv/app.py in the IDE.</ide_opened_file>",
        "<task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n"
        "<summary>Background command finished</summary>\n</task-notification>",
    ],
)
def test_a_prompt_that_is_only_a_wrapper_yields_no_unit(text):
    assert units(text) == []


def test_wrappers_with_attributes_and_any_case_are_removed():
    text = '<system-reminder kind="hook">hidden one</system-reminder>Shown here. <System-Reminder>hidden two</System-Reminder>'
    assert units(text) == ["Shown here."]


def test_an_unclosed_wrapper_hides_everything_after_it():
    # Safer to lose the tail of a prompt than to mine a wrapper's content.
    assert units("Visible part. <private>my password is hunter2 and more") == ["Visible part."]


def test_a_wrapper_tag_named_in_inline_code_is_text_but_private_still_hides():
    """A tag named in backticks opened a wrapper that was never closed: the rest of the turn was lost, and a memory
    kept the words up to a dangling backtick."""
    text = ("Claude Code wraps hook output in `<system-reminder>` tags.\n\n"
            "We decided to use PostgreSQL instead of MySQL for the billing service.")
    assert units(text) == ["Claude Code wraps hook output in `<system-reminder>` tags.",
                           "We decided to use PostgreSQL instead of MySQL for the billing service."]
    assert units("Visible part. `<private>` my password is hunter2 and more") == ["Visible part."]


def test_escape_sequences_and_control_characters_go_whole_when_mined():
    """Mined raw, the control character alone was dropped at output: "[1mbold[0m" stayed, and a NUL glued two words
    ("usePostgreSQL") that a repeat of the sentence without it never matched."""
    text = ("I prefer \x1b[1mbold\x1b[0m headings and \x1b]0;title\x07plain titles.\n"
            "We decided to use\x00PostgreSQL here.")
    assert units(text) == ["I prefer bold headings and plain titles.", "We decided to use PostgreSQL here."]


def test_wrapped_prose_beside_real_prose_keeps_only_the_real_prose():
    text = ("<ide_opened_file>The user opened the file db.py in the IDE.</ide_opened_file>"
            "We'll use Postgres for the orders table.")
    assert units(text) == ["We'll use Postgres for the orders table."]


def test_our_recall_block_is_removed():
    text = (f"<{BLOCK_TAG}>\n## decision\n- We decided to use Cassandra. (2026-01-02)\n"
            f"## preference\n- Never deploy on Fridays.\n</{BLOCK_TAG}>\nWe'll use Postgres for events.")
    assert BLOCK_TAG == "transcript-miner-recall"
    assert units(text) == ["We'll use Postgres for events."]


def test_private_is_removed_and_leaves_no_gap():
    text = "Please always squash commits <private>on the staging box at 10.0.0.5</private> before merging."
    assert units(text) == ["Please always squash commits before merging."]


def test_code_fences_are_removed():
    text = (
        "Here is the config:\n\n```yaml\n# We'll use Cassandra instead of Postgres\ndb: cassandra\n```\n"
        "The API listens on port 8080.\n"
        "  ~~~\n  We decided to use Cassandra.\n  ~~~\n"
        "Use `inline code` freely."
    )
    assert units(text) == ["Here is the config:", "The API listens on port 8080.", "Use `inline code` freely."]


def test_an_unclosed_fence_hides_the_rest():
    assert units("Real sentence here.\n```\nprint('We decided to use Cassandra')\n") == ["Real sentence here."]


@pytest.mark.parametrize("fenced", [
    "````markdown\n## Usage\n```sh\nmake run\n```\n````",  # a fenced block shown inside a longer fence
    "```\nprint('We decided to use Cassandra')\n`````",  # closed by a longer run
    "~~~~\nx = 1\n~~~\nstill code\n~~~~~",
])
def test_a_fence_of_more_than_three_marks_closes_at_a_run_at_least_as_long(fenced):
    """A fence of four backticks (or one closed by five) ran to the end of the turn: what followed it was lost."""
    text = f"Here is the section:\n\n{fenced}\n\nWe decided to use PostgreSQL for billing."
    assert units(text) == ["Here is the section:", "We decided to use PostgreSQL for billing."]


def test_triple_backticks_inside_a_line_are_not_a_fence():
    assert units("Wrap code in ``` marks. Then continue.") == ["Wrap code in ``` marks.", "Then continue."]


def test_comments_and_interruption_markers_are_removed():
    text = "[Request interrupted by user for tool use]Later we add caching. <!-- We decided\nto use Cassandra -->Done now."
    assert units(text) == ["Later we add caching.", "Done now."]
    assert units("[Request interrupted by user]") == []


def test_clean_prose_keeps_ordinary_angle_brackets():
    assert clean_prose("Use a <div> for layout and x < y.") == "Use a <div> for layout and x < y."


# --- how prose is cut into units -------------------------------------------------------------


def test_sentences_are_split():
    assert units("We use SQLite for caching. Tests run with pytest! Is that fine?") == [
        "We use SQLite for caching.", "Tests run with pytest!", "Is that fine?",
    ]


def test_each_line_is_split_on_its_own():
    assert units("First line without a stop\nSecond line. Third sentence.") == [
        "First line without a stop", "Second line.", "Third sentence.",
    ]


def test_list_items_table_rows_and_headings_are_units_of_their_own():
    text = (
        "## Ground rules. Read them.\n"
        "- We'll use black. It formats everything.\n"
        "* Never push to main\n"
        "+ Plus item\n"
        "• Bullet item\n"
        "1. First step\n"
        "2) Second step\n"
        "| part | choice |\n"
        "|---|:---:|\n"
        "| queue | RabbitMQ. Durable. |\n"
        "Closing sentence. Another one."
    )
    assert units(text) == [
        "## Ground rules. Read them.",
        "- We'll use black. It formats everything.",
        "* Never push to main",
        "+ Plus item",
        "• Bullet item",
        "1. First step",
        "2) Second step",
        "| part | choice |",
        "| queue | RabbitMQ. Durable. |",
        "Closing sentence.",
        "Another one.",
    ]


def test_lines_of_markup_only_are_dropped():
    assert units("---\n***\n   \n...\n|---|---|\nReal text.") == ["Real text."]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("我们决定用 PostgreSQL。以后都用 pnpm！要分页吗？先这样；最后一句",
         ["我们决定用 PostgreSQL。", "以后都用 pnpm！", "要分页吗？", "先这样；", "最后一句"]),
        ("我們決定採用 Redis。以後請用繁體中文回覆！", ["我們決定採用 Redis。", "以後請用繁體中文回覆！"]),
        ("真的吗?好的!就这样。", ["真的吗?", "好的!", "就这样。"]),
        ("他说「好。」然后走了。", ["他说「好。」然后走了。"]),  # an ender inside a quote does not end the sentence
        ("重要！！真的。", ["重要！！", "真的。"]),  # runs of enders stay together
    ],
)
def test_cjk_sentence_enders_split(text, expected):
    assert units(text) == expected


def test_cjk_list_items_are_not_split():
    assert units("- 以后都用 pnpm。不要用 npm。") == ["- 以后都用 pnpm。不要用 npm。"]


def test_over_long_units_are_dropped_and_their_neighbours_kept():
    long_sentence = "word " * (clean.MAX_UNIT_CHARS // 5 + 10) + "end."
    assert len(long_sentence) > clean.MAX_UNIT_CHARS
    assert units(f"Short first. {long_sentence} Short last.") == ["Short first.", "Short last."]
    assert units("- " + "x" * clean.MAX_UNIT_CHARS) == []
    fits = "y" * (clean.MAX_UNIT_CHARS - 1) + "."
    assert units(fits) == [fits]


def test_a_pasted_line_too_long_to_be_prose_is_dropped():
    huge = "data " * (clean.MAX_LINE_CHARS // 5 + 1000)
    assert units(f"Before it.\n{huge}\nAfter it.") == ["Before it.", "After it."]


def test_split_units_keeps_texts_apart_and_in_order():
    out = split_units(["One. Two.", "", "- item", "Three."])
    assert out == [["One.", "Two."], [], ["- item"], ["Three."]]


def test_has_cjk():
    assert has_cjk("用 pnpm")
    assert has_cjk("カタカナ")
    assert not has_cjk("plain ASCII, naïve café")


def test_turns_to_units_numbers_units_and_links_the_previous_one():
    turns = [turn("First point. It matters.", "u1"),
             turn("<system-reminder>hidden</system-reminder>", "u2"),
             turn("- A list item\nA sentence.", "u3", "assistant")]
    result = turns_to_units(turns)
    assert [(u.turn.uuid, u.index, u.text, u.previous) for u in result] == [
        ("u1", 0, "First point.", ""),
        ("u1", 1, "It matters.", "First point."),
        ("u3", 0, "- A list item", ""),
        ("u3", 1, "A sentence.", "- A list item"),
    ]
    assert result[2].turn.role == "assistant"


# --- the sentence splitter ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("We use SQLite. Tests run with pytest! Is that fine? Yes.",
         ["We use SQLite.", "Tests run with pytest!", "Is that fine?", "Yes."]),
        ("Really?! Yes. Go!!! Now.", ["Really?!", "Yes.", "Go!!!", "Now."]),
        ("Prefer managed services, e.g. RDS over EC2. Fine.", ["Prefer managed services, e.g. RDS over EC2.", "Fine."]),
        ("Use one store (i.e. SQLite) for all. Fine.", ["Use one store (i.e. SQLite) for all.", "Fine."]),
        ("Ask Mr. Smith or Dr. Jones first. Then merge.", ["Ask Mr. Smith or Dr. Jones first.", "Then merge."]),
        ("Postgres vs. MySQL is settled. We use Postgres.", ["Postgres vs. MySQL is settled.", "We use Postgres."]),
        ("Deploy at 9 a.m. every day. Not at 5 p.m. on Fridays.",
         ["Deploy at 9 a.m. every day.", "Not at 5 p.m. on Fridays."]),
        ("The servers are in the U.S. only. Fine.", ["The servers are in the U.S. only.", "Fine."]),
        ("Keep plan B. as a fallback.", ["Keep plan B. as a fallback."]),  # a lone capital: an initial
        ("Stop the API. Then the CLI.", ["Stop the API.", "Then the CLI."]),
    ],
)
def test_sentence_ends_and_abbreviations(text, expected):
    assert clean.split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Lint, test, etc. before you push.", ["Lint, test, etc. before you push."]),
        ("Lint, test, etc. Then push.", ["Lint, test, etc.", "Then push."]),
        ("See cf. the old notes for details.", ["See cf. the old notes for details."]),
    ],
)
def test_soft_abbreviations_end_a_sentence_only_before_a_capital(text, expected):
    assert clean.split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Set the ratio to 0.75 for now. Done.", ["Set the ratio to 0.75 for now.", "Done."]),
        ("Pin Python 3.11.2 and node v20.11.1 in CI. Done.", ["Pin Python 3.11.2 and node v20.11.1 in CI.", "Done."]),
        ("Settings live in config.py and .env.local files. Done.",
         ["Settings live in config.py and .env.local files.", "Done."]),
        ("Docs are at https://example.com/docs/v1.2/index.html?x=1. Read them.",
         ["Docs are at https://example.com/docs/v1.2/index.html?x=1.", "Read them."]),
        ("Mail ops@example.com. They answer.", ["Mail ops@example.com.", "They answer."]),
        ("The range is 1...10 inclusive. Fine.", ["The range is 1...10 inclusive.", "Fine."]),
        ("We stopped at version 2. Then 3 came.", ["We stopped at version 2.", "Then 3 came."]),
        ("Keep it at 100°C. Not hotter.", ["Keep it at 100°C.", "Not hotter."]),
        ("New specs go in spec/system/. See the old ones first.",
         ["New specs go in spec/system/.", "See the old ones first."]),  # a folder's slash, then the stop
    ],
)
def test_numbers_versions_files_and_urls_are_not_sentence_ends(text, expected):
    assert clean.split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Wait... then it failed. Odd.", ["Wait... then it failed.", "Odd."]),
        ("Hmm… maybe later. Fine.", ["Hmm… maybe later.", "Fine."]),
        ("Did it pass?… No.", ["Did it pass?…", "No."]),
        ('He said "use Redis." Then he left.', ['He said "use Redis."', "Then he left."]),
        ("It works (mostly.) Next one.", ["It works (mostly.)", "Next one."]),
        ("**Use pnpm.** Not npm.", ["**Use pnpm.**", "Not npm."]),
        ("Run `make test`. It passes.", ["Run `make test`.", "It passes."]),
        # An opening bracket or quote starts the next sentence (spaCy left it on the previous one).
        ("Make it bigger. (Much bigger.) Thanks.", ["Make it bigger.", "(Much bigger.)", "Thanks."]),
        ('Read Forsgren (2021). "The SPACE of Productivity." Good.',
         ["Read Forsgren (2021).", '"The SPACE of Productivity."', "Good."]),
        ("No space after the stop.Still one sentence.", ["No space after the stop.Still one sentence."]),
    ],
)
def test_ellipses_and_closing_quotes_brackets_and_emphasis(text, expected):
    assert clean.split_sentences(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Use the nullish operator (`??`) for defaults. Done.", ["Use the nullish operator (`??`) for defaults.", "Done."]),
        ("The `index_exists?` method checks it. Fine.", ["The `index_exists?` method checks it.", "Fine."]),
        ("Wait for `InitialLoadState.Complete` first. Then sync.",
         ["Wait for `InitialLoadState.Complete` first.", "Then sync."]),
        ("Wrap code in ``` marks. Then continue.", ["Wrap code in ``` marks.", "Then continue."]),
    ],
)
def test_enders_inside_inline_code_do_not_split(text, expected):
    assert clean.split_sentences(text) == expected


def test_a_long_line_of_code_spans_and_enders_splits_at_every_ender_outside_the_code():
    """Each ender was checked against every code span of the line: a pasted line of thousands of both took seconds
    (measured: 7,000 of each, 2.4 s before, 14 ms after). The spans are looked up in order now; what splits is the
    same."""
    line = "Run `a. b` then `c? d` now. " * 3000 + "And `e.` last"
    assert clean.split_sentences(line) == ["Run `a. b` then `c? d` now."] * 3000 + ["And `e.` last"]


def test_a_line_without_enders_is_one_sentence():
    assert clean.split_sentences("  just some words  ") == ["just some words"]
    assert clean.split_sentences("") == []


def test_cjk_lines_split_on_ascii_stops_between_cjk():
    assert units("不影响移动端.列出受影响的页面。") == ["不影响移动端.", "列出受影响的页面。"]


def test_list_items_are_not_sentence_split():
    assert units("- Use e.g. Redis. Keep it.\n1. First. Second.") == ["- Use e.g. Redis. Keep it.", "1. First. Second."]


@pytest.fixture(scope="module")
def sentencizer():
    """spaCy's blank English sentencizer, which split sentences here before `split_sentences`."""
    spacy = pytest.importorskip("spacy")
    nlp = spacy.blank("en")
    nlp.add_pipe("sentencizer")
    return nlp


@pytest.mark.parametrize(
    "text",
    [
        "We decided to use Postgres for the orders table. It has better JSON support.",
        "Please always run the tests before you commit! Otherwise CI fails.",
        "Should we cache the results? I think so. Let's use Redis.",
        "The build takes 3.5 minutes on CI. It used to take 10.",
        "Use Python 3.12 with uv, e.g. uv pip install. Then run pytest.",
        "I moved the config to settings.yaml. The old file config.py is gone.",
        "Ship it at 10 a.m. tomorrow. The U.S. team will review.",
        "Hmm... that is odd. Really?! Yes.",
        'He wrote "done." Then he left.',
    ],
)
def test_ordinary_prose_splits_as_spacys_sentencizer_did(sentencizer, text):
    assert clean.split_sentences(text) == [s.text.strip() for s in sentencizer(text).sents]


@pytest.mark.parametrize("text,expected", [
    ("The backup must fetch every case\nand write them to one file.", ["The backup must fetch every case and write them to one file."]),
    ("- an item that wraps\n  onto the next line\n- next item", ["- an item that wraps onto the next line", "- next item"]),
    ("A sentence that ends.\nthen a lower-case line", ["A sentence that ends.", "then a lower-case line"]),
    ("Short heading line\nAnother line in capitals", ["Short heading line", "Another line in capitals"]),
    ("## Heading\nlower-case text under it", ["## Heading", "lower-case text under it"]),
    ("- an item\nnot indented, so a paragraph of its own", ["- an item", "not indented, so a paragraph of its own"]),
    ("Use the flags below:\nnone of them is required", ["Use the flags below:", "none of them is required"]),
])
def test_hard_wrapped_lines_are_joined(text, expected):
    assert split_units([text]) == [expected]


def test_a_private_nested_in_a_private_does_not_end_it():
    text = ("Keep the exports nightly <private>first <Private>second</private> the vault code is 4417</private> "
            "and compress them.")
    assert units(text) == ["Keep the exports nightly and compress them."]


def test_a_private_never_closed_hides_the_rest_even_past_a_nested_one():
    assert units("We bill in euros. <private>note <private>x</private> the vault code is 4417") == ["We bill in euros."]


def test_a_closing_tag_outside_any_private_is_text_and_another_wrapper_inside_does_not_end_it():
    assert drop_wrappers("a </private> b") == "a </private> b"
    assert drop_wrappers("a <private>b <system-reminder>c</system-reminder> d</private> e") == "a   e"
    assert drop_wrappers("a <private>b</private > c</private> e") == "a   e"  # `</private >` is no closing tag


def test_an_agent_teams_message_in_a_prompt_is_not_the_users_words():
    text = ('Go on.\n<teammate-message teammate_id="lead">\nWe decided to use Cassandra.\n</teammate-message>\n'
            "We'll keep Postgres for the orders.")
    assert units(text) == ["Go on.", "We'll keep Postgres for the orders."]


def test_a_background_shells_report_in_a_prompt_is_not_the_users_words():
    text = ("<bash-notification>\n<shell-id>b2</shell-id>\n<summary>We decided to use Cassandra.</summary>\n"
            "</bash-notification>\nWe'll keep Postgres for the orders.")
    assert units(text) == ["We'll keep Postgres for the orders."]


@pytest.mark.parametrize(("typed", "kept"), [
    ("We decided to use \x1b[1mTraefik\x1b[0m as the edge proxy.", "We decided to use Traefik as the edge proxy."),
    ("We decided to use\x07Envoy\x0bfor the mesh.", "We decided to use Envoy for the mesh."),
    ("Moved\x07 on \x1b]0;pwned\x07to Redis.", "Moved on to Redis."),
    ("First line\n\tsecond line", "First line\n\tsecond line"),
])
def test_a_text_typed_by_hand_loses_escape_sequences_whole_and_no_words_are_glued(typed, kept):
    """A memory stored through MCP or a correction lost each control character alone: "[1mTraefik[0m" and
    "useEnvoyfor" were stored, where mining the same words stores them clean."""
    assert clean.typed_text(typed) == kept


def test_devanagari_arabic_and_urdu_sentence_ends_split_units():
    """A Hindi turn of three statements was one unit: the later change of one could not close it alone."""
    from miner.extract.clean import split_sentences

    assert split_sentences("हम PDF के लिए ReportLab इस्तेमाल करेंगे। और GST की गणना अलग मॉड्यूल में होगी।") == [
        "हम PDF के लिए ReportLab इस्तेमाल करेंगे।", "और GST की गणना अलग मॉड्यूल में होगी।"]
    assert split_sentences("هل نستخدم Vue؟ نعم، سنستخدم Vue للواجهة.") == ["هل نستخدم Vue؟", "نعم، سنستخدم Vue للواجهة."]
