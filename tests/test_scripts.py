"""Words of every script: tokens, keywords and FTS5 terms, and finding them again through a real store."""

from __future__ import annotations

import random
import subprocess
import sys
import unicodedata

import pytest

from miner import textutil
from miner.memory.records import NewMemory
from miner.textutil import char_bigrams, fts_match, fts_terms, index_text, keywords, word_count, word_tokens
from tests.conftest import REPO

# --- tokens -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text,expected", [
    ("El carácter de escape", ["el", "carácter", "de", "escape"]),  # an accent no longer splits a word
    ("Ошибка в ПАРСЕРЕ", ["ошибка", "в", "парсере"]),
    ("Η βάση δεδομένων", ["η", "βάση", "δεδομένων"]),
    ("Die Straße über der Brücke", ["die", "straße", "über", "der", "brücke"]),
    ("Używamy łączności", ["używamy", "łączności"]),
    ("नमस्ते दुनिया", ["नमस्ते", "दुनिया"]),  # vowel signs and viramas stay inside the word
    ("שלום עולם", ["שלום", "עולם"]),
    ("Ἀθῆναι ćevapi", ["ἀθῆναι", "ćevapi"]),
    ("Ժամանակ ქართული", ["ժամանակ", "ქართული"]),  # Armenian, Georgian
])
def test_words_of_any_script_written_with_spaces(text, expected):
    assert word_tokens(text) == expected


@pytest.mark.parametrize("text,expected", [
    ("Run src/main.rs with v1.2.3 and user@host:22", ["run", "src/main.rs", "with", "v1.2.3", "and", "user@host:22"]),
    ("Open __init__.py, then -flag and c++.", ["open", "init__.py", "then", "flag", "and", "c"]),
    ("Файл src/конфиг.yaml и версия 2.4.1", ["файл", "src/конфиг.yaml", "и", "версия", "2.4.1"]),
    ("snake_case_name stays whole: über_alles", ["snake_case_name", "stays", "whole", "über_alles"]),
])
def test_identifiers_paths_and_versions_stay_whole(text, expected):
    assert word_tokens(text) == expected


def test_a_decomposed_accent_gives_the_same_word_as_a_composed_one():
    composed = "Configuración del carácter"
    decomposed = unicodedata.normalize("NFD", composed)
    assert decomposed != composed
    assert word_tokens(decomposed) == word_tokens(composed) == ["configuración", "del", "carácter"]
    assert keywords(decomposed) == keywords(composed)


def test_arabic_and_hebrew_vowel_points_are_optional():
    """Writers leave the points out at will: a pointed and a bare word are one keyword."""
    assert word_tokens("مَرْحَبًا بِالعَالَم") == word_tokens("مرحبا بالعالم") == ["مرحبا", "بالعالم"]
    assert word_tokens("שָׁלוֹם") == word_tokens("שלום")


@pytest.mark.parametrize("text,expected", [
    ("数据库", ["数据", "据库"]),  # CJK as before
    ("用", ["用"]),  # a lone CJK character stays whole
    ("ข้อมูล", ["ขอ", "อม", "มล"]),  # Thai: marks dropped, consonant pairs
    ("ຂໍ້ມູນ", ["ຂມ", "ມນ"]),  # Lao
    ("ទិន្នន័យ", ["ទន", "នន", "នន", "នយ"]),  # Khmer
    ("ဒေတာ", ["ဒတ"]),  # Myanmar
    ("데이터는", ["데이", "이터", "터는"]),  # Hangul: pairs besides the word
])
def test_scripts_written_without_spaces_become_character_bigrams(text, expected):
    assert char_bigrams(text) == expected


def test_no_space_scripts_give_no_word_tokens_but_hangul_keeps_its_words():
    assert word_tokens("เราใช้ฐานข้อมูล PostgreSQL 数据库用 MySQL") == ["postgresql", "mysql"]
    assert word_tokens("데이터베이스는 PostgreSQL") == ["데이터베이스는", "postgresql"]
    assert "데이터베이스는" in keywords("데이터베이스는 PostgreSQL") and "데이" in keywords("데이터베이스는 PostgreSQL")


def test_a_mixed_line_gets_words_and_bigrams_of_each_script():
    found = keywords("Кэш: Redis; 缓存用 Redis; แคช Redis; 캐시는 Redis")
    assert found[:3] == ["кэш", "redis", "캐시는"]
    assert {"缓存", "存用", "แค", "คช", "캐시", "시는"} <= set(found)


def test_stopwords_of_other_languages_are_no_keywords():
    assert keywords("Для кэша мы используем Redis") == ["кэша", "используем", "redis"]
    assert keywords("Usamos Redis para la caché de las sesiones") == ["usamos", "redis", "caché", "sesiones"]
    # ... but words that are also English or code stay: "die", "mit", "os", language codes.
    assert keywords("MIT licence, the os module, the es and en locales") == [
        "mit", "licence", "os", "module", "es", "en", "locales"]


def test_ascii_text_tokenizes_as_before():
    """English and code: the Unicode-aware pattern gives what the ASCII one gave."""
    text = ("Pin node 20.11.1 in .nvmrc, run `src/build.py --fast` and keep __init__.py; "
            "set API_KEY_NAME=x for user@example.com:8080 (c++ and c# too) at v2.0.0-rc.1.")
    assert word_tokens(text) == [
        "pin", "node", "20.11.1", "in", "nvmrc", "run", "src/build.py", "fast", "and", "keep", "init__.py", "set",
        "api_key_name", "x", "for", "user@example.com:8080", "c", "and", "c", "too", "at", "v2.0.0-rc.1"]
    assert fts_terms(text)[:8] == ["pin", "node", "20", "11", "nvmrc", "run", "src", "build"]


# --- FTS5 terms ---------------------------------------------------------------------------------------


def test_fts_terms_are_what_the_unicode61_tokenizer_makes_of_them():
    """Latin accents go (`remove_diacritics 2`), so a term can be looked up in the index's vocabulary;
    Cyrillic and Greek letters with marks are other letters to the tokenizer and stay."""
    assert fts_terms("carácter Straße naïve") == ["caracter", "straße", "naive"]
    assert fts_terms("Ёлка йод") == ["ёлка", "йод"]
    assert fts_terms("src/конфиг.yaml") == ["src", "конфиг", "yaml"]


ASCII_PIECES = ["the", "use-case", "a.b", "x__y", "v1.2.3", "foo/bar@baz:qux+1", "don't", "_init_", "OK", "API",
                "snake_case_name", "e.g.", "i'm", "C++", "--flag=value", "x", "  ", "\t", "#42", "$HOME/.cfg"]


@pytest.mark.parametrize("seed", range(4))
def test_the_ascii_terms_are_what_the_word_pattern_finds(seed):
    """ASCII text takes a path without `re` (the prompt hook's): the same terms, in the same order, as the word
    pattern and its pieces give, on words of code and prose and on random characters."""
    import string

    rng = random.Random(seed)
    chars = string.ascii_letters + string.digits + string.punctuation + " \t\n"
    for _ in range(2000):
        if rng.random() < 0.5:
            text = "".join(rng.choice(chars) for _ in range(rng.randint(0, 80)))
        else:
            text = " ".join(rng.choice(ASCII_PIECES) + rng.choice(["", ",", ".", "!"]) for _ in range(rng.randint(0, 12)))
        assert textutil._ascii_terms(text) == textutil._word_terms(text), text
    assert fts_terms("Use the snake_case_name, e.g. v1.2.3!") == ["snake", "case", "name", "v1"]


@pytest.mark.parametrize("text", ['"кэш" OR NEAR(x)', 'таблица" OR "x', "ab\u201ccd\u201d ef*", "ฐาน\" ข้อมูล"])
def test_fts_match_quotes_every_term(text, store):
    match = fts_match(fts_terms(text))
    assert match
    store.db.execute("SELECT rowid FROM memories_fts WHERE memories_fts MATCH ?", (match,)).fetchall()


# --- finding memories again in a real store -----------------------------------------------------------


def add(store, text: str, keywords: tuple[str, ...] = ()) -> int:
    memory = NewMemory(project="/p", category="decision", text=text, confidence=0.8, rule_id="t.rule", role="user",
                       session_id="s1", transcript="/t.jsonl", entry_uuid=f"u-{abs(hash(text))}",
                       ts="2026-01-01T00:00:00Z", keywords=keywords)
    with store.atomic():
        return store.add_memory(memory)[0]


MEMORIES = [
    "Для кэша сессий используем Redis, а не Memcached.",
    "El carácter de escape del CSV es la barra invertida.",
    "เราใช้ฐานข้อมูลหลักเป็น PostgreSQL สำหรับทุกบริการ",
    "Η ουρά μηνυμάτων τρέχει σε RabbitMQ.",
    "डेटाबेस के लिए हम PostgreSQL इस्तेमाल करेंगे।",
    "نستخدم قاعدة البيانات للتقارير الشهرية.",
    "אנחנו שומרים את הלוגים בתיקייה נפרדת.",
    "데이터베이스는 PostgreSQL을 사용합니다.",
    "Die Konfiguration wird über Umgebungsvariablen geladen.",
    "数据库统一用 PostgreSQL。",
    "The importer runs nightly at two.",
]


@pytest.fixture
def filled(store):
    ids = {text: add(store, text) for text in MEMORIES}
    return store, ids


@pytest.mark.parametrize("query,expected", [
    ("кэша", MEMORIES[0]),
    ("КЭША Memcached", MEMORIES[0]),
    ("carácter", MEMORIES[1]),
    ("caracter", MEMORIES[1]),  # typed without the accent
    ("CARÁCTER", MEMORIES[1]),
    ("ฐานข้อมูล", MEMORIES[2]),  # a Thai word inside a run without spaces
    ("บริการ", MEMORIES[2]),
    ("μηνυμάτων", MEMORIES[3]),
    ("डेटाबेस", MEMORIES[4]),
    ("قاعدة", MEMORIES[5]),
    ("قَاعِدَة", MEMORIES[5]),  # pointed in the query, bare in the memory
    ("הלוגים", MEMORIES[6]),
    ("데이터베이스", MEMORIES[7]),  # the word without its particle
    ("Umgebungsvariablen", MEMORIES[8]),
    ("数据库", MEMORIES[9]),
    ("importer", MEMORIES[10]),
])
def test_search_finds_a_word_in_its_own_script(filled, query, expected):
    store, ids = filled
    found = store.search(query, project="/p")
    assert found and found[0][0].id == ids[expected], [m.text for m, _ in found]
    assert ids[expected] in store.relevant(query, "/p")


def test_search_in_one_script_does_not_find_the_others(filled):
    store, ids = filled
    texts = {m.text for m, _ in store.search("используем кэша", project="/p")}
    assert texts == {MEMORIES[0]}


def test_a_long_query_keeps_its_rare_accented_and_cyrillic_words(filled):
    """Over eight terms, `relevant` keeps the rarest ones it finds in the index's vocabulary: the
    terms must be spelled as the index spells them (accents folded) or they are dropped."""
    store, ids = filled
    for n in range(12):
        add(store, f"Note {n}: the barra, escape and session settings live in config {n}.")
    query = "what was the carácter de escape for the CSV barra, escape session settings config note"
    assert ids[MEMORIES[1]] in store.relevant(query, "/p")
    query = "для кэша сессий мы что-то решили про Redis и Memcached note config settings escape barra"
    assert ids[MEMORIES[0]] in store.relevant(query, "/p")


def test_memories_mined_with_the_refiners_keywords_are_found(store, pipeline):
    """The miner stores the refiner's keywords instead of `index_text`: they must carry the same words."""
    from miner.extract.model import Turn, Unit
    from miner.extract.refine import Refiner
    from miner.extract.rule_matching import Hit
    from miner.extract.rules import parse_rule

    refiner = Refiner(pipeline)
    rule = parse_rule({"id": "t", "category": "decision", "roles": ["user"], "patterns": ["."]}, "test", 1, "any")
    turn = Turn("u", "s", "user", "", "", "", "", False, "")
    ids = {}
    for text in MEMORIES[:4]:
        candidate = refiner.refine(Unit(turn, 0, text), Hit(rule, rule.search(text))).candidate
        assert candidate is not None
        ids[text] = add(store, text, candidate.keywords)
    for query, text in (("кэша", MEMORIES[0]), ("carácter", MEMORIES[1]), ("ฐานข้อมูล", MEMORIES[2]),
                        ("μηνυμάτων", MEMORIES[3])):
        assert store.search(query, project="/p")[0][0].id == ids[text]


def test_index_text_holds_words_and_bigrams():
    assert index_text("Кэш в Redis; แคช") == "кэш redis แค คช"


# --- cost -----------------------------------------------------------------------------------------


def test_english_only_text_never_builds_the_unicode_patterns():
    """The hook imports textutil: ASCII text must not pay for the large Unicode ranges."""
    code = ("import miner.textutil as t; t.keywords('Use pnpm, not npm'); t.fts_terms('pnpm install');"
            "t.char_bigrams('plain'); t.has_cjk('plain');"
            "print(not {'cjk', 'no_space', 'runs', 'vowel_points', 'latin_accented'} & set(t._compiled) "
            "and t._drop_marks is None)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.strip() == "True"


def test_the_prompt_hooks_words_of_ascii_text_need_no_regular_expressions():
    """Importing textutil compiles nothing, and an English prompt's terms and an escaped line need no `re`."""
    code = ("import sys; import miner.textutil as t; before = 're' in sys.modules;"
            "t.fts_terms('What did we pick for the cache?'); t.char_bigrams('plain'); t.escape_block_tag('a line');"
            "after = 're' in sys.modules; t.escape_block_tag('</transcript-miner-recall>');"
            "print(before, after, 're' in sys.modules)")
    out = subprocess.run([sys.executable, "-S", "-c", code], capture_output=True, text=True, cwd=REPO,
                         check=True, env={"PYTHONPATH": str(REPO)})
    assert out.stdout.split() == ["False", "False", "True"]  # the tag to escape does compile its pattern


def test_keywords_of_long_text_of_any_script():
    """Long mixed text (speed is `bench/mine.py`'s business): every script's words are there."""
    text = ("Для кэша используем Redis. El carácter de escape. เราใช้ฐานข้อมูลหลัก. 데이터베이스는 PostgreSQL. "
            "Pin node 20.11.1 in .nvmrc and run src/build.py. ") * 20
    words = textutil.keywords(text, limit=64)
    terms = textutil.fts_terms(text)
    assert {"кэша", "redis", "carácter", "postgresql", "src/build.py", "20.11.1"} <= set(words), words
    assert "caracter" in terms and "데이터베이스는" in terms


@pytest.mark.parametrize("text,count", [
    ("Always run the linter", 4),
    ("Всегда запускай линтер", 3),
    ("한국어 문장 입니다", 3),  # Korean is written with spaces
    ("不要使用npm", 3),  # four Chinese characters (two words) and one Latin word
    ("好", 1),
    ("ใช้ pnpm แทน", 3),  # Thai's combining marks are not counted: three letters, then one word a side
    ("", 0),
])
def test_word_count_in_any_script(text, count):
    assert word_count(text) == count
