"""PostgreSQL connections closed under the bot (a server restart, `pg_terminate_backend`, a proxy's
idle cut): the operation that lost its connection before COMMIT runs once more on a fresh one, and
nothing is lost or stored twice. Against the real server (skipped with one line without it).

The kill lands deterministically: /submit's transaction waits on its per-submitter advisory lock,
which the test holds from another connection, so the backend is terminated mid-transaction, after
BEGIN and before COMMIT, by waiting for the lock wait to show in pg_locks (no clock involved)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from datetime import timedelta

import asyncpg
import pytest
from contract import ALICE, T0, new

from bot.storage.postgres import PostgresStorage
from tests.core.storage.postgres_server import drop_schema, new_schema

GUARD = 60.0  # s: only against a hang


@pytest.fixture
async def storage(postgres_url: str) -> AsyncIterator[PostgresStorage]:
    schema = new_schema()
    handle = PostgresStorage(postgres_url, schema=schema, pool_size=1)  # one connection: the one killed
    await handle.open()
    try:
        yield handle
    finally:
        await handle.close()
        await drop_schema(postgres_url, schema)


async def backend_of(storage: PostgresStorage) -> int:
    async with storage._connection() as con:  # the pool's only connection
        return int(con.get_server_pid())


async def terminate(admin: asyncpg.Connection, pid: int) -> None:
    assert await admin.fetchval("SELECT pg_terminate_backend($1)", pid)
    while await admin.fetchval("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid):
        await asyncio.sleep(0)  # gone in a moment; the loop is checked, not the time


async def test_a_transaction_whose_connection_is_killed_before_commit_is_run_again(
    storage: PostgresStorage, postgres_url: str
) -> None:
    admin = await asyncpg.connect(postgres_url)
    holder = await asyncpg.connect(postgres_url)
    try:
        victim = await backend_of(storage)
        key = f"tokbot-submit:{ALICE.platform}:{ALICE.user_id}"
        lock = holder.transaction()
        await lock.start()
        await holder.execute("SELECT pg_advisory_xact_lock(hashtext($1))", key)
        submit = asyncio.create_task(
            storage.add_submission_checked(new(fingerprint="fp-1"), T0 - timedelta(hours=1), 10)
        )
        waiting = "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted AND pid = $1"
        while not await admin.fetchval(waiting, victim):
            await asyncio.sleep(0)
        await terminate(admin, victim)  # inside /submit's transaction, before its COMMIT
        await lock.commit()  # the lock is free for the retry
        outcome = await asyncio.wait_for(submit, GUARD)
    finally:
        await holder.close()
        await admin.close()
    assert outcome.result == "stored"
    stored = await storage.submissions()
    assert [s.fingerprint for s in stored] == ["fp-1"], "stored once: nothing lost, nothing doubled"


async def test_an_idle_connection_killed_between_operations_costs_nothing(
    storage: PostgresStorage, postgres_url: str
) -> None:
    first = await storage.add_submission(new(fingerprint="fp-1"))
    admin = await asyncpg.connect(postgres_url)
    try:
        await terminate(admin, await backend_of(storage))
        second = await storage.add_submission(new(fingerprint="fp-2", at=T0 + timedelta(minutes=1)))
        await terminate(admin, await backend_of(storage))
        read = await storage.get_submission(first.id)
    finally:
        await admin.close()
    assert read == first
    assert sorted(s.fingerprint for s in await storage.submissions()) == ["fp-1", "fp-2"]
    assert second.id != first.id
