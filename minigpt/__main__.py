"""`python -m minigpt ...`: the same as the `minigpt` command (see cli.py)."""

from minigpt.cli import main

raise SystemExit(main())
