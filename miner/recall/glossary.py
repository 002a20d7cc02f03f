"""Words across languages for recall: a prompt in English finds what was said in Chinese, Korean or Spanish.

A project's sessions may be held in one language and asked about in another
("which database did we pick?" about notes that say 数据库). The search looks
for the prompt's words, so it would find nothing there. The glossary groups
the words that name one thing in several languages (`rules/glossary.yaml`),
and the synonym groups the dedup layer uses (`rules/synonyms.yaml`) join them.
A prompt that names a word of a group is also searched for the group's other
words; what the project never wrote matches nothing and costs nothing.

The user's files of the same names under `$XDG_CONFIG_HOME/miner/` extend
both. PyYAML is not on the hook path, so the miner compiles the files into
`cache/recall-terms.db` whenever one changes (`refresh`), a small SQLite file
in which the hooks look up only the prompt's words (`expand`). Without it, a
prompt is searched for its own words only.
"""

from __future__ import annotations

import os

from .. import paths
from ..textutil import META_WORDS, STOPWORDS, ascii_words, char_bigrams, folded, fts_terms

CACHE_NAME = "recall-terms.db"
VERSION = "2"  # 2: the user's groups join the shipped groups they share a word with
# Phrases ("base de datos", 数据库) are looked for in the prompt's first characters only: past them, a long
# prompt is pasted text, and the words it names are searched for as they are.
PHRASE_CHARS = 2000
_NON_WORD = None  # compiled on first use: most hooks never expand a prompt


def cache_file(folder: str | None = None) -> str:
    """Where the compiled lookup is: in the cache folder of the miner's home (or `folder`)."""
    return os.path.join(folder or paths.data_file("cache"), CACHE_NAME)


def word_forms(word: str) -> list[str]:
    """A word and, for one of ASCII letters, its plural and verb forms ("deploy": "deploys", "deployed",
    "deploying"; "delete": "deleted", "deleting"), so that the prompt's words are looked up as written."""
    if not (word.isascii() and word.isalpha() and len(word) > 2):
        return [word]
    base = word[:-1] if word.endswith("e") else word
    forms = [word, word + "s", word + "es", base + "ed", base + "ing"]
    if word.endswith("y") and word[-2] not in "aeiou":
        forms += [word[:-1] + "ies", word[:-1] + "ied"]
    return list(dict.fromkeys(forms))


def expand(text: str, terms: list[str]) -> dict[str, list[list]]:
    """For each of the prompt's `terms` that names a glossary group, the group's words that the prompt does not
    hold, each as [its text lower-cased, whether it is written without spaces, its terms]."""
    if not terms:
        return {}
    from ..memory import glossary_db, reader

    db = glossary_db.open_lookup(cache_file())
    if db is None:
        return {}
    try:
        if glossary_db.meta(db).get("version") != VERSION:
            return {}
        words, phrases = glossary_db.named_groups(db, terms)
        named: dict[str, set[int]] = {}
        for term, group in words:
            named.setdefault(term, set()).add(group)
        if phrases:
            _phrases_named(text, phrases, named)
        rows = glossary_db.group_members(db, sorted(set().union(*named.values()))) if named else []
    except reader.driver().Error:
        return {}  # a broken file: the prompt's own words only
    finally:
        db.close()
    members: dict[int, list[list]] = {}
    for group, phrase, joined, member_terms in rows:
        members.setdefault(group, []).append([phrase, bool(joined), member_terms.split()])
    own = set(terms)
    found = {}
    for term, groups in named.items():
        # A word the prompt holds is searched for already.
        kept = {m[0]: m for g in sorted(groups) for m in members.get(g, ()) if not own.issuperset(m[2])}
        found[term] = list(kept.values())
    return found


def query_forms(query: str) -> dict[str, list[list]]:
    """`expand` for a search (`miner search`, the viewer): the glossary's words for the query's terms."""
    return expand(query, fts_terms(query)) if query.strip() else {}


def _phrases_named(text: str, phrases: list[tuple], named: dict[str, set[int]]) -> None:
    """Add the groups of the phrases that the prompt's first characters hold, under the term they are keyed by."""
    global _NON_WORD
    lowered = " ".join(text[:PHRASE_CHARS].lower().split())
    if lowered.isascii():  # without `re`
        spaced = " " + " ".join(ascii_words(lowered)) + " "
    else:
        if _NON_WORD is None:
            import re

            _NON_WORD = re.compile(r"[\W_]+")
        spaced = " " + _NON_WORD.sub(" ", lowered) + " "
    for term, phrase, group, joined in phrases:
        if (phrase in lowered) if joined else (f" {phrase} " in spaced):
            named.setdefault(term, set()).add(group)


def compile_groups(groups: list[list[str]]) -> dict:
    """The lookup `expand` reads: single words by their forms, phrases by their first term, each group's words.

    A phrase is two words or more, or a word of a script written without spaces (数据库, データベース,
    데이터베이스 with its particles): it is found in the prompt's text, not among its words.
    """
    left_out = STOPWORDS | META_WORDS
    words: dict[str, list[int]] = {}
    phrases: dict[str, list[list]] = {}
    members_of: list[list[list]] = []
    for n, group in enumerate(groups):
        members = []
        for member in group:
            found = fts_terms(member)
            if not found or all(t in META_WORDS for t in found):
                continue  # not a word to search for (a stopword), or one every question about earlier work uses
            joined = bool(char_bigrams(member))
            phrase = " ".join(member.lower().replace("-", "-" if joined else " ").split())
            # A word written without spaces is found by its character pairs (a Korean word's particles vary).
            members.append([phrase, joined, char_bigrams(member) or found if joined else found])
            if len(found) == 1 and not joined:
                for key in word_forms(found[0]):
                    if key != found[0] and key in left_out:
                        continue  # a form that is a word of its own ("mai" + "s": Portuguese "mais")
                    if n not in words.setdefault(key, []):
                        words[key].append(n)
            else:  # keyed by a term the prompt has whenever it holds the phrase: its first word, or character pair
                key = char_bigrams(member)[0] if joined else found[0]
                phrases.setdefault(key, []).append([phrase, n, joined])
        members_of.append(members)
    return {"words": words, "phrases": phrases, "groups": members_of}


def joined(shipped: list[list[str]], users: list[list[str]]) -> list[list[str]]:
    """The shipped groups, each with the words of the user's groups that share a word with it (the user's groups
    that share a word are one first); a user's group that shares none is a group of its own. Shipped groups are
    not joined to one another: some share a word of two senses (Spanish "fila": a row, a queue)."""
    out = [list(group) for group in shipped]
    where: dict[str, list[int]] = {}
    for n, group in enumerate(out):
        for word in group:
            where.setdefault(folded(word), []).append(n)
    merged: list[list[str]] = []  # the user's groups that share a word, as one (a glossary's and a synonyms file's)
    for group in users:
        keys = {folded(word) for word in group}
        joining = [other for other in merged if keys & {folded(word) for word in other}]
        for other in joining:
            merged.remove(other)
        merged.append(list(dict.fromkeys([word for other in joining for word in other] + list(group))))
    for group in merged:
        found = sorted({n for word in group for n in where.get(folded(word), ())})
        if not found:
            out.append(list(group))
        for n in found:
            have = {folded(word) for word in out[n]}
            out[n] += [word for word in group if folded(word) not in have]
    return out


def default_files() -> list:
    """The shipped glossary and synonyms, then the user's files of the same names, those that exist."""
    from ..extract.rules import default_rules_dir

    names = ("glossary.yaml", "synonyms.yaml")
    files = [default_rules_dir() / n for n in names] + [paths.config_dir() / n for n in names]
    return [f for f in files if f.is_file()]


def refresh(files: list | None = None, folder: str | None = None) -> bool:
    """Compile the glossary and synonym files into the lookup the hooks read (or into `folder`), when one changed
    since; True when it wrote. A broken file raises `lexicon.SynonymError`, naming the file and the group: the lookup
    compiled last stays, and without one (a first run, an upgrade) the others are compiled without it, so that a
    mistake in the user's file does not take the shipped words away."""
    import json

    from ..memory import glossary_db, reader
    from ..memory.lexicon import SynonymError, read_synonym_file

    files = default_files() if files is None else files
    sources = []
    for f in files:
        st = os.stat(f)
        sources.append([str(f), st.st_mtime_ns, st.st_size])
    wanted = {"version": VERSION, "sources": json.dumps(sources)}
    path = cache_file(folder)
    db = glossary_db.open_lookup(path)
    last = {}
    if db is not None:
        try:
            last = glossary_db.meta(db)
        except reader.driver().Error:
            pass  # a broken file is written again
        finally:
            db.close()
        if last == wanted:
            return False
    groups: list[list[str]] = []
    users: list[list[str]] = []
    broken: SynonymError | None = None
    for source, f in zip(sources, files):
        try:
            (users if paths.in_config_root(f) else groups).extend(read_synonym_file(f))
        except SynonymError as exc:
            if last.get("version") == VERSION:
                raise  # the last lookup stays
            broken = broken or exc
            source[2] = -1  # never what the file's stamp is: the next call reads it again, and says so again
    if broken:
        wanted["sources"] = json.dumps(sources)
    compiled = compile_groups(joined(groups, users))
    paths.ensure_private_dir(os.path.dirname(path))
    glossary_db.write(path, wanted, compiled["words"], compiled["phrases"], compiled["groups"])
    if broken:
        raise broken
    return True


def refresh_quietly() -> str:
    """`refresh` for a miner starting: '' when done, else what is wrong. A broken file is left out of the lookup
    (the others are in it); `miner doctor` names it."""
    import sqlite3

    from ..memory.lexicon import SynonymError

    try:
        refresh()
    except (SynonymError, OSError, sqlite3.Error) as exc:  # (a full disk: the compiled copy is a cache; mining goes on)
        return str(exc)
    return ""
