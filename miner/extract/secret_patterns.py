"""What secrets look like to redaction: the shapes of known kinds, the words that name a secret, and the
patterns built from them.

`SHAPES` is the table of token shapes (cloud and SaaS keys, JWTs, private-key
blocks, credentials in URLs) and of the command lines (most of them in
`secret_commands`) and configuration formats that hold a password, each with
the hints without which it cannot match; of a shape with a group named
`secret`, only that group is hidden.
The words (password-like and key-like), the joins between a name and its
value, and the hints that let a text skip the context patterns make up the
rest. `patterns()` compiles them all on first use: the hooks import
`redact` without redacting. `secret_finders` runs them; `secret_rules` adds
kinds from YAML.
"""

from __future__ import annotations

import re
from functools import cached_property

from .secret_calls import CALL_SHAPES
from .secret_commands import COMMAND_SHAPES

# A value that looks generated: a UUID, 24 hex digits or more, or sixteen characters or more with digits and both
# cases (a key or a token, never a word or a name).
_GENERATED = (r"(?P<secret>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|"
              r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{24,}|"
              r"(?=[\w+/=\-]*[0-9])(?=[\w+/=\-]*[a-z])(?=[\w+/=\-]*[A-Z])[\w+/=\-]{16,})(?![\w+/=\-])")

# (kind, pattern source, hints): a pattern runs only when one of its hints is a substring of the text as written
# (a shape that takes any case lists each casing). Order matters: specific kinds first.
SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    ("private-key", r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----.*?"
                    r"(?:-----END [A-Z ]*PRIVATE KEY(?: BLOCK)?-----|\Z)", ("-----BEGIN",)),
    # A private key's body without its armour: the DER openings, in base64, of an RSA key (PKCS#1, and PKCS#8) and
    # of an EC key (SEC 1). A certificate or a public key opens otherwise.
    ("private-key", r"\bMII[A-Za-z0-9+/]{3}(?:IBAAK[BC]|IBADANBgkqhkiG9w0BAQEFAASC)[A-Za-z0-9+/=]*|"
                    r"\bMHcCAQEEI[A-Za-z0-9+/=]{20,}",
     ("IBAAK", "IBADANBgkqhkiG9w0BAQEFAASC", "MHcCAQEEI")),
    # Django's generated secret key, and a BitLocker recovery key (eight groups of six digits).
    ("django-secret", r"\bdjango-insecure-[^\s'\"`]{20,}", ("django-insecure-",)),
    ("recovery-key", r"(?<![\d-])\d{6}(?:-\d{6}){7}(?![\d-])", ("-",)),
    # A US social security number named as one.
    ("ssn", r"(?i:\bssn\b|social[ \t]+security(?:[ \t]+(?:number|no\.?|#))?)[^\n\d]{0,20}?"
            r"(?P<secret>(?<!\d)\d{3}-\d{2}-\d{4}(?!\d))", ("SSN", "ssn", "Ssn", "ocial security", "ocial Security")),
    ("private-key", r"-----BEGIN OpenVPN Static key V1-----.*?(?:-----END OpenVPN Static key V1-----|\Z)",
     ("OpenVPN",)),
    ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", ("sk-ant-",)),
    ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", ("sk-",)),
    ("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)(?![A-Z0-9]*EXAMPLE)[A-Z0-9]{16}\b",
     ("AKIA", "ASIA", "AGPA", "AIDA", "AROA", "ANPA", "ANVA", "AIPA")),
    ("gcp-api-key", r"\bAIza[0-9A-Za-z_\-]{35}(?![0-9A-Za-z_\-])", ("AIza",)),
    ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})\b",
     ("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_")),
    ("gitlab-token", r"\b(?:glpat|gldt|glrt|glptt|glft)-[A-Za-z0-9_\-]{20,}", ("glpat-", "gldt-", "glrt-", "glptt-", "glft-")),
    ("slack-token", r"\bxox[abposre]-[A-Za-z0-9\-]{10,}", ("xox",)),
    ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/_\-]{20,}", ("hooks.slack.com",)),
    ("stripe-key", r"\b(?:(?:sk|rk)_(?:live_|test_(?=[A-Za-z]*[0-9]))[A-Za-z0-9]{16,}\b|whsec_[A-Za-z0-9+/]{24,}={0,2})",
     ("_live_", "_test_", "whsec_")),
    # A cookie's value: the first pair of a Cookie or Set-Cookie header, and a session id set in prose
    # ("sessionid=…"): long enough to be one, not a number.
    ("session-cookie", r"(?i:\b(?:set-)?cookie)[ \t]*:[ \t]*[\w.\-]{1,64}=(?P<secret>(?!\d+\b)[^;\s,]{12,})",
     ("ookie:", "OOKIE:")),
    ("session-cookie", r"(?i:sess(?:ion)?(?:[_-]?id)?|connect\.sid|remember_token|csrftoken)="
                       r"(?P<secret>(?=[^;\s&,]*[0-9])(?=[^;\s&,]*[A-Za-z])[^;\s&,]{16,})",
     ("sess", "Sess", "SESS", ".sid", "remember_", "csrf")),
    # A passphrase or a wallet's seed: the words after its name (quoted, or four words or more that are not prose).
    ("passphrase", r"(?i:\b(?:pass[ \t-]?phrase|(?:seed|recovery|backup|unlock|secret|mnemonic)[ \t-]phrase|mnemonic|"
                   r"frase[ \t]+(?:de[ \t]+)?(?:recupera[çc][ãa]o|semilla|secreta|acesso)|phrase[ \t]+de[ \t]+"
                   r"(?:récupération|passe)|wiederherstellungsphrase|seed-фраза|сид-фраза|助记词|助記詞)s?)"
                   r"(?:[ \t]+(?:for|of|to|del?|da|do|für|pour|der|des|du|для)[ \t]+[^\n:=]{1,40}?)?"
                   r"(?:[ \t]+(?:is|was|are|es|é|est|ist)[ \t]+|[ \t]*[:=：][ \t]*)"
                   r"(?P<secret>\"[^\"\n]{8,200}\"|“[^”\n]{8,200}”|'[^'\n]{8,200}'|`[^`\n]{8,200}`|"
                   r"(?:(?!(?i:the|a|an|in|on|at|to|of|for|and|or|not|is|are|be|by|it|its|my|your|our|this|that|"
                   r"with|stored|saved|kept|set|required|optional|missing|needed|used)\b)"
                   r"[^\W\d_]{3,}[ \t]+){3,23}(?:[^\W\d_]{3,}|\d{1,6}))",
     ("phrase", "Phrase", "PHRASE", "mnemonic", "Mnemonic", "frase", "Frase", "фраза", "助记词", "助記詞")),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", ("eyJ",)),
    ("bearer-token", r"(?i)(?<=\bbearer )[A-Za-z0-9_\-.~+/]{20,}=*", ("bearer ", "Bearer ", "BEARER ")),
    # "redis://:X@cache" has no user; "user:password@", "app:${DB_PASS}@" hold a placeholder
    ("url-credentials", r"(?<=://)[^/\s:@]*:(?!(?i:password|passwd|pass|pwd|secret|changeme)@|(?:\*+|[xX]+|<[^>@]*>|"
                        r"\$\{?\w+\}?)@)[^/\s@]+(?=@)", ("://",)),
    # Not a word of prose after "basic" ("basic provisioning", "Basic Authentication"): one case, or a capital first.
    ("basic-auth", r"(?:(?<=\b[Bb]asic )|(?<=\bBASIC ))(?![A-Z]?[a-z]+(?![A-Za-z0-9+/=])|[A-Z]+(?![A-Za-z0-9+/=]))"
                   r"[A-Za-z0-9+/]{8,}={0,2}(?![A-Za-z0-9+/=])", ("Basic ", "basic ", "BASIC ")),
    # A password on a command line: `mysql -u root -pX`, `sshpass -p X`, `echo X | sudo -S`; not the long flags
    # that open with a p (gcc -pthread, find -print, openssl -passin).
    ("password", r"(?<=\s-p)(?!assword|(?:thread|edantic|ipe|rint0?|rintf|rune|ath|erm|ass(?:in|out)?|ub(?:in|out)|"
                 r"keyopt|rofile|rod|latform|reset|rogress|roject|roxy|ort|refix|ackage|arallel|retty|ersist|lugin|"
                 r"lain)\b)[^\s'\"]{4,}(?=[ \t\n]|$)(?<=\S)|(?<=\bsshpass -p )\S{3,}|"
                 r"(?<=\becho )['\"]?[^\s'\"|]{3,}(?=['\"]?[ \t]*\|[ \t]*sudo[ \t]+-S)",
     (" -p", "sshpass", "sudo -S")),
    # Command lines that take a password as an argument: only the group named "secret" is hidden.
    ("password", r"\blogin\b[^\n]{0,120}?[ \t](?:-p|--password)[ \t=]+['\"]?(?P<secret>(?![-$<{])[^\s'\"]{3,})",
     ("login",)),  # docker, podman, helm, az, oc login
    # "use X to log in", "root / X": a made-up value (a digit or a symbol in it) said as a login's.
    ("password", r"(?i:\b(?:use|with|try)[ \t]+)['\"`]?(?P<secret>(?=[^\s'\"`]*[0-9!@#$%^&*])[^\s'\"`]{6,})['\"`]?"
                 r"(?i:[ \t]+to[ \t]+(?:log[ \t]*in|sign[ \t]*in|login|authenticate|connect))", ("to log", "to sign",
                                                                                          "to login", "to auth",
                                                                                          "to connect")),
    # (spaced: "root/…" and "admin/…" are paths: /root/app1, pytest-of-root/…)
    ("password", r"(?<![\w/.-])(?i:(?:root|admin|administrator)[ \t]+/[ \t]+)(?P<secret>(?=[^\s,;'\"]*[0-9!@#$%^&*])"
                 r"[^\s,;'\"]{6,})", ("root /", "admin /", "Root /", "Admin /")),
    # "it's admin:X on the router": a made-up value (a letter, and a digit or a symbol) given as the admin's.
    ("password", r"(?<![\w/.:@-])(?i:root|admin|administrator):(?P<secret>(?=[^\s,;'\"]*[A-Za-z])"
                 r"(?=[^\s,;'\"]*[0-9!@#$%^&*])[^\s,;'\"/:]{6,})(?![^\s,;'\"])", ("root:", "admin:", "Root:", "Admin:",
                                                                             "administrator:")),
    # A setting named for a password or a secret, said in prose: "the STAGING_DB_PASSWORD is X", "SECRET_KEY is 'X'".
    ("password", r"\b(?:(?:[A-Z0-9]+_)+(?:SECRET|PASSWORD|PASSWD|PASS|PWD)|SECRET_KEY)[ \t]+is[ \t]+[`'\"]?"
                 r"(?P<secret>(?=[^\s`'\"]*[0-9!@#$%^&*])[^\s`'\"]{6,})",
     ("_SECRET is", "_PASSWORD is", "_PASSWD is", "_PASS is", "_PWD is", "SECRET_KEY is")),
    # … or with no word between ("DB_PASSWORD Quartz#Lime91"): a made-up value, not a variable or a placeholder.
    ("password", r"\b(?:[A-Z0-9]+_)+(?:PASSWORD|PASSWD|PWD)[ \t]+(?P<secret>(?![$<{%])(?=[^\s`'\"]*[A-Za-z])"
                 r"(?=[^\s`'\"]*[0-9])(?=[^\s`'\"]*[!@#$%^&*])[^\s`'\"]{8,})",
     ("_PASSWORD ", "_PASSWD ", "_PWD ")),
    # A Wi-Fi QR code's payload: WIFI:T:WPA;S:<network>;P:<password>;;
    ("password", r"\bWIFI:(?:[^;\n]{0,80};){0,4}?P:(?P<secret>(?:\\.|[^;\\\n]){3,64});", ("WIFI:",)),
    # Wi-Fi and firmware settings: psk="X" (wpa_supplicant), #define WIFI_PASS "X".
    ("password", r"\bpsk[ \t]*=[ \t]*\"(?P<secret>[^\"\n]{8,63})\"", ("psk",)),
    ("password", r"#define[ \t]+\w*(?i:pass|pwd|secret|token|api_?key)\w*[ \t]+\"(?P<secret>[^\"\n]{3,})\"",
     ("#define",)),
    ("password", r"(?<![\w-])--pass(?:word|wd|phrase)?[ \t=]+['\"]?(?P<secret>(?![-$<{*@])[^\s'\"]{3,})", ("--pass",)),
    # XML configuration: <password>X</password>, <add key="ClearTextPassword" value="X" />.
    ("password", r"<(?P<tag>(?i:password|passwd|passphrase|secret|token|api[_-]?key|client[_-]?secret))>"
                 r"(?P<secret>(?![$<{*])[^<\s]{3,})</(?P=tag)>", ("assword>", "ASSWORD>", "ecret>", "oken>", "ey>")),
    ("password", r"\bkey=\"[^\"]*(?i:password|secret|token|apikey)[^\"]*\"[ \t]+"
                 r"value=\"(?P<secret>(?![$<{*])[^\"]{3,})\"", ("key=",)),
    # ~/.docker/config.json: "auth": "<base64 of user:password>".
    ("password", r"\"auth\"[ \t]*:[ \t]*\"(?P<secret>[A-Za-z0-9+/]{16,}={0,2})\"", ('"auth"',)),
    ("password", r"(?<=\s-p')[^'\n]{4,}(?=')|(?<=\s-p\")[^\"\n]{4,}(?=\")", (" -p'", ' -p"')),
    # Command lines' passwords (`secret_commands`): mongosh -p, ldapsearch -w, sqlcmd -P, ipmitool -P, …
    *COMMAND_SHAPES,
    # Code's and SQL's (`secret_calls`): auth=("u", "…"), smtp.login("u", "…"), .password("…"), SET PASSWORD '…'.
    *CALL_SHAPES,
    # A password piped to a login that reads it from stdin (echo 'X' | docker login --password-stdin), or to a
    # secret's store (printf 'X' | docker secret create NAME -).
    ("password", r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?:['\"]%s[^'\"\n]*['\"][ \t]+)?['\"]?"
                 r"(?P<secret>(?![$<{%])[^\s'\"|]{3,})['\"]?[ \t]*\|[^\n]{0,80}?"
                 r"(?:--password-stdin|\b(?:docker|podman)[ \t]+secret[ \t]+create\b)",
     ("--password-stdin", "secret create")),
    # A here-string fed to a command that names a secret: gpg --passphrase-fd 0 <<< '…', read -s PASS <<< '…',
    # vercel env add DB_PASS production <<< '…'. PowerShell's ConvertTo-SecureString; Windows' net user.
    ("password", r"(?:(?i:pass|pwd|secret|token)|[A-Z0-9]_KEY\b)[^\n]{0,80}?<<<[ \t]*['\"]?"
                 r"(?P<secret>(?![$<{])(?=[^\s'\"]*[0-9!@#%^&*])[^\s'\"]{3,})", ("<<<",)),
    # gh secret set NAME --body '…'; PHP's define('DB_PASSWORD', '…').
    ("password", r"\bgh[ \t]+secret[ \t]+set\b[^\n]{0,80}?(?:--body|-b)[ \t=]+['\"]?"
                 r"(?P<secret>(?![$<{-])[^\s'\"]{3,})",
     ("gh secret",)),
    ("password", r"\bdefine[ \t]*\([ \t]*['\"]\w*(?i:pass|pwd|secret|token|key|salt)\w*['\"][ \t]*,[ \t]*['\"]"
                 r"(?P<secret>(?![$<{]|put your unique phrase here)[^'\"\n]{3,})['\"]", ("define(", "define (")),
    # A setter given a literal: ds.setPassword("…"), client.set_api_key('…').
    ("password", r"\bset_?(?i:pass(?:word|wd)?|secret|token|api_?key|credentials?)\w*[ \t]*\([ \t]*['\"]"
                 r"(?P<secret>(?![$<{])[^'\"\n]{3,})['\"][ \t]*\)",
     ("setPass", "set_pass", "setSecret", "set_secret", "setToken", "set_token", "setApiKey", "setApi_key",
      "set_api_key", "setCredential", "set_credential")),
    # A build script's call given a literal, alone on its line: Gradle's `storePassword "…"`, `keyPassword '…'`.
    ("password", r"(?m:^[ \t]*[a-z]\w*(?:Password|Passwd|Secret|Token)[ \t]+(?P<q>['\"])"
                 r"(?P<secret>(?![$<{])[^'\"\n]{3,})(?P=q)[ \t]*$)", ("Password ", "Passwd ", "Secret ", "Token ")),
    # An e-mail address and a made-up value beside it ("Apple ID: ann@example.com / …"): an account's login.
    # (the "@" first, the address's name checked behind it: a pattern that opens with a literal is searched faster)
    ("password", r"@(?<=[\w.+-]@)[\w-]{1,63}(?:\.[\w-]{1,63})+[ \t]+/[ \t]+['\"`]?"
                 r"(?P<secret>(?=[^\s'\"`,;]*[A-Za-z])(?=[^\s'\"`,;]*[0-9!#$%^&*])[^\s'\"`,;/|]{6,64})['\"`]?"
                 r"(?![^\s,;])", (" / ",)),
    # A secret's name given a string literal wrapped in a call: String::from("…"), SecretStr("…"), Some("…").
    ("password", r"(?i:password|passwd|pwd|secret|token|api_?key)\w*[ \t]*(?::[ \t]*[\w<>:&' ]{1,30})?=[ \t]*"
                 r"[\w:.]{1,40}\([ \t]*['\"](?P<secret>(?![$<{])(?![^'\"\n]*/)(?![^'\"\n]*\.[a-z]{2,4}['\"])"
                 r"(?=[^'\"\n]*[0-9!@#%^&*])[^'\"\n]{3,})['\"][ \t]*\)",
     ("password", "Password", "PASSWORD", "passwd", "pwd", "PWD", "secret", "Secret", "SECRET", "token", "Token",
      "TOKEN", "api_key", "apiKey", "API_KEY", "apikey")),
    ("password", r"(?i:ConvertTo-SecureString)[ \t]+(?:-String[ \t]+)?['\"](?P<secret>(?![$<{])[^'\"\n]{3,})['\"]",
     ("ConvertTo-SecureString", "convertto-securestring")),
    ("password", r"(?i:\bnet[ \t]+user)[ \t]+[^\s/]+[ \t]+(?P<secret>(?![*$%<{/])[^\s/]{3,})"
                 r"(?=[ \t]+/(?i:add|domain)\b)",
     ("net user", "NET USER")),
    # SQL that sets a password: MySQL's IDENTIFIED BY '…' (the others say PASSWORD '…', which the words find).
    ("password", r"(?i:\b(?:user|grant)\b[^\n]{0,160}?\bidentified[ \t]+(?:with[ \t]+\w+[ \t]+)?by)[ \t]+['\"]"
                 r"(?P<secret>[^'\"\n]{3,})['\"]",
     ("IDENTIFIED", "identified", "Identified")),
    # redis.conf: requirepass …, masterauth ….
    ("password", r"(?m:^[ \t]*(?:requirepass|masterauth)[ \t]+['\"]?(?P<secret>(?![$<{])[^\s'\"]{3,}))",
     ("requirepass", "masterauth")),
    # An expect script answering a password prompt: send "X\r" on the line after it.
    ("password", r"(?i:pass(?:word|phrase)?)[^\n]{0,80}\n[ \t]*send[ \t]+(?:--[ \t]+)?\""
                 r"(?P<secret>[^\"\n\\]{3,})\\r\"",
     ("send ",)),
    ("password", r"(?<![\w-])--(?:new-)?(?:pin|puk)[ \t=]+(?P<secret>\d{4,12})\b", ("--pin", "--new-pin", "--puk")),
    # A flag whose name ends in what it carries: --git_basic_authorization X, --slack-bot-token X.
    ("token", r"(?<![\w-])--[\w-]*(?:token|secret|authorization|api[_-]?key)[ \t=]+['\"]?"
              r"(?P<secret>(?![-$<{])(?=[^\s'\"]*[0-9])[^\s'\"]{16,})",
     ("token", "secret", "authorization", "_key", "-key")),
    ("token", r"(?<![\w-])--(?:auth|token|api-key|apikey|access-token|auth-token)[ \t=]+['\"]?"
              r"(?P<secret>(?![-$<{])[^\s'\"]{16,})", ("--auth", "--token", "--api", "--access")),
    # A signed URL's signature (an Azure SAS, a presigned S3 or GCS link): it grants access until it expires.
    ("url-signature", r"[?&](?:sig|signature|Signature|X-Amz-Signature|X-Goog-Signature)=(?P<secret>[^&\s#]{16,})",
     ("sig=", "ignature=")),
    # A token as the whole user part of a URL: "https://<sentry key>@o1.ingest.sentry.io", "https://ghp_…@github.com".
    ("url-credentials", r"(?<=://)[A-Za-z0-9_\-]{20,}(?=@)", ("://",)),
    ("password", r"\bcurl\b[^\n]{0,200}?[ \t](?:-u|--user)[ \t=]*['\"]?[^\s:'\"$]+:(?P<secret>(?!\d+\b)[^\s'\"$()]+)",
     ("curl",)),
    ("password", r"\bhtpasswd[ \t]+(?:-\w+[ \t]+)*?-\w*b\w*(?:[ \t]+-\w+)*[ \t]+\S+[ \t]+['\"]?[^\s'\"]+['\"]?[ \t]+"
                 r"['\"]?(?P<secret>[^\s'\"]+)", ("htpasswd",)),
    # "Set `DB_PASSWORD` to `X`": a setting named for a secret, given a quoted value.
    ("password", r"(?i:\bset\b)[ \t]+`?[A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY)[A-Za-z0-9_]*`?"
                 r"[ \t]+to[ \t]+[`'\"](?P<secret>(?!your|<|\$|\{)[^\s`'\"]{3,})[`'\"]",
     ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "API_KEY")),
    # … or a value left unquoted that looks generated (`_GENERATED`).
    ("password", r"(?i:\bset\b)[ \t]+`?[A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|API_KEY)[A-Za-z0-9_]*`?"
                 r"[ \t]+to[ \t]+" + _GENERATED,
     ("PASSWORD", "PASSWD", "SECRET", "TOKEN", "API_KEY")),
    # A setting named for a key or a token, then its value ("the `HEROKU_API_KEY` is …", "TWILIO_AUTH_TOKEN …"):
    # only a value that looks generated, as a cache's or an object's key is a name.
    ("token", r"\b(?:[A-Z0-9]+_)+(?:KEY|TOKEN)`?(?:[ \t]+(?:is|was)(?:[ \t]+now)?)?[ \t]+" + _GENERATED,
     ("_KEY", "_TOKEN")),
    # "username admin, password X": a password named right after the user it goes with.
    ("password", r"(?i:\b(?:user(?:name)?|login)\b[ \t]*[:=]?[ \t]*[^\s,;]{1,64}[ \t]*[,;/][ \t]*"
                 r"(?:password|passwd|pass|pwd|pw)\b[ \t]*[:=]?[ \t]*)['\"`]?"
                 r"(?P<secret>(?![<$*{]|your|(?:str|string|int|number|bool|boolean|any|none|null|undefined|object)\b)"
                 r"[^\s,;'\"`()]{3,})",
     ("pass", "Pass", "PASS", "pwd", "PWD", "pw", "PW")),  # (the password's name, rarer than the user's)
    # A line of ~/.pgpass, named: host:port:database:user:password. (`secret_tables` finds one alone on its line.)
    ("password", r"(?<![\w.-])[\w.-]+:(?:\d{2,5}|\*):[\w*.-]+:[\w*.-]+:(?P<secret>[^\s:]+)", ("pgpass",)),
]


# Letters from the most common to the least, in English and in code; any other character is rarer still.
_COMMON_LETTERS = " etaoinsrhldcumfpgwybvkxjqz"


def _shape_hints() -> tuple[tuple[str, tuple[tuple[str, tuple[int, ...]], ...]], ...]:
    shapes: dict[str, list[int]] = {}
    for i, (_, _, hints) in enumerate(SHAPES):
        for hint in hints:
            shapes.setdefault(hint, []).append(i)
    gates: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for hint, indexes in shapes.items():
        rarest = max(hint, key=lambda c: _COMMON_LETTERS.find(c) if c in _COMMON_LETTERS else len(_COMMON_LETTERS))
        gates.setdefault(rarest, []).append((hint, tuple(indexes)))
    return tuple((gate, tuple(hints)) for gate, hints in gates.items())


# Each distinct hint of `SHAPES` and the shapes (their indexes) it lets run (many shapes share one), grouped under
# the hint's rarest character: a text without that character holds none of its hints, and one look skips them all.
SHAPE_HINTS = _shape_hints()

# --- words --------------------------------------------------------------------------------------

# What a code of digits opens ("the door code is 4821"): such a code needs no "is" before it (`secret_finders`).
KEYPAD_WORDS = ("door", "gate", "alarm", "keypad", "lockbox", "garage")
# What names such a code in the words of `_STRONG_LATIN` (the other languages' too): its value holds a digit.
KEYPAD_NAMES = (*KEYPAD_WORDS, "safe", "locker", "padlock", "combination", "digicode", "porte", "portail", "entrée",
                "puerta", "portal", "porta", "portão", "portao", "portone", "cancello", "allarm", "türcode", "turcode",
                "torcode")

# Words that name a password-like secret: any value stated for them is hidden.
_STRONG_LATIN = (
    r"pass(?:word|wd|phrase|code)s?|pwd|pswd|pword|(?:passw|p/w)(?=[ \t]*[:=])|"
    r"pass(?=[ \t]*[:=]|[ \t]+(?:is|was)[ \t]+(?:now[ \t]+)?"
    r"(?=[^\s,;]*[A-Za-z])(?=[^\s,;]*[0-9])[^\s,;]{8,})|"
    r"pw(?=[ \t]*(?:[:=]|(?:is|è|é|est|ist|es|är)[ \t])|[ \t]+[^\s,;]*[0-9]|[ \t]+(?:for|on|of|at)[ \t])|"
    r"code[\s_-]+(?:du[\s_-]+)?wi-?fi|"
    r"mdp(?=[ \t]*(?:[:=]|est[ \t])|[ \t]+(?:de|du|des|pour)[ \t])|(?:2fa|mfa|otp|totp)[\s_-]?(?:seed|secret)s?|"
    r"secret(?:\s+(?:access\s+)?key)?s?|"
    r"client[\s_-]secret|(?:wi-?fi|wpa2?|network)[\s_-]?(?:key|password)|"
    # the Wi-Fi itself stated as a made-up value ("wifi 是 X", "pass wifi là X"; not "the wifi is down")
    r"(?:pass[ \t]+)?wi-?fi(?=[ \t]*(?:[:：=]|(?:is|là|是|es|est|ist|è|é)[ \t]*)(?=[^\s,;]*[A-Za-z])(?=[^\s,;]*[0-9])"
    r"[^\s,;]{6,})|(?:recovery|backup|2fa|mfa|otp)[\s_-]?codes?|"
    rf"(?:{'|'.join(KEYPAD_WORDS)})(?:[\s_-]panel)?[\s_-]?(?:codes?|keypad|pin)|"
    # a safe's, a locker's or a lock's code or combination (its value holds a digit, as a door code's does)
    r"(?:safe|locker|padlock|lock)[\s_-]+(?:code|combination|combo)|combination[\s_-]+lock|"
    r"(?:code|combination|combo)[\s_-]+(?:for|to|of)[\s_-]+the[\s_-]+(?:safe|locker|padlock|lock)|"
    # the answer to a security question
    r"(?:security|secret)[\s_-]+(?:question[\s_-]+)?answer|memorable[\s_-]+word|"
    # … and in other languages: "le code de la porte", "el código del portal", "il codice del cancello", "Türcode".
    r"digicode|code[\s_-]+(?:de[\s_-]+la[\s_-]+porte|du[\s_-]+portail|d['’]entrée|de[\s_-]+l['’]alarme)|"
    r"c[óo]digo[\s_-]+(?:de[\s_-]+la[\s_-]+puerta|del[\s_-]+portal|de[\s_-]+la[\s_-]+alarma|da[\s_-]+porta|"
    r"do[\s_-]+port[ãa]o|do[\s_-]+alarme)|codice[\s_-]+(?:del[\s_-]+portone|del[\s_-]+cancello|della[\s_-]+porta|"
    r"dell['’]allarme)|(?:t[üu]r|tor|alarm)code|"
    r"wlan[\s_-]?(?:schlüssel|key)|"
    r"chave[\s_-]+d[oa][\s_-]+wi-?fi|"
    r"contraseñas?|clave(?:\s+de\s+acceso)?|senhas?|mot\s+de\s+passe|passw[oö]rt(?:e|es)?|kennw[oö]rt|wachtwoord|"
    r"has[łl](?:o|a|em)|heslo|lösenord(?:et)?|şifre(?:si|m)?|parola(?:\s+d['’]ordine)?|парол[ьяюем]\w*|"
    r"код\s+доступа|κωδικός|"
    r"mật\s+khẩu|kata\s+sandi(?:nya)?|kata\s+laluan(?:nya)?|"
    r"passord(?:et)?|adgangskode(?:n)?|kodeord(?:et)?|salasana(?:n)?|"
    r"lykilorð(?:ið)?|parool(?:i)?|parole|slaptažodis|geslo|lozink[aeu]|лозинк[аеу]|парол[аи]|jelsz[óoa]\w*|şifrə|"
    r"nenosiri"
)
# The same in scripts written without spaces: such a word may follow a Latin letter ("DBパスワード").
_STRONG_UNSPACED = (
    r"סיסמ[הא]|رمز\s+عبور|گذرواژه|پاس\s+ورڈ|পাসওয়ার্ড|கடவுச்சொல்|รหัสผ่าน|密码|密碼|口令|密钥|密鑰|秘钥|パスワード|パスフレーズ|暗証番号|비밀번호|비번|패스워드|암호|पासवर्ड|"
    r"كلمة\s+(?:المرور|السر)"
)
_STRONG_WORDS = _STRONG_LATIN + "|" + _STRONG_UNSPACED
# Words that name a key or token (any key: "the sandbox key is X"): only a value that looks random is hidden.
_WEAK_WORDS = (
    r"(?:api|access|auth|bearer|refresh|session|private|signing|encryption|master|licen[cs]e|deploy|personal\s+access|"
    r"integration|routing)[\s_-]?(?:key|token)s?|api[\s_-]?keys?|keys?|tokens?|credentials?|"
    r"clé[\s_-]+(?:d['’])?api|clave[\s_-]+(?:de[\s_-]+)?api|chave[\s_-]+(?:de[\s_-]+)?api|api[\s_-]?schlüssel"
)
_PIN = (r"\bPIN(?:(?:[\s-]?(?:code|number|Code|Nummer))?\b|[ \t]?번호)|\bPUK\b|\b[Pp]in[\s-]?(?:code|number)\b|\bcódigo\s+PIN\b|"
        r"(?<![А-Яа-яЁёІіЇїЄє])(?:ПИН|пин|Пин|ПІН|Пін|пін)(?:-код)?(?![А-Яа-яЁёІіЇїЄє])")
# An API key's name in French, Spanish, Portuguese and German (in `_WEAK_WORDS`), as hints.
_WEAK_NAMES = ("clé", "clave api", "clave de api", "chave", "schlüssel")
# Lower-case substrings whose presence means a context pattern may fire (checked before any of them runs).
HINTS = ("pass", "pwd", "pswd", "pword", "p/w", "secret", "contrase", "clave", "senha", "mot de passe", "kennw",
         "wachtwoord", "hasło", "hasła", "haseł", "heslo",
         "lösenord", "κωδικός", "mật khẩu", "kata sandi", "รหัสผ่าน", "kata laluan", "passord", "adgangskode", "kodeord",
         "salasana", "lykilorð", "parool", "parole", "slaptažod", "geslo", "lozink", "лозинк", "jelsz", "şifrə",
         "nenosiri", "סיסמ", "رمز عبور", "گذرواژه", "پاس ورڈ", "পাসওয়ার্ড", "கடவுச்சொல்",
         "haslo", "hasla", "şifre", "parol", "парол", "код доступа", "密码", "密碼", "口令", "密钥", "密鑰", "秘钥", "パスワード",
         "暗証", "パスフレーズ", "비밀번호", "비번", "패스워드", "암호", "पासवर्ड", "كلمة", "key", "token", "credential",
         "pin code", "pin number", "пин", "пін", "puk", "mdp", "totp",
         "pw", "recovery", "backup code", "2fa", "mfa", "otp", "wi-fi", "wifi", "wpa", "wiederherstellungscode",
         "backup-code", *(f"{word} code" for word in KEYPAD_WORDS), "combination", "safe code", "locker code",
         "lock code", "the safe", "the locker", "padlock", "the lock", "security question", "security answer",
         "memorable word", "alarm panel", "digicode", "code de la porte",
         "code du portail", "code d'entrée", "code d’entrée", "code de l'alarme", "code de l’alarme",
         "digo de la puerta", "digo del portal", "digo de la alarma", "digo da porta", "digo do port",
         "digo do alarme", "codice del portone", "codice del cancello", "codice della porta", "codice dell'allarme",
         "codice dell’allarme", "türcode", "turcode", "torcode", "alarmcode",
         "código de recupera", "códigos de recupera", "código de respaldo", "códigos de respaldo", "code de récup",
         "codes de récup", "codes de secours", "codice di recupero", "codici di recupero", "код восстановления",
         "коды восстановления", "резервные коды", "резервный код", "wlan", "keypad", "恢复码", "备用码", "復原碼",
         "リカバリーコード", "バックアップコード", "복구 코드", "복구코드", "백업 코드", "백업코드", *_WEAK_NAMES)
# Of those, what the key-like words need (`weak`), and what the password-like words and PINs need (`forward`,
# `backward`): a text that only speaks of keys and tokens, as code talk does all the time, skips the password scans.
WEAK_HINTS = ("key", "token", "credential", *_WEAK_NAMES)
STRONG_HINTS = tuple(h for h in HINTS if h not in WEAK_HINTS) + ("network",)
LOGIN_HINTS = ("auth-user-pass", "log in", "login", "logon", "sign in", "signin", "logging in", "signing in",
               "credential", "creds", "логин", "учетн", "登录", "登入",
               "entra con", "inicia sesi", "entre com", "entrar com", "connecte-toi", "зайди", "войди", "заходи",
               "账号", "帳號", "賬號", "ログイン", "로그인", "계정", "contraseña", "identifiant", "credencial", "credenzial",
               "zugangsdaten", "anmeldedaten")
PROMPTED_HINTS = ("prompt", "field", "box", "dialog", "input", " asks ")  # what `prompted` needs
ASSIGNMENT_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "contrase", "senha", "парол", "_auth")

# A value: quoted, bold (in Markdown or HTML), or a run of characters that are neither space, closing punctuation
# nor CJK.
_VALUE = (r"(?P<value>`[^`\n]{1,120}`|\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|「[^」\n]{1,120}」|“[^”\n]{1,120}”|"
          r"<(?:b|strong|code|kbd|tt|em|i|mark)>[^<\n]{1,120}</(?:b|strong|code|kbd|tt|em|i|mark)>|"
          r"\*\*[^*\n]{1,120}\*\*|\([^\s()]{4,120}\)|[^\s,;，。、；：「」『』（）()\[\]{}<>|\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{1,200})")
# What joins a secret's name to its value, on one line. Assertive joins ("is", ":", "是") may introduce a plain
# word ("the password is swordfish"); "to"/"as" and plain apposition ("password `X`") need a value that looks made up.
_ASSERT = (r"(?:[ \t]+(?:is|was|are|were|=|remains|becomes|is[ \t]+now|is[ \t]+still|(?:is|was|has[ \t]+been|got)[ \t]+"
           r"(?:set|changed|reset|updated)[ \t]+to|should[ \t]+be|will[ \t]+be|would[ \t]+be|es|era|fue|"
           r"sigue[ \t]+siendo|est|était|c['’]est|ist|lautet|war|è|é|это|là|adalah|ialah|ay|är|je|este|yra|"
           r"είναι|היא|הוא|هي|هو|است|है|হল|হলো|হচ্ছে|—|–|-|→|=>)[ \t]+"
           r"|[ \t]*[*_]{0,2}[ \t]*[:=：][ \t]*[*_]{0,2}[ \t]*|[ \t]*\|[ \t]*"
           r"|[ \t]*(?:是|为|為|设为|設為|设置为|設置為|改为|改為|改成了?|设成了?|設成了?|换成了?|換成了?|は|が|を|는|은|이|"
           r"คือ)[ \t]*[:：]?[ \t]*)")
# "to"/"as", and copulas that are also common prepositions or pronouns elsewhere (Finnish and Estonian "on",
# Norwegian and Danish "er", Swahili "ni", Latvian "ir", Bulgarian "е"): these need a value that looks made up.
_TO = r"(?:[ \t]+(?:to|into|as|on|er|ni|ir|е|para|à|auf|на|olarak)[ \t]+)"
# Words between the join and the value ("the password is now X", "was actually X").
_FILLER = (r"(?:(?:now|still|currently|actually|also|just|simply|really|literally|already|ahora|maintenant|jetzt|ora|"
           r"теперь|the[ \t]+string|the[ \t]+word)[ \t]+){0,2}")
_APPOSITION = r"(?:[ \t]+|[ \t]*[*_]{2}[ \t]+)"
_GAP = (r"(?:[ \t]+(?:for|of|on|to|in|at|del?|de[ \t]+la|d[oa]s?|di|dell[ao']|della|des|der|zum|zur|para|für|von|pour|"
        r"du|im|am|beim|van|voor|för|till|til|dla|pro|pentru|ke?|ve?|για|του|της|στο|στη|στην|для|от|до|від)[ \t]+"
        r"(?:the[ \t]+|my[ \t]+|our[ \t]+|your[ \t]+|la[ \t]+|el[ \t]+|le[ \t]+)?"
        r"[\w.@'’-]{1,40}(?:[ \t]+[\w.@'’-]{1,30}){0,4}?)")  # the shortest gap first: a value is no gap word

# Words after a secret's name that make it name something else ("password manager", "clave primaria").
_NOT_A_SECRET_AFTER = (
    r"(?![ \t]+(?i:manager|policy|policies|reset|hash|hashing|length|field|prompt|strength|rotation|expiry|"
    r"expiration|requirements?|rules?|change|store|vault|file|history|less|protected|generator|primaria|primária|"
    r"primaire|primär|for[aá]nea|ajena|estrangeira|étrangère|única|unica|compuesta|composta)\b)")
# Words without a preposition between a name and its join, in a language that needs none there ("Mật khẩu tài khoản
# admin là X", "Ο κωδικός του admin στο WordPress είναι X"): Latin, Greek, Vietnamese, Hebrew or Arabic words, only
# before a value with a digit or a symbol; never the compounds that name something else ("password manager is
# 1Password").
_BARE_GAP = (_NOT_A_SECRET_AFTER +
             r"(?:,?[ \t]+[A-Za-z0-9\u00c0-\u024f\u0370-\u03ff\u0590-\u06ff\u1e00-\u1eff.@'’-]{1,30}){1,4}?")


class Patterns:
    """The compiled patterns of the context passes, built on the first `redact`, and of the shapes, each built when
    first needed."""

    def __init__(self) -> None:
        self._shapes: dict[str, re.Pattern] = {}
        latin_before, latin_after = r"(?<![A-Za-z0-9_-])", r"(?![A-Za-z0-9_])"
        # "WLAN-Passwort", "DB-password": a compound's last part names it too.
        word = rf"(?P<word>(?<![A-Za-z0-9_])(?:(?i:{_STRONG_LATIN})|{_PIN})|{_STRONG_UNSPACED})"
        # A gap ("the password for the staging db is X", "пароль от базы X"), the shortest that works: before a join,
        # or before a value with a digit or a symbol; tried before a bare apposition, which would take the gap's first
        # word for the value.
        self.forward = re.compile(
            rf"{word}{latin_after}(?P<conn>(?i:{_GAP}{_ASSERT}{_FILLER}|{_ASSERT}{_FILLER}|"
            rf"[ \t]?[^\x00-\x7f\s:：=]{{1,24}}?{_ASSERT}|"
            rf"{_GAP}(?:{_TO}|{_APPOSITION})(?=[^\s,;]*[0-9!@#$%^&*])|"
            rf"{_BARE_GAP}{_ASSERT}(?=[^\s,;]*[0-9!@#$%^&*])|"
            rf"['’]s[ \t]+{_FILLER}(?=[^\s,;]*[0-9!@#$%^&*])|"  # "the admin password's X now"
            # a label alone on its line, a made-up value on the next ("Password:⏎X")
            rf"[ \t]*[*_]{{0,2}}[:：][*_]{{0,2}}[ \t]*\n[ \t]*(?=[^\s,;]*[0-9!@#$%^&*])|{_TO}|{_APPOSITION}))"
            rf"(?P<rest>{_VALUE})")
        self.weak = re.compile(
            rf"{latin_before}(?P<word>(?i:{_WEAK_WORDS})){latin_after}"
            rf"(?P<conn>(?i:{_GAP}{_ASSERT}|{_ASSERT}|{_APPOSITION}))"
            rf"(?P<rest>{_VALUE})")
        # "X as the initial password", "X is my password", "X — that's the admin password", "X als Passwort": the
        # name after the value. The pattern finds the name; the value is read back from the text before it.
        self.backward = re.compile(
            rf"(?i:(?:(?:[ \t]+(?:as|is|was|for|como|comme|come|als|как|в[ \t]+качестве|jako|som|sebagai|làm)|"
            rf"[ \t]+[—–-]{{1,2}}[ \t]+(?:that['’]s|that[ \t]+is|it['’]s|this[ \t]+is))"
            rf"[ \t]+(?:(?:the|my|our|your|his|her|their|a|an|new|initial|default|temporary|"
            rf"temp|admin|root|sudo|login|db|database|user|account|wifi|wi-fi|master|current|old|same|[\w-]{{2,20}})"
            rf"[ \t]+){{0,3}}|"
            # scripts without spaces: "用 X 作为密码", "X をパスワードに", "X 로 비밀번호", "ใช้ X เป็นรหัสผ่าน"
            rf"[ \t]*(?:作为|作為|当作|當作|当做|當做|を|로|으로|เป็น)[ \t]*)(?:{_STRONG_WORDS}|pw)){latin_after}"
            + _NOT_A_SECRET_AFTER)
        self.value_before = re.compile(
            rf"(?:(?P<verb>(?i:\b(?:use|using|set|pick|choose|chose|try|typed|entered|type|enter|paste|pasted))[ \t]+)|"
            rf"(?<=[ \t(\"'`]))?"
            rf"{_VALUE}\Z")
        # A user and a password in a login context: "log in with admin / X", "credentials: root:X".
        self.pair = re.compile(
            r"(?i:\b(?:auth-user-pass|"
            r"log[ \t]*in|login|logon|sign[ \t]*in|signin|logging[ \t]+in|signing[ \t]+in|credentials?|creds|"
            r"usuario[ \t]+y[ \t]+contraseña|"
            r"identifiants?|credenciales|credenziali|credenciais|zugangsdaten|anmeldedaten|логин|учетн\w*|"
            r"entra[ \t]+con|inicia[ \t]+sesi[óo]n|entre[ \t]+com|entrar[ \t]+com|connecte-toi|"
            r"(?:зайди|войди|заходи)[ \t]+(?:под|как))\b|"
            r"登录|登入|账号|帳號|賬號|ログイン|로그인|계정)"  # (words of scripts without spaces end where they end)
            r"[^\n]{0,40}?(?<![\w.@+/:\[-])(?P<user>[\w.@+-]{1,64})(?P<sep>[ \t]+/[ \t]+|[ \t]+\|[ \t]+|:|"
            r"[ \t]+(?:and|with)[ \t]+)"
            r"(?P<value>`[^`\n]{1,120}`|\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|[^\s,;，。、]{3,200})")
        # key = value where the key names a secret; the key is read back from the text before its keyword.
        self.assignment = re.compile(
            r"(?i)(?P<kw>password|passwd|passphrase|passcode|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key|"
            # any other key only as the end of a longer name (`_assignment`: `storage_key`, `AccountKey`; not `monkey`)
            # `REDIS_AUTH=`: "auth" names a secret only as the end of a name in capitals or small letters after "_"
            r"private[_-]?key|auth[_-]?key|credentials?|contraseña|senha|passwort|пароль|"
            # (`keyPassword =`: a stronger name later in the key is the one read)
            r"key(?![A-Za-z0-9_.\-]{0,20}?(?:pass|secret|token|pwd))|(?<=_)auth(?![\w.\-]))"
            r"(?P<suffix>[A-Za-z0-9_.\-]{0,40})"
            # (`::` is a scope: `test_x.py::TestY`, `Token::new`; YAML may put an anchor or a tag before the value)
            r"(?P<sep>\\?[\"']?\]?[ \t]*(?::=|=>|=|:(?!:))[ \t]*(?:(?:&|!!?)[\w-]{1,40}[ \t]+)?)"
            # (a JSON text inside a string escapes its quotes: {\"password\":\"…\"})
            r"(?P<value>\"[^\"\n]{1,400}\"|'[^'\n]{1,400}'|`[^`\n]{1,400}`|\\\"[^\"\\\n]{1,400}\\\"|"
            r"[^\s\"',;]{1,4000})")
        self.key_before = re.compile(r"[A-Za-z0-9_.\-]{0,60}\Z")
        self.list_lead = re.compile(
            rf"(?i:(?:{_STRONG_WORDS})|credentials?|creds|logins?|accounts?|test[ \t]+users?)|{_PIN}")
        self.strong_lead = re.compile(rf"(?i:{_STRONG_WORDS})|{_PIN}")
        self.list_item = re.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?P<body>.+?)\s*$")
        self.label_line = re.compile(r"^\s*[\w .'()-]{1,40}\s*[:：]\s+\S")
        # Recovery codes listed after their name, and what one looks like (a digit in it).
        self.codes_lead = re.compile(
            r"(?i:\b(?:recovery|backup|2fa|mfa|otp|one[ -]time)[ \t_-]?codes?\b|\bwiederherstellungscodes?\b|"
            r"\bbackup-codes?\b|\bc[óo]digos?[ \t]+de[ \t]+(?:recuperaci[óo]n|recupera[çc][ãa]o|respaldo)\b|"
            r"\bcodes?[ \t]+de[ \t]+(?:récupération|secours)\b|\bcodic[ei][ \t]+di[ \t]+recupero\b|"
            r"\bкоды?[ \t]+восстановления|\bрезервные[ \t]+коды|\bрезервный[ \t]+код|恢复码|备用码|復原碼|リカバリーコード|バックアップコード|"
            r"(?:복구|백업)[ \t]?코드)")
        self.code_token = re.compile(r"(?<![\w\[:/.-])(?=[A-Za-z0-9-]*[0-9])"
                                     r"(?:[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6}){1,3}|[0-9]{6,10}|[A-Za-z0-9]{8,12})(?![\w-])")
        self.aws_secret = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
        # A payment card's number: four groups of four digits (and up to seven more), Amex's 4-6-5, or 13 to 19
        # digits in a row; `secret_finders` keeps those that pass the Luhn check.
        self.card = re.compile(r"(?<![\w.,-])(?:[2-6]\d{3}(?P<sep>[ -])\d{4}(?P=sep)\d{4}(?P=sep)\d{1,7}|"
                               r"3[47]\d{2}(?P<amex>[ -])\d{6}(?P=amex)\d{5}|[2-6]\d{12,18})(?![\w-]|[.,]\d)")
        # An IBAN: a country's code and two check digits, then the account in a row or in groups of four;
        # `secret_finders` keeps those of their country's length that pass the mod-97 check.
        self.iban = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?"
                               r"(?![A-Za-z0-9])")
        self.split_field = re.compile(r"[ \t]+(?:-|—|–|/|\||=|:)[ \t]+|:[ \t]+|\t")

    @cached_property
    def prompted(self) -> re.Pattern:
        """"type X when it asks for the password", "enter X at the password prompt": the name after a value typed
        at a prompt (the value is read back from the text before it, after a verb). Compiled when first needed:
        few texts hold `PROMPTED_HINTS`."""
        return re.compile(
            rf"(?i:(?:[ \t]+(?P<at>at|in|into)|[ \t]+when[ \t]+(?:it|they|ssh|sudo|git|the[ \t]+\w+)[ \t]+"
            rf"(?:asks|prompts)[ \t]+(?:you[ \t]+)?for)[ \t]+(?:the|a|your|its)[ \t]+(?:[\w-]{{2,20}}[ \t]+){{0,2}}"
            rf"(?:{_STRONG_WORDS}|pw)(?(at)[ \t]+(?:prompt|field|box|dialog|input)))(?![A-Za-z0-9_])")

    def shape(self, kind: str, source: str) -> re.Pattern:
        """A shape of `SHAPES`, compiled the first time a text holds one of its hints: a hook that redacts one log
        line compiles the few shapes that line could hold, not all of them."""
        pattern = self._shapes.get(source)
        if pattern is None:
            pattern = self._shapes[source] = re.compile(source, re.DOTALL if kind == "private-key" else 0)
        return pattern


_PATTERNS: Patterns | None = None


def patterns() -> Patterns:
    """The compiled patterns, built on first use."""
    global _PATTERNS
    if _PATTERNS is None:
        _PATTERNS = Patterns()
    return _PATTERNS
