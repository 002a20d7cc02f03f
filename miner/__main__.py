"""`python -m miner …` is the `miner` command."""

from .cli import main

main()
