"""The tests a value must pass to be a secret: made up rather than a word, not a placeholder, a name, a path or
code. `secret_finders` and `secret_tables` judge each value a pattern finds with them."""

from __future__ import annotations

import re

# Lower-case words that follow "password is …" without being one.
NOT_VALUES = frozenset("""
a an the this that these those it its it's is was be been being are were not no none null nil empty blank
required optional mandatory needed missing wrong incorrect correct invalid valid expired set unset same different
also still now just only then there here stored saved kept hashed encrypted encoded plain plaintext visible hidden
masked shown sent used given typed entered in on at of for to from with by via into as and or but so if when where
which what who how why your my our their his her them they we you i he she me us one two something anything
nothing everything whatever secure safe strong weak long short too very much more less least
changed reset updated generated random unique known unknown private public protected sensitive
ok fine good bad default standard usual normal regular never always sometimes usually probably maybe
true false yes on off auto manual field parameter param argument value variable option setting config file
files env key keys token tokens password passwords secret secrets pin login user username admin credentials
please just then same stored manager vault prompt dialog screen page form
forgotten lost leaked compromised broken outdated obsolete temporary strict complex simple inherit
estricta estricto incorrecta incorrecto obligatoria obligatorio segura seguro débil fuerte vacía vacío caducada
caducado válida inválida nueva nuevo diferente igual misma mismo larga corta cifrada requerida opcional correcta
sbagliata errata obbligatoria scaduta sicura debole forte vuota nuova diversa stessa lunga cifrata richiesta
opzionale corretta errada incorreta obrigatória expirada fraca vazia nova mesma longa curta criptografada correta
incorrecte obligatoire expiré expirée sécurisé faible vide nouveau nouvelle différent différente même longue courte
chiffré requis facultatif oublié falsch abgelaufen sicher schwach stark leer neu gleich lang kurz verschlüsselt
erforderlich richtig vergessen
bcrypt scrypt argon2 argon2i argon2d argon2id pbkdf2 md5 sha1 sha256 sha384 sha512 sha-1 sha-256 sha-512 hmac-sha256
""".split())
NOT_VALUE_SUFFIXES = ("ed", "ing", "ly", "tion", "sion", "able", "ible", "ment", "ness", "ous", "ive", "ful",
                       "less", "ance", "ence", "ity")
PLACEHOLDER_RE = re.compile(
    r"^(?:\$\{?\w+\}?|<[^>]*>|\{\{[^}]*\}\}|%\(?\w*\)?s?|\*+|x{3,}|X{3,}|\.{2,}|…|\[[^\]]*\]|your[_ -][\w-]+|"
    r"[\w.-]*?(?:X{4,}|x{4,}|\*{4,})|"  # sk_test_XXXXXXXX
    r"placeholder|redacted|change[_-]?me|changeit|str|string|bytes|int|bool|any|none|null|nil|undefined|true|false|secret|password|token)$",
    re.IGNORECASE)
ENV_NAME_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
PATH_RE = re.compile(r"^(?:~?/|\.\.?/|[A-Za-z]:[\\/]|[a-z][a-z0-9+.-]*://)|\.(?:json|ya?ml|toml|env|txt|nix|ini|cfg|conf|"
                      r"py|js|ts|tsx|rb|go|sh|md|pem|key|crt|pgpass|netrc|html|css)$", re.IGNORECASE)
RELATIVE_PATH_RE = re.compile(r"^[\w.-]+(?:/[\w.-]+){2,}/?$")
CODE_REFERENCE_RE = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$|^[a-z_$][\w$]*\[[^\]]*\]$")


def mixed(value: str) -> bool:
    """Capitals, small letters and digits all in one: how a generated key looks, and a word or a name does not."""
    return any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)


def code_reference(value: str) -> bool:
    """`settings.SECRET`, `os.environ["X"]`: code naming a value, not one. A dotted run with a part that mixes
    capitals, small letters and digits is a token ("SG.kL9mQ2x….Fh1s…", "hvs.CAESI…")."""
    if not CODE_REFERENCE_RE.match(value):
        return False
    return not any(len(part) >= 12 and mixed(part) for part in value.split("."))


# What may follow a plain-word value for it to be the whole value ("the password is swordfish, and …").
CLAUSE_END_RE = re.compile(r"^(?:\s*$|[ \t]*[.!?,;:)\]—–\n]|[ \t]+(?:and|but|so|then|for[ \t]+now|btw|please|ok|okay)\b)",
                            re.IGNORECASE)
COUNT_AFTER_RE = re.compile(r"[ \t]*(?:characters?|chars?|digits?|letters?|symbols?|long|minutes?|hours?|days?|times?|"
                             r"attempts?|tries|%|ms|s\b|seconds?)", re.IGNORECASE)


TAGGED_RE = re.compile(r"<(b|strong|code|kbd|tt|em|i|mark)>([^<\n]{1,120})</\1>")


def strip_quotes(value: str) -> tuple[str, bool]:
    """(the value without its quotes or bold markers, whether it was quoted)."""
    for open_, close in (("`", "`"), ('"', '"'), ("'", "'"), ("「", "」"), ("“", "”"), ("**", "**"), ("(", ")"),
                         ('\\"', '\\"')):
        if len(value) > len(open_) + len(close) and value.startswith(open_) and value.endswith(close):
            return value[len(open_):-len(close)].strip(), True
    tagged = TAGGED_RE.fullmatch(value) if value.startswith("<") else None  # <b>…</b>, <code>…</code>
    return (tagged.group(2).strip(), True) if tagged else (value, False)


def trim(value: str) -> str:
    """A bare value without the sentence punctuation around it."""
    end = len(value)
    while end and value[end - 1] in ".,:;?)]}'\"`*_":
        end -= 1
    start = 0
    while start < end and value[start] in "([{'\"`*_":
        start += 1
    return value[start:end]


def secret_like(value: str) -> bool:
    """Made up rather than a word: letters with digits or symbols, or four digits or more (a PIN)."""
    if len(value) < 4:
        return False
    if value.isdigit():
        return True
    has_alpha = any(c.isalpha() for c in value)
    has_digit = any(c.isdigit() for c in value)
    if has_digit and has_alpha:
        return True
    # Letters alone are a word, even in mixed case (GitHub, PostgreSQL): only an assertive context makes one a secret.
    # So are words with an apostrophe in them ("l'ho", "don't"), and words whose letters carry marks that are not
    # letters themselves (the vowel signs of Bengali or Hindi, Persian's zero-width non-joiner: "রিসেট", "وای‌فای").
    return any(c not in "-_.'’" and not _mark(c) for c in value if not c.isalnum()) and (has_alpha or has_digit)


def _mark(c: str) -> bool:
    """A combining mark, or a joiner that shapes a word's letters."""
    import unicodedata  # (only for a text with such a character: the hooks import this module)

    return c in "\u200c\u200d" or (c > "\u02ff" and unicodedata.category(c)[0] == "M")


def random_like(value: str) -> bool:
    """A token that looks generated: eight characters or more, letters with digits or symbols. A word and an
    exclamation mark is prose ("the deploy token settings!")."""
    word = value.rstrip("!")
    return len(value) >= 8 and secret_like(value) and not value.isdigit() and not word.isalpha()


_PARTS_RE = re.compile(r"[-_:#./@+]+")
_WORD_PART_RE = re.compile(r"[^\W\d_]{1,12}|\d{1,4}|[vV]\d{1,3}")


def reads_as_words(value: str) -> bool:
    """A name made of words, short numbers and versions ("new-checkout-2024", "user:42:profile", "created_at#v2",
    "v2.3.1-hotfix"): what a cache, sort or flag key is called, not a generated key (whose parts are long runs of
    mixed letters and digits: "sk_live_51Hx…", "xoxb-123456789012-…")."""
    parts = [part for part in _PARTS_RE.split(value) if part]
    return len(parts) >= 2 and all(_WORD_PART_RE.fullmatch(part) for part in parts) \
        and any(part.isalpha() and len(part) >= 3 for part in parts)


_SPACED_LETTER = "[0-9A-Za-z\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff\u0900-\u097f]"
_WORDLIKE_RE = re.compile(r"[^\W\d_\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]+")


def hide_literal(text: str, secret: str, marker: str) -> tuple[str, int]:
    """`text` with `secret` replaced by `marker`, and how many times; a plain word only where it stands whole (a
    password "dragon" is no part of "dragonfly"; in a script written without spaces every occurrence counts)."""
    if _WORDLIKE_RE.fullmatch(secret):  # (a letter or digit of a script written with spaces ends a word; "_" does not)
        return re.subn(rf"(?<!{_SPACED_LETTER}){re.escape(secret)}(?!{_SPACED_LETTER})", lambda _: marker, text)
    return text.replace(secret, marker), text.count(secret)


def rejected(value: str) -> bool:
    """Not a secret whatever the context: a placeholder, a name, a path, code, a common word, a marker of an
    earlier pass (with or without its brackets: `trim` takes them off)."""
    low = value.lower()
    if len(value) < 3 or "redacted:" in low or PLACEHOLDER_RE.match(value) or low.startswith(("ssh-", "ecdsa-sha2-")):
        return True  # (a public key's type opens the key itself)
    if low.startswith(("@keychain:", "@env:")):
        return True  # Apple's tools name a password kept elsewhere: `--password "@keychain:AC_PASSWORD"`
    if low in NOT_VALUES or ENV_NAME_RE.match(value) or PATH_RE.search(value) or code_reference(value):
        return True
    if "→" in value:
        return True  # a line's number in a file as a tool shows it ("12→")
    if RELATIVE_PATH_RE.match(value):
        return True  # a path of three parts or more: secret/app/db, src/lib/auth.ts
    return len(set(value)) == 1 or "(" in value or value.endswith(")")


def plain_word(value: str) -> bool:
    """An ordinary word ("swordfish") rather than an adjective or participle ("required", "hashed")."""
    return value.isalpha() and len(value) >= 4 and not value.lower().endswith(NOT_VALUE_SUFFIXES)


def value_of(m: re.Match, group: str = "value") -> tuple[str, str, bool]:
    """(the raw value text, the value without quotes or trailing punctuation, whether it was quoted)."""
    raw = m.group(group)
    value, quoted = strip_quotes(raw)
    return raw, (value if quoted else trim(value)), quoted


# Key names holding a setting about secrets, not a secret: password_min_length, max_tokens, token_url, SECRET_NAME.
# (An id is a setting, except a secret's own: Vault's AppRole secret_id, Consul's and Nomad's SecretID, an ACL token.)
SETTING_KEY_RE = re.compile(
    r"(?i)(?:length|len|min|max|count|size|policy|field|column|file|path|dir|env|name|label|placeholder|hint|prompt|"
    r"regex|pattern|reset|expir\w*|ttl|timeout|rotation|required|type|hash|hashed|url|uri|endpoint|header|limit|"
    r"usage|used|budget|(?<!secret)(?<!secret[_-])ids?|namespace|strength|format|mode|enabled|provider|manager|store|"
    r"ref|arn|location|version|prefix|suffix|template|scope|scopes|kind|source|method|at|on|storage|key_name|"
    r"secretkeys|passwordkey|existingsecret)$|^(?:max|min|num|n)_")  # (Helm: `existingSecret: pg-auth` names a Secret)


_ACCOUNT_RE = re.compile(r"[\w.@+-]{1,64}")
_ADMIN_RE = re.compile(r"(?i)admin|^root$|^sa$|^superuser$")
# A route's query, an issue's number, a file, a pinned version or revision: "oauth/callback?code=1", "org/repo#123",
# "docs/setup2.md", "docker/login-action@v3", "google/gemma-2b-it@rev3", "owner/name@sha256:…" (not "J3nk#ns77").
_ROUTE_RE = re.compile(r"\?\w+=|#\d+$|@(?:v?\d|rev|sha|main|master|latest)|\.(?:md|txt|py|js|ts|json|ya?ml|html?|sh)$",
                       re.IGNORECASE)


def slashed_password(user: str, value: str) -> bool:
    """`user/value` written without blanks after a login's words is an account and its password when the user is a
    plain name and the value has a symbol ("ci-bot/Xk9!pq2w"), or two digits after an administrator's account
    ("admin/admin123"): a path ("src/auth2", "test/e2e123"), two names ("Google/GitHub2"), a route, a file or a pinned
    version (`_ROUTE_RE`) or words ("登录/注册按钮；…") are not."""
    if not (_ACCOUNT_RE.fullmatch(user) and user.isascii() and value.isascii() and len(value) >= 6 and "/" not in value
            and not _ROUTE_RE.search(value) and secret_like(value) and not reads_as_words(value)):
        return False
    symbol = not value.replace("-", "").replace("_", "").isalnum()
    return symbol or sum(c.isdigit() for c in value) >= 2 and _ADMIN_RE.search(user) is not None
