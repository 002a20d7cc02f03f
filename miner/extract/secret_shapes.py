"""The shapes of secrets of known kinds, for redaction: `SHAPES` is the table of token shapes (cloud and SaaS keys,
JWTs, private-key blocks, credentials in URLs) and of the command lines (most of them in `secret_commands`), the
code and SQL (`secret_calls`) and the configuration formats that hold a password, each with the hints without which
it cannot match; of a shape with a group named `secret`, only that group is hidden. `SHAPE_HINTS` groups the hints
so that a text is looked through for few of them (`hint_index`, `hinted`); `gated` and `holds_any` do the
same for other hints.
`secret_patterns.patterns()` compiles each shape when first needed; `secret_finders` runs them.
"""

from __future__ import annotations

from .secret_calls import CALL_SHAPES
from .secret_commands import COMMAND_SHAPES

TYPE_CHECKING = False  # typing costs import time on the hook path (see redact)
if TYPE_CHECKING:
    from collections.abc import Iterable

# A value that looks generated: a UUID, 24 hex digits or more, or sixteen characters or more with digits and both
# cases (a key or a token, never a word or a name).
_GENERATED = (r"(?P<secret>[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|"
              r"(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{24,}|"
              r"(?=[\w+/=\-]*[0-9])(?=[\w+/=\-]*[a-z])(?=[\w+/=\-]*[A-Z])[\w+/=\-]{16,})(?![\w+/=\-])")

# A password's last character is none of a sentence's closing marks, which may follow it ("admin/X).").
_LAST = r"[^\s,;'\".?:)\]}]"
_END = r"(?=[.?:)\]}]*(?![^\s,;'\"]))"

# A word of a passphrase: no word of prose that follows its name ("the passphrase is stored in the vault").
_PHRASE_WORD = (r"(?:(?!(?i:the|a|an|in|on|at|to|of|for|and|or|not|is|are|be|by|it|its|my|your|our|this|that|with|"
                r"stored|saved|kept|set|required|optional|missing|needed|used)\b)[^\W\d_]{3,}[ \t]+)")
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
    # (Express' signed cookie, even without its name: "s%3A" and the value, a dot, the signature)
    ("session-cookie", r"\bs%3A[A-Za-z0-9_-]{16,}\.[A-Za-z0-9+/_%-]{20,}", ("s%3A",)),
    ("session-cookie", r"(?i:sess(?:ion)?(?:[_-]?id)?|connect\.sid|remember_token|csrftoken)="
                       r"(?P<secret>(?=[^;\s&,]*[0-9])(?=[^;\s&,]*[A-Za-z])[^;\s&,]{16,})",
     ("sess", "Sess", "SESS", ".sid", "remember_", "csrf")),
    # A passphrase or a wallet's seed: the words after its name (quoted, or four words or more that are not prose).
    ("passphrase", r"(?i:\b(?:pass[ \t-]?phrase|(?:seed|recovery|backup|unlock|secret|mnemonic)[ \t_-]phrase|mnemonic|"
                   r"frase[ \t]+(?:de[ \t]+)?(?:recupera[çc][ãa]o|semilla|secreta|acesso)|phrase[ \t]+de[ \t]+"
                   r"(?:récupération|passe)|wiederherstellungsphrase|seed-фраза|сид-фраза|сід-фраза|"
                   r"мнемоні?[чк]\w*[ \t]+фраз\w*|助记词|助記詞)s?)"
                   r"(?:[ \t]+(?:for|of|to|del?|da|do|für|pour|der|des|du|для)[ \t]+[^\n:=]{1,40}?|"
                   r"(?:[ \t]+[\u0400-\u04ff]+){1,3})?"  # (Ukrainian and Russian need no preposition)
                   r"(?:[ \t]+(?:is|was|are|es|é|est|ist)[ \t]+|[ \t]*(?P<label>[:=：])[ \t]*)"
                   r"(?P<secret>\"[^\"\n]{8,200}\"|“[^”\n]{8,200}”|'[^'\n]{8,200}'|`[^`\n]{8,200}`|"
                   # (four words or more after "is"; after a colon, which says a value follows, three)
                   f"{_PHRASE_WORD}{{2}}(?(label)|{_PHRASE_WORD}){_PHRASE_WORD}{{0,21}}"
                   r"(?:[^\W\d_]{3,}|\d{1,6}))",
     ("phrase", "Phrase", "PHRASE", "mnemonic", "Mnemonic", "MNEMONIC", "frase", "Frase", "фраза", "助记词", "助記詞")),
    ("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", ("eyJ",)),
    ("bearer-token", r"(?i)(?<=\bbearer )[A-Za-z0-9_\-.~+/]{20,}=*", ("bearer ", "Bearer ", "BEARER ")),
    # "redis://:X@cache" has no user; "user:password@", "app:${DB_PASS}@", "%(DB_USER)s:%(DB_PASS)s@" hold a
    # placeholder. A password with an `@` left unencoded ends at the last `@` before the host.
    ("url-credentials", r"(?<=://)[^/\s:@]*:(?!(?i:password|passwd|pass|pwd|secret|changeme)@|(?:\*+|[xX]+|<[^>@]*>|"
                        r"\$\{?\w+\}?|%\(\w+\)s|\{\{[^{}@]*\}\})@)[^/\s@]+(?:@[^/\s@]+)*(?=@)", ("://",)),
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
                 rf"[^\s,;'\"]{{5,}}{_LAST})", ("root /", "admin /", "Root /", "Admin /")),
    # … and unspaced, with letters, a digit and a symbol, a letter or a digit first: "root/Zebra!crossing77" (a path
    # or a route holds none: "admin/#section2")
    ("password", r"(?<![\w/.-])(?i:root|admin|administrator)/(?P<secret>(?![!@#$%^&*])(?=[^\s,;'\"/]*[A-Za-z])"
                 rf"(?=[^\s,;'\"/]*[0-9])(?=[^\s,;'\"/]*[!@#$%^&*])[^\s,;'\"/]{{5,}}{_LAST}){_END}",
     ("root/", "admin/", "Root/", "Admin/", "istrator/")),
    # … and each in backquotes: "(`admin`/`X`)".
    ("password", r"`(?i:root|admin|administrator)`[ \t]*/[ \t]*`(?P<secret>(?=[^`\n]*[0-9!@#$%^&*])[^`\s]{4,})`",
     ("`admin`", "`root`", "`Admin`", "`Root`", "istrator`")),
    # "it's admin:X on the router": a made-up value (a letter, and a digit or a symbol) given as the admin's.
    ("password", r"(?<![\w/.:@-])(?i:root|admin|administrator):(?P<secret>(?=[^\s,;'\"]*[A-Za-z])"
                 rf"(?=[^\s,;'\"]*[0-9!@#$%^&*])[^\s,;'\"/:]{{5,}}{_LAST}){_END}", ("root:", "admin:", "Root:", "Admin:",
                                                                             "administrator:")),
    # A setting named for a password or a secret, said in prose: "the STAGING_DB_PASSWORD is X", "SECRET_KEY is 'X'".
    ("password", r"\b(?:(?:[A-Z0-9]+_)+(?:SECRET|PASSWORD|PASSWD|PASS|PWD)|SECRET_KEY)[ \t]+is"
                 r"(?:[ \t]+(?:now|still|set[ \t]+to|changed[ \t]+to))?[ \t]+[`'\"]?"
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
    # secret's store (printf 'X' | docker secret create NAME -, gcloud secrets create, vercel env add, wrangler
    # secret put).
    ("password", r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?:['\"]%s[^'\"\n]*['\"][ \t]+)?['\"]?"
                 r"(?P<secret>(?![$<{%])[^\s'\"|]{3,})['\"]?[ \t]*\|[^\n]{0,80}?"
                 r"(?:--password-stdin|\b(?:docker|podman)[ \t]+secret[ \t]+create\b|"
                 r"\bgcloud[ \t]+secrets[ \t]+(?:create|versions[ \t]+add)\b|\bvercel[ \t]+env[ \t]+add\b|"
                 r"\bwrangler[ \t]+secret[ \t]+put\b)",
     ("--password-stdin", "secret create", "gcloud secrets", "env add", "secret put")),
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
    # A build script's call given a literal: Gradle's `storePassword "…"`, `keyPassword '…'`; any value alone on its
    # line, a made-up one elsewhere.
    ("password", r"(?m:^[ \t]*[a-z]\w*(?:Password|Passwd|Secret|Token)[ \t]+(?P<q>['\"])"
                 r"(?P<secret>(?![$<{])[^'\"\n]{3,})(?P=q)[ \t]*$)", ("Password ", "Passwd ", "Secret ", "Token ")),
    ("password", r"(?<![\w.$])[a-z]\w*(?:Password|Passwd|Secret|Token)[ \t]+(?P<q>['\"])"
                 r"(?P<secret>(?![$<{])(?=[^'\"\n]*[0-9!@#%^&*])[^'\"\s]{3,})(?P=q)",
     ("Password ", "Passwd ", "Secret ", "Token ")),
    # A word for a password in a script without spaces, a made-up value right after it: "密码Root@2024" (a symbol, or
    # small letters, capitals and a digit: not "密码SHA256加密").
    ("password", r"(?:密码|密碼|口令|密钥|密鑰|秘钥|パスワード|暗証番号|비밀번호|비번|패스워드|암호)"
                 r"(?P<secret>(?=[\x21-\x7e]*[!@#$%^&*]|(?=[\x21-\x7e]*[a-z])(?=[\x21-\x7e]*[A-Z])[\x21-\x7e]*[0-9])"
                 r"[A-Za-z0-9!@#$%^&*_+=~.-]{3,63}[A-Za-z0-9!@#$%^&*_+=~-])",
     ("密码", "密碼", "口令", "密钥", "密鑰", "秘钥", "パスワード", "暗証番号", "비밀번호", "비번", "패스워드", "암호")),
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
    # redis.conf: requirepass …, masterauth … (or the line in backquotes, in prose).
    ("password", r"(?m:(?:^[ \t]*|`)(?:requirepass|masterauth)[ \t]+['\"]?(?P<secret>(?![$<{])[^\s'\"`]{3,}))",
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
    # "Set `DB_PASSWORD` to `X`", "updated `DB_PASSWORD` to `X`": a setting named for a secret, given a quoted value.
    ("password", r"(?i:\b(?:set|updated?|changed?|rotated?)\b)[ \t]+`?[A-Za-z0-9_]*(?:PASSWORD|PASSWD|SECRET|TOKEN|"
                 r"API_KEY)[A-Za-z0-9_]*`?[ \t]+to[ \t]+[`'\"](?P<secret>(?!your|<|\$|\{)[^\s`'\"]{3,})[`'\"]",
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
                 r"(?=[^\s,;'\"`()]*\w)[^\s,;'\"`()]{3,})",  # (a letter or a digit in it: not an ellipsis)
     ("pass", "Pass", "PASS", "pwd", "PWD", "pw", "PW")),  # (the password's name, rarer than the user's)
    # A line of ~/.pgpass, named: host:port:database:user:password. (`secret_tables` finds one alone on its line.)
    ("password", r"(?<![\w.-])[\w.-]+:(?:\d{2,5}|\*):[\w*.-]+:[\w*.-]+:(?P<secret>[^\s:]+)", ("pgpass",)),
]


# Letters from the most common to the least, in English and in code; any other character is rarer still.
_COMMON_LETTERS = " etaoinsrhldcumfpgwybvkxjqz"

# Hints grouped under a character: a text without that character holds none of them, and one look skips them all.
Gated = tuple[tuple[str, tuple[str, ...]], ...]


def rarest(hint: str) -> str:
    """The character of `hint` least common in text."""
    return max(hint, key=lambda c: _COMMON_LETTERS.find(c) if c in _COMMON_LETTERS else len(_COMMON_LETTERS))


def gated(hints: tuple[str, ...]) -> Gated:
    """`hints` grouped under their rarest character."""
    groups: dict[str, list[str]] = {}
    for hint in hints:
        groups.setdefault(rarest(hint), []).append(hint)
    return tuple((gate, tuple(group)) for gate, group in groups.items())


def holds_any(text: str, hints: Gated) -> bool:
    """Whether `text` holds one of `hints` (`any(h in text for h in …)`, with fewer looks)."""
    return any(hint in text for gate, group in hints if gate in text for hint in group)


# Each distinct hint with the items (their indexes) it lets run, grouped under the hint's rarest character.
HintIndex = tuple[tuple[str, tuple[tuple[str, tuple[int, ...]], ...]], ...]


def hint_index(hints_of: Iterable[Iterable[str]]) -> HintIndex:
    """The hints of items 0, 1, … indexed: each distinct hint once (many items share one), under its rarest
    character."""
    items: dict[str, list[int]] = {}
    for i, hints in enumerate(hints_of):
        for hint in hints:
            items.setdefault(hint, []).append(i)
    groups: dict[str, list[tuple[str, tuple[int, ...]]]] = {}
    for hint, indexes in items.items():
        groups.setdefault(rarest(hint), []).append((hint, tuple(indexes)))
    return tuple((gate, tuple(group)) for gate, group in groups.items())


def hinted(text: str, index: HintIndex) -> set[int]:
    """The items whose hints `text` holds: each hint looked for once, and only when the text holds its rarest
    character."""
    return {i for gate, group in index if gate in text for hint, items in group if hint in text for i in items}


# `SHAPES`' hints: a shape runs only on a text that holds one of its own.
SHAPE_HINTS = hint_index(hints for _, _, hints in SHAPES)
