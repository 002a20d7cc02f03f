"""`python -m miner.cli …` is the `miner` command."""

from .main import main

main()
