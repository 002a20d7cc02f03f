"""Which projects' own rule files the user trusted, as they were then (`miner rules trust`).

Read by the miner (`rules`) and by the SessionStart hook while a broken rule file halts mining (`runtime.halted`):
the standard library and `jsonlite` only, no YAML.
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import jsonlite

PROJECT_RULE_FILE = os.path.join(".claude", "miner-rules.yaml")  # a project's own rules, below its root
TRUST_FILE = "trusted-project-rules.json"  # in the user's config folder: {rule file's real path: its SHA-256}


def is_project_rule_file(path: str | Path) -> bool:
    return str(path).endswith(os.sep + PROJECT_RULE_FILE)


def digest(path: str | Path) -> str:
    import hashlib  # (OpenSSL's load: only where a rule file is weighed)

    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def trusted(config_dir: str | Path) -> dict[str, str]:
    """{real path: SHA-256} of the rule files the user trusted; {} when there is no record or it does not read."""
    try:
        found = jsonlite.loads(Path(config_dir, TRUST_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return {}
    return found if isinstance(found, dict) else {}


def is_trusted(path: str | Path, config_dir: str | Path) -> bool:
    """True when the user trusted this rule file as it is now."""
    try:
        return trusted(config_dir).get(os.path.realpath(path)) == digest(path)
    except OSError:
        return False
