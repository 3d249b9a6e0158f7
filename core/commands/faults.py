"""Database faults told apart from bugs (issue 24): their own reply, one log line a minute, /healthz.

A disk that is full, a PostgreSQL connection terminated mid-run or a database that went away is
not "Something went wrong": the reply says the request was not stored and that the operator has
been told, the log gets one line a minute (189 tracebacks for one full disk told nothing more than
the first), and `BotContext.storage_fault_at` makes /healthz say "degraded" for a minute
(bot/observability.py). Recognised by the exception chain: sqlite3's DatabaseError, the storage
port's StorageUnavailable, and whatever the PostgreSQL and SQLite drivers raise (asyncpg,
aiosqlite), without importing a driver here.
"""

from __future__ import annotations

import logging
import sqlite3
from datetime import datetime, timedelta

from core.commands.context import BotContext
from core.storage.interface import StorageUnavailable

log = logging.getLogger(__name__)
LOG_EVERY = timedelta(minutes=1)
RECENT = timedelta(minutes=1)  # a fault this recent keeps /healthz degraded
_DRIVERS = ("asyncpg", "aiosqlite")


def is_storage_fault(exc: BaseException) -> bool:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, sqlite3.DatabaseError | StorageUnavailable):
            return True
        if type(current).__module__.split(".")[0] in _DRIVERS:
            return True
        current = current.__cause__ or current.__context__
    return False


def record_fault(bot: BotContext, exc: BaseException, what: str) -> None:
    """Note a storage fault: /healthz degraded, and one log line a minute (with the count)."""
    now = bot.clock()
    bot.storage_faults += 1
    last = bot.storage_fault_logged
    bot.storage_fault_at = now
    if last is None or now - last >= LOG_EVERY:
        bot.storage_fault_logged = now
        log.error(
            "database fault in %s (%d since the last line): %s: %s",
            what,
            bot.storage_faults,
            type(exc).__name__,
            exc,
        )
        bot.storage_faults = 0


def fault_recent(bot: BotContext, now: datetime) -> bool:
    return bot.storage_fault_at is not None and now - bot.storage_fault_at < RECENT
