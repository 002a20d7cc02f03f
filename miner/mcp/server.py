"""`miner mcp` / `python -m miner.mcp_server`: a stdio MCP server over the memory store.

Built on the official `mcp` SDK (an optional extra: `pip install
'transcript-miner[mcp]'`); mcp 2.x names the high-level server `MCPServer`,
1.x named it `FastMCP`, and both are accepted. The tools are thin: each one
calls a function of `mcp_tools` (validation, library calls, plain dicts) and
turns its domain errors into a tool error, which the client sees as a result
with `isError` and one clear line, never a traceback.

The project is fixed when the server starts: `--project DIR`, else
`$CLAUDE_PROJECT_DIR`, else the working directory Claude Code started it in.
No tool reads or writes another project: what one answers goes into this project's session.
"""

from __future__ import annotations

import argparse
import sqlite3
import sys
from typing import Any, Literal

from .. import __version__
from ..textutil import NOT_SHOWN, map_strings
from . import tools as mcp_tools
from .tools import Session, ToolInputError

SERVER_NAME = "transcript-miner"
MISSING_SDK = "the MCP server needs the mcp package: pip install 'transcript-miner[mcp]'"
INSTRUCTIONS = (
    "Project memory mined from earlier Claude Code sessions. memory_recall answers what was decided, "
    "preferred, established or left to do; memory_store keeps something the user asks you to remember; "
    "memory_forget / memory_correct fix a wrong memory; memory_explain says why a memory was or was not recalled."
)
TOOL_NAMES = ("memory_recall", "memory_store", "memory_forget", "memory_correct", "memory_stats", "memory_zones",
              "memory_explain")


# A memory id as the tools take it: `build_server` makes it strict with the SDK's own validation (pydantic), which
# would otherwise take `true`, "4" or 4.0 for an id (`memory_forget(true)` forgot #1). Imported there, not here: the
# CLI imports this module, and pydantic costs every command its import.
MemoryId = int


class MissingSDK(RuntimeError):
    """The `mcp` package is not installed."""


def _sdk() -> tuple[Any, Any]:
    """(server class, tool error class) of the installed SDK."""
    try:
        from mcp.server.mcpserver import MCPServer
        from mcp.server.mcpserver.exceptions import ToolError
    except ImportError:
        try:
            from mcp.server.fastmcp import FastMCP as MCPServer  # mcp 1.x
            from mcp.server.fastmcp.exceptions import ToolError
        except ImportError as exc:
            raise MissingSDK(_unloadable(exc)) from None
    return MCPServer, ToolError


def _unloadable(exc: ImportError) -> str:
    """Why the SDK cannot be used: not installed, or installed but not importable (too old for the pydantic beside
    it, say), which installing it again would not fix."""
    import importlib.metadata
    import importlib.util

    try:
        if importlib.util.find_spec("mcp") is None:
            return MISSING_SDK
        version = importlib.metadata.version("mcp")
    except (ImportError, ValueError, importlib.metadata.PackageNotFoundError):
        return MISSING_SDK
    reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return (f"the installed mcp package ({version}) cannot be loaded ({reason}): "
            "pip install --upgrade 'transcript-miner[mcp]'")


def _argument_error(tool: str, error) -> str:
    """pydantic's report of `tool`'s arguments in one line: the first argument wrong, and what it must be."""
    problems = error.errors()
    first = problems[0] if problems else {}
    where = ".".join(str(part) for part in first.get("loc", ())) or "arguments"
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    return f"{tool}: argument {where!r}: {first.get('msg', 'not valid')}{more}"


def shown(value, cleaned_by: int | None = None):
    """A tool's result with no control character or bidirectional override in any of its texts (`textutil.NOT_SHOWN`):
    a store mined by an older version may hold an escape sequence, and a result goes into the model's context.
    `cleaned_by`: the redaction that last cleaned the store; while the repair of an upgrade has not run, every text
    is redacted on the way out too, as the hooks redact the blocks (`redaction_version.for_output`)."""
    from ..extract.redaction_version import REDACTION_VERSION, for_output

    if cleaned_by is None or cleaned_by >= REDACTION_VERSION:
        return map_strings(value, lambda text: text.translate(NOT_SHOWN))
    return map_strings(value, lambda text: for_output(text, cleaned_by).translate(NOT_SHOWN))


def cleaned_by() -> int | None:
    """The redaction that last cleaned the store (None when there is none to read)."""
    from .. import paths
    from ..memory import reader

    try:
        db = reader.open_readonly(paths.db_path())
    except sqlite3.Error:
        return None
    try:
        return reader.redaction_version(db)
    except sqlite3.Error:
        return None
    finally:
        db.close()


def build_server(session: Session):
    """The MCP server with its seven tools, bound to `session`."""
    from ..config import ConfigError
    from ..extract.secret_rules import SecretRuleError
    from ..memory.corrections import CorrectionError
    from ..memory.store import StoreError, locked

    MCPServer, ToolError = _sdk()
    from pydantic import StrictInt

    globals()["MemoryId"] = StrictInt  # read by the tools' annotations below, when the SDK inspects them

    class Server(MCPServer):
        async def call_tool(self, name, arguments, *rest, **options):
            """As the SDK's, but an argument of the wrong shape is one line (the SDK gives pydantic's report), and one
            the tool does not take is refused (the SDK drops it: a misspelt `supersedes` stored a second decision
            beside the one it was to close)."""
            unknown = sorted(set(arguments or ()) - taken.get(name, set(arguments or ())))
            if unknown:
                raise ToolError(f"{name} takes no argument {', '.join(map(repr, unknown))} (its arguments: "
                                f"{', '.join(sorted(taken[name]))}); nothing was done")
            try:
                return await super().call_tool(name, arguments, *rest, **options)
            except ToolError as exc:
                if type(exc.__cause__).__name__ != "ValidationError":
                    raise
                raise ToolError(_argument_error(name, exc.__cause__)) from None

    kwargs: dict[str, Any] = {"instructions": INSTRUCTIONS, "log_level": "WARNING"}
    try:
        server = Server(SERVER_NAME, version=__version__, **kwargs)
    except TypeError:  # mcp 1.x: no version argument
        server = Server(SERVER_NAME, **kwargs)

    def call(action, *args, **kw) -> dict:
        try:
            return shown(action(session, *args, **kw), cleaned_by())
        except (ToolInputError, CorrectionError, StoreError, ConfigError, SecretRuleError) as exc:
            raise ToolError(str(exc)) from None
        except (FileExistsError, NotADirectoryError, PermissionError) as exc:  # (MINER_HOME names a file, a folder
            raise ToolError(f"{exc}") from None  # we may not write): the SDK would say only that the tool failed
        except sqlite3.OperationalError as exc:
            if not locked(exc):
                raise
            raise ToolError("the memory store is busy: another process (a backfill, `miner mine`) kept it locked; "
                            "call the tool again in a moment") from None

    @server.tool()
    def memory_recall(query: str = "", budget: MemoryId | None = None, project: str | None = None) -> dict[str, Any]:
        """Recall the project's memories: the Markdown block plus items (id, category, the start of the text, which
        the block holds whole, date, confidence, score).

        With a query, the block also holds what was said in earlier sessions about it (the archive, after the
        memories), listed in `said`. query: what you need to know (empty: the block a new session gets). budget: tokens, 50-100000
        (default 2% of the context window; the block never exceeds `max_block_chars`, 9,800 characters by default, as
        the hook's does). project: this project's directory (the default; another one is refused).
        """
        return call(mcp_tools.recall, query, budget, project)

    @server.tool()
    def memory_store(content: str, category: Literal["decision", "preference", "fact", "todo"],
                     keywords: list[str] | None = None, supersedes: MemoryId | None = None,
                     scope: Literal["project", "global"] = "project", project: str | None = None) -> dict[str, Any]:
        """Remember something the user asked you to remember, for this project.

        content: one self-contained sentence (20-1000 characters). category: decision, preference, fact or todo.
        keywords: extra search words. supersedes: id of a memory this one replaces (it stops being recalled).
        scope: 'project', or 'global' for a preference the user said applies to every project.
        The text is redacted, quality-checked and deduplicated like mined memories.
        """
        return call(mcp_tools.store_memory, content, category, keywords, supersedes, scope, project)

    @server.tool()
    def memory_forget(id: MemoryId, reason: str) -> dict[str, Any]:  # noqa: A002 - the tool's parameter name
        """Never recall memory `id` again (the user said it is wrong or unwanted). reason: why, kept with it."""
        return call(mcp_tools.forget, id, reason)

    @server.tool()
    def memory_correct(id: MemoryId, content: str, reason: str = "") -> dict[str, Any]:  # noqa: A002
        """Replace memory `id` with corrected `content`; the old text stays as history and is no longer recalled."""
        return call(mcp_tools.correct, id, content, reason)

    @server.tool()
    def memory_stats(project: str | None = None) -> dict[str, Any]:
        """Counts of memories by state, category and confidence stage, for the store and this project."""
        return call(mcp_tools.stats, project)

    @server.tool()
    def memory_zones(project: str | None = None) -> dict[str, Any]:
        """The void zones of the last recall: clusters of weakly related memories left out, with their topics."""
        return call(mcp_tools.zones, project)

    @server.tool()
    def memory_explain(id: MemoryId | None = None, project: str | None = None) -> dict[str, Any]:  # noqa: A002
        """Why memory `id` was or was not recalled; without an id, how recall works and the last recall's scores."""
        return call(mcp_tools.explain, id, project)

    import inspect

    taken = {tool.__name__: set(inspect.signature(tool).parameters) for tool in (
        memory_recall, memory_store, memory_forget, memory_correct, memory_stats, memory_zones, memory_explain)}
    return server


def serve(project: str | None = None) -> None:
    """Run the server on stdio until the client closes it. Raises MissingSDK, ToolInputError, ConfigError,
    SecretRuleError."""
    from .. import config as config_mod
    from ..extract.redact import ensure_extra

    _sdk()
    ensure_extra()  # what the tools store is redacted as mining redacts, the secret kinds of the YAML files too
    session = mcp_tools.started_in(project, config_mod.load())
    build_server(session).run("stdio")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m miner.mcp_server", description=__doc__.splitlines()[0])
    parser.add_argument("--project", help="project directory (default: $CLAUDE_PROJECT_DIR, else the cwd)")
    args = parser.parse_args(argv)
    from ..config import ConfigError
    from ..extract.secret_rules import SecretRuleError

    try:
        serve(args.project)
    except (MissingSDK, ToolInputError, ConfigError, SecretRuleError) as exc:
        print(f"miner mcp: {exc}", file=sys.stderr)
        return 1
    return 0


def register(group) -> None:
    """Add `miner mcp` to the `miner` command group."""
    import click

    from ..config import ConfigError

    @group.command(name="mcp")
    @click.option("--project", type=click.Path(file_okay=False, path_type=str),
                  help="Project directory (default: $CLAUDE_PROJECT_DIR, else the cwd).")
    def mcp_command(project: str | None) -> None:
        """Run the MCP server on stdio: recall, store, forget, correct, stats, zones, explain.

        Claude Code starts it (`miner install --mcp` registers it); needs
        pip install 'transcript-miner[mcp]'.
        """
        from ..extract.secret_rules import SecretRuleError

        try:
            serve(project)
        except (MissingSDK, ToolInputError, ConfigError, SecretRuleError) as exc:
            raise click.ClickException(str(exc)) from None


if __name__ == "__main__":
    sys.exit(main())
