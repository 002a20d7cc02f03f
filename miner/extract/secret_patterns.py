"""What secrets look like to redaction: the words that name a secret, and the patterns built from them and from
the shapes of known kinds (`secret_shapes`).

The words (password-like and key-like), the joins between a name and its
value, and the hints that let a text skip the context patterns make up the
context patterns. `patterns()` compiles them on first use, and each shape when
first needed: the hooks import `redact` without redacting. `secret_finders`
runs them; `secret_rules` adds kinds from YAML.
"""

from __future__ import annotations

import re
from functools import cached_property

from . import regex_cache

# --- words --------------------------------------------------------------------------------------

# What a code of digits opens ("the door code is 4821"): such a code needs no "is" before it (`secret_finders`).
KEYPAD_WORDS = ("door", "gate", "alarm", "keypad", "lockbox", "garage", "unlock")
# What names such a code in the words of `_STRONG_LATIN` (the other languages' too): its value holds a digit.
KEYPAD_NAMES = (*KEYPAD_WORDS, "safe", "locker", "padlock", "combination", "digicode", "porte", "portail", "entrée",
                "tür", "tresor",
                "puerta", "portal", "porta", "portão", "portao", "portone", "cancello", "allarm", "türcode", "turcode",
                "torcode")

# Words that name a password-like secret: any value stated for them is hidden.
_STRONG_LATIN = (
    # (and typed fast: "passowrd", "passwrod", "pasword")
    r"pass(?:word|wd|phrase|code|owrd|wrod)s?|pasword|pwd|pswd|pword|(?:passw|p/w)(?=[ \t]*[:=])|"
    # ("SSHPASS set to X", "set SSHPASS to X": sshpass's variable, "set to" in any case, "to" alone in capitals;
    # "bump sshpass to 1.10" is the tool)
    r"sshpass(?=[ \t]+(?:(?:is|was|has[ \t]+been|got)[ \t]+)?set[ \t]+to[ \t])|"
    r"(?-i:SSHPASS)(?=[ \t]+(?:(?:is|was|has[ \t]+been|got)[ \t]+)?(?:changed|reset|updated)[ \t]+to[ \t]|"
    r"[ \t]+to[ \t]+(?=[^\s,;]*[0-9!@#$%^&*]))|"
    r"pass(?=[ \t]*[:=]|[ \t]+(?:de|del|do|da|du|di|dla|für|fürs|van|voor)[ \t]|[ \t]+(?:is|was)[ \t]+(?:now[ \t]+)?"
    r"(?=[^\s,;]*[A-Za-z])(?=[^\s,;]*[0-9])[^\s,;]{8,}|"
    # ("user bob pass X": a value with letters, a digit and a symbol)
    r"[ \t]+(?=[^\s,;]*[A-Za-z])(?=[^\s,;]*[0-9])(?=[^\s,;]*[!@#$%^&*])[^\s,;]{6,})|"
    r"pw(?=[ \t]*(?:[:=：]|->|→|は|(?:is|è|é|est|ist|es|är|got|has)[ \t])|[ \t]+[^\s,;]*[0-9]|"
    r"[ \t]+(?:for|on|of|at|del?|della|do|da|du|für|fürs|voor|van|dla|untuk)[ \t]|[ \t]+dell['’])|"
    r"code[\s_-]+(?:du[\s_-]+)?wi-?fi|"
    # a card's, a bank's or a SIM's pin (the word "pin" first, its owner behind it: fewer places to try)
    r"pin\b(?:(?<=card pin)|(?<=bank pin)|(?<=atm pin)|(?<=debit pin)|(?<=credit pin)|(?<=sim pin)|(?<=voicemail pin))|"
    r"mdp(?=[ \t]*(?:[:=]|est[ \t]|c['’]est[ \t])|[ \t]+(?:de|du|des|pour)[ \t])|"
    r"(?:2fa|mfa|otp|totp)[\s_-]?(?:seed|secret)s?|"
    r"secret(?:\s+(?:access\s+)?key)?s?|"
    r"client[\s_-]secret|app[\s_-]?secret|(?:wi-?fi|wpa2?|network)[\s_-]?(?:key|password)|"
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
    r"code[\s_-]+f[üu]r[\s_-]+(?:die|den|das)[\s_-]+(?:alarmanlage|t[üu]r|haust[üu]r|garage|tor|tresor)|"
    r"wlan[\s_-]?(?:schlüssel|key)|"
    r"chave[\s_-]+d[oa][\s_-]+wi-?fi|(?:cl[ée]|clave|chiave)[\s_-]+(?:wpa2?|wep|wi-?fi)|"
    r"contraseñas?|clave(?:\s+de\s+acceso)?|senhas?|mot\s+de\s+passe|passw[oö]rt(?:e|es)?|kennw[oö]rt|wachtwoord|"
    r"has[łl](?:o|a|em)|heslo|lösenord(?:et)?|şifre(?:si|m|yi|ni|niz)?|parola(?:\s+d['’]ordine)?|парол[ьяюем]\w*|"
    r"пасс(?![а-яё])|"
    r"код\s+доступа|κωδικός(?!\s+(?:σφάλματος|λάθους|προϊόντος|παραγγελίας|κράτησης|ταχυδρομικός))|"
    r"mật\s+khẩu|kata\s+sandi(?:nya)?|kata\s+laluan(?:nya)?|"
    # Vietnamese "mk" (mật khẩu), Indonesian "sandi" and Dutch "ww" (wachtwoord) alone, before a made-up value
    r"(?:mk|sandi(?:nya)?|ww)(?=[ \t]*[:=]?[ \t]*(?<=[ \t:=])(?=[^\s,;]*[A-Za-z])(?=[^\s,;]*[0-9!@#$%^&*])[^\s,;]{6,}|"
    # ("ww van de router: X", "mk wifi quán: X": a word for what has one among a few before the colon)
    r"(?:[ \t]+[^\s:=：]{1,20}){0,2}?[ \t]+(?i:wi-?fi|wlan|router|modem|nas|admin|server|e-?mail|mail)"
    r"(?:[ \t]+[^\s:=：]{1,20}){0,2}[ \t]*[:：][ \t]*(?=[^\s,;]*[A-Za-z])(?=[^\s,;]*[0-9!@#$%^&*])[^\s,;]{6,})|"
    r"passord(?:et)?|adgangskode(?:n)?|kodeord(?:et)?|salasana(?:n)?|"
    r"lykilorð(?:ið)?|parool(?:i)?|parole|slaptažodis|geslo|lozink[aeu]|лозинк[аеу]|парол[аи]|jelsz[óoa]\w*|şifrə|"
    r"nenosiri|"
    # Spanish "la contra" (la contraseña) names a password; "la contra" is also a drawback, so only a made-up value
    r"contra(?<=\bla[ \t]contra)(?![\w-])"
)
# The same in scripts written without spaces: such a word may follow a Latin letter ("DBパスワード").
_STRONG_UNSPACED = (
    r"סיסמ[הא]|رمز\s+عبور|گذرواژه|پاس\s+ورڈ|পাসওয়ার্ড|கடவுச்சொல்|รหัสผ่าน|"
    r"密码|密碼|口令|密钥|密鑰|秘钥|私钥|私鑰|秘密鍵|授权码|授權碼|シークレット|パスワード|パスフレーズ|暗証番号|비밀번호|비번|패스워드|암호|पासवर्ड|"
    r"كلمة\s+(?:المرور|السر)|باسورد|پسورد|🔑"
)
_STRONG_WORDS = _STRONG_LATIN + "|" + _STRONG_UNSPACED
# Words that name a key or token (any key: "the sandbox key is X"): only a value that looks random is hidden.
_WEAK_WORDS = (
    r"(?:api|access|auth|bearer|refresh|session|private|signing|encryption|master|licen[cs]e|deploy|personal\s+access|"
    r"integration|routing)[\s_-]?(?:key|token)s?|api[\s_-]?keys?|keys?|tokens?|credentials?|"
    r"(?:github|gitlab|gh|gitea)[\s_-]+pats?|ключ[ \t]+(?:api|доступа)|api[\s_-]?ключ|api[ \t]?키|"
    # (a token, and a key by its name alone, in Russian, Korean, Chinese, Japanese and German)
    r"ключ|токен\w*|토큰|令牌|トークン|api[ \t]?(?:キー|トークン)|zugriffs-?token|bearer|مفتاح|"
    r"chiave[\s_-]+(?:segreta|api|d['’]accesso|di[\s_-]+accesso)|(?:clave|chave)[\s_-]+secreta|clé[\s_-]+secrète|"
    r"clé[\s_-]+(?:d['’])?api|clave[\s_-]+(?:de[\s_-]+(?:la[\s_-]+)?)?api|chave[\s_-]+(?:d[ae][\s_-]+)?api|"
    r"api[\s_-]?schlüssel"
)
_PIN = (r"(?<![A-Za-z0-9_])PIN(?:(?:[\s-]?(?:code|number|Code|Nummer|kodu|kod))?(?![A-Za-z0-9_])|[ \t]?번호)|\bPUK\b|"
        # (and "il pin del bancomat", "el pin de la tarjeta", "le pin de la carte", "o pin do cartão")
        r"\b[Pp]in(?:[\s-]?(?:code|number)\b|"
        r"[ \t]+(?:del(?:la)?|de(?:[ \t]+la|[ \t]+mi)?|du|da|do|della[ \t]+mia)[ \t]+(?:bancomat|carta|tarjeta|carte|"
        r"cart[ãa]o|telefono|tel[ée]fono|t[ée]l[ée]phone|m[óo]vil|cellulare|celular|sim|SIM)\b)|\bcódigo\s+PIN\b|"
        r"(?<![А-Яа-яЁёІіЇїЄє])(?:ПИН|пин|Пин|ПІН|Пін|пін)(?:-код)?(?![А-Яа-яЁёІіЇїЄє])")
# A token's or a key's name in other scripts, and "bearer" (in `_WEAK_WORDS`), as hints.
_WEAK_SCRIPTS = ("токен", "토큰", "令牌", "トークン", "キー", "bearer", "مفتاح")
# An API key's name in French, Spanish, Portuguese and German (in `_WEAK_WORDS`), as hints.
_WEAK_NAMES = ("clé", "clave api", "clave de api", "clave de la api", "clave secreta", "chave", "schlüssel", "chiave")
# A key's or a token's name in more languages: `secret_sentences.named_nearby` reads a long made-up value near one.
_KEY_NAMES = ("jeton", "anahtar", "klucz", "sleutel", "nyckel", "avain", "kulcs", "cheie")
# Lower-case substrings whose presence means a context pattern may fire (checked before any of them runs).
HINTS = ("pass", "pwd", "pswd", "pword", "p/w", "mk:", "mk=", "mk ", "ww:", "ww ", "sandi", "🔑", "card pin", "bank pin",
         "atm pin", "debit pin", "credit pin", "sim pin", "voicemail pin", "secret", "contrase", "clave", "senha",
         "mot de passe", "kennw", "wachtwoord", "hasło", "hasła", "haseł", "heslo",
         "lösenord", "κωδικός", "mật khẩu", "kata sandi", "รหัสผ่าน", "kata laluan", "passord", "adgangskode", "kodeord",
         "salasana", "lykilorð", "parool", "parole", "slaptažod", "geslo", "lozink", "лозинк", "jelsz", "şifrə",
         "nenosiri", "סיסמ", "رمز عبور", "گذرواژه", "پاس ورڈ", "পাসওয়ার্ড", "கடவுச்சொல்",
         "haslo", "hasla", "şifre", "parol", "парол", "код доступа", "密码", "密碼", "口令", "密钥", "密鑰", "秘钥", "パスワード",
         "暗証", "パスフレーズ", "비밀번호", "비번", "패스워드", "암호", "पासवर्ड", "كلمة", "key", "token", "credential",
         "pin code", "pin number", "unlock pin", "what i typed", "what we typed", "github pat", "gitlab pat",
         "gh pat", "gitea pat", "ключ", "api 키", "api키", "pin del", "pin de", "pin du", "pin da", "pin do",
         "la contra", "пин", "пін", "puk", "私钥", "私鑰", "秘密鍵", "授权码", "授權碼", "シークレット",
         "mdp", "totp", "pasword", "passowrd", "пасс", "باسورد", "پسورد",
         "pw", "recovery", "backup code", "2fa", "mfa", "otp", "wi-fi", "wifi", "wpa", "wiederherstellungscode",
         "backup-code", *(f"{word} code" for word in KEYPAD_WORDS), "combination", "safe code", "locker code",
         "lock code", "the safe", "the locker", "padlock", "the lock", "security question", "security answer",
         "memorable word", "alarm panel", "digicode", "code de la porte",
         "code du portail", "code d'entrée", "code d’entrée", "code de l'alarme", "code de l’alarme",
         "digo de la puerta", "digo del portal", "digo de la alarma", "digo da porta", "digo do port",
         "digo do alarme", "codice del portone", "codice del cancello", "codice della porta", "codice dell'allarme",
         "codice dell’allarme", "türcode", "turcode", "torcode", "alarmcode", "code für", "code fur",
         "código de recupera", "códigos de recupera", "código de respaldo", "códigos de respaldo", "digo de backup",
         "digos de backup", "استرداد", "code de récup",
         "codes de récup", "codes de secours", "codice di recupero", "codici di recupero", "код восстановления",
         "коды восстановления", "резервные коды", "резервный код", "wlan", "keypad", "恢复码", "备用码", "復原碼",
         "リカバリーコード", "バックアップコード", "복구 코드", "복구코드", "백업 코드", "백업코드", *_WEAK_SCRIPTS, *_WEAK_NAMES,
         *_KEY_NAMES)
# Of those, what the key-like words need (`weak`), and what the password-like words and PINs need (`forward`,
# `backward`): a text that only speaks of keys and tokens, as code talk does all the time, skips the password scans.
WEAK_HINTS = ("key", "token", "credential", "github pat", "gitlab pat", "gh pat", "gitea pat", "ключ", "api 키", "api키",
              *_WEAK_SCRIPTS, *_WEAK_NAMES, *_KEY_NAMES)
STRONG_HINTS = tuple(h for h in HINTS if h not in WEAK_HINTS) + ("network",)
LOGIN_HINTS = ("auth-user-pass", "log in", "login", "logon", "sign in", "signin", "logging in", "logged in",
               "signing in", "ssh ", "credential", "creds", "логин", "учетн", "登录", "登入",
               "entra con", "inicia sesi", "entre com", "entrar com", "connecte-toi", "зайди", "войди", "заходи",
               "账号", "帳號", "賬號", "ログイン", "로그인", "계정", "contraseña", "identifiant", "credencial", "credenzial",
               "zugangsdaten", "anmeldedaten")
PROMPTED_HINTS = ("prompt", "field", "box", "dialog", "input", " asks ")  # what `prompted` needs
ASSIGNMENT_HINTS = ("pass", "pwd", "secret", "token", "key", "credential", "contrase", "senha", "парол", "_auth",
                    "-auth", "pk", "salt")
ASSIGNMENT_JOINS = ("=", ":", "＝", "：", "|", "→", "->")  # what an assignment's text holds (one of them)

# A value: quoted, bold (in Markdown or HTML), or a run of characters that are neither space, closing punctuation
# nor CJK.
_VALUE = (r"(?P<value>`[^`\n]{1,120}`|\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|「[^」\n]{1,120}」|“[^”\n]{1,120}”|"
          r"<(?:b|strong|code|kbd|tt|em|i|mark)>[^<\n]{1,120}</(?:b|strong|code|kbd|tt|em|i|mark)>|"
          r"\*\*[^*\n]{1,120}\*\*|\([^\s()]{4,120}\)|[^\s,;，。、；：「」『』（）()\[\]{}<>|\u3040-\u30ff\u3400-\u9fff\uac00-\ud7af]{1,200})")
# What joins a secret's name to its value, on one line. Assertive joins ("is", ":", "是") may introduce a plain
# word ("the password is swordfish"); "to"/"as" and plain apposition ("password `X`") need a value that looks made up.
_ASSERT = (r"(?:[ \t]+(?:is|was|are|were|=|remains|stays|becomes|is[ \t]+now|is[ \t]+still|"
           r"(?:(?:is|was|has[ \t]+been|got)[ \t]+)?(?:set|changed|reset|updated)[ \t]+to|should[ \t]+be|will[ \t]+be|"
           r"would[ \t]+be|es|era|fue|"
           r"sigue[ \t]+siendo|est|était|c['’]est|ist|lautet|war|è|é|это|là|adalah|ialah|ay|är|je|este|yra|"
           r"είναι|היא|הוא|هي|هو|است|है|হল|হলো|হচ্ছে|—|–|-|→|=>|->)[ \t]+"
           r"|[ \t]*[*_]{0,2}[ \t]*[:=：][ \t]*[*_]{0,2}[ \t]*|[ \t]*\|[ \t]*"
           r"|[ \t]*(?:是|为|為|设为|設為|设置为|設置為|改为|改為|改成了?|设成了?|設成了?|换成了?|換成了?|は|が|を|는|은|이|가|"
           r"คือ)[ \t]*[:：]?[ \t]*)")
# "to"/"as", and copulas that are also common prepositions or pronouns elsewhere (Finnish and Estonian "on",
# Norwegian and Danish "er", Swahili "ni", Latvian "ir", Bulgarian "е"): these need a value that looks made up.
_TO = r"(?:[ \t]+(?:to|into|as|on|er|ni|ir|е|para|a|à|en|auf|на|olarak|como|comme|come|als)[ \t]+)"
# Words between the join and the value ("the password is now X", "was actually X").
_FILLER = (r"(?:(?:now|still|currently|actually|also|just|simply|really|literally|already|ahora|maintenant|jetzt|ora|"
           r"теперь|сейчас|тепер|nu|agora|adesso|teraz|şimdi|sekarang|the[ \t]+string|the[ \t]+word)[ \t]+|"
           r"(?:이제|지금|现在|現在|目前)[ \t]*){0,2}")
# What sets a key or token "to" a value, in the words before its name ("I've set the API key to X").
SET_VERB_RE = re.compile(r"(?i)\b(?:set|sets|setting|changed?|changing|updated?|updating|rotated?|rotating|reset|"
                          r"switched|switch|replaced?|regenerated?|refreshed|refresh|renewed?|bumped?|rolled|roll|"
                          r"pointed|moved|swapped|use|using|mud\w+|troqu\w+|alter\w+|cambi\w+|chang\w+|modifi\w+|"
                          r"gesetzt|setze|geändert|ändere|impostat\w+|imposta|поменял\w*|поменя\w*|сменил\w*|смени\w*|"
                          r"изменил\w*|обновил\w*|поставил\w*|установил\w*)\b")
BARE_KEY_WORDS = frozenset(("key", "keys", "ключ", "clé", "clave", "chave", "chiave", "schlüssel", "キー", "키"))
VENDOR_PREFIX_RE = re.compile(r"^[A-Za-z]{2,8}[_-]")  # a vendor's prefix on a generated value ("whsec_", "tok_")
_APPOSITION = r"(?:[ \t]+|[ \t]*[*_]{2}[ \t]+)"
# A value set rather than stated ("the password, I set it to X", "la password l'ho impostata a X", "la contraseña la
# puse como X", "le mot de passe, je l'ai mis à X"), or stated as the same as another's ("the root pw is the same as
# before: X"): `Patterns.forward` takes only a made-up value after these.
_SET_TO = (r"(?:,?[ \t]+(?:(?:i|we)[ \t]+(?:set|changed|reset|updated)[ \t]+it[ \t]+to|"
           r"l['’](?:ho|abbiamo|hanno)[ \t]+(?:impostat|cambiat|settat|mess)[ao][ \t]+(?:a|in|come)|"
           r"la[ \t]+(?:puse|pusimos|cambi[ée]|cambiamos|configur[ée]|dej[ée])[ \t]+(?:a|en|como)|"
           r"(?:je[ \t]+)?l['’](?:ai|avons)[ \t]+(?:mis|chang[ée]|d[ée]fini|r[ée]gl[ée])e?[ \t]+(?:à|a|en|sur|comme)|"
           r"(?:eu[ \t]+)?a[ \t]+(?:coloquei|mudei|defini|troquei)[ \t]+(?:para|como)|"
           r"and[ \t]+(?:i|we)[ \t]+(?:typed|entered|used|put[ \t]+in)|"
           # "when it asks for the password, type X" ("Когда спросит пароль, вводи X")
           r"type|enter|вводи|введи|пиши|напиши|набери|escribe|escribí|pon|digita|digite|tape|tapez|tippe|gib|"
           r"inserisci|scrivi|metti)[ \t]+|"
           r"[ \t]+(?:is|was)[ \t]+(?:still[ \t]+)?the[ \t]+same[ \t]+as[ \t]+[^\n:：]{1,40}?[:：][ \t]*)")
_GAP = (r"(?:(?:[ \t]+(?:for|of|on|to|in|at|del?|de[ \t]+la|d[oa]s?|di|dell[ao']|della|des|der|zum|zur|para|für|von|"
        r"pour|du|im|am|beim|van|voor|för|till|til|dla|pro|pentru|ke?|ve?|για|του|της|στο|στη|στην|для|от|до|від)"
        r"[ \t]+|"
        r"[ \t]+(?:dell|d)['’]|"
        r"[ \t]+(?=[\w.-]{1,30}-nya[ \t]))"  # Indonesian: "kata sandi database-nya X"
        r"(?:the[ \t]+|my[ \t]+|our[ \t]+|your[ \t]+|la[ \t]+|el[ \t]+|le[ \t]+)?"
        r"[\w.@'’-]{1,40}(?:[ \t]+[\w.@'’-]{1,30}){0,4}?)")  # the shortest gap first: a value is no gap word

# Words after a secret's name that make it name something else ("password manager", "clave primaria"); also what
# `secret_turns` asks of a request for a secret.
NOT_A_SECRET_AFTER = (
    r"(?![ \t]+(?i:manager|policy|policies|reset|hash|hashing|length|field|prompt|strength|rotation|expiry|"
    r"expiration|requirements?|rules?|change|store|vault|file|history|less|protected|generator|primaria|primária|"
    r"primaire|primär|for[aá]nea|ajena|estrangeira|étrangère|única|unica|compuesta|composta|grant|flow|step|screen|"
    r"page|form|tool|hint|input|box|dialog|fingerprints?|parser|parsing|validation|validator|handling|logic|"
    r"format)\b|[-‐]\w)")
# Words without a preposition between a name and its join, in a language that needs none there ("Mật khẩu tài khoản
# admin là X", "Ο κωδικός του admin στο WordPress είναι X"): Latin, Greek, Vietnamese, Hebrew or Arabic words, only
# before a value with a digit or a symbol; never the compounds that name something else ("password manager is
# 1Password").
_BARE_GAP = (NOT_A_SECRET_AFTER +
             r"(?:,?[ \t]+[A-Za-z0-9\u00c0-\u024f\u0370-\u03ff\u0590-\u06ff\u1e00-\u1eff\u200c.@'’-]{1,30}){1,4}?")
# … and in Cyrillic, Devanagari and Bengali too, before a key's generated value only (`Patterns.weak`: "Ключ API
# сервісу: X"; a password's name before a colon there could name a path: "Пароль хранится в vault, путь: …").
_KEY_GAP = (NOT_A_SECRET_AFTER + r"(?:,?[ \t]+[A-Za-z0-9\u00c0-\u024f\u0370-\u03ff\u0400-\u04ff\u0590-\u06ff"
            r"\u0900-\u09ff\u1e00-\u1eff\u200c.@'’-]{1,30}){1,4}?")


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
        self.forward = regex_cache.compile(
            rf"{word}{latin_after}(?P<conn>(?i:{_SET_TO}(?=[^\s,;]*[0-9!@#$%^&*])|"
            # a line naming it with words after the name, the value alone on a later line ("Please use the following
            # password to proceed:⏎⏎X"; before "is"/"was", which would take "was generated" for the value)
            rf"{NOT_A_SECRET_AFTER}[ \t]+[^\n:：]{{1,60}}[:：][ \t]*\n(?:[ \t]*\n)?[ \t]*(?=[^\s,;]*[0-9!@#$%^&*])"
            rf"(?=\S+[ \t]*(?:\n|\Z))|"
            rf"{_GAP}{_ASSERT}{_FILLER}|{_ASSERT}{_FILLER}|"
            rf"[ \t]?[^\x00-\x7f\s:：=]{{1,24}}?{_ASSERT}|"
            rf"{_GAP}(?:{_TO}|{_APPOSITION})(?=[^\s,;]*[0-9!@#$%^&*])|"
            rf"{_BARE_GAP}{_ASSERT}(?=[^\s,;]*[0-9!@#$%^&*])|"
            # (words, then "to"/"as" or nothing: "senha nova como X", "Salasana tietokantaan on X", "الباسورد بتاع
            # السيرفر X"; with nothing, a value with a digit and a symbol)
            rf"{_BARE_GAP}{_TO}(?=[^\s,;]*[0-9!@#$%^&*])|"
            rf"[ \t]*(?:统一用|統一用|一律用|都用|都改用|改用)[ \t]*(?=[^\s,;]*[0-9!@#$%^&*])|"  # "密码统一用 X"
            rf"[ \t]*(?:用|使用)[ \t]*(?=[^\s,;]*[!@#$%^&*])|"  # "密码用 Test@2024" (not "用 AES256", "用 base64")
            # "als Passwort nehmen wir X", "пароль сменил на X": a verb of choosing or changing, then a made-up value
            rf"[ \t]+(?:nehmen|verwenden|nutzen|setzen)[ \t]+(?:wir|ich)[ \t]+(?:(?:einfach|jetzt|dann|erstmal)[ \t]+)?"
            rf"(?=[^\s,;]*[0-9!@#$%^&*])|"
            rf"[ \t]+(?:сменил|сменила|сменили|сменим|поменял|поменяла|поменяли|поменяем|изменил|изменила|изменим|"
            rf"поставил|поставила|поставим|установил|установила|установим|змінив|змінила)[ \t]+на[ \t]+"
            rf"(?=[^\s,;]*[0-9!@#$%^&*])|"
            rf"{_BARE_GAP}{_APPOSITION}(?=[^\s,;]*[0-9])(?=[^\s,;]*[!@#$%^&*])|"
            rf"['’]s[ \t]+{_FILLER}(?=[^\s,;]*[0-9!@#$%^&*])|"  # "the admin password's X now"
            # a question answered ("the wifi password? it's X")
            rf"[ \t]*\?[ \t]+(?:it['’]s|it[ \t]+is)[ \t]+(?=[^\s,;]*[0-9!@#$%^&*])|"
            # a label alone on its line, a made-up value on the next or after a blank line ("Password:⏎X",
            # "Your temporary password is:⏎⏎    X")
            rf"(?:[ \t]+(?:is|was))?[ \t]*[*_]{{0,2}}[:：][*_]{{0,2}}[ \t]*\n(?:[ \t]*\n)?[ \t]*"
            rf"(?=[^\s,;]*[0-9!@#$%^&*])|"
            rf"{_TO}|{_APPOSITION}))"
            rf"(?P<rest>{_VALUE})")
        self.weak = regex_cache.compile(
            rf"{latin_before}(?P<word>(?i:{_WEAK_WORDS})){latin_after}"
            # (words between the name and "is": "the API key they gave us is X", "la clé API Mistral que j'utilise :
            # X"; `secret_finders._weak` takes no code: "Key design: `BASE_URL=…`")
            rf"(?P<conn>(?i:{_GAP}{_ASSERT}{_FILLER}|{_ASSERT}{_FILLER}|(?P<bare>{_KEY_GAP}){_ASSERT}|"
            # set rather than stated: "I've set the API key to X", "updated the token to X" (`_weak` wants the verb)
            rf"(?P<to>{_TO})|{_APPOSITION}))"
            rf"(?P<rest>{_VALUE})")
        # "X as the initial password", "X is my password", "X — that's the admin password", "X als Passwort": the
        # name after the value. The pattern finds the name; the value is read back from the text before it.
        filler = (r"(?:(?:the|my|our|your|his|her|their|a|an|o|new|initial|default|temporary|temp|admin|root|"
                  r"sudo|login|db|database|user|account|wifi|wi-fi|master|current|old|same|[\w'’-]{2,20})[ \t]+){0,3}")
        # (never from inside a run of blanks: each start there would scan the whole run again)
        self.backward = regex_cache.compile(
            rf"(?<![ \t])(?i:(?:(?:[ \t]+(?:as|is|was|for|como|comme|come|als|как|в[ \t]+качестве|jako|som|sebagai|"
            rf"làm|de|"
            # "X es la contraseña", "X è la password", "X ist das Passwort", "X c'est le mot de passe"
            rf"es|è|é|ist|est|c['’]est)|"
            rf"(?:[ \t]+[—–-]{{1,2}}|[,:])[ \t]+(?:that['’]s|that[ \t]+is|it['’]s|this[ \t]+is)|"
            rf"(?<=\S) (?:-|--|–|—)(?= )|"  # "X - jenkins admin password" (one space each side: not a list's dash)
            # "X is what I set as the root pw"
            rf"[ \t]+is[ \t]+what[ \t]+(?:i|we)(?:['’](?:ve|d))?[ \t]+(?:set|used?|chose|picked|made|put|gave|typed)"
            rf"(?:[ \t]+it)?[ \t]+(?:as|for))"
            rf"[ \t]+{filler}|"
            # "X (the jenkins password)": the name closes the parenthesis
            rf"[ \t]+(?P<paren>\(){filler}|"
            # scripts without spaces: "用 X 作为密码", "X をパスワードに", "X 로 비밀번호", "ใช้ X เป็นรหัสผ่าน", "X 是数据库的密码",
            # "X がパスワードです", "X 가 비밀번호예요"
            rf"[ \t]*(?:作为|作為|当作|當作|当做|當做|を|로|으로|เป็น|是|が|가|이)[ \t]*\S{{0,12}}?)"
            rf"(?:{_STRONG_WORDS}|pw)){latin_after}(?(paren)(?=\)))"
            + NOT_A_SECRET_AFTER)
        self.value_before = regex_cache.compile(
            rf"(?:(?P<verb>(?i:\b(?:use|using|set|pick|choose|chose|try|typed|entered|type|enter|paste|pasted|put))"
            rf"[ \t]+)|"
            rf"(?<=[ \t(\"'`]))?"
            # (a verb between the value and its name: "X works as the router password", "X goes in as …")
            rf"{_VALUE},?(?:[ \t]+(?i:(?:still[ \t]+)?(?:works|worked|goes[ \t]+in|went[ \t]+in|is[ \t]+used|"
            rf"was[ \t]+used)))?"
            rf"\Z")
        # A user and a password in a login context: "log in with admin / X", "credentials: root:X".
        self.pair = regex_cache.compile(
            r"(?i:\b(?:auth-user-pass|"
            r"log[ \t]*in(?:to)?|login|logon|sign[ \t]*in(?:to)?|signin|logging[ \t]+in|logged[ \t]+in|signing[ \t]+in|"
            r"credentials?|"
            r"creds|"
            r"ssh(?:[ \t]+in)?[ \t]+as|"
            r"usuario[ \t]+y[ \t]+contraseña|"
            r"identifiants?|credenciales|credenziali|credenciais|zugangsdaten|anmeldedaten|логин|учетн\w*|"
            r"entra[ \t]+con|inicia[ \t]+sesi[óo]n|entre[ \t]+com|entrar[ \t]+com|connecte-toi|"
            r"(?:зайди|войди|заходи)[ \t]+(?:под|как))(?![\w-])|"  # (not a name's part: "login-action")
            r"登录|登入|账号|帳號|賬號|ログイン|로그인|계정)"  # (words of scripts without spaces end where they end)
            r"[^\n]{0,40}?(?<![\w.@+/:\[-])(?P<user>[\w.@+-]{1,64})(?P<sep>[ \t]+/[ \t]+|/|[ \t]+\|[ \t]+|:|"
            r"[ \t]+(?:and|with|e|y|et|und|con|com|mit|avec)[ \t]+)"
            r"(?P<value>`[^`\n]{1,120}`|\"[^\"\n]{1,120}\"|'[^'\n]{1,120}'|[^\s,;，。、]{3,200})")
        # key = value where the key names a secret; the key is read back from the text before its keyword.
        self.assignment = regex_cache.compile(
            r"(?i)(?P<kw>password|passwd|passphrase|passcode|pwd|pass|secret|token|api[_-]?key|apikey|access[_-]?key|"
            # any other key only as the end of a longer name (`_assignment`: `storage_key`, `AccountKey`; not `monkey`)
            # `REDIS_AUTH=`: "auth" names a secret only as the end of a name in capitals or small letters after "_"
            r"private[_-]?key|auth[_-]?key|credentials?|contraseña|senha|passwort|пароль|"
            # a wallet's key (`DEPLOYER_PK=`) and a salt (`AUTH_SALT=`): `_assignment` judges their values
            r"(?<![A-Za-z0-9])pk(?![A-Za-z0-9.\-])|salt(?![A-Za-z])|"
            # (`keyPassword =`: a stronger name later in the key is the one read)
            r"key(?![A-Za-z0-9_.\-]{0,20}?(?:pass|secret|token|pwd))|(?<=_)auth(?![\w.\-])|(?-i:(?<=-)Auth)(?![\w.\-]))"
            r"(?P<suffix>[A-Za-z0-9_.\-]{0,40})"
            # (`::` is a scope: `test_x.py::TestY`, `Token::new`; YAML may put an anchor or a tag before the value)
            # (Go prints a header map as `Api-Key:[…]`)
            # (full-width `：` and `＝` as Chinese and Japanese input types them; a table's pipe and an arrow between
            # a variable's name and its value, which `_assignment` takes for a name in code only)
            r"(?P<sep>\\?[\"']?\]?[ \t]*(?::=|=>|\?=|=|＝|：|:\[(?!REDACTED:)(?=[^\s\[\]\"']{8,}\])|:(?!:)|"
            r"(?P<table>`?[ \t]+\|(?=[ \t])|`?[ \t]+(?:->|→)(?=[ \t])))[ \t]*"
            r"(?:(?:&|!!?)[\w-]{1,40}[ \t]+)?)"
            # (a JSON text inside a string escapes its quotes: {\"password\":\"…\"})
            r"(?P<value>\"[^\"\n]{1,400}\"|'[^'\n]{1,400}'|`[^`\n]{1,400}`|\\\"[^\"\\\n]{1,400}\\\"|"
            r"[^\s\"',;]{1,4000})")
        self.key_before = regex_cache.compile(r"[A-Za-z0-9_.\-]{0,60}\Z")
        self.list_lead = regex_cache.compile(
            rf"(?i:(?:{_STRONG_WORDS})|credentials?|creds|logins?|accounts?|test[ \t]+users?)|{_PIN}")
        self.strong_lead = regex_cache.compile(rf"(?i:{_STRONG_WORDS})|{_PIN}")
        self.list_item = regex_cache.compile(r"^\s*(?:[-*+•]|\d{1,3}[.)])\s+(?P<body>.+?)\s*$")
        self.label_line = regex_cache.compile(r"^\s*[\w .'()-]{1,40}\s*[:：]\s+\S")
        # Recovery codes listed after their name, and what one looks like (a digit in it).
        self.codes_lead = regex_cache.compile(
            r"(?i:\b(?:recovery|backup|2fa|mfa|otp|one[ -]time)[ \t_-]?codes?\b|\bwiederherstellungscodes?\b|"
            r"\bbackup-codes?\b|\bc[óo]digos?[ \t]+de[ \t]+(?:recuperaci[óo]n|recupera[çc][ãa]o|respaldo|backup)\b|"
            r"رمو?ز[ \t]+(?:ال)?استرداد|"
            r"\bcodes?[ \t]+de[ \t]+(?:récupération|secours)\b|\bcodic[ei][ \t]+di[ \t]+recupero\b|"
            r"\bкоды?[ \t]+восстановления|\bрезервные[ \t]+коды|\bрезервный[ \t]+код|恢复码|备用码|復原碼|リカバリーコード|バックアップコード|"
            r"(?:복구|백업)[ \t]?코드)")
        self.code_token = regex_cache.compile(
            r"(?<![\w\[:/.-])(?=[A-Za-z0-9-]*[0-9])"
            r"(?:[A-Za-z0-9]{4,6}(?:-[A-Za-z0-9]{4,6}){1,3}|[0-9]{4} [0-9]{4}|[0-9]{6,10}|[A-Za-z0-9]{8,12})(?![\w-])")
        self.aws_secret = regex_cache.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
        # A payment card's number: four groups of four digits (and up to seven more), Amex's 4-6-5, or 13 to 19
        # digits in a row; `secret_finders` keeps those that pass the Luhn check.
        self.card = regex_cache.compile(r"(?<![\w.,-])(?:[2-6]\d{3}(?P<sep>[ -])\d{4}(?P=sep)\d{4}(?P=sep)\d{1,7}|"
                                        r"3[47]\d{2}(?P<amex>[ -])\d{6}(?P=amex)\d{5}|[2-6]\d{12,18})(?![\w-]|[.,]\d)")
        # An IBAN: a country's code and two check digits, then the account in a row or in groups of four;
        # `secret_finders` keeps those of their country's length that pass the mod-97 check.
        self.iban = regex_cache.compile(r"(?<![A-Za-z0-9])[A-Z]{2}[0-9]{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?"
                                        r"(?![A-Za-z0-9])")
        self.split_field = regex_cache.compile(r"[ \t]+(?:-|—|–|/|\||=|:)[ \t]+|:[ \t]+|\t")

    @cached_property
    def prompted(self) -> re.Pattern:
        """"type X when it asks for the password", "enter X at the password prompt": the name after a value typed
        at a prompt (the value is read back from the text before it, after a verb). Compiled when first needed:
        few texts hold `PROMPTED_HINTS`."""
        return regex_cache.compile(
            rf"(?i:(?:[ \t]+(?P<at>at|in|into)|[ \t]+when[ \t]+(?:it|they|ssh|sudo|git|the[ \t]+\w+)[ \t]+"
            rf"(?:asks|prompts)[ \t]+(?:you[ \t]+)?for)[ \t]+(?:the|a|your|its)[ \t]+(?:[\w-]{{2,20}}[ \t]+){{0,2}}"
            rf"(?:{_STRONG_WORDS}|pw)(?(at)[ \t]+(?:prompt|field|box|dialog|input)))(?![A-Za-z0-9_])")

    @cached_property
    def typed_at_prompt(self) -> re.Pattern:
        """"X is what I typed at the prompt": the value before (`secret_finders`: a made-up one). Compiled when first
        needed: few texts say "what I typed"."""
        return regex_cache.compile(
            r"(?i:[ \t]+is[ \t]+what[ \t]+(?:i|we)[ \t]+(?:typed|entered)[ \t]+(?:at|in|into)[ \t]+the"
            r"[ \t]+(?:[\w-]{2,20}[ \t]+)?(?P<prompt>prompt))(?![A-Za-z0-9_])")

    def shape(self, kind: str, source: str) -> re.Pattern:
        """A shape of `SHAPES`, compiled the first time a text holds one of its hints: a hook that redacts one log
        line compiles the few shapes that line could hold, not all of them."""
        pattern = self._shapes.get(source)
        if pattern is None:
            pattern = self._shapes[source] = regex_cache.compile(source, re.DOTALL if kind == "private-key" else 0)
        return pattern


_PATTERNS: Patterns | None = None


def patterns() -> Patterns:
    """The compiled patterns, built on first use."""
    global _PATTERNS
    if _PATTERNS is None:
        _PATTERNS = Patterns()
    return _PATTERNS
