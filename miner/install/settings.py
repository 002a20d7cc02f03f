"""Register Transcript Miner's hooks in Claude Code's settings.json (standard library only).

Claude Code reads hooks from `~/.claude/settings.json` (user scope, moved by
`CLAUDE_CONFIG_DIR`), `<project>/.claude/settings.json` (project scope) and
`<project>/.claude/settings.local.json` (local scope). Each event maps to a
list of matcher groups, each group to a list of handlers:

    {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "...", "timeout": 10}]}]}}

Our handlers run the installed interpreter by absolute path with the hook's entry as `-c` code (`'/abs/python'
-I -c '...from miner.hooks import main...' <event>`): `-m miner.hooks` would import `runpy` first, a fifth of a
Stop hook's time. The substring `from miner.hooks import main` is how we recognise our own entries later, and
` -m miner.hooks ` those of older versions (with or without `-I`), so install is idempotent, upgrades them, and
uninstall removes nothing else. `-I` (isolated mode) keeps the current directory off `sys.path`: Claude Code runs
hooks in the user's project, and a `json.py` there must not be imported in place of the standard library's (nor
PYTHONPATH and the user's site).

No matcher key is written: for SessionStart / PreCompact / SessionEnd an
omitted matcher matches every source / trigger / reason, and Stop does not
take one. Stop runs with `"async": true` (documented for command hooks only):
the turn never waits on us. SessionEnd stays synchronous on purpose: Claude
Code exits right after it, so the hook must get to start its detached miner
within the SessionEnd budget (about 1.5 s in all) before the process goes away.

The planners (`plan_install`, `plan_uninstall`) are pure; `settings_file.apply` does the
only writing: backup, atomic replace, original mode kept, nothing written
when nothing changed.
"""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

from .. import paths
from .settings_file import _FIX, SettingsError, apply, load_settings

EVENTS = {
    "SessionStart": "session-start",
    "UserPromptSubmit": "user-prompt-submit",
    "Stop": "stop",
    "PreCompact": "pre-compact",
    "SessionEnd": "session-end",
}
TIMEOUTS = {"SessionStart": 10, "UserPromptSubmit": 5, "Stop": 10, "PreCompact": 60, "SessionEnd": 5}
ASYNC_EVENTS = frozenset({"Stop"})
ENTRY = "import sys; from miner.hooks import main; sys.exit(main())"
MARKER = "from miner.hooks import main"
OLD_MARKER = " -m miner.hooks "  # what versions before ENTRY registered
# Python's isolated mode: neither the current directory (the user's project) nor PYTHON* variables nor the
# user's site-packages reach `sys.path`, so nothing in a project folder can stand in for a module we import.
ISOLATED = "-I"
SCOPES = ("user", "project", "local")
PLUGIN = "transcript-miner"  # the plugin's name (`.claude-plugin/plugin.json`); enabled as "<name>@<marketplace>"
_SCOPE_FILES = {"project": "settings.json", "local": "settings.local.json"}
# --------------------------------------------------------------------------- commands


def hook_command(python: str, event_arg: str) -> str:
    """The shell command Claude Code runs for one event.

    The interpreter path is made absolute but not resolved: a venv's python
    is a symlink whose target would lose the venv.
    """
    exe = os.path.abspath(os.path.expanduser(python))
    return f"{shlex.quote(exe)} {ISOLATED} -c {shlex.quote(ENTRY)} {shlex.quote(event_arg)}"


def is_ours(command: object) -> bool:
    return isinstance(command, str) and (MARKER in command or OLD_MARKER in command)


def is_current(command: str) -> bool:
    """True for a command in the form this version registers (isolated, entered through `ENTRY`)."""
    return f" {ISOLATED} -c {shlex.quote(ENTRY)} " in command


def command_executable(command: str) -> str:
    """The interpreter path of one of our commands ('' when it cannot be parsed)."""
    try:
        parts = shlex.split(command)
    except ValueError:
        return ""
    return parts[0] if parts else ""


def _handler(event: str, python: str) -> dict:
    handler = {
        "type": "command",
        "command": hook_command(python, EVENTS[event]),
        "timeout": TIMEOUTS[event],
    }
    if event in ASYNC_EVENTS:
        handler["async"] = True
    return handler


def _is_our_handler(handler: object) -> bool:
    return isinstance(handler, dict) and is_ours(handler.get("command"))


def _group_handlers(group: object) -> list | None:
    if isinstance(group, dict) and isinstance(group.get("hooks"), list):
        return group["hooks"]
    return None


def _our_handlers(settings: object) -> dict[str, list[dict]]:
    """Our handler objects per event, in file order (malformed parts skipped)."""
    found: dict[str, list[dict]] = {}
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    if not isinstance(hooks, dict):
        return found
    for event, groups in hooks.items():
        if not isinstance(groups, list):
            continue
        mine = [
            handler
            for group in groups
            for handler in (_group_handlers(group) or [])
            if _is_our_handler(handler)
        ]
        if mine:
            found[event] = mine
    return found


def enabled_plugin(settings: object) -> str:
    """The key under which our plugin is enabled in these settings (`enabledPlugins`), or ''."""
    plugins = settings.get("enabledPlugins") if isinstance(settings, dict) else None
    if not isinstance(plugins, dict):
        return ""
    return next((key for key, on in plugins.items() if on is True and key.split("@")[0] == PLUGIN), "")


def registered_commands(settings: dict) -> dict[str, list[str]]:
    """Our commands per event, for `miner doctor` (any event, not only ours)."""
    return {
        event: [handler["command"] for handler in handlers]
        for event, handlers in _our_handlers(settings).items()
    }


# --------------------------------------------------------------------------- planning


def _copy(obj):
    return json.loads(json.dumps(obj))


_OWN_KEYS = frozenset({"type", "command", "timeout", "async"})  # what `_handler` writes


def _merged(current: dict, ours: dict) -> dict:
    """Our handler as `ours` says, keeping the user's own keys (a `statusMessage`) and a timeout they raised."""
    merged = {**{k: v for k, v in current.items() if k not in _OWN_KEYS or k in ours}, **ours}
    timeout = current.get("timeout")
    if type(timeout) in (int, float) and timeout > ours["timeout"]:
        merged["timeout"] = timeout
    return merged


def _rewrite_groups(groups: list, replacement: dict | None) -> tuple[list, int]:
    """Remove our handlers from `groups`; the first one found becomes `replacement`.

    Returns the new group list and how many of our handlers were found. Only
    groups emptied by this removal are dropped; every other group, handler and
    key keeps its place.
    """
    out = []
    found = 0
    for group in groups:
        handlers = _group_handlers(group)
        if handlers is None or not any(_is_our_handler(h) for h in handlers):
            out.append(group)
            continue
        kept = []
        for handler in handlers:
            if not _is_our_handler(handler):
                kept.append(handler)
                continue
            found += 1
            if found == 1 and replacement is not None:
                kept.append(_merged(handler, replacement))
        if kept:
            out.append({**group, "hooks": kept})
    return out, found


def plan_install(settings: dict, python: str) -> dict:
    """The settings with our four hooks registered (pure: `settings` is not touched)."""
    new = _copy(settings)
    hooks = new.get("hooks")
    if hooks is None:
        hooks = new["hooks"] = {}
    elif not isinstance(hooks, dict):
        raise SettingsError(f'"hooks" is not a JSON object; {_FIX}')
    for event in EVENTS:
        wanted = _handler(event, python)
        groups = hooks.get(event)
        if groups is None:
            hooks[event] = [{"hooks": [wanted]}]
            continue
        if not isinstance(groups, list):
            raise SettingsError(f'"hooks.{event}" is not a JSON array; {_FIX}')
        groups, found = _rewrite_groups(groups, wanted)
        if not found:
            groups.append({"hooks": [wanted]})
        hooks[event] = groups
    return new


def plan_uninstall(settings: dict) -> dict:
    """The settings without any of our hooks (pure).

    Matcher groups, event lists and the `hooks` object are dropped only when
    our removal emptied them, so install followed by uninstall gives back the
    original object, `hooks` key absent included. (A `"hooks": {}` or an
    empty event list that existed before install is the one thing not
    restored: install filled it, so uninstall empties and drops it.)
    """
    new = _copy(settings)
    hooks = new.get("hooks")
    if not isinstance(hooks, dict):
        return new
    removed = False
    for event in list(hooks):
        groups = hooks[event]
        if not isinstance(groups, list):
            continue
        groups, found = _rewrite_groups(groups, None)
        if not found:
            continue
        removed = True
        if groups:
            hooks[event] = groups
        else:
            del hooks[event]
    if removed and not hooks:
        del new["hooks"]
    return new


def _describe(old: dict, new: dict) -> list[str]:
    before, after = _our_handlers(old), _our_handlers(new)
    order = list(EVENTS) + [e for e in [*before, *after] if e not in EVENTS]
    lines = []
    for event in dict.fromkeys(order):
        was, now = before.get(event, []), after.get(event, [])
        was_cmds = [h.get("command") for h in was]
        now_cmds = [h.get("command") for h in now]
        if was == now:
            if now:
                lines.append(f"{event}: already registered: {', '.join(now_cmds)}")
        elif not was:
            lines.append(f"{event}: add {', '.join(now_cmds)}")
        elif not now:
            lines.append(f"{event}: remove {', '.join(was_cmds)}")
        elif was_cmds == now_cmds:
            lines.append(f"{event}: update timeout/options of {', '.join(now_cmds)}")
        else:
            lines.append(f"{event}: replace {', '.join(was_cmds)} with {', '.join(now_cmds)}")
    return lines


# --------------------------------------------------------------------------- files


def settings_path(scope: str, project_dir: str | None = None) -> Path:
    """user: $CLAUDE_CONFIG_DIR or ~/.claude; project/local: <project_dir or cwd>/.claude."""
    if scope == "user":
        return paths.claude_dir() / "settings.json"
    if scope in _SCOPE_FILES:
        base = Path(project_dir).expanduser() if project_dir else Path.cwd()
        return Path(os.path.abspath(base)) / ".claude" / _SCOPE_FILES[scope]
    raise SettingsError(f"unknown scope {scope!r}: use one of {', '.join(SCOPES)}")


# --------------------------------------------------------------------------- entry points


def plan_at(path: Path, planner, *args):
    """`planner(*args)`, with any SettingsError naming the file it was planned for."""
    try:
        return planner(*args)
    except SettingsError as exc:
        raise SettingsError(f"{path}: {exc}") from None


def plugin_enabled_anywhere(project_dir: str | None = None) -> str:
    """The key under which our plugin is enabled in the user's settings or the project's (project or local scope),
    or '' (a broken file counts as none)."""
    for scope in SCOPES:
        try:
            found = enabled_plugin(load_settings(settings_path(scope, project_dir))[1])
        except SettingsError:  # `miner doctor` names a broken settings file
            continue
        if found:
            return found
    return ""


def install(scope: str, project_dir: str | None, python: str, dry_run: bool = False) -> list[str]:
    """Register our hooks in the scope's settings file; lines say what changed."""
    path = settings_path(scope, project_dir)
    original_text, settings = load_settings(path)
    plugin = plugin_enabled_anywhere(project_dir)
    if plugin:  # its hooks run already: ours as well would run every hook twice, and inject the block twice
        lines = [f"the {PLUGIN} plugin is enabled ({plugin}): its hooks run already, so none are registered in {path} "
                 "(to use these instead, disable the plugin, then run `miner install` again)"]
        if _our_handlers(settings):
            lines.append(f"warning: hooks of ours are registered in {path} too, so every hook runs twice: "
                         "`miner uninstall` removes them")
        return lines
    new = plan_at(path, plan_install, settings, python)
    lines = _describe(settings, new)
    exe = os.path.abspath(os.path.expanduser(python))
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        lines.append(f"warning: {exe} is not an executable file; the hooks fail open until it is")
    lines.append(apply(path, new, original_text, dry_run))
    return lines


def uninstall(scope: str, project_dir: str | None, dry_run: bool = False) -> list[str]:
    """Remove our hooks (and only ours) from the scope's settings file."""
    path = settings_path(scope, project_dir)
    original_text, settings = load_settings(path)
    new = plan_at(path, plan_uninstall, settings)
    lines = _describe(settings, new)
    if not lines:
        lines.append(f"no Transcript Miner hooks in {path}")
    lines.append(apply(path, new, original_text, dry_run))
    return lines
