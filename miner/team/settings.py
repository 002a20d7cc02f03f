"""Which team server, team and projects this machine syncs: `$XDG_CONFIG_HOME/miner/team.json`.

The file holds the server's URL without its password, the team id, this member's
name and the projects joined (local project root: the team's key for it). A password
comes only from `MINER_TEAM_URL` (which replaces the file's URL) or libpq's own
`PGPASSWORD` and `~/.pgpass`: nothing the miner writes ever holds one.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import socket
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from .. import paths

TEAM_FILE = "team.json"
URL_ENV = "MINER_TEAM_URL"
_KEY_RE = re.compile(r"^[\w.\-/:@]{1,200}$")


class TeamError(ValueError):
    """A team command cannot do what was asked; the message says why and what to do, in one line."""


@dataclass
class TeamSettings:
    url: str = ""
    team: str = ""
    member: str = ""
    projects: dict[str, str] = field(default_factory=dict)

    def server_url(self) -> str:
        """The URL to connect with: `MINER_TEAM_URL` when set (it may carry a password), else the file's."""
        return os.environ.get(URL_ENV) or self.url

    def key_of(self, project: str) -> str | None:
        """The team's key for a local project root, or None when the project has not joined."""
        return self.projects.get(project)


def team_path() -> Path:
    return paths.config_dir() / TEAM_FILE


def load() -> TeamSettings:
    """The team settings; empty ones when this machine joined nothing. A broken file is one line."""
    try:
        data = json.loads(team_path().read_text(encoding="utf-8"))
    except FileNotFoundError:
        return TeamSettings()
    except (OSError, ValueError) as exc:
        raise TeamError(f"{team_path()} is not valid JSON ({exc}); fix it or run `miner team leave --all`") from None
    if not isinstance(data, dict) or not isinstance(data.get("projects", {}), dict):
        raise TeamError(f"{team_path()} is not a team file; fix it or run `miner team leave --all`")
    return TeamSettings(str(data.get("url", "")), str(data.get("team", "")), str(data.get("member", "")),
                        {str(k): str(v) for k, v in data.get("projects", {}).items()})


def save(settings: TeamSettings) -> None:
    """Write the settings (private to the user); the URL is written without a password."""
    path = team_path()
    paths.ensure_private_dir(path.parent)
    data = {"url": without_password(settings.url), "team": settings.team, "member": settings.member,
            "projects": dict(sorted(settings.projects.items()))}
    paths.write_private(path, json.dumps(data, indent=2))


def without_password(url: str) -> str:
    """The URL with its password left out (`pgschema.without_password`); an unreadable one is a `TeamError`."""
    if not url:
        return url
    from psycopg import ProgrammingError

    from ..memory.pgschema import AT_IN_PASSWORD
    from ..memory.pgschema import without_password as strip

    try:
        return strip(url)
    except ProgrammingError as exc:
        if str(exc) == AT_IN_PASSWORD:  # (our own words: no part of the URL is in them)
            raise TeamError(f"not a PostgreSQL URL: {AT_IN_PASSWORD}") from None
        raise TeamError(f"not a PostgreSQL URL ({_unreadable_reason(url, exc)}): "
                        "give postgresql://user@host/db") from None


def same_server(a: str, b: str) -> bool:
    """Whether two URLs (or key=value strings) name the same server, database and role, passwords aside: one with a
    password and one without are the same server (`team.json` keeps the second form)."""
    from psycopg.conninfo import conninfo_to_dict

    return conninfo_to_dict(without_password(a)) == conninfo_to_dict(without_password(b))


def _unreadable_reason(url: str, exc: Exception) -> str:
    """libpq's reason it cannot read `url`, without the URL's own words: libpq quotes what it stumbled on, and that
    may be the password, or the whole URL with it. When the URL holds a quote (so its parts cannot be told from
    libpq's quotes) or its password may still be there, the reason is only that libpq cannot read it."""
    lines = str(exc).strip().splitlines()
    reason = re.sub(r'"[^"]*"', lambda quoted: quoted[0] if len(quoted[0]) <= 3 else '"…"', lines[0] if lines else "")
    userinfo = url.partition("://")[2].rpartition("@")[0] if "://" in url else ""
    password = re.search(r"password\s*=\s*'?([^'\s]*)", url)
    given = userinfo.partition(":")[2]
    secrets = [part for part in (given, given.split("@")[0], password and password[1]) if part]
    if not reason or '"' in url or any(secret in reason for secret in secrets):
        return "libpq cannot read it"
    return reason


def has_password(url: str) -> bool:
    from psycopg.conninfo import conninfo_to_dict

    try:
        return bool(conninfo_to_dict(url).get("password"))
    except Exception:  # noqa: BLE001 - an unreadable URL is reported where it is used
        return False


def default_member() -> str:
    """This member's name on the team: `MINER_TEAM_MEMBER`, else user@host."""
    name = os.environ.get("MINER_TEAM_MEMBER")
    if name:
        return name
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = "someone"
    return f"{user}@{socket.gethostname()}"


def default_key(project: str, with_port: bool = False) -> str:
    """The team's key for a project: its git remote `origin` (host/path, no user, scheme or port), else its folder's
    name. `with_port`: as versions before this one gave it (a URL's port a part of the path).

    The same repository cloned to different folders on different machines gets the same key.
    """
    try:
        done = subprocess.run(["git", "-C", project, "config", "--get", "remote.origin.url"], capture_output=True,
                              text=True, timeout=5)
        remote = done.stdout.strip() if done.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        remote = ""
    if remote.startswith(("/", "~", ".", "file:")) or re.match(r"[A-Za-z]:[\\/]", remote):
        # A folder on this machine (`git clone /srv/git/shop.git`): its path names someone's home, never the team's
        # repository; the repository's name does.
        name = re.sub(r"\.git$", "", remote.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]).lower()
        remote = ""
        if name and _KEY_RE.match(name):
            return name
    if remote:
        url = re.match(r"^[a-z+]+://", remote) is not None
        remote = re.sub(r"^[a-z+]+://", "", remote)
        remote = re.sub(r"^[^@/]+@", "", remote)
        if url and not with_port:  # ssh://host:2222/acme/shop and https://host/acme/shop are one repository
            remote = re.sub(r"^([^/:]+):\d*(?=/|$)", r"\1", remote)
        remote = remote.replace(":", "/", 1) if ":" in remote.split("/", 1)[0] else remote
        remote = re.sub(r"\.git$", "", remote.rstrip("/"))
        if _KEY_RE.match(remote):
            return remote.lower()
    return Path(project).name or "project"


def check_key(key: str) -> str:
    if not _KEY_RE.match(key):
        raise TeamError(f"{key!r} is not a project key: use letters, digits and . - / : @ (at most 200)")
    return key
