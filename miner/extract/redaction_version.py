"""Which redaction the code applies (`REDACTION_VERSION`), and output from a store an older one wrote.

Standard library only, without `re`: the hooks ask it of every block they print. A store records the version
that last cleaned it (`memory.repair`); until the first background miner after an upgrade has run that repair,
what the hooks print is redacted on its way out, so that no secret an older version let through is shown.
"""

from __future__ import annotations

REDACTION_VERSION = 15  # 3: command-line passwords, vendor shapes, more languages' words; 4: any key's generated
# value, payment card numbers, social security numbers; 5: IBANs, password hashes, a key's setting named in prose,
# door codes in other languages, ssh-keygen's passphrases, a password past a comma or right after its variable,
# a password changed to a value in other languages, more command lines' passwords, a Markdown table's password
# column, MySQL's IDENTIFIED BY, redis.conf's requirepass, here-strings, gh secret set, PHP's define, wrapped literals
# 6: SQL INSERT's password columns, bare .pgpass lines, Terraform's sensitive values, "X — that's the password",
# a value typed at a password prompt or on the line after its label, openssl passwd, chpasswd, and the command
# lines of `secret_commands`' Oracle tools, lftp, xfreerdp, ipmitool, cqlsh, twine, snmp, net use, Wi-Fi, npm, ssm
# and a login said with "and"/"with", a safe's code, a lock's combination, a security answer, setters, e-mail / value
# and what secret printers (heroku auth:token, op read, …) printed, a value in HTML bold, MySQL's password hashes
# and "use X as the password" in twelve more languages, a made-up value beside an account in a headerless table
# 7: pulumi's and netlify's secrets, rabbitmqctl, mosquitto_passwd, mc alias, ngrok, cargo login, Tailscale keys,
# Apple's altool, notarytool and keychain, IPsec secrets, Gradle's storePassword "…", keyPassword =, "password's X"
# and a key indexed in brackets (`$db['password'] =`), docker secret create, pswd and p/w, Bengali's "is"
# and `secret_calls`' code and SQL (auth=("u", "…"), .login("u", "…"), SET PASSWORD), Elasticsearch's users, what
# generators and first-password files printed (wg genkey, openssl rand, pwgen, initialAdminPassword), a SecretID
# and schtasks, psexec, Redis' AUTH and flags, vault login, az sql, a card's CVV, a DSN with no scheme, a URL-encoded
# form, JSON inside a string, a value after a YAML anchor or tag (and the tag itself no longer taken for the value)
# and "pass X", "密码X", "password? it's X", "pw -> X", a label and a blank line, mk, sandi, 🔑, a card's pin,
# root/X, storePassword '…' mid-line, Express' signed cookies, OpenPGP secret key bodies, "chave da API"
# and the keys of Groq, Replicate, xAI, Perplexity, LangSmith, Tavily, NVIDIA, Google OAuth, 1Password, PostHog,
# Brevo, Resend, Fly.io, Mapbox, Slack apps, RubyGems, Tencent; Teams' and Zapier's webhooks; NTLM hashes; a
# setting "updated to" a value; `admin`/`…`; a password in a fenced block under its name; "X is what I set as the
# pw"; an app password in four groups; a voicemail's pin
# and "pw dell'admin:", pairs joined by e/y/et/und, chiave segreta, "X de contraseña", "a"/"en" X, PWは,
# "mdp c'est", "ww:" (and a word with an apostrophe no longer looks made up)
# and a plist's key, an Android string, a Terraform default, Make's ?=, a value before its name (", that's the
# …", "works as the …", "(the … password)", " - … password", "es la contraseña", "是…密码")
# and aws secretsmanager --secret-string, az keyvault secret set --value, a value piped into gcloud secrets,
# vercel env add or wrangler secret put
# and jwt.sign/hmac.new literals, os.Setenv("…_TOKEN", …), "ssh in as user / X", "X, c'est le mot de passe", a
# Telegram token in the Bot API's URL (and a path of three parts or more is no value)
# 8: a value set rather than stated ("I changed it to X", "l'ho impostata a X", "la puse como X"), "the same as
# before: X", Spanish "la contra", a phone's unlock code, a card's pin in four more languages, a GitHub PAT,
# PDO and mysqli_connect, GRANT … IDENTIFIED BY, a directive named for a secret, echo '…' > a password file, a decoded
# Kubernetes secret, a generated value under a line naming it, "X is what I typed at the prompt", the slang and shapes
# of more languages (el pass de, senha como, PW fürs, ww van, mk wifi, sandinya, пасс, şifreyi, باسورد, پسورد),
# password typos, "logged in as … with", Bundler's credentials, licence keys, Go's header maps, "SECRET is set to",
# backup codes in Portuguese and Arabic (and in two groups of four digits), la clé WPA, ключ API, API 키, a Ukrainian
# seed phrase, requirepass in backquotes, a secret variable's fallback literal (env('DB_PASSWORD', '…')); a text
# with runs of 64 blanks or more read piece by piece (no longer in time that grows as the square of a run)
# 9: the kinds of secrets.yaml in what was stored without mining (MCP tools, corrections, imports), which lacked them
# 10: a variable named for a secret beside its value in a table row or after an arrow (`| DB_PASSWORD | … |`),
# full-width `：` and `＝` after a key, `X-Auth:`, "bearer:", a salt and a wallet's key (`AUTH_SALT=`,
# `DEPLOYER_PK=`, `--private-key`), `MNEMONIC=`, the words for a token or a key in Russian, Korean, Chinese, Japanese
# and German (and 私钥, 授权码, シークレット), a password with an `@` in a URL, a key's base64 padding after words,
# invisible characters inside a key, the rest of a key wrapped onto the next line, a secret learnt and written again
# URL-encoded, Feishu's and Lark's bot webhooks, a value given on request after a question of the secret's name
# alone ("And the SMTP password?"), a passphrase of joined words given so, AppSecret, a quoted passphrase with blanks
# on a command line, a PIN "reset to" a value, مفتاح, Atlassian's and Linear's keys
# 11: a second value in the sentence of a hidden one ("… is X and for prod it is Y", "the passwords are X and Y"), a
# secret asked for and answered in one text ("Q: what's the root password? A: X"), a made-up value near a secret's
# name that no pass read ("I changed the password. New one: X")
# 12: a made-up value near a login's words or a key's name in eight more languages, a reply with one after a turn that
# named a secret, and what was stored before the store learnt it was a secret (its digest)
# 13: a key or token "is now"/"is still" X or set "to" X, a password "now" X in more languages, "密码统一用 X", a
# value a user announced for their next message, a password brought next to its name by cleaning (a comment, an
# escape sequence, a run of blanks taken out), a plain word given as a password where a later text speaks of a login,
# SSHPASS=, a secret that "stays" X, "als Passwort nehmen wir X", "пароль сменил на X", every account / secret cell of a
# credentials column
# 14: an account and its password written "admin/X" after a login's words ("log into grafana with …"), SSHPASS
# "set to" X
# 15: a value given in reply to a question that points back at a secret the sentence before it named ("The password
# was refused. What is the current one?"), a passphrase of three words after a colon


COUNTER = "redaction_version"  # the store's counter that holds the version which last cleaned it


def for_output(text: str, stored_version: int) -> str:
    """`text`, drawn from a store last cleaned by redaction `stored_version`, as it may be shown."""
    if not text or stored_version >= REDACTION_VERSION:
        return text
    from .redact import load_kept_extra, redact_text  # (only while the repair is pending)

    load_kept_extra()  # the kinds of secrets.yaml too, as the last miner kept them (the hooks read no YAML)
    return redact_text(text)
