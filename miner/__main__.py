"""`python -m miner …` is the `miner` command."""

from .cli.main import main

main()
