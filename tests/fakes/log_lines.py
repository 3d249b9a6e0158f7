"""Log lines a test waits on: every record kept, `wait(pattern, n)` until n of them say `pattern`
(the reconnect tests of both chat adapters read their one-line-per-attempt logs with it)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterator

GUARD = 60.0  # s: only against a hang; nothing waits on how fast the machine is


class Lines(logging.Handler):
    """Records every log record; `wait(pattern, n)` until n records contain `pattern`."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.records: list[logging.LogRecord] = []
        self._changed = asyncio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)
        self._changed.set()

    def matching(self, pattern: str) -> list[logging.LogRecord]:
        return [r for r in self.records if pattern in r.getMessage()]

    async def wait(self, pattern: str, n: int = 1) -> list[logging.LogRecord]:
        async def until() -> None:
            while len(self.matching(pattern)) < n:
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(until(), GUARD)
        return self.matching(pattern)

    def tracebacks(self) -> list[logging.LogRecord]:
        return [r for r in self.records if r.exc_info and r.levelno >= logging.WARNING]


def captured() -> Iterator[Lines]:
    """A `Lines` on the root logger at INFO for the duration (the `lines` fixture of tests/bot)."""
    handler = Lines()
    root = logging.getLogger()
    old = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    yield handler
    root.removeHandler(handler)
    root.setLevel(old)
