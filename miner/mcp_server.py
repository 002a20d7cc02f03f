"""`python -m miner.mcp_server`: kept here, where installed MCP configurations expect it (`miner.mcp.server`)."""

import sys

from .mcp.server import main

if __name__ == "__main__":
    sys.exit(main())
