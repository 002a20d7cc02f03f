"""What a session was already shown, so that its prompts' recall does not show it again (standard library only).

The SessionStart hook adds the ids its block showed; the UserPromptSubmit hook
skips them and adds its own. Ids only, never the prompt, in a small private
file per session beside the block cache.
"""

from __future__ import annotations

import os

from .. import jsonlite, paths

MAX_SHOWN = 2000  # ids remembered per session


def shown_path(session_id: str) -> str:
    return paths.data_file("cache", f"shown-{paths.file_stem(session_id)}.json")


def load_shown(session_id: str) -> dict[str, list[int]]:
    """Ids this session was shown already: {"memories": [...], "archive": [...]}."""
    if not session_id:
        return {"memories": [], "archive": []}
    try:
        data = jsonlite.loads(paths.read_small(shown_path(session_id)))
        return {"memories": [int(i) for i in data.get("memories", [])], "archive": [int(i) for i in data.get("archive", [])]}
    except (OSError, ValueError, TypeError, AttributeError, RecursionError):
        return {"memories": [], "archive": []}


def remember_shown(session_id: str, memories=(), archive=(), anew: bool = False) -> None:
    """Add ids to what this session was shown (an atomic rewrite of a small private file). `anew`: the session's
    context no longer holds what it was shown before (a compaction, /clear): only these ids count."""
    if not session_id or not (memories or archive or anew):
        return
    if anew and not (memories or archive):
        try:
            os.unlink(shown_path(session_id))
        except OSError:
            pass  # (none yet)
        return
    shown = {"memories": [], "archive": []} if anew else load_shown(session_id)
    shown["memories"] = (shown["memories"] + [int(i) for i in memories])[-MAX_SHOWN:]
    shown["archive"] = (shown["archive"] + [int(i) for i in archive])[-MAX_SHOWN:]
    paths.write_private(shown_path(session_id), jsonlite.dumps(shown))
