"""Passwords in code, in SQL and in data: a call given a user and a password as literals, a method given one, a DSN
(Go's, or one with no scheme), a URL-encoded form's, a Windows password hash, a password in a fenced block under its
name, an app password, the XML and HCL that name one (a plist's key, an Android resource, a Terraform variable), a
card's security code, and the SQL that sets one without quotes or with "SET PASSWORD". Only the group named `secret`
is hidden. `secret_shapes.SHAPES` holds them after the command lines' (standard library only, as all of redaction).
"""

from __future__ import annotations

# A string literal (the user's), and one that looks made up (a digit or a symbol in it, no space, never a variable
# or a placeholder): `login("user", "password")` in a test names no secret.
_LITERAL = r"(?:\"[^\"\n]{1,100}\"|'[^'\n]{1,100}')"
_MADE_UP = r"['\"](?P<secret>(?![$<{%])(?=[^'\"\s]*[0-9!@#%^&*+])[^'\"\s]{3,200})['\"]"

CALL_SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    # A user and a password given to a call: requests' auth=("u", "…"), HTTPBasicAuth("u", "…"),
    # smtp.login("u", "…"), withCredentials("u", "…"), DriverManager.getConnection(url, "u", "…"),
    # reqwest's .basic_auth("u", Some("…")), Neo4j's createUser('u', '…'), NetworkCredential("u", "…"),
    # PHP's new PDO('mysql:…', 'u', '…') and mysqli_connect('host', 'u', '…').
    ("password", r"\bauth[ \t]*=[ \t]*\([ \t]*" + _LITERAL + r"[ \t]*,[ \t]*" + _MADE_UP, ("auth=(", "auth = (")),
    ("password", r"\b(?:\w*(?:Basic|Digest)Auth|login|withCredentials|getConnection|basic_auth|createUser|"
                 r"NetworkCredential|UsernamePasswordCredentials|PasswordAuthentication|PDO|mysqli(?:_connect)?)\("
                 r"[ \t]*(?:(?:[\w.]+|" + _LITERAL + r")[ \t]*,[ \t]*)?" + _LITERAL
                 + r"[ \t]*,[ \t]*(?:Some\([ \t]*)?" + _MADE_UP,
     ("Auth(", "login(", "Credentials(", "getConnection(", "basic_auth(", "createUser(", "Credential(",
      "Authentication(", "PDO(", "mysqli(", "mysqli_connect(")),
    ("password", r"\bsp_addlogin[ \t]+(?:@loginame[ \t]*=[ \t]*)?N?" + _LITERAL + r"[ \t]*,[ \t]*"
                 r"(?:@passwd[ \t]*=[ \t]*)?N?" + _MADE_UP, ("sp_addlogin",)),
    # A signing key given as a literal: jwt.sign(payload, '…'), hmac.new(b'…'), HmacSha256::new_from_slice(b"…");
    # an environment variable named for a secret set in code: os.Setenv("API_TOKEN", "…"), putenv.
    ("password", r"\bjwt\.sign\([^,\n]{1,80},[ \t]*" + _MADE_UP, ("jwt.sign(",)),
    ("password", r"\b(?:hmac\.new|new_from_slice|createHmac\([^,\n]{1,20},)[ \t]*\(?[ \t]*b?" + _MADE_UP,
     ("hmac.new", "new_from_slice", "createHmac")),
    ("password", r"(?i:\b(?:setenv|putenv))\([ \t]*['\"][A-Za-z0-9_]*(?:TOKEN|SECRET|PASSWORD|PASSWD|PASS|KEY)"
                 r"[A-Za-z0-9_]*['\"][ \t]*,[ \t]*" + _MADE_UP, ("Setenv(", "setenv(", "putenv(")),
    # A builder's method given a literal: .password("…"), .token("…"), .api_key("…").
    ("password", r"\.(?:password|passwd|secret|token|api_key|apiKey|auth_token)\([ \t]*" + _MADE_UP + r"[ \t]*\)",
     (".password(", ".passwd(", ".secret(", ".token(", ".api_key(", ".apiKey(", ".auth_token(")),
    # Go's MySQL DSN: user:…@tcp(host:3306)/db; a DSN with no scheme, a made-up value before the host and its port
    # (user:…@db.internal:5432/app).
    ("password", r"(?<![\w/.:@-])[\w.-]{1,32}:(?P<secret>(?![$<{%])[^\s@:'\"/]{3,})@(?:tcp|unix|udp)\(",
     ("@tcp(", "@unix(", "@udp(")),
    # (the ":" first, the user's name checked behind it: a pattern that opens with a literal is searched faster)
    ("password", r":(?<=[\w.-]:)(?P<secret>(?![$<{%])(?=[^\s@:/]*[0-9!#%^&*])[^\s@:'\"/]{3,64})"
                 r"@[\w-]+(?:\.[\w-]+)*:\d{2,5}(?![\w.])", ("@",)),
    # A URL-encoded form's secret: password%3D…%26.
    ("password", r"(?i:pass(?:word|wd)?|pwd|secret|token|api_?key)%3[Dd]"
                 r"(?P<secret>[^%&\s]+(?:%[0-9A-Fa-f]{2}[^%&\s]*)*?)(?=%26|&|\s|$)", ("%3D", "%3d")),
    # A password hash named as Windows' (NTLM hash …): it logs in as well as the password ("pass the hash").
    ("password-hash", r"(?i:\b(?:ntlm|nt|lm)[ \t]+hash(?:es)?\b)[^\n0-9a-fA-F]{0,12}"
                      r"(?P<secret>(?<![0-9a-fA-F])[0-9a-fA-F]{32})(?![0-9a-fA-F])",
     ("NTLM", "ntlm", "NT hash", "LM hash", "nt hash", "lm hash")),
    # A line naming a password, then a fenced block of one made-up token ("The generated password is below:⏎```⏎…").
    # (the name a word of its own: not "tokens"; the line no assignment: `MAX_TOKENS=4000`)
    ("password", r"(?i:\b(?:password|passphrase|secret|token)\b)[^\n]{0,60}:[ \t]*\n(?:[ \t]*\n)?[ \t]*```[\w-]*"
                 r"[ \t]*\n[ \t]*(?P<secret>(?![A-Za-z_][\w.]*=)(?=\S*[0-9!@#$%^&*])\S{6,200})[ \t]*\n[ \t]*```",
     (":\n```", ":\n\n```")),
    # An app password as Google and Apple give them, four groups of four small letters ("the gmail app password
    # is abcd efgh ijkl mnop").
    ("password", r"(?i:\bapp(?:[ \t-]specific)?[ \t-]+passwords?\b)[^\n]{0,40}?(?<![A-Za-z])"
                 r"(?P<secret>[a-z]{4}(?P<sep>[ -])[a-z]{4}(?P=sep)[a-z]{4}(?P=sep)[a-z]{4})(?![A-Za-z])",
     ("app password", "App password", "app-specific", "App-specific", "app specific", "App specific")),
    # XML that names a secret in a key or an attribute: a plist's <key>DBPassword</key><string>…</string> (the key
    # ends with the word: not "PasswordPolicy"), an Android resource's <string name="db_password">…</string> (a
    # made-up value: "Password" is a label's text there).
    ("password", r"<key>[^<\n]{0,40}(?i:password|passwd|passphrase|secret)</key>\s*<string>"
                 r"(?P<secret>(?![$<{])[^<\s]{3,})</string>", ("</key>",)),
    ("password", r"<string[ \t]+name=\"[^\"\n]{0,40}(?i:password|passwd|secret|api_?key|token)[^\"\n]{0,40}\"[^>\n]*>"
                 r"(?P<secret>(?![$@<{])(?=[^<\s]*[0-9!#%^&*])[^<\s]{3,})</string>", ("<string name=",)),
    # Terraform: a variable named for a secret, and its default (variable "db_password" { default = "…" }).
    ("password", r"\bvariable[ \t]+\"[^\"\n]{0,40}(?i:password|passwd|secret|token|api_?key)[^\"\n]{0,40}\"[ \t]*\{"
                 r"[^{}]{0,300}?\bdefault[ \t]*=[ \t]*\"(?P<secret>(?![$<{])[^\"\n]{3,})\"", ('variable "',)),
    # A configuration directive named for a secret, its value after spaces and alone on its line (Apache's
    # `AuthLDAPBindPassword "…"`, `ProxyPass`-style files): a made-up value (not `PermitEmptyPasswords no`).
    ("password", r"(?m:^[ \t]*[A-Za-z][A-Za-z0-9_.]{0,40}(?i:password|passwd|passphrase|secret)[ \t]+\"?"
                 r"(?P<secret>(?![$<{%])(?!v?\d+(?:\.\d+)+[\"\s]*$)(?=[^\s\"]*[A-Za-z])(?=[^\s\"]*[0-9!#%^&*+])"
                 r"[^\s\"]{3,200})\"?[ \t]*$)",
     ("assword ", "ASSWORD ", "asswd ", "ASSWD ", "assphrase ", "ASSPHRASE ", "ecret ", "ECRET ", "assword\t",
      "ASSWORD\t", "ecret\t", "ECRET\t")),
    # A licence key in groups after its name ("License for the build agent: 7QH4K-2VRXM-…"): letters and digits.
    # (three groups or more that mix letters and digits: not "ACME-CORP-TEST-0001" or "ABCD-1234-EFGH-5678")
    ("license-key", r"(?i:\blicen[cs]e(?:[ \t_-]?keys?)?\b)[^\n]{0,60}?(?<![\w-])"
                    r"(?P<secret>(?=(?:[A-Z0-9]*-)*(?=[A-Z0-9]*[0-9])(?=[A-Z0-9]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)*"
                    r"(?:-(?=[A-Z0-9]*[0-9])(?=[A-Z0-9]*[A-Z])[A-Z0-9]+(?:-[A-Z0-9]+)*){2})"
                    r"[A-Z0-9]{4,6}(?:-[A-Z0-9]{4,6}){3,7})(?![\w-])", ("icense", "icence", "ICENSE", "ICENCE")),
    # A fallback literal for a variable named for a secret: env('DB_PASSWORD', '…'), os.getenv("API_TOKEN", "…"),
    # os.environ.get(…, "…"), process.env.DB_PASS || "…" (a made-up value: not "" or "changeme").
    # (the variable's name ends with the word: not TOKEN_TTL or COMPASS_URL; the value holds a letter, and is no URL)
    ("password", r"\b(?:env|getenv|environ\.get|Getenv|GetEnvironmentVariable|fetch)\([ \t]*['\"][A-Za-z0-9_]{0,60}?"
                 r"(?i:password|passwd|_pass|pwd|secret|token|api_?key)['\"][ \t]*,[ \t]*(?=['\"][^'\"]*[A-Za-z])"
                 r"(?![^'\"\n]*://)" + _MADE_UP,
     ("env(", "getenv(", "environ.get(", "Getenv(", "EnvironmentVariable(", "fetch(")),
    ("password", r"\bprocess\.env\.[A-Za-z0-9_]{0,60}?(?i:password|passwd|_pass|pwd|secret|token|api_?key)"
                 r"(?![A-Za-z0-9_])[ \t]*(?:\|\||\?\?)[ \t]*(?=['\"][^'\"]*[A-Za-z])(?![^'\"\n]*://)" + _MADE_UP,
     ("process.env.",)),
    # A card's security code named as one: CVV 731, "the CVC is 8842".
    ("card-security-code", r"(?i:\b(?:cvv2?|cvc2?|csc|card[ \t]+security[ \t]+code)\b)[ \t]*(?::|=|-|is|was)?[ \t]*"
                           r"['\"]?(?P<secret>(?<!\d)\d{3,4})(?![\d/.,:-]\d|\d)",
     ("CVV", "cvv", "Cvv", "CVC", "cvc", "Cvc", "CSC", "security code")),
    # SQL: Oracle's CREATE or ALTER USER (or GRANT … TO u) … IDENTIFIED BY without quotes (not "BY PASSWORD '*…'",
    # "BY VALUES '…'" or a bind variable), and SET PASSWORD, its old value and its new one: Neo4j's "SET PASSWORD
    # FROM '…' TO '…'", MySQL's "SET PASSWORD FOR 'u'@'%' = '…'".
    ("password", r"(?i:\b(?:(?:create|alter)[ \t]+user|grant)\b[^\n]{0,160}?\bidentified[ \t]+by)[ \t]+"
                 r"(?!(?i:password|values)\b)"
                 r"(?P<secret>(?![$<{:&])[^\s'\";]{3,})", ("IDENTIFIED", "identified", "Identified")),
    ("password", r"(?i:\bset[ \t]+password[ \t]+from)[ \t]+['\"](?P<secret>(?![$<{])[^'\"\n]{3,})['\"]",
     ("SET PASSWORD", "set password")),
    ("password", r"(?i:\bset[ \t]+password\b)(?:[ \t]+(?i:for)[ \t]+[^\s=]+)?(?:[ \t]+(?i:from)[ \t]+" + _LITERAL
                 + r"[ \t]+(?i:to))?[ \t]*=?[ \t]*(?i:password\()?[ \t]*['\"](?P<secret>(?![$<{])[^'\"\n]{3,})['\"]",
     ("SET PASSWORD", "set password")),
]
