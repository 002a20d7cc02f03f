"""Secret redaction, applied before anything is stored, logged, cached, exported or printed.

A secret becomes `[REDACTED:<kind>]`. A memory that is mostly redacted is not
worth keeping, and `mostly_redacted` says so.

Three kinds of evidence, each checked only when a cheap hint is in the text
(most prose has none, so most prose costs a few substring searches):

- **Shape.** Tokens whose form gives them away: cloud and SaaS keys, JWTs,
  private-key blocks, credentials in URLs (`SECRET_PATTERNS`).
- **Assignment.** `password=…`, `"client_secret": "…"`, `export X_TOKEN=…`:
  the key names a secret. A password-like key hides any value that is not a
  placeholder, a type or a reference to another variable; a token-like key
  (`api_key`, `X_TOKEN`) hides values that look random. The key name stays,
  so `STAGING_DATABASE_PASSWORD=[REDACTED:assignment]` still says what it was.
- **Context in prose.** A value next to a mention of a password, passphrase,
  PIN or secret, in the languages the rules cover and more (contraseña,
  пароль, 密码, パスワード, 비밀번호, …): "the password is X", "Your password
  `X` is in …", "use X as the initial password", "数据库密码是 X"; a
  `user / pass` pair in a login context; the items of a list under a line
  about credentials; an AWS secret access key near its key id; the password
  and secret columns of a CSV credentials file.

A secret found by context is remembered for the rest of the text, and for
later texts when the caller passes a `known` set: "my sudo password is X"
followed later by "run it with X" hides both.

The built-in patterns are compiled on first use from the standard library
only: the hooks redact their log lines with them (`python -X importtime -c
'import miner.extract.redact'`). Extra kinds come from YAML files, the shipped
`rules/secrets.yaml` and the user's `$XDG_CONFIG_HOME/miner/secrets.yaml`,
loaded by the miner (`load_extra`), which has PyYAML already. Each extra
rule carries its own `examples:` (match / no_match), checked at load.

`REDACTION_VERSION` changes whenever a change here would redact more of
what is already stored: `miner doctor --fix` (which the installer runs)
applies the current redaction to the store, and records the version.
"""

from __future__ import annotations

import re

TYPE_CHECKING = False  # typing and pathlib cost import time on the hook path
if TYPE_CHECKING:
    from pathlib import Path
    from typing import Iterable

REDACTION_VERSION = 2

# (kind, pattern source, hints): a pattern runs only when one of its hints is a substring of the text
# (hints in lower case are looked up in the lower-cased text). Order matters: specific kinds first.
_SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(?:-----END [A-Z ]*PRIVATE KEY-----|\Z)", ("-----BEGIN",)),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    ("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[A-Z0-9]{16}\b",
     ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA")),
    ("gcp-api-key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", ("AIza",)),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("gitlab-token", r"\b(?:glpat|gldt|glrt|glptt|glft)-[A-Za-z0-9_\-]{20,}", ("glpat-", "gldt-", "glrt-", "glptt-", "glft-")),
    ("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", ("xox",)),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}", ("hooks.slack.com",)),
    ("stripe-key", r"\b(?:sk|rk)_live_[A-Za-z0-9]{16,}\b", ("_live_",)),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", ("eyJ",)),
    ("bearer-token", r"(?i)(?<=\bbearer )[A-Za-z0-9_\-.~+/]{20,}=*", ("bearer ", "Bearer ", "BEARER ")),
    ("url-credentials", r"(?<=://)[^/\s:@]+:[^/\s@]+(?=@)", ("://",)),
    ("basic-auth", r"(?i)(?<=\bbasic )[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])", ("Basic ", "basic ", "BASIC ")),
    # A password on a command line: `mysql -u root -pX`, `sshpass -p X`, `echo X | sudo -S`.
    ("password", r"(?<=\s-p)(?!assword)[^\s'\"]{4,}(?=[ \t\n]|$)(?<=\S)|(?<=\bsshpass -p )\S{3,}|"
                 r"(?<=\becho )['\"]?[^\s'\"|]{3,}(?=['\"]?[ \t]*\|[ \t]*sudo[ \t]+-S)",
     (" -p", "sshpass", "sudo -S")),
]

# --- words --------------------------------------------------------------------------------------

# Words that name a password-like secret: any value stated for them is hidden.
_STRONG_WORDS = (
    r"pass(?:word|wd|phrase|code)s?|pwd|pass(?=[ \t]*[:=])|pw(?=[ \t]*[:=])|secret(?:\s+(?:access\s+)?key)?s?|"
    r"client[\s_-]secret|(?:wi-?fi|wpa2?|network)[\s_-]?(?:key|password)|(?:recovery|backup|2fa|mfa|otp)[\s_-]?codes?|"
    r"contraseñas?|clave(?:\s+de\s+acceso)?|senhas?|mot\s+de\s+passe|passw[oö]rt(?:e|es)?|kennw[oö]rt|wachtwoord|"
    r"has[łl]o|şifre(?:si)?|parola(?:\s+d['’]ordine)?|парол[ьяюем]\w*|код\s+доступа|"
    r"密码|密碼|口令|密钥|密鑰|秘钥|パスワード|暗証番号|비밀번호|패스워드|암호|पासवर्ड|كلمة\s+(?:المرور|السر)"
)
# Words that name a key or token: only a value that looks random is hidden.
_WEAK_WORDS = (
    r"(?:api|access|auth|bearer|refresh|session|private|signing|encryption|master|license|deploy|personal\s+access)"
    r"[\s_-]?(?:key|token)s?|api[\s_-]?keys?|tokens?|credentials?"
)
_PIN = r"\bPIN(?:[\s-]?(?:code|number|Code|Nummer))?\b|\b[Pp]in[\s-]?(?:code|number)\b|\bcódigo\s+PIN\b"
# Lower-case substrings whose presence means a context pattern may fire (checked before any of them runs).
_HINTS = ("pass", "pwd", "secret", "contrase", "clave", "senha", "mot de passe", "kennw", "wachtwoord", "hasło",
          "haslo", "şifre", "parol", "парол", "код доступа", "密码", "密碼", "口令", "密钥", "密鑰", "秘钥", "パスワード",
          "暗証", "비밀번호", "패스워드", "암호", "पासवर्ड", "كلمة", "key", "token", "credential", "pin code", "pin number",
          "pw", "recovery", "backup code", "2fa", "mfa", "otp", "wi-fi", "wifi", "wpa")
_LOGIN_HINTS = ("log in", "login", "logon", "sign in", "signin", "credential", "creds", "логин", "учетн", "登录", "登入",
                "账号", "帳號", "賬號", "ログイン", "로그인", "계정", "contraseña")
_ASSIGNMENT_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "contrase", "senha", "парол")

# A value: quoted, bold, or a run of characters that are neither space, closing punctuation nor CJK.
_VALUE = (r"(?P<value>`[^`\n]{1,120}`|\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|「[^」\n]{1,120}」|“[^”\n]{1,120}”|"
          r"\*\*[^*\n]{1,120}\*\*|\([^\s()]{4,120}\)|[^\s,;，。、；：「」『』（）()\[\]{}<>|\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{1,200})")
# What joins a secret's name to its value, on one line. Assertive joins ("is", ":", "是") may introduce a plain
# word ("the password is swordfish"); "to"/"as" and plain apposition ("password `X`") need a value that looks made up.
_ASSERT = (r"(?:[ \t]+(?:is|was|are|were|=|remains|becomes|is[ \t]+now|is[ \t]+still|(?:is|was|has[ \t]+been|got)[ \t]+"
           r"(?:set|changed|reset|updated)[ \t]+to|should[ \t]+be|will[ \t]+be|would[ \t]+be|es|era|fue|"
           r"sigue[ \t]+siendo|est|était|ist|lautet|war|è|é|это|—|–|-|→|=>)[ \t]+"
           r"|[ \t]*[*_]{0,2}[ \t]*[:=：][ \t]*[*_]{0,2}[ \t]*|[ \t]*\|[ \t]*"
           r"|[ \t]*(?:是|为|為|设为|設為|设置为|設置為|改为|改為|は|が|는|은|이)[ \t]*[:：]?[ \t]*)")
_TO = r"(?:[ \t]+(?:to|into|as)[ \t]+)"
# Words between the join and the value ("the password is now X", "was actually X").
_FILLER = r"(?:(?:now|still|currently|actually|also|just|simply|really|literally|already|ahora|maintenant|jetzt|ora|теперь)[ \t]+){0,2}"
_APPOSITION = r"(?:[ \t]+|[ \t]*[*_]{2}[ \t]+)"
_GAP = (r"(?:[ \t]+(?:for|of|on|to|in|at|del?|de[ \t]+la|para|für|von|pour|du|для|от)[ \t]+"
        r"(?:the[ \t]+|my[ \t]+|our[ \t]+|your[ \t]+|la[ \t]+|el[ \t]+|le[ \t]+)?[\w.@-]{1,40}(?:[ \t]+[\w.@-]{1,30})?)")
_ASSERTIVE_RE = re.compile(r"[:=：|是为為は가는은이]|\b(?:is|was|are|were|remains|becomes|be|es|era|fue|siendo|est|était|ist|"
                           r"lautet|war|это)\b|[—–→-]", re.IGNORECASE)

# Lower-case words that follow "password is …" without being one.
_NOT_VALUES = frozenset("""
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
""".split())
_NOT_VALUE_SUFFIXES = ("ed", "ing", "ly", "tion", "sion", "able", "ible", "ment", "ness", "ous", "ive", "ful",
                       "less", "ance", "ence", "ity")
_PLACEHOLDER_RE = re.compile(
    r"^(?:\$\{?\w+\}?|<[^>]*>|\{\{[^}]*\}\}|%\(?\w*\)?s?|\*+|x{3,}|X{3,}|\.{2,}|…|\[[^\]]*\]|your[_ -]\w+|"
    r"placeholder|redacted|str|string|bytes|int|bool|any|none|null|nil|undefined|true|false|secret|password|token)$",
    re.IGNORECASE)
_ENV_NAME_RE = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+$")
_PATH_RE = re.compile(r"^(?:~?/|\.\.?/|[A-Za-z]:[\\/]|[a-z][a-z0-9+.-]*://)|\.(?:json|ya?ml|toml|env|txt|nix|ini|cfg|conf|"
                      r"py|js|ts|tsx|rb|go|sh|md|pem|key|crt|pgpass|netrc|html|css)$", re.IGNORECASE)
_CODE_REFERENCE_RE = re.compile(r"^[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+$|^[a-z_$][\w$]*\[[^\]]*\]$")
_REDACTED_RE = re.compile(r"\[REDACTED:[a-z0-9\-]+\]")
_KIND_RE = re.compile(r"^[a-z][a-z0-9\-]{1,40}$")
# What may follow a plain-word value for it to be the whole value ("the password is swordfish, and …").
_CLAUSE_END_RE = re.compile(r"^(?:\s*$|[ \t]*[.!?,;:)\]—–\n]|[ \t]+(?:and|but|so|then|for[ \t]+now|btw|please|ok|okay)\b)",
                            re.IGNORECASE)
_COUNT_AFTER_RE = re.compile(r"[ \t]*(?:characters?|chars?|digits?|letters?|symbols?|long|minutes?|hours?|days?|times?|"
                             r"attempts?|tries|%|ms|s\b|seconds?)", re.IGNORECASE)
MIN_PROPAGATED = 6  # a secret this long (and made up, not a word) is hidden wherever it appears again


def _strip_quotes(value: str) -> tuple[str, bool]:
    """(the value without its quotes or bold markers, whether it was quoted)."""
    for open_, close in (("`", "`"), ('"', '"'), ("'", "'"), ("「", "」"), ("“", "”"), ("**", "**"), ("(", ")")):
        if len(value) > len(open_) + len(close) and value.startswith(open_) and value.endswith(close):
            return value[len(open_):-len(close)].strip(), True
    return value, False


def _trim(value: str) -> str:
    """A bare value without the sentence punctuation around it."""
    end = len(value)
    while end and value[end - 1] in ".,:;?)]}'\"`*_":
        end -= 1
    start = 0
    while start < end and value[start] in "([{'\"`*_":
        start += 1
    return value[start:end]


def _secret_like(value: str) -> bool:
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
    return any(c not in "-_." for c in value if not c.isalnum()) and (has_alpha or has_digit)


def _random_like(value: str) -> bool:
    """A token that looks generated: eight characters or more, letters with digits or symbols."""
    return len(value) >= 8 and _secret_like(value) and not value.isdigit() and not value.isalpha()


def _rejected(value: str) -> bool:
    """Not a secret whatever the context: a placeholder, a name, a path, code, a common word, already redacted."""
    low = value.lower()
    if len(value) < 3 or "[redacted" in low or _PLACEHOLDER_RE.match(value):
        return True
    if low in _NOT_VALUES or _ENV_NAME_RE.match(value) or _PATH_RE.search(value) or _CODE_REFERENCE_RE.match(value):
        return True
    return len(set(value)) == 1 or "(" in value or value.endswith(")")


def _plain_word(value: str) -> bool:
    """An ordinary word ("swordfish") rather than an adjective or participle ("required", "hashed")."""
    return value.isalpha() and len(value) >= 4 and not value.lower().endswith(_NOT_VALUE_SUFFIXES)


def _value_of(m: re.Match, group: str = "value") -> tuple[str, str, bool]:
    """(the raw value text, the value without quotes or trailing punctuation, whether it was quoted)."""
    raw = m.group(group)
    value, quoted = _strip_quotes(raw)
    return raw, (value if quoted else _trim(value)), quoted


class _Redactor:
    """The compiled patterns, built on first use (the hooks import this module without redacting)."""

    def __init__(self) -> None:
        self.shapes = [(kind, re.compile(source, re.DOTALL if kind == "private-key" else 0), hints)
                       for kind, source, hints in _SHAPES]
        word = rf"(?P<word>(?i:{_STRONG_WORDS})|{_PIN})"
        latin_before, latin_after = r"(?<![A-Za-z0-9_-])", r"(?![A-Za-z0-9_])"
        # A gap ("the password for the staging db is X") only before an assertive join: "password to X" sets it.
        self.forward = re.compile(
            rf"{latin_before}{word}{latin_after}(?P<conn>(?i:{_GAP}{_ASSERT}{_FILLER}|{_ASSERT}{_FILLER}|{_TO}|{_APPOSITION}))"
            rf"(?P<rest>{_VALUE})")
        self.weak = re.compile(
            rf"{latin_before}(?P<word>(?i:{_WEAK_WORDS})){latin_after}(?P<conn>(?i:{_ASSERT}|{_APPOSITION}))"
            rf"(?P<rest>{_VALUE})")
        # "X as the initial password", "X is my password": the name after the value. The pattern finds the name;
        # the value is read back from the text before it.
        self.backward = re.compile(
            rf"(?i:[ \t]+(?:as|is|was|for)[ \t]+(?:(?:the|my|our|your|his|her|their|a|an|new|initial|default|temporary|"
            rf"temp|admin|root|sudo|login|db|database|user|account|wifi|wi-fi|master|current|old|same|[\w-]{{2,20}})"
            rf"[ \t]+){{0,3}}(?:{_STRONG_WORDS})){latin_after}")
        self.value_before = re.compile(
            rf"(?:(?P<verb>(?i:\b(?:use|using|set|pick|choose|chose|try|typed|entered))[ \t]+)|(?<=[ \t(\"'`]))?"
            rf"{_VALUE}\Z")
        # A user and a password in a login context: "log in with admin / X", "credentials: root:X".
        self.pair = re.compile(
            r"(?i:\b(?:log[ \t]*in|login|logon|sign[ \t]*in|signin|credentials?|creds|usuario[ \t]+y[ \t]+contraseña|"
            r"логин|учетн\w*|登录|登入|账号|帳號|賬號|ログイン|로그인|계정)\b)"
            r"[^\n]{0,40}?(?<![\w.@+/:\[-])(?P<user>[\w.@+-]{1,64})(?P<sep>[ \t]+/[ \t]+|[ \t]+\|[ \t]+|:)"
            r"(?P<value>`[^`\n]{1,120}`|\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|[^\s,;，。、]{3,200})")
        # key = value where the key names a secret; the key is read back from the text before its keyword.
        self.assignment = re.compile(
            r"(?i)(?P<kw>password|passwd|passphrase|passcode|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key|"
            r"private[_-]?key|auth[_-]?key|credentials?|contraseña|senha|passwort|пароль)(?P<suffix>[A-Za-z0-9_.\-]{0,40})"
            r"(?P<sep>[\"']?[ \t]*(?::=|=>|[:=])[ \t]*)"
            r"(?P<value>\"[^\"\n]{1,400}\"|'[^'\n]{1,400}'|`[^`\n]{1,400}`|[^\s\"',;]{1,4000})")
        self.key_before = re.compile(r"[A-Za-z0-9_.\-]{0,60}\Z")
        self.list_lead = re.compile(
            rf"(?i:(?:{_STRONG_WORDS})|credentials?|creds|logins?|accounts?|test[ \t]+users?)|{_PIN}")
        self.strong_lead = re.compile(rf"(?i:{_STRONG_WORDS})|{_PIN}")
        self.list_item = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?P<body>.+?)\s*$")
        self.label_line = re.compile(r"^\s*[\w .'()-]{1,40}\s*[:：]\s+\S")
        self.aws_secret = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
        self.split_field = re.compile(r"[ \t]+(?:-|—|–|/|\||=|:)[ \t]+|:[ \t]+|\t")


_REDACTOR: _Redactor | None = None
# Extra kinds from YAML (`load_extra`); empty on the hook path.
_extra: list[tuple[str, re.Pattern]] = []


def _redactor() -> _Redactor:
    global _REDACTOR
    if _REDACTOR is None:
        _REDACTOR = _Redactor()
    return _REDACTOR


class SecretRuleError(ValueError):
    """A secrets file is broken; the message is one line naming the file and the rule."""


class _Pass:
    """One text's redaction: the kinds found and the literal secrets learnt."""

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.found: set[str] = set()  # hidden wherever they appear, here and in later texts
        self.here: set[str] = set()  # hidden wherever they appear in this text only (plain words)

    def hidden(self, kind: str, secret: str) -> str:
        """Count one secret of `kind` and remember it (made-up ones only) for the rest of the text; the marker."""
        self.kinds.append(kind)
        if len(secret) >= MIN_PROPAGATED and _secret_like(secret) and not secret.isdigit():
            self.found.add(secret)
        return f"[REDACTED:{kind}]"


def redact(text: str, known: set[str] | None = None) -> tuple[str, list[str]]:
    """The text with every secret replaced, and the kinds that were found.

    `known`, when given, holds literal secrets found in earlier texts (hidden
    here wherever they appear) and receives the ones found in this text.
    """
    if not text:
        return text, []
    r = _redactor()
    run = _Pass()
    for kind, pattern, hints in r.shapes:
        if any(h in text for h in hints):
            text, count = pattern.subn(f"[REDACTED:{kind}]", text)
            run.kinds += [kind] * count
    for kind, pattern in _extra:
        text, count = pattern.subn(f"[REDACTED:{kind}]", text)
        run.kinds += [kind] * count
    low = text.lower()
    if any(c in text for c in ":=") and any(h in low for h in _ASSIGNMENT_HINTS):
        text = r.assignment.sub(lambda m: _assignment(m, run), text)
    if any(h in low for h in _HINTS) or "PIN" in text:
        text = r.forward.sub(lambda m: _forward(m, run), text)
        text = r.weak.sub(lambda m: _weak(m, run), text)
        text = r.backward.sub(lambda m: _backward(m, run), text)
        if "\n" in text:
            text = _credential_lists(text, run)
        if "," in text:
            text = _csv_rows(text, run)
    if any(h in low for h in _LOGIN_HINTS):
        text = r.pair.sub(lambda m: _pair(m, run), text)
    if "[REDACTED:aws-access-key]" in text or "aws" in low or "secret" in low:
        text = _aws_secrets(text, run)
    remembered = run.found | run.here | (known or set())
    for secret in sorted(remembered, key=len, reverse=True):
        if secret in text:
            count = text.count(secret)
            text = text.replace(secret, "[REDACTED:password]" if secret in run.here else "[REDACTED:known-secret]")
            run.kinds += ["password" if secret in run.here else "known-secret"] * count
    if known is not None:
        known.update(run.found)
    return text, run.kinds


def _replace_in(m: re.Match, group: str, raw: str, bare: str, marker: str) -> str:
    """The whole match with `bare` (inside the group's `raw` text) replaced: quotes and punctuation stay."""
    whole = m.group(0)
    at = m.start(group) - m.start() + max(raw.find(bare), 0)
    return whole[:at] + marker + whole[at + len(bare):]


def _forward(m: re.Match, run: _Pass) -> str:
    """"the password is X", "Your password `X` is …", "密码是 X", "PIN 4821"."""
    raw, bare, quoted = _value_of(m)
    if not bare or _rejected(bare):
        return m.group(0)
    word = m.group("word")
    pin = "pin" in word.lower()
    conn = m.group("conn")
    assertive = bool(_ASSERTIVE_RE.search(conn))
    after = m.string[m.end():m.end() + 24]
    if pin:
        if not (quoted or (bare.isdigit() and 4 <= len(bare) <= 12) or _random_like(bare)):
            return m.group(0)
    elif bare.isdigit():
        if len(bare) < 4 or _COUNT_AFTER_RE.match(after) or not (quoted or assertive):
            return m.group(0)  # "passwords of 12 characters", "password 2 of 3"
    elif not (quoted or _secret_like(bare)):
        if word.lower() in ("pass", "pw") or not (assertive and _plain_word(bare) and _CLAUSE_END_RE.match(after)):
            return m.group(0)  # "PASS: tests" is a test report
    if m.string[m.end():m.end() + 1] == "(":
        return m.group(0)  # a call
    return _replace_in(m, "value", raw, bare, run.hidden("password", bare))


def _weak(m: re.Match, run: _Pass) -> str:
    """"the API key is 3f9a…", "token: …": only values that look generated."""
    raw, bare, _ = _value_of(m)
    if not bare or " " in bare or _rejected(bare) or not _random_like(bare) or m.string[m.end():m.end() + 1] == "(":
        return m.group(0)
    return _replace_in(m, "value", raw, bare, run.hidden("token", bare))


def _backward(m: re.Match, run: _Pass) -> str:
    """"use X as the initial password", "X is my password": the value before the name."""
    before = m.string[max(0, m.start() - 240):m.start()]
    found = _redactor().value_before.search(before)
    if found is None:
        return m.group(0)
    raw, bare, quoted = _value_of(found)
    verb = (found.group("verb") or "").strip().lower()
    if not bare or _rejected(bare) or "[REDACTED" in raw:
        return m.group(0)
    if not (quoted or _secret_like(bare) or (verb and _plain_word(bare))):
        return m.group(0)
    # The value lies before this match: remember it, and the end-of-text pass hides it wherever it is.
    run.hidden("password", bare)
    run.here.add(bare)
    run.kinds.pop()  # counted when the end-of-text pass hides it
    return m.group(0)


def _pair(m: re.Match, run: _Pass) -> str:
    """"log in with admin / X", "credentials: root:X"."""
    raw, bare, quoted = _value_of(m)
    user, sep = m.group("user"), m.group("sep")
    if not bare or _rejected(bare) or "[REDACTED" in raw or user.isdigit():
        return m.group(0)
    if user.lower() in _NOT_VALUES - {"admin", "root", "user"} or bare.lower() in _NOT_VALUES:
        return m.group(0)
    if sep == ":" and (bare.startswith("//") or user.lower() in ("http", "https", "ftp", "ssh")):
        return m.group(0)
    # A plain word is a password only in a lower-case pair ("admin / hunter"); "Google / GitHub" names two services.
    if not (quoted or _secret_like(bare) or (bare.isalpha() and bare.islower() and user.islower() and len(bare) >= 3)):
        return m.group(0)
    return _replace_in(m, "value", raw, bare, run.hidden("password", bare))


def _credential_lists(text: str, run: _Pass) -> str:
    """Items under a line about credentials ("Test accounts:", "## Passwords"): their secret-looking parts.

    Only list items and `label: value` lines count, up to the next blank line, heading or code fence. Under a
    line about passwords a lone word is one; under one about accounts it must look made up.
    """
    r = _redactor()
    lines = text.split("\n")
    changed = False
    under = 0  # lines left in the current credentials list
    strong = False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped or stripped.startswith(("```", "~~~", "#")):
            under = 0
        elif under:
            item = r.list_item.match(line)
            if item or r.label_line.match(line):
                body = item.group("body") if item else stripped
                new = _list_item_secret(body, run, strong)
                if new != body:
                    lines[i] = line.replace(body, new, 1)
                    changed = True
                under -= 1
                continue
            under = 0
        heading = stripped.startswith("#") or (stripped.startswith("**") and stripped.rstrip(":：").endswith("**"))
        if (stripped.endswith((":", "：")) or heading) and len(stripped) <= 160:
            lead = r.list_lead.search(stripped)
            if lead:
                under, strong = 30, bool(r.strong_lead.search(stripped))
    return "\n".join(lines) if changed else text


def _list_item_secret(body: str, run: _Pass, strong: bool) -> str:
    """One credentials-list item with its secret hidden: the item itself when it is one token, else its last field."""
    parts = _redactor().split_field.split(body)
    candidate = parts[-1].strip() if len(parts) > 1 else body.strip()
    value, quoted = _strip_quotes(candidate)
    bare = value if quoted else _trim(value)
    if not bare or " " in bare or _rejected(bare):
        return body
    if not (quoted or _secret_like(bare) or (strong and len(parts) == 1 and len(bare) >= 4)):
        return body
    cut = body.rfind(bare)
    return body[:cut] + run.hidden("password", bare) + body[cut + len(bare):]


_CSV_SECRET_COLUMN_RE = re.compile(r"(?i)\b(?:pass(?:word|wd)?|secret|token|api[ _-]?key|private[ _-]?key|pin|pwd)\b|"
                                   r"contraseña|senha|пароль|密码|密碼")


def _csv_rows(text: str, run: _Pass) -> str:
    """Rows under a CSV header with password or secret columns: those cells; in any row holding an AWS key id,
    the cells that look generated."""
    lines = text.split("\n")
    columns: list[int] = []
    width = 0
    changed = False
    for i, line in enumerate(lines):
        if "," not in line:
            columns = []
            continue
        cells = line.split(",")
        names = [c.strip().strip('"').lower() for c in cells]
        if all(0 < len(n) <= 40 and not any(ch.isdigit() for ch in n) for n in names) \
                and any(_CSV_SECRET_COLUMN_RE.search(n) for n in names):
            columns = [j for j, n in enumerate(names)
                       if _CSV_SECRET_COLUMN_RE.search(n) and not n.endswith(("id", "link", "url", "name", "names"))]
            width = len(cells)
            continue
        hide = columns if columns and len(cells) == width else []
        if "[REDACTED:aws-access-key]" in line:
            hide = hide + [j for j, c in enumerate(cells) if _random_like(c.strip().strip('"')) and "://" not in c]
        for j in hide:
            cell = cells[j].strip().strip('"')
            if cell and "[REDACTED" not in cell and not _PLACEHOLDER_RE.match(cell):
                cells[j] = cells[j].replace(cell, run.hidden("password" if j in columns else "aws-secret-key", cell))
                changed = True
        lines[i] = ",".join(cells)
    return "\n".join(lines) if changed else text


def _aws_secrets(text: str, run: _Pass) -> str:
    """40-character secret access keys near an AWS key id, or near a mention of AWS or of a secret."""
    def hide(m: re.Match) -> str:
        value = m.group(0)
        if not (any(c.isupper() for c in value) and any(c.islower() for c in value) and any(c.isdigit() for c in value)):
            return value
        window = text[max(0, m.start() - 300):m.end() + 300].lower()
        if not ("aws" in window or "secret" in window or "[redacted:aws-access-key]" in window):
            return value
        return run.hidden("aws-secret-key", value)

    return _redactor().aws_secret.sub(hide, text)


# Key names holding a setting about secrets, not a secret: password_min_length, max_tokens, token_url, SECRET_NAME.
_SETTING_KEY_RE = re.compile(
    r"(?i)(?:length|len|min|max|count|size|policy|field|column|file|path|dir|env|name|label|placeholder|hint|prompt|"
    r"regex|pattern|reset|expir\w*|ttl|timeout|rotation|required|type|hash|hashed|url|uri|endpoint|header|limit|"
    r"usage|used|budget|id|ids|namespace|strength|format|mode|enabled|provider|manager|store|ref|arn|location|"
    r"version|prefix|suffix|template|scope|scopes|kind|source|method|at|on|storage|key_name)$|^(?:max|min|num|n)_")


def _assignment(m: re.Match, run: _Pass) -> str:
    """`password=…`, `"client_secret": "…"`, `export X_TOKEN=…`: the key stays, the value goes."""
    prefix = _redactor().key_before.search(m.string[max(0, m.start() - 60):m.start()])
    key = (prefix.group(0) if prefix else "") + m.group("kw") + m.group("suffix")
    low_key = key.lower().strip("._-")
    if m.group("kw").lower() == "pass" and not (re.fullmatch(r"(?:[\w.-]*[_.-])?pass", low_key)
                                               and ("=" in m.group("sep") or _secret_like(_trim(m.group("value"))))):
        return m.group(0)  # `pass=` names a password; `compass=`, `passthrough=`, "PASS: Structure" do not
    raw = m.group("value")
    value, quoted = _strip_quotes(raw)
    if _SETTING_KEY_RE.search(low_key) or value.startswith("[REDACTED:") or m.string[m.end():m.end() + 1] == "(":
        return m.group(0)
    strong = strong_key(low_key)
    bare = value if quoted else value.rstrip(".,:;)]}'\"`")
    if not bare or _PLACEHOLDER_RE.match(bare) or len(set(bare)) == 1 or "(" in bare or "[" in bare \
            or bare.startswith(("$", "<", "{", "%")) or _CODE_REFERENCE_RE.match(bare):
        return m.group(0)
    if quoted and " " in bare and not strong_key(low_key):
        return m.group(0)  # a sentence in quotes under a token-like key is prose, not a token
    if bare.isidentifier() and any(w in bare.lower() for w in ("pass", "secret", "token", "key", "pwd")):
        return m.group(0)  # token: user_token
    if strong:
        if len(bare) < 3 or (bare.isdigit() and len(bare) < 4) or bare.lower() in _NOT_VALUES:
            return m.group(0)
    elif not _random_like(bare):
        return m.group(0)
    return _replace_in(m, "value", raw, bare, run.hidden("assignment", bare))


def strong_key(key: str) -> bool:
    """A key that names a password-like secret: any value it is given is one."""
    return any(w in key for w in ("pass", "pwd", "secret", "contraseña", "senha", "пароль", "private_key",
                                  "privatekey", "private-key"))


def redact_memory(text: str, subject: str = "", value: str = "", keywords: tuple[str, ...] | list[str] = (),
                  known: set[str] | None = None) -> tuple[str, str, str, list[str], list[str]]:
    """(text, subject, value, keywords, kinds) of one memory, redacted together.

    A rule's captures are redacted in sight of the text they came from: a
    capture that redaction took out of the text, or that holds a secret
    itself, is not kept raw ("STAGING_DATABASE_PASSWORD=…" keeps its key as
    subject, never its value). A keyword that only the secret held goes too.
    """
    learnt: set[str] = set() if known is None else known
    redacted, kinds = redact(text, learnt)
    out = []
    for capture in (subject, value):
        new, found = redact(capture, learnt) if capture else (capture, [])
        kinds += found
        if capture and kinds and (found or capture.lower() not in redacted.lower()):
            new = "[REDACTED:capture]" if not found else new
        out.append(new)
    if kinds:
        low, low_redacted = text.lower(), redacted.lower()
        keywords = [k for k in keywords if (k in low_redacted or k not in low)
                    and not any(k in secret.lower() or secret.lower() in k for secret in learnt)]
    return redacted, out[0], out[1], list(keywords), kinds


def redact_text(text: str) -> str:
    """Just the redacted text (for printing and exporting)."""
    return redact(text)[0]


def mostly_redacted(text: str) -> bool:
    """True when redaction markers make up most of what the text says."""
    left = _REDACTED_RE.sub("", text)
    markers = len(text) - len(left)
    return markers > 0 and len(left.strip()) < max(20, markers)


def was_redacted(text: str) -> bool:
    """True when the text holds a redaction marker."""
    return "[REDACTED:" in text


# --- extra kinds from YAML (miner side only) ------------------------------------------------


def shipped_secret_file() -> Path:
    from .rules import default_rules_dir

    return default_rules_dir() / "secrets.yaml"


def user_secret_file() -> Path:
    from ..paths import config_dir

    return config_dir() / "secrets.yaml"


def parse_secret_file(path: Path | str, text: str | None = None) -> list[tuple[str, re.Pattern]]:
    """(kind, compiled pattern) of each rule in one secrets file; SecretRuleError on any problem.

    Schema: `secrets:` a list of {kind, pattern, ignore_case?, description?,
    examples: {match: [...], no_match: [...]}}. Patterns with nested unbounded
    repeats are refused (they can backtrack for ever on hostile text).
    """
    from pathlib import Path

    import yaml

    from .rules import unsafe_repeat

    source = str(path)
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8") if text is None else text)
    except OSError as exc:
        raise SecretRuleError(f"{source}: cannot read: {exc.strerror}") from None
    except yaml.YAMLError as exc:
        raise SecretRuleError(f"{source}: not valid YAML: {getattr(exc, 'problem', exc)}") from None
    if data is None:
        return []
    if not isinstance(data, dict) or set(data) - {"secrets", "version"}:
        raise SecretRuleError(f"{source}: a secrets file is a mapping with a `secrets:` list")
    out = []
    for i, raw in enumerate(data.get("secrets") or []):
        where = f"{source}: secret #{i + 1}"
        if not isinstance(raw, dict) or set(raw) - {"kind", "pattern", "ignore_case", "description", "examples"}:
            raise SecretRuleError(f"{where}: needs `kind` and `pattern` (optional: ignore_case, description, examples)")
        kind, pattern = raw.get("kind"), raw.get("pattern")
        if not isinstance(kind, str) or not _KIND_RE.match(kind):
            raise SecretRuleError(f"{where}: `kind` must be lower-case letters, digits and dashes")
        where = f"{source}: secret {kind}"
        if not isinstance(pattern, str) or not pattern:
            raise SecretRuleError(f"{where}: `pattern` must be a non-empty string")
        try:
            compiled = re.compile(pattern, re.IGNORECASE if raw.get("ignore_case") else 0)
        except re.error as exc:
            raise SecretRuleError(f"{where}: pattern does not compile: {exc}") from None
        problem = unsafe_repeat(pattern)
        if problem:
            raise SecretRuleError(f"{where}: {problem}")
        examples = raw.get("examples") or {}
        if not isinstance(examples, dict):
            raise SecretRuleError(f"{where}: `examples` must have `match` and/or `no_match` lists")
        for example in examples.get("match") or []:
            if not compiled.search(str(example)):
                raise SecretRuleError(f"{where}: example should match but does not: {example!r}")
        for example in examples.get("no_match") or []:
            if compiled.search(str(example)):
                raise SecretRuleError(f"{where}: example should not match but does: {example!r}")
        out.append((kind, compiled))
    return out


def load_extra(files: Iterable[Path | str] | None = None) -> list[tuple[str, re.Pattern]]:
    """Load extra secret kinds (default: the shipped file, then the user's) for this process; returns them."""
    global _extra
    if files is None:
        files = [p for p in (shipped_secret_file(), user_secret_file()) if p.is_file()]
    loaded: list[tuple[str, re.Pattern]] = []
    for path in files:
        loaded += parse_secret_file(path)
    _extra = loaded
    return loaded
