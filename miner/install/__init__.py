"""Registering with Claude Code: hooks in its `settings.json` (`settings`), the MCP server (`mcp_config`)."""
