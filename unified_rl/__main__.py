"""`python -m unified_rl`: see unified_rl/cli.py."""

from .cli import main

main()
