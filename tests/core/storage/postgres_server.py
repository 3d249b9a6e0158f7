"""The PostgreSQL server the tests use, if there is one.

`TOKBOT_TEST_DATABASE_URL` names it (default: the trust-auth server on this project's machines,
postgresql://postgres@127.0.0.1:5432/test). Without a server the PostgreSQL tests are skipped, and the
run says so in one line at the end; with `TOKBOT_TEST_REQUIRE_POSTGRES=1` (what .ci/run sets) an
unreachable server fails them instead, so CI can't go green without having run them.

Every test run gets a schema of its own (tokbot_test_<pid>_<random>), migrated once and dropped at
the end, and the contract tests empty its tables before each test; tests that need a database of
their own (migrations, two handles, copies) make a schema each. Runs never see each other's rows.
"""

from __future__ import annotations

import asyncio
import functools
import os
import threading
import uuid
from collections.abc import Coroutine
from typing import Any

import asyncpg
import pytest

URL_VARIABLE = "TOKBOT_TEST_DATABASE_URL"
REQUIRE_VARIABLE = "TOKBOT_TEST_REQUIRE_POSTGRES"
DEFAULT_URL = "postgresql://postgres@127.0.0.1:5432/test"


def server_url() -> str:
    return os.environ.get(URL_VARIABLE) or DEFAULT_URL


def required() -> bool:
    return os.environ.get(REQUIRE_VARIABLE, "").strip() not in ("", "0", "false", "no")


@functools.cache
def server_problem() -> str | None:
    """None when the server answers, else why not (asked once per test process)."""

    async def probe() -> None:
        con = await asyncpg.connect(server_url(), timeout=3)
        await con.close()

    problem: list[str] = []

    def run() -> None:
        # A thread of its own: asyncio.run must not replace the loop pytest-asyncio set up.
        try:
            asyncio.run(probe())
        except Exception as exc:  # any failure means "no usable server"; the reason is shown
            problem.append(f"{type(exc).__name__}: {exc}")

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    return problem[0] if problem else None


def skip_line() -> str | None:
    """The one line the run ends with when the PostgreSQL tests were skipped."""
    problem = server_problem.cache_info().currsize and server_problem()
    if not problem:
        return None
    return (
        f"PostgreSQL tests skipped: no server at {server_url()} ({problem}). "
        f"Start one or set {URL_VARIABLE}; CI sets {REQUIRE_VARIABLE}=1 to make this a failure."
    )


def need_server() -> str:
    """The server's URL, or skip (fail, under TOKBOT_TEST_REQUIRE_POSTGRES) the calling test."""
    problem = server_problem()
    if problem is None:
        return server_url()
    if required():
        pytest.fail(f"{REQUIRE_VARIABLE} is set but PostgreSQL at {server_url()} is unreachable: {problem}")
    pytest.skip(f"no PostgreSQL server at {server_url()}")


def new_schema() -> str:
    return f"tokbot_test_{os.getpid()}_{uuid.uuid4().hex[:8]}"


async def drop_schema(url: str, schema: str) -> None:
    con = await asyncpg.connect(url, timeout=10)
    try:
        await con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await con.close()


def run_in_thread(coroutine: Coroutine[Any, Any, None]) -> None:
    """Run `coroutine` to the end on a loop of its own (for sync, session-scoped fixtures)."""
    failure: list[BaseException] = []

    def run() -> None:
        try:
            asyncio.run(coroutine)
        except BaseException as exc:  # handed to the caller's thread
            failure.append(exc)

    thread = threading.Thread(target=run)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]


async def migrated_schema(url: str, schema: str) -> None:
    """Create `schema` and apply the PostgreSQL migrations in it, once per test run."""
    from bot.storage.postgres import PostgresStorage

    store = PostgresStorage(url, schema=schema, pool_size=1)
    await store.open()
    await store.close()


async def empty_tables(url: str, schema: str) -> None:
    """Every table of `schema` emptied, ids back at 1: a fresh database for the next test, without
    paying for a schema and its migrations each time."""
    from core.storage._rows import COPY_ORDER

    tables = ", ".join(f'"{schema}".{table}' for table in COPY_ORDER)  # every table db copy knows
    con = await asyncpg.connect(url, timeout=10)
    try:
        await con.execute(f"TRUNCATE {tables} RESTART IDENTITY CASCADE")
    finally:
        await con.close()
