"""`python -m bot <command>`: estimate, ask, console, run. Each command imports only what it needs,
so a cold `python -m bot ask ...` never loads the chat libraries."""

from __future__ import annotations

import os
import sys

# Before any module defines a dataclass: their compiled methods come from the cache's table
# (core/cache/dataclass_code.py), a third of a cold start otherwise.
from core.cache import dataclass_code

dataclass_code.install()

from bot.cli.main import main  # noqa: E402 - after the install above, on purpose

if __name__ == "__main__":
    try:
        sys.exit(main())
    except BrokenPipeError:
        # The reader went away (`… | head`): nothing left to say to it, and no traceback either.
        # stdout is pointed at devnull so the interpreter's final flush doesn't raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(141)  # 128 + SIGPIPE, as a shell reports a process killed by it
