"""Entry points of team sync: connect to the team's server, sync one joined project (one at a time per machine),
and the background worker's quiet sync after mining. The work itself is `sync.Sync`."""

from __future__ import annotations

from typing import Callable

from ..memory.store import Store
from .settings import TeamError, TeamSettings, without_password
from .sync import Report, Sync


def connect(settings: TeamSettings, connect_timeout: int = 10):
    """The team's `PgStore`; `PgStoreError` (one line, no password) when it cannot be reached."""
    from ..memory.pgstore import PgStore

    if not settings.server_url():
        raise TeamError("no team server: run `miner team join URL` in the project, or set MINER_TEAM_URL")
    without_password(settings.server_url())  # an unreadable URL: libpq's reason, without the password it may quote
    return PgStore(settings.server_url(), settings.team, settings.member, connect_timeout=connect_timeout)


def sync_project(store: Store, settings: TeamSettings, project: str, remote=None,
                 progress: Callable[[int, int], None] | None = None, wait_s: float = 600) -> Report:
    """Push then pull one joined project, one sync of it at a time on this machine (a second one waits up to
    `wait_s`, then gives up: the running one sends what it finds, the next sync the rest)."""
    from ..extract.redact import ensure_extra
    from ..runtime import locks
    from ..runtime.exclusions import is_excluded

    ensure_extra()  # what is pulled and pushed is redacted as mining redacts (a broken file: SecretRuleError)
    key = settings.key_of(project)
    if key is None:
        raise TeamError(f"{project} has not joined the team: run `miner team join` in it")
    if is_excluded(project):
        raise TeamError(f"{project} is excluded from mining: nothing of it is shared (`miner exclude list`)")
    fd = locks.acquire_named(f"team-{key}", wait_s=wait_s)
    if fd is None:
        raise TeamError("another sync of this project is still running; try again when it is done")
    own = remote is None
    try:
        remote = remote or connect(settings)
        return Sync(store, remote, settings, project, key, progress).run()
    finally:
        if own and remote is not None:
            remote.close()
        locks.release(fd)


def sync_after_mining(projects: set[str], note: Callable[[str], None]) -> None:
    """The background worker's sync of the joined projects it mined (quietly: a failure is a note, never an
    error, and what was not sent stays pending for the next one)."""
    try:
        from . import settings as settings_mod

        settings = settings_mod.load()
    except Exception as exc:  # noqa: BLE001 - a broken team file must not stop mining
        note(f"team sync skipped: {exc}")
        return
    joined = [p for p in sorted(projects) if settings.key_of(p) is not None]
    if not joined:
        return
    try:
        import psycopg  # noqa: F401
    except ImportError:
        note("team sync skipped: psycopg is missing (pip install 'transcript-miner[team]')")
        return
    for project in joined:
        try:
            with Store() as store:
                report = sync_project(store, settings, project, wait_s=0)
            note(f"team sync of {settings.key_of(project)}: {report.line()}")
        except Exception as exc:  # noqa: BLE001 - offline or refused: the next sync catches up
            note(f"team sync of {settings.key_of(project)} not done: {str(exc).splitlines()[0] if str(exc) else exc}")
