"""Mining halted by a broken rule or secrets file, told to the user at the next SessionStart.

A background miner (a Stop hook's, catch-up's) that meets a rule file it cannot read mines nothing until the file
is fixed; its log says so, but nobody reads a log. It leaves the error here (`record`), and the SessionStart hook
shows it to the user (`notice`), and `miner doctor` (`current`), for as long as the file stays as it was and no
miner has mined since (`clear`): edited since, or gone, the next miner finds out again. A project's own rule file
concerns that project only. Read by the hook: the standard library and the package's own light modules only.
"""

from __future__ import annotations

import os

from .. import jsonlite, paths
from ..extract.rule_trust import PROJECT_RULE_FILE, is_project_rule_file, is_trusted


def _marker() -> str:
    return paths.data_file("cache", paths.HALTED_MARKER)


def record(error: str) -> None:
    """Keep `error` (one line, already redacted, opening with the file's path as rule and secrets errors do) for the
    next SessionStart. Never raises."""
    ends = [i for i, char in enumerate(error) if char == ":"]
    named = [error[:i] for i in ends if os.path.isabs(error[:i]) and os.path.isfile(error[:i])]
    if not named:
        return
    try:
        paths.write_private(_marker(), jsonlite.dumps({"file": named[-1], "error": error}))
    except OSError:
        pass


def clear() -> None:
    """A miner mined turns with every file loaded: no file it reads for every project halts mining (any more). A
    project's own file halts that project's mining only, and a pass of another project's says nothing of it: its
    notice goes when the file is edited or no longer trusted as it is. Never raises."""
    if is_project_rule_file(current()[0]):
        return
    try:
        os.unlink(_marker())
    except OSError:
        pass


def current() -> tuple[str, str]:
    """(the file, the error) that halts mining, as recorded, while the file is as it was then; ('', '') when none."""
    marker = _marker()
    try:
        with open(marker, encoding="utf-8") as handle:
            held = jsonlite.loads(handle.read())
        file, error = held["file"], held["error"]
        if os.stat(file).st_mtime > os.stat(marker).st_mtime:
            return "", ""  # edited since: the next miner finds out whether it is fixed
        if is_project_rule_file(file) and not is_trusted(file, paths.config_root()):
            return "", ""  # (no longer applied: `miner rules trust --revoke`)
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        return "", ""
    return (file, error) if isinstance(error, str) and isinstance(file, str) else ("", "")


def notice(project: str) -> str:
    """The line to show the user of `project` while a broken file halts mining; '' when none does."""
    file, error = current()
    if not error:
        return ""
    if is_project_rule_file(file) and file != os.path.join(project, PROJECT_RULE_FILE):
        return ""  # another project's own rules
    return (f"transcript-miner: nothing new is mined until this is fixed: {error} "
            "(`miner rules check` checks the files)")
