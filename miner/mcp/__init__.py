"""The MCP server: `tools` does the work without the SDK, `server` wraps each function as a tool."""
