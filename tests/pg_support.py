"""A real PostgreSQL server for the team tests: started from the machine's own binaries, never a mock.

`MINER_TEST_PG_URL` points the tests at a server that is already running (its database is used as it
is). Otherwise a throwaway cluster is made with `initdb` in a temporary folder and started with
`pg_ctl` on a Unix socket only (no TCP port), as the `postgres` user when the tests run as root
(PostgreSQL refuses to run as root). Whatever keeps a server from starting becomes the reason the
tests skip.
"""

from __future__ import annotations

import glob
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

ADMIN = "miner_admin"


class NoServer(Exception):
    """Why no PostgreSQL server could be started here."""


def _bindir() -> Path:
    found = shutil.which("pg_ctl")
    if found:
        return Path(found).parent
    candidates = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"), key=lambda p: int(p.split("/")[4]))
    if not candidates:
        raise NoServer("no PostgreSQL server binaries (pg_ctl) on this machine: install Debian's postgresql "
                       "package (./install.sh --test does when it can) or set MINER_TEST_PG_URL")
    return Path(candidates[-1]).parent


class Server:
    """A throwaway PostgreSQL cluster: `url` reaches its `postgres` database as a superuser."""

    def __init__(self) -> None:
        self.bindir = _bindir()
        self.root = Path(tempfile.mkdtemp(prefix="miner-pg-"))
        self.data = self.root / "data"
        self.socket = self.root / "socket"
        self.user: list[str] = []
        if os.geteuid() == 0:
            if shutil.which("runuser") is None:
                raise NoServer("the tests run as root and runuser is missing: PostgreSQL will not run as root")
            try:
                import pwd

                pw = pwd.getpwnam("postgres")
            except KeyError:
                raise NoServer("the tests run as root and there is no postgres user to run the server as") from None
            self.user = ["runuser", "-u", "postgres", "--"]
            os.chmod(self.root, 0o755)
            self.socket.mkdir()
            os.chown(self.socket, pw.pw_uid, pw.pw_gid)
            self.data.mkdir()
            os.chown(self.data, pw.pw_uid, pw.pw_gid)
        else:
            self.socket.mkdir()
        self.url = f"postgresql://{ADMIN}@/postgres?host={self.socket}&port=5432"

    def _run(self, *args: str) -> None:
        done = subprocess.run([*self.user, *args], capture_output=True, text=True, timeout=120)
        if done.returncode != 0:
            raise NoServer(f"{Path(args[0]).name} failed: {(done.stderr or done.stdout).strip()[-400:]}")

    def start(self) -> "Server":
        self._run(str(self.bindir / "initdb"), "-D", str(self.data), "-U", ADMIN, "--auth=trust", "-E", "UTF8",
                  "--locale=C", "--no-sync")
        options = (f"-k {self.socket} -p 5432 -c listen_addresses='' -c fsync=off -c synchronous_commit=off "
                   "-c full_page_writes=off -c max_connections=60")
        self._run(str(self.bindir / "pg_ctl"), "-D", str(self.data), "-o", options, "-w", "-t", "60",
                  "-l", str(self.data / "server.log"), "start")
        return self

    def stop(self) -> None:
        try:
            subprocess.run([*self.user, str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w",
                            "stop"], capture_output=True, timeout=60)
        finally:
            shutil.rmtree(self.root, ignore_errors=True)


def start() -> Server:
    """A started throwaway server, or `NoServer` with the reason."""
    try:
        import psycopg  # noqa: F401
    except ImportError:
        raise NoServer("psycopg is not installed: pip install 'transcript-miner[team]' "
                       "(./install.sh --test installs it)") from None
    server = Server()
    try:
        return server.start()
    except (NoServer, OSError, subprocess.SubprocessError):
        server.stop()
        raise


def fresh_database(admin_url: str, name: str) -> str:
    """A new empty database on the server; returns its URL (the admin's credentials)."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict, make_conninfo

    with psycopg.connect(admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    params = conninfo_to_dict(admin_url)
    params["dbname"] = name
    return make_conninfo(**params)
