"""The glossary: a prompt in one language finds what earlier sessions said in another.

The lookup is compiled by the miner from YAML (`glossary.refresh`) into a
small SQLite file, and read by the prompt hook without PyYAML. The end-to-end tests mine synthetic sessions
held in Chinese, Korean and Spanish for real, then run the hook as Claude Code
does, with an English prompt on stdin.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from builders import Session
from click.testing import CliRunner
from test_prompt_recall import ask, context_of, prompt_payload

from miner import config as config_mod
from miner import paths
from miner.cli import main
from miner.memory.lexicon import SynonymError, read_synonym_file
from miner.memory.store import Store
from miner.recall import glossary
from miner.recall.prompt import query_terms
from miner.runtime.mine import Miner
from miner.textutil import META_WORDS, STOPWORDS, cyrillic_stem, fts_any, prefix_term

SMALL = """version: 1
groups:
  - [database, 数据库, 데이터베이스, base de datos]
  - [delete, 删除, eliminar]
  - [front end, frontend, 前端]
"""


def compiled(tmp_path, text: str = SMALL) -> Path:
    path = tmp_path / "glossary.yaml"
    path.write_text(text, encoding="utf-8")
    assert glossary.refresh([path]) is True
    return path


def forms(prompt: str) -> dict[str, set[str]]:
    """Per term of the prompt that names a group, the words of the group it adds."""
    return {term: {member[0] for member in members}
            for term, members in glossary.expand(prompt, query_terms(prompt)).items()}


def test_an_english_word_brings_its_translations(tmp_path):
    compiled(tmp_path)
    assert forms("Which database did we pick?") == {"database": {"数据库", "데이터베이스", "base de datos"}}
    # Plural and verb forms of an English word are looked up too.
    assert forms("Which databases hold it?")["databases"] >= {"数据库"}
    assert forms("What got deleted last week?")["deleted"] == {"delete", "删除", "eliminar"}


def test_phrases_and_words_without_spaces_are_found_in_the_text(tmp_path):
    compiled(tmp_path)
    assert forms("¿Qué base de datos usamos?")["base"] >= {"database", "数据库", "데이터베이스"}
    assert "base" not in forms("datos de base")  # the words of a phrase, out of order, are not the phrase
    assert forms("发票存在哪个数据库")["数据"] >= {"database", "데이터베이스", "base de datos"}
    # Korean writes particles onto the word: 데이터베이스를 still names it.
    assert "database" in forms("데이터베이스를 바꿨나요?")["데이"]
    assert forms("Who owns the front-end?")["front"] == {"frontend", "前端"}


def test_without_a_compiled_lookup_a_prompt_keeps_its_own_words(tmp_path):
    assert not Path(glossary.cache_file()).exists()
    assert glossary.expand("Which database did we pick?", ["database", "pick"]) == {}
    compiled(tmp_path)
    Path(glossary.cache_file()).write_text("not a database", encoding="utf-8")
    assert glossary.expand("Which database did we pick?", ["database", "pick"]) == {}


def test_the_lookup_is_compiled_again_only_when_a_file_changed(tmp_path):
    path = compiled(tmp_path)
    assert glossary.refresh([path]) is False
    path.write_text(SMALL + "  - [button, 按钮]\n", encoding="utf-8")
    assert glossary.refresh([path]) is True
    assert forms("Where is the button?") == {"button": {"按钮"}}


def test_the_users_glossary_extends_the_shipped_one(tmp_path):
    user = paths.config_dir() / "glossary.yaml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("version: 1\ngroups:\n  - [invoice run, 账单批处理]\n", encoding="utf-8")
    assert user in glossary.default_files()
    assert glossary.refresh() is True
    assert "账单批处理" in forms("When does the invoice run start?")["invoice"]
    assert "数据库" in forms("Which database?")["database"]  # the shipped groups stay


def test_a_broken_file_is_named_and_the_last_lookup_stays(tmp_path):
    path = compiled(tmp_path)
    path.write_text("version: 1\ngroups:\n  - [database, 数据库\n", encoding="utf-8")
    with pytest.raises(SynonymError, match=re.escape(f"{path}:4: not valid YAML")):
        glossary.refresh([path])
    assert forms("Which database did we pick?")["database"] >= {"数据库"}  # what the hooks read is unchanged
    user = paths.config_dir() / "glossary.yaml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("groups: [[]]\n", encoding="utf-8")
    assert glossary.refresh_quietly() == f"{user}: group 1 must be a non-empty list of words"


def test_a_broken_file_of_the_users_before_any_lookup_leaves_the_shipped_words_in(tmp_path):
    """With no lookup compiled yet (a first run, an upgrade), a mistake in the user's glossary left the prompt hook
    without the shipped words too; it is named at each refresh until fixed, and then compiled in."""
    user = paths.config_dir() / "glossary.yaml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("version: 1\ngroups:\n  - [invoice run, 账单批处理\n", encoding="utf-8")
    assert not Path(glossary.cache_file()).exists()
    for _ in range(2):  # said again by the next miner (and `miner doctor`), not only by the first
        with pytest.raises(SynonymError, match=re.escape(f"{user}:4: not valid YAML")):
            glossary.refresh()
        assert "数据库" in forms("Which database?")["database"]
    assert "账单批处理" not in forms("When does the invoice run start?")["invoice"]
    user.write_text("version: 1\ngroups:\n  - [invoice run, 账单批处理]\n", encoding="utf-8")
    assert glossary.refresh() is True
    assert "账单批处理" in forms("When does the invoice run start?")["invoice"]
    assert "数据库" in forms("Which database?")["database"]


def test_the_shipped_glossary_is_well_formed():
    shipped = next(f for f in glossary.default_files() if f.name == "glossary.yaml")
    groups = read_synonym_file(shipped)
    assert len(groups) >= 200
    heads = [group[0] for group in groups]
    assert len(heads) == len(set(heads)), "an English word heads two groups"
    for group in groups:
        assert len(group) >= 2, group
        assert group[0].isascii() and group[0] == group[0].lower(), group
    # A word every prompt uses would bring its group into every search: the compiled lookup leaves it out.
    compiled_groups = glossary.compile_groups(groups)
    searched = {phrase for members in compiled_groups["groups"] for phrase, _, _ in members}
    assert {"project", "user", "decided"} & {m for group in groups for m in group}  # the file has some
    assert not searched & (STOPWORDS | META_WORDS)
    assert not set(compiled_groups["words"]) & (STOPWORDS | META_WORDS)


def mined_project(tmp_path, claude_dir, pipeline, sessions: list[tuple[str, list[tuple[str, str]]]]) -> Path:
    """A project whose sessions (start, [(role, text), …]) are written and mined for real, in order, into the store
    the hooks read; returns its folder."""
    cwd = tmp_path / "work" / "shop"
    cwd.mkdir(parents=True)
    folder = claude_dir / "projects" / paths.encode_project(str(cwd))
    with Store() as store:
        miner = Miner(store, config_mod.load(), pipeline=pipeline)
        for n, (start, said) in enumerate(sessions):
            session = Session(folder / f"s{n}.jsonl", str(cwd), session_id=f"s{n}", start=start)
            for role, text in said:
                (session.user if role == "user" else session.assistant)(text)
            miner.mine_file(session.path)
    return cwd


@pytest.fixture
def project(tmp_path, claude_dir, pipeline) -> Path:
    """Earlier sessions held in Chinese, Korean and Spanish, mined for real into the store the hooks read."""
    said = [("我们决定用 PostgreSQL 作为数据库，订单表按月分区。", "2026-05-01T09:00:00"),
            ("배포는 항상 금요일 오전에 스테이징 서버에서 먼저 합니다.", "2026-05-02T09:00:00"),
            ("El botón de pago debe ser verde y grande en el móvil.", "2026-05-03T09:00:00")]
    return mined_project(tmp_path, claude_dir, pipeline,
                         [(start, [("user", text), ("assistant", "Understood.")]) for text, start in said])


@pytest.mark.parametrize("prompt, answer", [
    ("Which database did we choose?", "PostgreSQL"),
    ("When do we deploy, and to which server first?", "스테이징 서버"),
    ("What colour and size should the payment button be?", "verde y grande"),
])
def test_an_english_prompt_finds_what_was_said_in_another_language(project, prompt, answer):
    assert Path(glossary.cache_file()).is_file()  # the miner compiled it as it started
    assert answer in context_of(ask(prompt_payload(project, prompt)))
    os.remove(glossary.cache_file())
    assert answer not in context_of(ask(prompt_payload(project, prompt, session_id="no-glossary")))


def test_the_compiled_lookup_names_its_sources(project):
    from miner.memory import glossary_db

    db = glossary_db.open_lookup(glossary.cache_file())
    try:
        meta = glossary_db.meta(db)
    finally:
        db.close()
    assert meta["version"] == glossary.VERSION
    assert [Path(source[0]).name for source in json.loads(meta["sources"])] == ["glossary.yaml", "synonyms.yaml"]


@pytest.mark.parametrize("query, answer", [("database", "PostgreSQL"), ("server", "스테이징 서버")])
def test_miner_search_finds_what_was_said_in_another_language(project, query, answer):
    runner = CliRunner()
    found = runner.invoke(main, ["search", query])
    assert found.exit_code == 0, found.output
    note, *lines = found.output.splitlines()
    assert note.startswith("(also searched for, from the glossary: ") and note.endswith(")")
    added = note[len("(also searched for, from the glossary: "):-1].split(", ")
    assert added and query not in added  # the words it searched for besides the query's, not the query again
    assert answer in found.output
    assert query not in "\n".join(lines).lower()  # what matched is the glossary's word for it, not the query's own
    memories = runner.invoke(main, ["search", query, "--no-archive"]).output
    assert answer in memories
    nothing = runner.invoke(main, ["search", "zeppelin"]).output
    assert "No memories match." in nothing and "glossary" not in nothing  # a word the glossary does not know


@pytest.fixture
def russian_project(tmp_path, claude_dir, pipeline) -> Path:
    """An earlier session held in Russian, whose words are inflected as the sentence needs them."""
    return mined_project(tmp_path, claude_dir, pipeline, [("2026-05-01T09:00:00", [
        ("user", "Логи приложения пишем в файлы в папке var/log/shop, ротация раз в неделю."),
        ("assistant", "Понял."),
        ("user", "Резервные копии базы данных делаем каждую ночь в 03:30."),
        ("assistant", "Хорошо, настроил."),
    ])])


@pytest.mark.parametrize("prompt, answer", [
    ("Which folder do the logs go to?", "var/log/shop"),  # folder: папка, said "в папке"
    ("Какая папка для логов?", "var/log/shop"),  # папка / в папке, логов / логи
    ("When does the database backup run?", "03:30"),  # резервная копия / резервные копии, база / базы
    ("Во сколько делается резервная копия базы?", "03:30"),
])
def test_a_russian_word_is_found_in_its_other_forms(russian_project, prompt, answer):
    said = "логи приложения пишем в файлы в папке резервные копии базы данных делаем каждую ночь"
    assert not {"папка", "логов", "копия", "резервная"} & set(said.split())  # the prompts' forms are not the text's
    assert answer in context_of(ask(prompt_payload(russian_project, prompt, session_id=f"s-{hash(prompt)}")))


def test_nothing_relevant_in_russian_prints_nothing(russian_project):
    assert context_of(ask(prompt_payload(russian_project, "Какой цвет у кнопки оплаты?"))) == ""


@pytest.mark.parametrize("word, stem", [
    ("база", "баз"), ("базу", "баз"), ("базы", "баз"), ("папке", "папк"), ("папка", "папк"), ("файл", "файл"),
    ("файлов", "файл"), ("используем", "использ"), ("использовать", "использ"), ("настроились", "настро"),
    ("код", "код"), ("postgres", "postgres"), ("café", "café"),
])
def test_a_cyrillic_word_loses_its_ending(word, stem):
    assert cyrillic_stem(word) == stem


def test_a_stem_searches_every_word_it_begins():
    assert prefix_term("папке") == "папк*" and prefix_term("код") == "код" and prefix_term("backups") == "backups"
    assert fts_any([["папк*", "данн*"], ["logs"]]) == '("папк"* AND "данн"*) OR "logs"'
    assert fts_any([["*"], ['a"b']]) == '"*" OR "a""b"'  # only a stem is a prefix; quotes stay quoted


def test_miner_search_and_recall_find_a_russian_word_in_its_other_forms(russian_project):
    runner = CliRunner()
    found = runner.invoke(main, ["search", "папка"])
    assert found.exit_code == 0, found.output
    assert "var/log/shop" in found.output
    assert "var/log/shop" in runner.invoke(main, ["search", "папка", "--no-archive"]).output
    with Store() as store:  # what `miner recall QUERY` ranks by
        relevant = store.relevant("резервная копия", str(russian_project))
        assert [m.text for m in store.memories_by_id(relevant)] == \
            ["Резервные копии базы данных делаем каждую ночь в 03:30."]


def test_a_word_the_user_adds_to_a_shipped_group_finds_the_group_and_is_found_by_it(tmp_path):
    """A user's group that shares a word with a shipped one was compiled as a group of its own: the shipped
    group's words found the user's word, but the user's word found only the shared one."""
    user = paths.config_dir() / "glossary.yaml"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text("version: 1\ngroups:\n  - [database, bdd]\n  - [fila, filament]\n", encoding="utf-8")
    assert glossary.refresh() is True
    assert forms("Which bdd did we pick?")["bdd"] >= {"database", "数据库", "base de datos"}
    assert "bdd" in forms("Which database did we pick?")["database"]
    # A word of two senses in the shipped groups ("fila": a row, a queue) joins the user's word to both, but
    # does not join the shipped groups to each other.
    assert "filament" in forms("Which queue?")["queue"] and "filament" in forms("Which row?")["row"]
    assert "queue" not in forms("Which row?")["row"]


def test_the_users_groups_that_share_a_word_join_as_one_and_a_folder_written_otherwise_is_still_theirs(
        tmp_path, monkeypatch):
    """A user's synonym of a word the user had added to a shipped group found only that word; and with
    XDG_CONFIG_HOME written with a doubled slash the user's files were taken for shipped ones."""
    monkeypatch.setenv("XDG_CONFIG_HOME", os.environ["XDG_CONFIG_HOME"].replace("/.config", "//.config"))
    folder = paths.config_dir()
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "glossary.yaml").write_text("version: 1\ngroups:\n  - [database, bdd]\n", encoding="utf-8")
    (folder / "synonyms.yaml").write_text("groups:\n  - [bdd, banque de donnees]\n", encoding="utf-8")
    assert glossary.refresh() is True
    assert forms("Which banque de donnees?")["banque"] >= {"database", "bdd", "数据库"}
    assert "banque de donnees" in forms("Which database?")["database"]
