"""`python -m bot <command>`: estimate, ask, console, run. Each command imports only what it needs,
so a cold `python -m bot ask ...` never loads the chat libraries."""

from __future__ import annotations

import sys

# Before any module defines a dataclass: their compiled methods come from the cache's table
# (core/cache/dataclass_code.py), a third of a cold start otherwise.
from core.cache import dataclass_code

dataclass_code.install()

from bot.cli.main import main  # noqa: E402 - after the install above, on purpose

if __name__ == "__main__":
    sys.exit(main())
