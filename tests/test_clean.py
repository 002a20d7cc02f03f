"""The cleaner: what is removed from prose, and how prose is cut into units."""

from __future__ import annotations

import pytest

from miner import clean
from miner.clean import BLOCK_TAG, WRAPPER_TAGS, clean_prose, has_cjk, split_units, turns_to_units
from miner.model import Turn


@pytest.fixture(scope="module")
def nlp(pipeline):
    return pipeline.nlp


def units(nlp, text: str) -> list[str]:
    """The units of one piece of prose, cleaned first, as the miner sees them."""
    return split_units(nlp, [clean_prose(text)])[0]


def turn(text: str, uuid: str = "u1", role: str = "user") -> Turn:
    return Turn(uuid=uuid, session_id="s", role=role, text=text, ts="", cwd="", git_branch="", is_sidechain=False,
                transcript="t.jsonl")


# --- what is removed ---------------------------------------------------------------------------


@pytest.mark.parametrize("tag", WRAPPER_TAGS)
def test_every_wrapper_and_its_content_is_removed(nlp, tag):
    text = f"Before the tag. <{tag}>We decided to use Cassandra.</{tag}> After the tag."
    assert units(nlp, text) == ["Before the tag.", "After the tag."]


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
def test_a_prompt_that_is_only_a_wrapper_yields_no_unit(nlp, text):
    assert units(nlp, text) == []


def test_wrappers_with_attributes_and_any_case_are_removed(nlp):
    text = '<system-reminder kind="hook">hidden one</system-reminder>Shown here. <System-Reminder>hidden two</System-Reminder>'
    assert units(nlp, text) == ["Shown here."]


def test_an_unclosed_wrapper_hides_everything_after_it(nlp):
    # Safer to lose the tail of a prompt than to mine a wrapper's content.
    assert units(nlp, "Visible part. <private>my password is hunter2 and more") == ["Visible part."]


def test_wrapped_prose_beside_real_prose_keeps_only_the_real_prose(nlp):
    text = ("<ide_opened_file>The user opened the file db.py in the IDE.</ide_opened_file>"
            "We'll use Postgres for the orders table.")
    assert units(nlp, text) == ["We'll use Postgres for the orders table."]


def test_our_recall_block_is_removed(nlp):
    text = (f"<{BLOCK_TAG}>\n## decision\n- We decided to use Cassandra. (2026-01-02)\n"
            f"## preference\n- Never deploy on Fridays.\n</{BLOCK_TAG}>\nWe'll use Postgres for events.")
    assert BLOCK_TAG == "transcript-miner-recall"
    assert units(nlp, text) == ["We'll use Postgres for events."]


def test_private_is_removed_and_leaves_no_gap(nlp):
    text = "Please always squash commits <private>on the staging box at 10.0.0.5</private> before merging."
    assert units(nlp, text) == ["Please always squash commits before merging."]


def test_code_fences_are_removed(nlp):
    text = (
        "Here is the config:\n\n```yaml\n# We'll use Cassandra instead of Postgres\ndb: cassandra\n```\n"
        "The API listens on port 8080.\n"
        "  ~~~\n  We decided to use Cassandra.\n  ~~~\n"
        "Use `inline code` freely."
    )
    assert units(nlp, text) == ["Here is the config:", "The API listens on port 8080.", "Use `inline code` freely."]


def test_an_unclosed_fence_hides_the_rest(nlp):
    assert units(nlp, "Real sentence here.\n```\nprint('We decided to use Cassandra')\n") == ["Real sentence here."]


def test_triple_backticks_inside_a_line_are_not_a_fence(nlp):
    assert units(nlp, "Wrap code in ``` marks. Then continue.") == ["Wrap code in ``` marks.", "Then continue."]


def test_comments_and_interruption_markers_are_removed(nlp):
    text = "[Request interrupted by user for tool use]Later we add caching. <!-- We decided\nto use Cassandra -->Done now."
    assert units(nlp, text) == ["Later we add caching.", "Done now."]
    assert units(nlp, "[Request interrupted by user]") == []


def test_clean_prose_keeps_ordinary_angle_brackets():
    assert clean_prose("Use a <div> for layout and x < y.") == "Use a <div> for layout and x < y."


# --- how prose is cut into units -------------------------------------------------------------


def test_sentences_are_split(nlp):
    assert units(nlp, "We use SQLite for caching. Tests run with pytest! Is that fine?") == [
        "We use SQLite for caching.", "Tests run with pytest!", "Is that fine?",
    ]


def test_each_line_is_split_on_its_own(nlp):
    assert units(nlp, "First line without a stop\nSecond line. Third sentence.") == [
        "First line without a stop", "Second line.", "Third sentence.",
    ]


def test_list_items_table_rows_and_headings_are_units_of_their_own(nlp):
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
    assert units(nlp, text) == [
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


def test_lines_of_markup_only_are_dropped(nlp):
    assert units(nlp, "---\n***\n   \n...\n|---|---|\nReal text.") == ["Real text."]


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
def test_cjk_sentence_enders_split(nlp, text, expected):
    assert units(nlp, text) == expected


def test_cjk_list_items_are_not_split(nlp):
    assert units(nlp, "- 以后都用 pnpm。不要用 npm。") == ["- 以后都用 pnpm。不要用 npm。"]


def test_over_long_units_are_dropped_and_their_neighbours_kept(nlp):
    long_sentence = "word " * (clean.MAX_UNIT_CHARS // 5 + 10) + "end."
    assert len(long_sentence) > clean.MAX_UNIT_CHARS
    assert units(nlp, f"Short first. {long_sentence} Short last.") == ["Short first.", "Short last."]
    assert units(nlp, "- " + "x" * clean.MAX_UNIT_CHARS) == []
    fits = "y" * (clean.MAX_UNIT_CHARS - 1) + "."
    assert units(nlp, fits) == [fits]


def test_a_line_too_long_for_spacy_is_dropped_without_error(nlp):
    # spaCy raises on texts over nlp.max_length; one pasted line must not stop mining the transcript.
    huge = "data " * (nlp.max_length // 5 + 1000)
    assert len(huge) > nlp.max_length
    assert units(nlp, f"Before it.\n{huge}\nAfter it.") == ["Before it.", "After it."]


def test_split_units_keeps_texts_apart_and_in_order(nlp):
    out = split_units(nlp, ["One. Two.", "", "- item", "Three."])
    assert out == [["One.", "Two."], [], ["- item"], ["Three."]]


def test_has_cjk():
    assert has_cjk("用 pnpm")
    assert has_cjk("カタカナ")
    assert not has_cjk("plain ASCII, naïve café")


def test_turns_to_units_numbers_units_and_links_the_previous_one(nlp):
    turns = [turn("First point. It matters.", "u1"),
             turn("<system-reminder>hidden</system-reminder>", "u2"),
             turn("- A list item\nA sentence.", "u3", "assistant")]
    result = turns_to_units(nlp, turns)
    assert [(u.turn.uuid, u.index, u.text, u.previous) for u in result] == [
        ("u1", 0, "First point.", ""),
        ("u1", 1, "It matters.", "First point."),
        ("u3", 0, "- A list item", ""),
        ("u3", 1, "A sentence.", "- A list item"),
    ]
    assert result[2].turn.role == "assistant"
