"""Passwords on command lines: the shapes of the tools that take one as an argument (database clients, remote
desktops, archivers, package managers' credentials, …), each with the hints without which it cannot match. Only
the group named `secret` is hidden. `secret_shapes.SHAPES` holds them in its order (standard library only, as all
of redaction: the hooks redact their log lines with it).
"""

from __future__ import annotations

# A flag's argument: quoted or not, never a variable, a placeholder or the next flag.
# (quoted, it may hold blanks: `ssh-keygen -N "my dog eats socks 42"`)
_ARG = r"['\"]?(?P<secret>(?<=\")(?![-$<{])[^\"\n]{3,}(?=\")|(?<=')(?![-$<{])[^'\n]{3,}(?=')|(?![-$<{])[^\s'\"]{3,})"

COMMAND_SHAPES: list[tuple[str, str, tuple[str, ...]]] = [
    # A wallet's private key on a command line (Foundry's `cast send … --private-key 0x…`); not a key file's path.
    ("private-key", r"(?<![\w-])--private-key(?![\w-])[ \t=]+['\"]?(?P<secret>(?![-$<{./~])[^\s'\"`]{16,})",
     ("--private-key",)),
    # mongosh -p, ldapsearch -w, smbclient -U user%…, keytool -storepass/-keypass.
    ("password", r"\bmongo(?:sh|dump|restore|import|export)?\b[^\n]{0,120}?[ \t]-p[ \t]+" + _ARG, ("mongo",)),
    ("password", r"\bldap(?:search|add|modify|delete|whoami|passwd|compare|modrdn)\b[^\n]{0,160}?[ \t]-w[ \t]+" + _ARG,
     ("ldap",)),
    ("password", r"\b(?:smbclient|rpcclient|smbcacls|smbget)\b[^\n]{0,120}?[ \t]-U[ \t]+['\"]?[^\s%'\"]+%"
                 r"(?P<secret>[^\s'\"]{3,})", ("smbclient", "rpcclient", "smbcacls", "smbget")),
    ("password", r"(?<![\w-])-(?:src|dest|new)?(?:store|key)pass[ \t]+" + _ARG,
     ("storepass", "keypass")),
    # A key's passphrase given to ssh-keygen: -N (the new one), -P (the old one), each its own match.
    *(("password", r"\bssh-keygen\b[^\n]{0,120}?[ \t]-" + flag + r"[ \t]+" + _ARG,
       ("ssh-keygen",)) for flag in "NP"),
    # redis-cli's -a, zip's and unzip's -P (zip's -a converts line ends, and 7z takes its password onto -p).
    ("password", r"\bredis-cli\b[^\n]{0,120}?[ \t]-a[ \t]+" + _ARG, ("redis-cli",)),
    ("password", r"\b(?:un)?zip\b[^\n]{0,120}?[ \t]-P[ \t]+" + _ARG, ("zip",)),
    # SQL Server's tools (-P), openssl's -k, rar's -p/-hp written onto the flag.
    ("password", r"\b(?:sqlcmd|bcp|osql|isql)\b[^\n]{0,120}?[ \t]-P[ \t]*" + _ARG,
     ("sqlcmd", "bcp", "osql", "isql")),
    ("password", r"\bopenssl\b[^\n]{0,160}?[ \t]-k[ \t]+" + _ARG, ("openssl",)),
    ("password", r"\b(?:un)?rar\b[^\n]{0,120}?[ \t]-h?p(?P<secret>(?![-$<{])[^\s'\"]{3,})", ("rar",)),
    # A password hashed on the command line (openssl passwd -6 '…'), and user:password lines piped to chpasswd.
    ("password", r"\bopenssl[ \t]+passwd\b(?:[ \t]+-(?:1|5|6|apr1|aixmd5|crypt|salt[ \t]+\S+|stdin))*[ \t]+['\"]?"
                 r"(?P<secret>(?![-$<{])[^\s'\")]{3,})", ("openssl passwd",)),
    ("password", r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?['\"]?[\w.-]{1,32}:(?P<secret>(?![$<{])[^\s'\"|:]{3,})"
                 r"['\"]?[ \t]*\|[ \t]*(?:sudo[ \t]+)?chpasswd\b", ("chpasswd",)),
    # Bundler's credentials for a gem server: bundle config [set] [--global] gems.example.io USER:….
    ("password", r"\bbundle[ \t]+config(?:[ \t]+set)?(?:[ \t]+--(?:global|local))?[ \t]+[\w-]+(?:\.[\w-]+)+[ \t]+"
                 r"['\"]?[^\s:'\"]+:(?P<secret>(?![$<{])[^\s'\"]{3,})", ("bundle config",)),
    # A value written into a file named for a secret: echo '…' > ~/.vault_pass (not a variable).
    ("password", r"\b(?:echo|printf)[ \t]+(?:-[neE]+[ \t]+)?(?P<q>['\"]?)"
                 r"(?P<secret>(?![-$<{\[])(?=[^\s'\"|>;]*[A-Za-z])(?=[^\s'\"|>;]*[0-9!@#%^&*])[^\s'\"|>;]{6,200})(?P=q)"
                 r"[ \t]*>>?[ \t]*['\"]?[^\s'\";|]*(?i:pass|secret|token|pwd|credential)[^\s'\";|]*",
     ("echo", "printf")),
    # Oracle's tools (user/password@db), lftp -u user,password, remote desktops (xfreerdp /p:, rdesktop -p),
    # ipmitool -P, cqlsh -p, twine -p, SNMP's community and v3 pass phrases (not the default communities).
    ("password", r"\b(?:sqlplus|sqlldr|expdp|impdp|rman|dgmgrl)\b(?:[ \t]+-\w+)*[ \t]+['\"]?[\w$#.-]{1,30}/"
                 r"(?P<secret>(?![$<{])[^@\s'\"/]{3,})(?=@|['\"]|[ \t]|$)",
     ("sqlplus", "sqlldr", "expdp", "impdp", "rman", "dgmgrl")),
    ("password", r"\blftp\b[^\n]{0,80}?[ \t]-u[ \t]+['\"]?[^\s,'\"]+,(?P<secret>(?![$<{])[^\s'\"]{3,})", ("lftp",)),
    ("password", r"\b(?:xfreerdp|wlfreerdp|sdl-freerdp)\b[^\n]{0,200}?[ \t]/p:['\"]?(?P<secret>(?![$<{])[^\s'\"]{3,})",
     ("freerdp",)),
    ("password", r"\b(?:rdesktop|ipmitool)\b[^\n]{0,160}?[ \t]-[pP][ \t]+" + _ARG, ("rdesktop", "ipmitool")),
    ("password", r"\b(?:cqlsh|twine)\b[^\n]{0,120}?[ \t](?:-p|--password)[ \t=]+" + _ARG, ("cqlsh", "twine")),
    # (each flag its own match; a community that is a plain word, like "public", is no secret)
    *(("password", r"\bsnmp(?:walk|get|bulkwalk|bulkget|getnext|set|table|trap|df|netstat|status)\b[^\n]{0,120}?"
                   r"[ \t]-" + flag + r"[ \t]+['\"]?(?P<secret>(?![-$<{])(?=[^\s'\"]*[0-9!@#%^&*])[^\s'\"]{3,})",
       ("snmp",)) for flag in "cAX"),
    # Windows: net use … /user:NAME PASSWORD (cmdkey's /pass: and plink's -pw: the words find them).
    ("password", r"(?i:\bnet[ \t]+use)\b[^\n]{0,160}?/(?i:user):[^\s]+[ \t]+['\"]?(?P<secret>(?![/*$<{-])[^\s'\"]{3,})",
     ("net use", "NET USE")),
    # Wi-Fi: wpa_passphrase SSID PASSPHRASE, nmcli's wifi-sec.psk.
    ("password", r"\bwpa_passphrase[ \t]+(?:\"[^\"\n]+\"|'[^'\n]+'|\S+)[ \t]+['\"]?(?P<secret>(?![$<{])[^\s'\"]{3,})",
     ("wpa_passphrase",)),
    ("password", r"\bnmcli\b[^\n]{0,200}?[ \t](?:wifi-sec\.psk|802-11-wireless-security\.psk)[ \t]+" + _ARG,
     ("nmcli",)),
    # Package managers' credentials: poetry's and composer's http-basic, npm's and yarn's auth tokens.
    ("password", r"\b(?:poetry|composer)[ \t]+config\b[^\n]{0,40}?[ \t]http-basic\.\S+[ \t]+\S+[ \t]+" + _ARG,
     ("http-basic",)),
    ("password", r"\b(?:npm|yarn|pnpm)[ \t]+config[ \t]+set[ \t]+\S*(?:_authToken|_auth|_password|npmAuthToken)"
                 r"[ \t]+" + _ARG, ("config set",)),
    # What a command that prints a secret printed, alone on the next line: heroku auth:token, op read, gcloud auth
    # print-access-token, vault … -field=…, doppler secrets get … --plain, aws ssm get-parameter --with-decryption,
    # a first password or a join token read from its file (Jenkins, GitLab, k3s), argocd's initial password, a
    # Kubernetes secret decoded (kubectl get secret … | base64 -d), and
    # what makes a key or a password: wg genkey, openssl rand, pwgen, Python's secrets.token_….
    ("token", r"(?m:^[^\n]{0,40}?\b(?:heroku[ \t]+auth:token|op[ \t]+read[ \t]+\S+|"
              r"gcloud[ \t]+auth[ \t]+print-(?:access|identity)-token|vault[ \t]+(?:kv[ \t]+get|read)[ \t]+-field=\S+|"
              r"doppler[ \t]+secrets[ \t]+get\b[^\n]*--plain|"
              r"aws[ \t]+ssm[ \t]+get-parameters?\b[^\n]*--with-decryption|"
              r"cat[ \t]+\S*(?:initialAdminPassword|initial_root_password|node-token)|"
              r"argocd[ \t]+admin[ \t]+initial-password|wg[ \t]+genkey|openssl[ \t]+rand[ \t]+-(?:base64|hex)|"
              r"kubectl\b[^\n]{0,80}?\bget[ \t]+secrets?\b[^\n]{0,200}?\bbase64[ \t]+(?:-d|-D|--decode)\b|"
              r"pwgen(?=(?:[ \t]+(?:-\w+|\d+))*[ \t]*$)|"
              r"[^\n]*secrets\.token_(?:hex|urlsafe|bytes))[^\n]*\n"
              r"[ \t]*(?P<secret>(?![$<{]|```)\S{6,400})[ \t]*$)",
     ("auth:token", "op read", "print-access-token", "print-identity-token", "-field=", "--plain",
      "--with-decryption", "initialAdminPassword", "initial_root_password", "node-token", "initial-password",
      "genkey", "openssl rand", "pwgen", "secrets.token_", "get secret")),
    # Elasticsearch's: a user's password (elasticsearch-users useradd/passwd … -p …), and the one its reset printed.
    ("password", r"\belasticsearch-users\b[^\n]{0,80}?[ \t]-p[ \t]+" + _ARG, ("elasticsearch-users",)),
    ("password", r"successfully[ \t]+reset\.?[ \t]*\n[ \t]*New[ \t]+value:[ \t]*(?P<secret>\S{6,400})",
     ("New value:",)),
    # A secret stored in a cloud's secret manager: aws secretsmanager … --secret-string …, az keyvault secret set …
    # --value … (a JSON string is the key-value pass's).
    ("password", r"\baws[ \t]+secretsmanager[ \t]+(?:create-secret|put-secret-value|update-secret)\b[^\n]{0,200}?"
                 r"--secret-string[ \t=]+" + _ARG, ("secretsmanager",)),
    ("password", r"\baz[ \t]+keyvault[ \t]+secret[ \t]+set\b[^\n]{0,200}?--value[ \t=]+" + _ARG, ("keyvault",)),
    # A parameter stored as a secret: aws ssm put-parameter --type SecureString --value ….
    ("password", r"\baws[ \t]+ssm[ \t]+put-parameter\b(?=[^\n]*SecureString)[^\n]{0,200}?--value[ \t=]+" + _ARG,
     ("put-parameter",)),
    # A value set as a secret: pulumi config set --secret NAME …, netlify env:set NAME … (a NAME that says secret).
    ("password", r"\bpulumi[ \t]+config[ \t]+set\b(?=[^\n]*--secret\b)(?:[ \t]+--?[\w-]+)*[ \t]+(?!-)[^\s=]+"
                 r"[ \t]+" + _ARG, ("pulumi config",)),
    ("password", r"\b(?:netlify|ntl)[ \t]+env:set[ \t]+[A-Za-z0-9_]*(?i:secret|pass|token|key|pwd|auth|credential)"
                 r"[A-Za-z0-9_]*[ \t]+" + _ARG, ("env:set",)),
    # A broker's or a file's user given a password: rabbitmqctl add_user/change_password USER …, mosquitto_passwd -b
    # FILE USER …; an S3 client's secret key after its access key: mc alias set NAME URL ACCESS ….
    ("password", r"\brabbitmqctl\b[^\n]{0,80}?[ \t](?:add_user|change_password)[ \t]+['\"]?[^\s'\"]+['\"]?[ \t]+"
                 + _ARG, ("add_user", "change_password")),
    ("password", r"\bmosquitto_passwd\b[^\n]{0,40}?[ \t]-b[ \t]+\S+[ \t]+\S+[ \t]+" + _ARG, ("mosquitto_passwd",)),
    ("password", r"\bmc[ \t]+(?:alias[ \t]+set|config[ \t]+host[ \t]+add)[ \t]+\S+[ \t]+\S+[ \t]+\S+[ \t]+" + _ARG,
     ("alias set", "host add")),
    # Tokens given to a tool's login: ngrok's authtoken, cargo login.
    ("token", r"\bngrok\b[^\n]{0,40}?[ \t](?:add-authtoken|authtoken)[ \t]+" + _ARG, ("authtoken",)),
    ("token", r"\bcargo[ \t]+login\b(?:[ \t]+--registry[ \t=]+\S+)?[ \t]+" + _ARG, ("cargo login",)),
    # Apple's tools: altool's and notarytool's app-specific password (not "@keychain:…", a reference), the
    # keychain's password (security unlock-keychain -p …) and what is stored in it (add-generic-password -w …).
    ("password", r"\b(?:altool|notarytool)\b[^\n]{0,200}?[ \t](?:-p|--password)[ \t=]+['\"]?"
                 r"(?P<secret>(?![-$<{@])[^\s'\"]{3,})", ("altool", "notarytool")),
    ("password", r"\bsecurity[ \t]+(?:unlock|create)-keychain\b[^\n]{0,80}?[ \t]-p[ \t]+" + _ARG,
     ("unlock-keychain", "create-keychain")),
    ("password", r"\bsecurity[ \t]+add-(?:generic|internet)-password\b[^\n]{0,200}?[ \t]-w[ \t]+" + _ARG,
     ("add-generic-password", "add-internet-password")),
    # Windows: schtasks' /rp (the task's user's password; "*" asks), psexec's and paexec's -p.
    ("password", r"(?i:\bschtasks)\b[^\n]{0,200}?[ \t]/(?i:rp)[ \t]+" + _ARG, ("schtasks", "SCHTASKS")),
    ("password", r"(?i:\b(?:psexec|paexec))(?:64)?(?:\.exe)?\b[^\n]{0,200}?[ \t]-p[ \t]+" + _ARG,
     ("psexec", "PsExec", "PSEXEC", "paexec", "PAExec")),
    # Redis: AUTH in redis-cli or at its prompt (with a user or without), CONFIG SET and the server's flags.
    ("password", r"(?:\bredis-cli\b[^\n]{0,120}?|:\d{2,5}>)[ \t]*(?i:auth)[ \t]+(?:(?![-$<{])[\w.-]{1,64}[ \t]+)?"
                 + _ARG, ("redis-cli", "> AUTH", "> auth", ">AUTH", ">auth")),
    ("password", r"(?:(?i:\bconfig[ \t]+set)[ \t]+|(?<![\w-])--)(?:requirepass|masterauth)[ \t=]+" + _ARG,
     ("requirepass", "masterauth")),
    # vault login TOKEN (not its flags or a method's key=value).
    ("token", r"\bvault[ \t]+login(?:[ \t]+-[\w-]+(?:=\S+)?)*[ \t]+['\"]?"
              r"(?P<secret>(?![-$<{])(?![^\s'\"]*=)[^\s'\"]{8,})", ("vault login",)),
    # Azure's database servers: az sql/postgres/mysql … -p / --admin-password ….
    ("password", r"\baz[ \t]+(?:sql|postgres|mysql)\b[^\n]{0,160}?[ \t](?:-p|--admin-password)[ \t=]+" + _ARG,
     ("az sql", "az postgres", "az mysql")),
    # An IPsec secret (ipsec.secrets): `: PSK "…"`, `user : XAUTH "…"`, `cert.pem : RSA key.pem "…"`.
    ("password", r"(?m:^[^\n#:]{0,80}:[ \t]*(?:PSK|XAUTH|EAP|NTLM|(?:RSA|ECDSA|P12)[ \t]+\S+)[ \t]+"
                 r"\"(?P<secret>[^\"\n]{3,})\")", ("PSK", "XAUTH", "EAP", "NTLM", "RSA ", "ECDSA ", "P12 ")),
]
