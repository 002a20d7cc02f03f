"""Register the MCP server in Claude Code's MCP configuration (standard library only).

Claude Code reads stdio MCP servers from `mcpServers` objects:

- user scope: the top level of `~/.claude.json` (`$CLAUDE_CONFIG_DIR/.claude.json`
  when that variable moves Claude Code's folder): every project;
- project scope: `<project>/.mcp.json`, meant to be committed and shared;
- local scope: `~/.claude.json` → `projects.<absolute project path>.mcpServers`.

Our entry is named `transcript-miner` and runs the installed interpreter by
absolute path, isolated (`-I`: the project folder it starts in never reaches
`sys.path`): `{"type": "stdio", "command": "/abs/python", "args": ["-I", "-m",
"miner.mcp_server"], "env": {}}`. The args are how we recognise it, so install
is idempotent, an entry of the same name that is not ours is never
overwritten, and uninstall removes ours and nothing else. The file handling
is `settings.py`'s: invalid JSON refused, every other key kept, a backup,
an atomic replace, nothing written when nothing changes. `~/.claude.json`
is Claude Code's own state file, written by it while it runs: change it with
Claude Code closed (a change in between is detected and nothing is written).
"""

from __future__ import annotations

import os
from pathlib import Path

from .. import paths
from .settings import SettingsError, apply, load_settings, plan_at

SERVER_NAME = "transcript-miner"
MODULE_ARGS = ["-I", "-m", "miner.mcp_server"]  # -I: the project folder it starts in never reaches sys.path
SCOPES = ("user", "project", "local")
_FIX = "fix or move it, then run again"


def config_path(scope: str, project_dir: str | None = None) -> Path:
    """The file Claude Code reads the scope's MCP servers from."""
    if scope in ("user", "local"):
        explicit = paths.absolute_env("CLAUDE_CONFIG_DIR")
        return (Path(explicit) if explicit else paths.home()) / ".claude.json"
    if scope == "project":
        return _project_dir(project_dir) / ".mcp.json"
    raise SettingsError(f"unknown scope {scope!r}: use one of {', '.join(SCOPES)}")


def _project_dir(project_dir: str | None) -> Path:
    base = Path(project_dir).expanduser() if project_dir else Path.cwd()
    return Path(os.path.abspath(base))


def server_entry(python: str) -> dict:
    """Our entry: the interpreter made absolute but not resolved (a venv's python is a symlink)."""
    return {"type": "stdio", "command": os.path.abspath(os.path.expanduser(python)), "args": list(MODULE_ARGS),
            "env": {}}


def is_ours(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    args = entry.get("args")
    return isinstance(args, list) and "miner.mcp_server" in args or (
        isinstance(args, list) and args[:1] == ["mcp"] and str(entry.get("command", "")).endswith("miner"))


def _command(entry: dict) -> str:
    return " ".join([str(entry.get("command", ""))] + [str(a) for a in entry.get("args") or []])


# --- planning (pure) ----------------------------------------------------------------------------


def _servers(config: dict, scope: str, project_dir: str | None, create: bool) -> dict | None:
    """The `mcpServers` object the scope uses inside `config` (created when `create`), or None."""
    holder = config
    if scope == "local":
        projects = config.get("projects")
        if projects is None:
            if not create:
                return None
            projects = config["projects"] = {}
        if not isinstance(projects, dict):
            raise SettingsError(f'"projects" is not a JSON object; {_FIX}')
        key = str(_project_dir(project_dir))
        holder = projects.get(key)
        if holder is None:
            if not create:
                return None
            holder = projects[key] = {}
        if not isinstance(holder, dict):
            raise SettingsError(f'"projects.{key}" is not a JSON object; {_FIX}')
    servers = holder.get("mcpServers")
    if servers is None:
        if not create:
            return None
        servers = holder["mcpServers"] = {}
    if not isinstance(servers, dict):
        raise SettingsError(f'"mcpServers" is not a JSON object; {_FIX}')
    return servers


def plan_install(config: dict, scope: str, project_dir: str | None, python: str) -> tuple[dict, str]:
    """(the config with our server registered, one line saying what changed); `config` is not touched."""
    import json

    new = json.loads(json.dumps(config))
    servers = _servers(new, scope, project_dir, create=True)
    wanted = server_entry(python)
    current = servers.get(SERVER_NAME)
    if current is not None and not is_ours(current):
        raise SettingsError(f'an MCP server named "{SERVER_NAME}" that is not Transcript Miner\'s is registered '
                            f"({_command(current) if isinstance(current, dict) else current!r}); "
                            "remove or rename it, then run again")
    if current is None:
        line = f"mcpServers.{SERVER_NAME}: add {_command(wanted)}"
    elif current == wanted:
        line = f"mcpServers.{SERVER_NAME}: already registered: {_command(wanted)}"
    else:
        line = f"mcpServers.{SERVER_NAME}: replace {_command(current)} with {_command(wanted)}"
        # Keep what the user added to our entry (env values, timeouts); ours wins on the keys we set.
        wanted = {**current, **wanted, "env": {**(current.get("env") or {}), **wanted["env"]}}
    servers[SERVER_NAME] = wanted
    return new, line


def plan_uninstall(config: dict, scope: str, project_dir: str | None) -> tuple[dict, str]:
    """(the config without our server, one line); containers emptied by the removal are dropped."""
    import json

    new = json.loads(json.dumps(config))
    servers = _servers(new, scope, project_dir, create=False)
    current = servers.get(SERVER_NAME) if servers is not None else None
    if current is None or not is_ours(current):
        return new, f"no Transcript Miner MCP server registered under mcpServers.{SERVER_NAME}"
    del servers[SERVER_NAME]
    if not servers:
        if scope == "local":
            holder = new["projects"][str(_project_dir(project_dir))]
            del holder["mcpServers"]
        else:
            del new["mcpServers"]
    return new, f"mcpServers.{SERVER_NAME}: remove {_command(current)}"


# --- entry points ------------------------------------------------------------------------------


def install_mcp(scope: str, project_dir: str | None, python: str, dry_run: bool = False) -> list[str]:
    """Register our MCP server in the scope's configuration; lines say what changed. Raises SettingsError."""
    path = config_path(scope, project_dir)
    original_text, config = load_settings(path)
    new, line = plan_at(path, plan_install, config, scope, project_dir, python)
    lines = [line]
    exe = os.path.abspath(os.path.expanduser(python))
    if not (os.path.isfile(exe) and os.access(exe, os.X_OK)):
        lines.append(f"warning: {exe} is not an executable file; Claude Code cannot start the server until it is")
    import importlib.util

    if importlib.util.find_spec("mcp") is None:
        lines.append("warning: the mcp package is missing here: pip install 'transcript-miner[mcp]'")
    written = apply(path, new, original_text, dry_run)
    lines.append(written)
    if written.startswith(("created", "updated")):
        lines.append("restart Claude Code to start the server (`claude mcp list` shows it)")
    return lines


def uninstall_mcp(scope: str, project_dir: str | None, dry_run: bool = False) -> list[str]:
    """Remove our MCP server (and only ours) from the scope's configuration. Raises SettingsError."""
    path = config_path(scope, project_dir)
    original_text, config = load_settings(path)
    new, line = plan_at(path, plan_uninstall, config, scope, project_dir)
    return [line, apply(path, new, original_text, dry_run)]
