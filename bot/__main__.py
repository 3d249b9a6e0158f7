"""`python -m bot <command>`: estimate, ask, console, run. Each command imports only what it needs,
so a cold `python -m bot ask ...` never loads the chat libraries."""

from __future__ import annotations

import sys

from bot.cli.main import main

if __name__ == "__main__":
    sys.exit(main())
