"""Transcript Miner: memory for Claude Code mined from its own transcripts.

Kept import-free on purpose: the hook entry point imports this package, and
every module pulled in here would cost every hook call.
"""

__version__ = "0.1.0"

# The tag our recall block is wrapped in: the hook writes it, the cleaner never mines what is inside it.
BLOCK_TAG = "transcript-miner-recall"
