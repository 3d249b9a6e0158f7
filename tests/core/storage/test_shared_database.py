"""What only a database shared by several processes can show, on SQLite and PostgreSQL: two storage
handles on one database (as two bot processes hold) keep the rate limit, the duplicate rule and the
outbox lease between them; PostgreSQL's migrations, its unreachable server, and `db copy`'s round
trip SQLite -> PostgreSQL -> SQLite."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from datetime import timedelta
from pathlib import Path
from typing import Any

import asyncpg
import pytest
from contract import ALICE, MOD, T0, new, sub

from bot.storage.postgres import PostgresStorage
from core.storage._migrations import bundled_migrations
from core.storage._rows import COPY_ORDER, TABLE_COLUMNS
from core.storage.interface import Storage, StorageError, StorageUnavailable
from core.storage.sqlite import SqliteStorage
from tests.core.storage.postgres_server import drop_schema, new_schema

Opener = Callable[[], Awaitable[Storage]]


def _parsed(table: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    # jsonb keeps the value, not the text (key order, spacing): compare JSON columns as values.
    kinds = dict(TABLE_COLUMNS[table])
    return [
        {k: json.loads(v) if kinds[k] == "json" and v is not None else v for k, v in r.items()} for r in rows
    ]


@pytest.fixture(params=["sqlite", "postgres"])
async def open_handle(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Opener]:
    """Opens any number of handles on ONE database, like several bot processes."""
    opened: list[Storage] = []
    schema = new_schema()
    url = request.getfixturevalue("postgres_url") if request.param == "postgres" else ""

    async def opener() -> Storage:
        handle: Storage
        if request.param == "sqlite":
            handle = SqliteStorage(str(tmp_path / "shared.db"))
        else:
            handle = PostgresStorage(url, schema=schema, pool_size=6)
        await handle.open()
        opened.append(handle)
        return handle

    try:
        yield opener
    finally:
        for handle in opened:
            await handle.close()
        if url:
            await drop_schema(url, schema)


async def test_a_burst_across_two_handles_stores_exactly_the_limit(open_handle: Opener) -> None:
    first, second = await asyncio.gather(open_handle(), open_handle())  # opened (migrated) together
    limit = 10
    burst = [
        new(fingerprint="same" if i % 4 == 0 else f"fp-{i}", at=T0 + timedelta(milliseconds=i))
        for i in range(40)
    ]
    outcomes = await asyncio.gather(
        *(
            (first if i % 2 else second).add_submission_checked(n, T0 - timedelta(hours=1), limit)
            for i, n in enumerate(burst)
        )
    )
    assert [o.result for o in outcomes].count("stored") == limit
    stored = await first.submissions(platform=ALICE.platform, user_id=ALICE.user_id)
    assert len(stored) == limit and len({s.fingerprint for s in stored}) == limit


async def test_two_workers_never_lease_the_same_item(open_handle: Opener) -> None:
    first, second = await open_handle(), await open_handle()
    for i in range(30):
        await first.subscribe(sub(f"u{i}", f"c{i}"))
    s = await first.add_submission(new())
    await first.approve(s.id, MOD, T0)  # 30 notices + the submitter's decision
    claims = await asyncio.gather(
        *(handle.claim_outbox("telegram", T0, limit=4) for _ in range(6) for handle in (first, second))
    )
    ids = [item.id for claim in claims for item in claim]
    assert len(ids) == len(set(ids)) == 31


async def test_two_moderators_cannot_both_approve(open_handle: Opener) -> None:
    first, second = await open_handle(), await open_handle()
    await first.subscribe(sub("u1", "c1"))
    s = await first.add_submission(new())
    results = await asyncio.gather(
        first.approve(s.id, MOD, T0), second.approve(s.id, MOD, T0), return_exceptions=True
    )
    assert sum(not isinstance(r, BaseException) for r in results) == 1
    assert (await first.outbox_stats()).pending == 2  # one notice, one decision: nothing doubled


# --- PostgreSQL only --------------------------------------------------------------------------------


async def test_postgres_migrations_apply_once_and_are_recorded(postgres_url: str) -> None:
    schema = new_schema()
    try:
        for _ in range(2):
            store = PostgresStorage(postgres_url, schema=schema)
            await store.open()
            await store.open()  # idempotent
            assert await store.schema_version() == bundled_migrations("postgres")[-1].version
            await store.close()
        con = await asyncpg.connect(postgres_url)
        try:
            rows = await con.fetch(f'SELECT version, name FROM "{schema}".schema_migrations ORDER BY version')
        finally:
            await con.close()
        assert [(r["version"], r["name"]) for r in rows] == [
            (m.version, m.name) for m in bundled_migrations("postgres")
        ]
    finally:
        await drop_schema(postgres_url, schema)


async def test_postgres_refuses_a_newer_schema(postgres_url: str) -> None:
    schema = new_schema()
    try:
        store = PostgresStorage(postgres_url, schema=schema)
        await store.open()
        await store.close()
        con = await asyncpg.connect(postgres_url)
        try:
            await con.execute(f"INSERT INTO \"{schema}\".schema_migrations VALUES (999, 'future', now())")
        finally:
            await con.close()
        with pytest.raises(StorageError, match="newer"):
            await PostgresStorage(postgres_url, schema=schema).open()
    finally:
        await drop_schema(postgres_url, schema)


async def test_unreachable_server_is_storage_unavailable() -> None:
    store = PostgresStorage("postgresql://tokbot:secret@127.0.0.1:1/none")
    with pytest.raises(StorageUnavailable) as refused:
        await store.open()
    assert "secret" not in str(refused.value) and "can't be reached" in refused.value.why


async def test_copy_sqlite_to_postgres_and_back_keeps_everything(tmp_path: Path, postgres_url: str) -> None:
    source = SqliteStorage(str(tmp_path / "from.db"))
    await source.open()
    await source.subscribe(sub("u1", "c1"))
    await source.subscribe(sub("u2", "c2", gpu="a100"))
    await source.unsubscribe("telegram", "u2", "a100", None)
    a = await source.add_submission(new(fingerprint="a"))
    b = await source.add_submission(new(fingerprint="b", at=T0 + timedelta(minutes=1)))
    await source.approve(a.id, MOD, T0 + timedelta(minutes=2))
    await source.reject(b.id, MOD, "no log", T0 + timedelta(minutes=3))
    await source.add_published([new(fingerprint="pub", source="https://example.invalid")])
    item = (await source.claim_outbox("telegram", T0 + timedelta(hours=1), limit=1))[0]
    await source.mark_sent(item.id, T0 + timedelta(hours=1))
    await source.cache_model("qwen/qwen3-8b", '{"params_b": 8.19}', T0)
    dumped = await source.dump_tables()
    schema = new_schema()
    target = PostgresStorage(postgres_url, schema=schema)
    back = SqliteStorage(str(tmp_path / "back.db"))
    try:
        await target.open()
        await target.load_tables(dumped)
        assert await target.table_counts() == await source.table_counts()
        copied = await target.dump_tables()
        assert {t: _parsed(t, copied[t]) for t in COPY_ORDER} == {
            t: _parsed(t, rows) for t, rows in dumped.items()
        }
        assert await target.submissions() == await source.submissions()
        assert await target.audit_log() == await source.audit_log()
        with pytest.raises(StorageError, match="empty"):
            await target.load_tables(dumped)  # never merges
        fresh = await target.add_submission(new(fingerprint="new"))  # the id sequence moved past the copy
        assert fresh.id > max(s.id for s in await source.submissions())
        await back.open()
        await back.load_tables(await target.dump_tables())
        assert (await back.table_counts())["submissions"] == len(dumped["submissions"]) + 1
    finally:
        await source.close()
        await target.close()
        await back.close()
        await drop_schema(postgres_url, schema)


async def test_two_processes_seeding_published_anchors_at_once_add_each_once(open_handle: Opener) -> None:
    """Every bot process seeds the published anchors at start; two starting together once collided."""
    first, second = await open_handle(), await open_handle()
    items = [new(fingerprint=f"published:{i}", source="https://example.invalid") for i in range(50)]
    added = await asyncio.gather(first.add_published(items), second.add_published(items))
    assert sum(added) == 50
    assert len(await first.submissions(origin="published")) == 50
