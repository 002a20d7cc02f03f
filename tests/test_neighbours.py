"""A question asked on demand also finds what was said around its best matches, in their own session."""

from __future__ import annotations

from builders import new_memory

from miner import config as config_mod
from miner.recall.block import build
from miner.recall.rank import rank

CONFIG = config_mod.load()
OFF = config_mod.changed(CONFIG, query_neighbours=0)


def add(store, text, n, **fields):
    with store.atomic():
        return store.add_memory(new_memory(text, n, **fields))[0]


def conversation(store) -> dict[str, int]:
    """A question that names the topic, the answer that does not, and what else was said."""
    ids = {
        "before": add(store, "The dashboards load slowly on Mondays.", 1, category="fact"),
        "question": add(store, "Which database should the reporting service use?", 2, category="fact"),
        "answer": add(store, "Postgres, with a read replica for the dashboards.", 3, role="assistant"),
        "later": add(store, "The nightly export runs at two in the morning.", 4, category="fact"),
        "elsewhere": add(store, "We ship the mobile app every other Friday.", 5, session_id="s2"),
    }
    for n in range(6, 30):  # enough of the project that a memory not matched sinks below the top
        add(store, f"Component c{n} keeps its own settings file number {n}.", n, session_id="s3", category="fact")
    return ids


def test_the_answer_said_next_to_the_question_is_found(store):
    ids = conversation(store)
    ranked = [i.memory.id for i in rank(store, "/p", CONFIG, "reporting service database", asked=True)]
    assert ranked[0] == ids["question"]
    assert ranked.index(ids["answer"]) < 3
    without = rank(store, "/p", OFF, "reporting service database", asked=True)
    assert [i for i in without if i.memory.id == ids["answer"]][0].parts["relevance"] == 0.0
    assert [i.memory.id for i in without].index(ids["answer"]) > 5


def test_neighbours_are_weighed_by_their_distance_and_stay_in_their_session(store):
    ids = conversation(store)
    near = store.neighbours([ids["question"]], "/p", 3)[ids["question"]]
    assert near == [(ids["before"], 1), (ids["answer"], 1), (ids["later"], 2)]  # s2 and s3 are other sessions
    ranked = {i.memory.id: i.parts["relevance"] for i in rank(store, "/p", CONFIG, "reporting service database",
                                                                asked=True)}
    assert ranked[ids["answer"]] > ranked[ids["later"]] > 0.0  # one step away outweighs two
    assert ranked[ids["elsewhere"]] == 0.0


def test_a_closed_or_foreign_memory_is_no_ones_neighbour(store):
    ids = conversation(store)
    add(store, "Billing lives in another project entirely.", 40, project="/q")  # same session id, other project
    with store.atomic():
        store.set_state(ids["answer"], "forgotten", "by hand")
    near = dict(store.neighbours([ids["question"]], "/p", 2)[ids["question"]])
    assert ids["answer"] not in near
    assert set(near) == {ids["before"], ids["later"]}
    assert all(store.get(i).project == "/p" for i in near)


def test_only_a_question_asked_weighs_neighbours(store):
    """The startup and resume blocks rank as before: neighbours are for questions asked on demand."""
    conversation(store)
    for situation in ("startup", "resume"):
        on = build(store, "/p", CONFIG, situation=situation, log=False)
        off = build(store, "/p", OFF, situation=situation, log=False)
        assert on.text == off.text
    asked = build(store, "/p", CONFIG, situation="query", query="reporting service database", log=False)
    assert "read replica" in asked.text
