"""Finding secrets in a text and hiding them: the passes of `redact`.

`hide_secrets` runs the passes in order, each only when a cheap hint is in
the text: the token shapes and the extra kinds from YAML, `key = value`
assignments, a value next to a word that names a secret ("the password is
X", "X as the initial password"), a user and password in a login context,
the items of a credentials list, the secret columns of a CSV file or a
Markdown table, an AWS secret access key near its key id. The patterns are
`secret_patterns`' and `secret_shapes`', the tests a value must pass
`secret_values`', the tables `secret_tables`';
`redact` is the public face.
"""

from __future__ import annotations

import re

from .secret_numbers import DIGIT_RUN_RE, card_numbers, ibans
from .secret_patterns import (
    ASSIGNMENT_HINTS,
    ASSIGNMENT_JOINS,
    BARE_KEY_WORDS,
    HINTS,
    KEYPAD_NAMES,
    LOGIN_HINTS,
    PROMPTED_HINTS,
    SET_VERB_RE,
    STRONG_HINTS,
    VENDOR_PREFIX_RE,
    WEAK_HINTS,
    patterns,
)
from .secret_sentences import answered, generated, more_in_sentence, named_nearby
from .secret_shapes import SHAPE_HINTS, SHAPES, gated, hint_index, hinted, holds_any
from .secret_tables import (
    ACCOUNT_HINTS,
    account_rows,
    csv_rows,
    pgpass_lines,
    sensitive_values,
    sql_inserts,
    table_rows,
)
from .secret_values import (
    CLAUSE_END_RE,
    COUNT_AFTER_RE,
    NOT_VALUES,
    PLACEHOLDER_RE,
    SETTING_KEY_RE,
    code_reference,
    hide_literal,
    mixed,
    plain_word,
    random_like,
    reads_as_words,
    rejected,
    secret_like,
    slashed_password,
    strip_quotes,
    trim,
    value_of,
)

MIN_PROPAGATED = 6  # a secret this long (and made up, not a word) is hidden wherever it appears again

# A join that states the value ("is", ":", "是"), which may then be a plain word.
_ASSERTIVE_RE = re.compile(r"[:=：|是为為は가는은이]|\b(?:is|was|are|were|remains|becomes|be|es|era|fue|siendo|est|était|ist|"
                           r"lautet|war|это|è|é|c['’]est|là|adalah|ialah|är|este|yra|είναι|היא|הוא|هي|هو|است|है)\b|[—–→-]",
                           re.IGNORECASE)


class _Pass:
    """One text's redaction: the kinds found and the literal secrets learnt."""

    def __init__(self) -> None:
        self.kinds: list[str] = []
        self.found: set[str] = set()  # hidden wherever they appear, here and in later texts
        self.here: set[str] = set()  # hidden wherever they appear in this text only (plain words)
        self.words: set[str] = set()  # the plain words given as a password, for the caller (`redact`'s `words`)

    def hidden(self, kind: str, secret: str) -> str:
        """Count one secret of `kind` and remember it (made-up ones only) for the rest of the text; the marker."""
        self.kinds.append(kind)
        if len(secret) >= MIN_PROPAGATED and secret_like(secret) and not secret.isdigit():
            self.found.add(secret)
        return f"[REDACTED:{kind}]"

    def hidden_here(self, kind: str, secret: str, learn: bool = True) -> str:
        """As `hidden`, for a value hidden for standing near a secret: learnt, as `hidden` learns, only when it
        looks generated (`generated`) and `learn`; else (a host's or a model's name, a version: `pgStaging01`,
        `ResNet50`) hidden wherever it appears in this text, never in a later one nor in what the store holds."""
        if learn and generated(secret):
            return self.hidden(kind, secret)
        self.kinds.append(kind)
        if len(secret) >= MIN_PROPAGATED:
            self.here.add(secret)
        return f"[REDACTED:{kind}]"


# The extra kinds' literals (`regex_analysis.required_literals`: every match holds one of its kind's) indexed, and
# the kinds that run always; built once for a list of kinds.
_extra_index: list = [None, ()]  # [the list of kinds, (the kinds that run always, the index)]


def _extra_due(extra: list[tuple[str, re.Pattern]], lowered: str, after: int = -1) -> list[int]:
    """The extra kinds (their indexes, past `after`, in order) that may match in `lowered`."""
    if _extra_index[0] is not extra:
        from .regex_analysis import required_literals  # (the hooks load no extra kind)

        needed = [required_literals(pattern.pattern) or () for _, pattern in extra]
        _extra_index[:] = [extra, (tuple(i for i, literals in enumerate(needed) if not literals), hint_index(needed))]
    always, index = _extra_index[1]
    return sorted(i for i in hinted(lowered, index).union(always) if i > after)


# The context passes' hints, grouped: most texts hold none, and each hint looked for cost as much as a pass.
_HINTS, _STRONG_HINTS, _LOGIN_HINTS = gated(HINTS), gated(STRONG_HINTS), gated(LOGIN_HINTS)
_NEARBY_HINTS = gated(LOGIN_HINTS + ("auth",))  # a login's words, for `named_nearby` (`secret_sentences.LOGIN_WORD_RE`)


def hide_secrets(text: str, extra: list[tuple[str, re.Pattern]], known: set[str] | None,
                 words: set[str] | None = None) -> tuple[str, list[str]]:
    """`redact` on a non-empty text: every pass in turn, then the secrets learnt hidden wherever they appear.

    `extra` holds the kinds loaded from YAML; `known` and `words` are `redact`'s.
    """
    r = patterns()
    run = _Pass()
    # The shapes whose hints the text holds, in their order.
    due = sorted(hinted(text, SHAPE_HINTS))
    for kind, source, _ in map(SHAPES.__getitem__, due):
        pattern = r.shape(kind, source)
        if "secret" in pattern.groupindex:  # the value only, its context stays
            text, count = pattern.subn(lambda m, kind=kind: _replace_group(m, "secret", f"[REDACTED:{kind}]"), text)
        else:
            text, count = pattern.subn(f"[REDACTED:{kind}]", text)
        run.kinds += [kind] * count
    # The extra kinds whose literals the text holds (a scan of each text per kind cost as much as the rest), looked
    # for again past each kind that hid something.
    low = text.lower()
    due = _extra_due(extra, low) if extra else []
    while due:
        i = due.pop(0)
        kind, pattern = extra[i]
        text, count = pattern.subn(f"[REDACTED:{kind}]", text)
        if count:
            run.kinds += [kind] * count
            low = text.lower()
            due = _extra_due(extra, low, i)
    within = low.__contains__
    if any(map(text.__contains__, ASSIGNMENT_JOINS)) and any(map(within, ASSIGNMENT_HINTS)):
        text = r.assignment.sub(lambda m: _assignment(m, run), text)
    pin = "PIN" in text
    named = pin or holds_any(low, _HINTS)  # (a word for a secret may be in the text)
    strong = named and (pin or holds_any(low, _STRONG_HINTS))
    if named:
        if strong:
            text = r.forward.sub(lambda m: _forward(m, run), text)
        if any(map(within, WEAK_HINTS)):
            text = r.weak.sub(lambda m: _weak(m, run), text)
        if strong:
            text = r.backward.sub(lambda m: _backward(m, run), text)
            if any(map(within, PROMPTED_HINTS)):
                text = r.prompted.sub(lambda m: _backward(m, run, verb_needed=True), text)
                if "what i typed" in low or "what we typed" in low:
                    text = r.typed_at_prompt.sub(lambda m: _backward(m, run), text)
            text = _code_lists(text, run)
        if "\n" in text:
            text = _credential_lists(text, run)
        if "," in text:
            text = csv_rows(text, run.hidden)
        if "|" in text:
            text = table_rows(text, run.hidden)
    if holds_any(low, _LOGIN_HINTS):
        text = r.pair.sub(lambda m: _pair(m, run), text)
    if "|" in text and any(map(within, ACCOUNT_HINTS)):
        text = account_rows(text, run.hidden)
    if "insert" in low and "values" in low:
        text = sql_inserts(text, run.hidden)
    if '"sensitive"' in text:
        text = sensitive_values(text, run.hidden)
    if text.count(":") >= 4:
        text = pgpass_lines(text, run.hidden)
    if DIGIT_RUN_RE.search(text):  # every card number holds such a run, and nearly every IBAN
        text = card_numbers(text, run.hidden)
        text = ibans(text, run.hidden)
    if "[REDACTED:aws-access-key]" in text or "aws" in low or "secret" in low:
        text = _aws_secrets(text, run)
    if "]\n" in text:  # a key a terminal or an editor wrapped: its rest alone on the next line
        text = _WRAPPED_RE.sub(lambda m: m.group(1) + "\n" + run.hidden(m.group(2), m.group(3))
                               if random_like(m.group(3)) else m.group(0), text)
    if strong and ("?" in text or "？" in text) and (":" in text or "：" in text):
        text = answered(text, run.hidden)
    if named or holds_any(low, _NEARBY_HINTS):
        text = named_nearby(text, run.hidden_here)
    if "[REDACTED:" in text:
        text = more_in_sentence(text, run.hidden_here)
    remembered = run.found | run.here | (known or set())
    if "%" in text:  # a secret learnt, written again URL-encoded ("p%23ss" for "p#ss" in a connection string)
        remembered |= {form for secret in remembered for form in _percent_encoded(secret) if form != secret}
    for secret in sorted(remembered, key=len, reverse=True):
        if secret in text:
            marker = "[REDACTED:password]" if secret in run.here else "[REDACTED:known-secret]"
            text, count = hide_literal(text, secret, marker)
            run.kinds += ["password" if secret in run.here else "known-secret"] * count
    if known is not None:
        known.update(run.found)
    if words is not None:
        words.update(run.words)
    return text, run.kinds


# A marker at the end of a line, and a token alone on the next one: a key wrapped at the width of a terminal.
_WRAPPED_RE = re.compile(r"(\[REDACTED:([a-z0-9-]+)\])\n([A-Za-z0-9_\-+/=.]{16,})(?=[ \t]*(?:\n|\Z))")


def _percent_encoded(secret: str) -> tuple[str, str]:
    """The secret as a URL encodes it, with upper-case and with lower-case hex digits."""
    from urllib.parse import quote  # (only for a text holding a "%": the hooks redact their log lines here)

    encoded = quote(secret, safe="")
    return encoded, re.sub(r"%[0-9A-F]{2}", lambda m: m.group(0).lower(), encoded)


def _replace_group(m: re.Match, group: str, marker: str) -> str:
    """The whole match with one group replaced by `marker`."""
    whole = m.group(0)
    return whole[:m.start(group) - m.start()] + marker + whole[m.end(group) - m.start():]


def _replace_in(m: re.Match, group: str, raw: str, bare: str, marker: str) -> str:
    """The whole match with `bare` (inside the group's `raw` text) replaced: quotes and punctuation stay."""
    whole = m.group(0)
    at = m.start(group) - m.start() + max(raw.find(bare), 0)
    return whole[:at] + marker + whole[at + len(bare):]


_MARKER_MAX = 64  # a marker's length, with room: a kind's name is short


def _in_marker(m: re.Match) -> bool:
    """Whether a match starts inside a marker left by an earlier pass: the "credentials" of
    "[REDACTED:url-credentials]" names no credentials (it made "@localhost:5433/app" a password)."""
    opened = m.string.rfind("[REDACTED:", max(0, m.start() - _MARKER_MAX), m.start() + 1)  # (not the whole text back)
    closed = m.string.find("]", opened) if opened >= 0 else -1
    kind = m.string[opened + len("[REDACTED:"):closed] if closed >= m.start() else ""
    return bool(kind) and all(c.isascii() and (c.isalnum() or c == "-") and not c.isupper() for c in kind)


_YAML_TAG_RE = re.compile(r"!!?[A-Za-z][\w-]{0,40}")
_SETTING_RE = re.compile(r"[a-z_][a-z_-]{1,30}=.")  # `name=value`, a name in small letters


def _forward(m: re.Match, run: _Pass) -> str:
    """"the password is X", "Your password `X` is …", "密码是 X", "PIN 4821"."""
    if _in_marker(m):
        return m.group(0)
    raw, bare, quoted = value_of(m)
    if not bare or rejected(bare):
        return m.group(0)
    word = m.group("word")
    low = word.lower()
    pin = any(name in low for name in ("pin", "puk", "пин", "пін"))
    keypad = any(name in low for name in KEYPAD_NAMES)
    conn = m.group("conn")
    assertive = bool(_ASSERTIVE_RE.search(conn))
    after = m.string[m.end():m.end() + 24]
    if after[:1] in (" ", "\t") and after.strip() and _YAML_TAG_RE.fullmatch(bare):
        return m.group(0)  # a YAML tag: the value follows it (`password: !ENV ${DB_PASS}`, `!Ref DbPassword`)
    if keypad and not any(c.isdigit() for c in bare):
        return m.group(0)  # "the door code is broken": a door's or an alarm's code holds a digit
    if _SETTING_RE.match(bare):
        return m.group(0)  # a command's setting after the word (`--secret id=npmrc`, `… --from-literal=password=…`):
        # the assignment pass judges what it sets
    if "," in conn and not random_like(bare):
        return m.group(0)  # past a comma only a made-up value: "passwords with argon2id, m=65536" is a setting
    if pin:
        if not (quoted or (bare.isdigit() and 4 <= len(bare) <= 12) or random_like(bare)):
            return m.group(0)
    elif low in ("pass", "pw", "contra", "пасс") and not any(c.isalpha() for c in bare):
        return m.group(0)  # "tests pass de nuevo: 42/42": these short names take a value with a letter
    elif bare.isdigit():
        if len(bare) < 4 or COUNT_AFTER_RE.match(after) or not (quoted or assertive or keypad):
            return m.group(0)  # "passwords of 12 characters", "password 2 of 3"
    elif not (quoted or secret_like(bare)):
        if low in ("pass", "pw", "contra", "пасс") or not (assertive and plain_word(bare)
                                                        and CLAUSE_END_RE.match(after)):
            return m.group(0)  # "PASS: tests" is a test report
    if m.string[m.end():m.end() + 1] == "(":
        return m.group(0)  # a call
    if bare.isalpha() and len(bare) >= MIN_PROPAGATED:
        run.here.add(bare)  # a plain word: hidden in this text, and handed to the caller as one (never learnt)
        run.words.add(bare)
    return _replace_in(m, "value", raw, bare, run.hidden("password", bare))


def _weak(m: re.Match, run: _Pass) -> str:
    """"the API key is 3f9a…", "token: …": only values that look generated."""
    if _in_marker(m):
        return m.group(0)
    raw, bare, _ = value_of(m)
    if not bare or " " in bare or rejected(bare) or not random_like(bare) or m.string[m.end():m.end() + 1] == "(":
        return m.group(0)
    if reads_as_words(bare):
        if m.group("word").lower() in BARE_KEY_WORDS:
            return m.group(0)  # a cache, sort, flag or message key named with words ("user:42:profile")
        return _replace_in(m, "value", raw, bare, run.hidden_here("token", bare, learn=False))  # ("AES-256-GCM")
    if m.group("to") and not (generated(bare) or generated(VENDOR_PREFIX_RE.sub("", bare))
                              or SET_VERB_RE.search(m.string, max(0, m.start() - 48), m.start())):
        return m.group(0)  # "check the key on staging01": set "to" a value, not anything near the name
    if raw.startswith("(") or ("/" in bare and bare == bare.lower()):
        return m.group(0)  # an aside ("keys (`Merger.java:31`)") or a lower-case path ("key `prod/app.tfstate`")
    if "://" in bare or "${" in bare or "=" in bare.rstrip("="):
        return m.group(0)  # code ("Key design: `BASE_URL=\"${API_URL:-http://…}\"`"), not a generated key
    if m.group("bare") and not (len(bare) >= 16 and bare.rstrip("=").replace("_", "").replace("-", "").isalnum()
                                and sum(c.isdigit() for c in bare) >= 4):
        return m.group(0)  # past words ("the key difference is python3.12"), only a long generated token
    return _replace_in(m, "value", raw, bare, run.hidden("token", bare))


def _backward(m: re.Match, run: _Pass, verb_needed: bool = False) -> str:
    """"use X as the initial password", "X is my password": the value before the name (after a verb such as "type"
    or "enter" when `verb_needed`)."""
    if _in_marker(m):
        return m.group(0)
    before = m.string[max(0, m.start() - 240):m.start()]
    found = patterns().value_before.search(before)
    if found is None:
        return m.group(0)
    raw, bare, quoted = value_of(found)
    verb = (found.group("verb") or "").strip().lower()
    if verb_needed and not (verb and (quoted or secret_like(bare))):
        return m.group(0)  # "type help when it asks for the password" is advice
    if not bare or rejected(bare) or "[REDACTED" in raw:
        return m.group(0)
    if not (quoted or secret_like(bare) or (verb and plain_word(bare))):
        return m.group(0)
    if "prompt" in m.groupdict() and (" " in bare or not random_like(bare)):
        return m.group(0)  # "`npm test` is what I typed at the prompt" names a command
    # The value lies before this match: remember it, and the end-of-text pass hides it wherever it is.
    run.hidden("password", bare)
    run.here.add(bare)
    run.kinds.pop()  # counted when the end-of-text pass hides it
    return m.group(0)


def _pair(m: re.Match, run: _Pass) -> str:
    """"log in with admin / X", "credentials: root:X"."""
    if _in_marker(m):
        return m.group(0)
    raw, bare, quoted = value_of(m)
    user, sep = m.group("user"), m.group("sep")
    if not bare or rejected(bare) or "[REDACTED" in raw or user.isdigit():
        return m.group(0)
    if user.lower() in NOT_VALUES - {"admin", "root", "user"} or bare.lower() in NOT_VALUES:
        return m.group(0)
    if sep == ":" and (bare.startswith("//") or user.lower() in ("http", "https", "ftp", "ssh")):
        return m.group(0)
    if sep == "/" and not slashed_password(user, bare):
        return m.group(0)  # "admin/admin123" is a pair; "src/auth2", "Google/GitHub2", "docs/setup.md" are not
    if sep.strip() in ("and", "with", "e", "y", "et", "und", "con", "com", "mit", "avec"):
        account, slash, password = bare.rpartition("/")
        if slash:  # "log into grafana with admin/X": the account stays; a path or a ref ("docker/login-action@v3")
            if slashed_password(account, password):
                return _replace_in(m, "value", raw, password, run.hidden("password", password))
            return m.group(0)
        if not random_like(bare):
            return m.group(0)  # "credentials for staging and production": only a made-up value after a word
    # A plain word is a password only in a lower-case pair ("admin / hunter"); "Google / GitHub" names two services.
    if not (quoted or secret_like(bare) or (bare.isalpha() and bare.islower() and user.islower() and len(bare) >= 3)):
        return m.group(0)
    return _replace_in(m, "value", raw, bare, run.hidden("password", bare))


def _code_lists(text: str, run: _Pass) -> str:
    """Recovery and backup codes listed after their name ("2FA backup codes: 4829-1073 5561-9284 …"): each code-like
    token up to the end of the paragraph (600 characters at most) is one."""
    r = patterns()
    pieces, at = [], 0
    for lead in r.codes_lead.finditer(text):
        if lead.end() <= at:
            continue
        end = text.find("\n\n", lead.end())
        end = min(len(text) if end < 0 else end, lead.end() + 600)
        pieces.append(text[at:lead.end()])
        pieces.append(r.code_token.sub(lambda m: run.hidden("recovery-code", m.group(0)), text[lead.end():end]))
        at = end
    return "".join(pieces) + text[at:] if pieces else text


def _credential_lists(text: str, run: _Pass) -> str:
    """Items under a line about credentials ("Test accounts:", "## Passwords"): their secret-looking parts.

    Only list items and `label: value` lines count, up to the next blank line, heading or code fence. Under a
    line about passwords a lone word is one; under one about accounts it must look made up.
    """
    r = patterns()
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
    parts = patterns().split_field.split(body)
    candidate = parts[-1].strip() if len(parts) > 1 else body.strip()
    value, quoted = strip_quotes(candidate)
    bare = value if quoted else trim(value)
    if not bare or " " in bare or rejected(bare):
        return body
    if not (quoted or secret_like(bare) or (strong and len(parts) == 1 and len(bare) >= 4)):
        return body
    cut = body.rfind(bare)
    return body[:cut] + run.hidden("password", bare) + body[cut + len(bare):]


def _aws_secrets(text: str, run: _Pass) -> str:
    """40-character secret access keys near an AWS key id, or near a mention of AWS or of a secret."""
    def hide(m: re.Match) -> str:
        value = m.group(0)
        if not mixed(value) or "EXAMPLE" in value:  # (the documentation's own example key)
            return value
        window = text[max(0, m.start() - 300):m.end() + 300].lower()
        if not ("aws" in window or "secret" in window or "[redacted:aws-access-key]" in window):
            return value
        return run.hidden("aws-secret-key", value)

    return patterns().aws_secret.sub(hide, text)


_CAMEL_RE = re.compile(r"[a-z][A-Z]")


def _assignment(m: re.Match, run: _Pass) -> str:
    """`password=…`, `"client_secret": "…"`, `export X_TOKEN=…`: the key stays, the value goes."""
    if _in_marker(m):
        return m.group(0)
    prefix = patterns().key_before.search(m.string[max(0, m.start() - 60):m.start()])
    before = prefix.group(0) if prefix else ""
    kw = m.group("kw").lower()
    if kw in ("key", "salt") and not (before[-1:] in ("_", ".", "-") or before[-1:].islower()
                                      and m.group("kw")[0].isupper() or kw == "salt" and not before):
        return m.group(0)  # `AccountKey=`, `storage_key:`, `AUTH_SALT=` name one; `key:`, `monkey:`, `basalt=` do not
    key = before + m.group("kw") + m.group("suffix")
    low_key = key.lower().strip("._-")
    if m.group("table") and not ("_" in key or key.isupper() or _CAMEL_RE.search(key)):
        return m.group(0)  # `| DB_PASSWORD | … |`, `SMTP_PASS → …` name a variable; "| password | string |" is prose
    if m.group("kw").lower() == "pass" and not (re.fullmatch(r"(?:[\w.-]*[_.-])?(?:ssh)?pass", low_key)
                                               and ("=" in m.group("sep") or secret_like(trim(m.group("value"))))):
        return m.group(0)  # `pass=`, `SSHPASS=` name a password; `compass=`, `passthrough=`, "PASS: Structure" do not
    raw = m.group("value")
    value, quoted = strip_quotes(raw)
    if SETTING_KEY_RE.search(low_key) or value.startswith("[REDACTED:") or m.string[m.end():m.end() + 1] == "(":
        return m.group(0)
    strong = strong_key(low_key)
    bare = value if quoted else value.rstrip(".,:;)]}'\"`")
    if not bare or PLACEHOLDER_RE.match(bare) or len(set(bare)) == 1 or not quoted and ("(" in bare or "[" in bare) \
            or bare.startswith(("$", "<", "{", "%", "ssh-", "ecdsa-sha2-")) or code_reference(bare):
        return m.group(0)
    if quoted and " " in bare and not strong_key(low_key):
        return m.group(0)  # a sentence in quotes under a token-like key is prose, not a token
    if bare.isidentifier() and any(w in bare.lower() for w in ("pass", "secret", "token", "key", "pwd")):
        return m.group(0)  # token: user_token
    if strong:
        if len(bare) < 3 or (bare.isdigit() and len(bare) < 4) or bare.lower() in NOT_VALUES:
            return m.group(0)
        if m.group("table") and not (quoted or secret_like(bare)):
            return m.group(0)  # beside a pipe or an arrow a word is as often a note ("| DB_PASSWORD | unset |")
    elif not random_like(bare):
        return m.group(0)
    return _replace_in(m, "value", raw, bare, run.hidden("assignment", bare))


def strong_key(key: str) -> bool:
    """A key that names a password-like secret: any value it is given is one."""
    return any(w in key for w in ("pass", "pwd", "secret", "contraseña", "senha", "пароль", "private_key",
                                  "privatekey", "private-key"))
