"""`python -m bot run` for tests that run the real process, with the `/submit` read budget given on
the command line instead of the catalog's (catalogs/submit.toml read_budget_seconds, 2 s).

    python tests/bot/bot_run_child.py BUDGET_SECONDS [bot arguments ...]

The budget counts from when a read is queued for the two reader threads, so a burst of pastes on a
busy machine can pass it while every read is correct; a test about something else (two processes
on one database) must not depend on how fast the machine is. Everything else is `python -m bot`.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bot.cli.main import main  # noqa: E402
from core.catalog.loader import Catalog  # noqa: E402
from core.community import bounded_parse  # noqa: E402


def with_budget(seconds: float) -> None:
    """Every `/submit` read of this process gets `seconds` (the size cap is the catalog's)."""
    shipped = bounded_parse.read_bounds  # fails loudly if the hook moves: the test must not go flaky

    def read_bounds(catalog: Catalog) -> bounded_parse.ReadBounds:
        return dataclasses.replace(shipped(catalog), budget_seconds=seconds)

    bounded_parse.read_bounds = read_bounds


if __name__ == "__main__":
    with_budget(float(sys.argv[1]))
    sys.exit(main(sys.argv[2:]))
