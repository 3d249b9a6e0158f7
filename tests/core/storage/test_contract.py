"""Both backends against the one storage contract, plus what only the SQLite file can show: migrations,
WAL, durability across reopen, the online backup."""

from __future__ import annotations

import sqlite3
from collections.abc import AsyncIterator
from datetime import timedelta
from pathlib import Path

import pytest
from contract import ALICE, MOD, T0, StorageContract, new, sub

from core.storage._sql import SqlStore
from core.storage.interface import Storage, StorageError
from core.storage.memory import MemoryStorage
from core.storage.sqlite import (
    Migration,
    SqliteStorage,
    backup_database,
    bundled_migrations,
    split_statements,
)
from tests.core.storage.postgres_server import empty_tables


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def storage(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[Storage]:
    """An opened, empty backend of each kind; PostgreSQL in this run's schema, emptied first (skipped
    without a server)."""
    backend: Storage
    if request.param == "memory":
        backend = MemoryStorage()
    elif request.param == "sqlite":
        backend = SqliteStorage(str(tmp_path / "t.db"))
    else:
        from bot.storage.postgres import PostgresStorage

        url, schema = request.getfixturevalue("postgres_url"), request.getfixturevalue("postgres_schema")
        await empty_tables(url, schema)
        backend = PostgresStorage(url, schema=schema, pool_size=8)
    await backend.open()
    try:
        yield backend
    finally:
        await backend.close()


class TestContract(StorageContract):
    pass


# --- SQLite only ----------------------------------------------------------------------------------


@pytest.fixture
async def sqlite_store(tmp_path: Path) -> AsyncIterator[SqliteStorage]:
    store = SqliteStorage(str(tmp_path / "bot.db"))
    await store.open()
    try:
        yield store
    finally:
        await store.close()


def _connect(path: str | Path) -> sqlite3.Connection:
    return sqlite3.connect(path)


def test_migrations_are_bundled_in_order() -> None:
    migrations = bundled_migrations()
    assert migrations[0].version == 1 and migrations[0].name == "init"
    assert [m.version for m in migrations] == sorted({m.version for m in migrations})


async def test_migrations_apply_once_and_are_recorded(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    for _ in range(2):
        store = SqliteStorage(path)
        await store.open()
        await store.open()  # idempotent
        await store.close()
    with _connect(path) as db:
        rows = db.execute("SELECT version, name FROM schema_migrations ORDER BY version").fetchall()
        user_version = db.execute("PRAGMA user_version").fetchone()[0]
    latest = bundled_migrations()[-1]
    assert rows == [(m.version, m.name) for m in bundled_migrations()]
    assert user_version == latest.version


async def test_a_new_migration_applies_on_top_in_order(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    store = SqliteStorage(path)
    await store.open()
    s = await store.add_submission(new())
    await store.close()
    top = max(m.version for m in bundled_migrations())
    extra = [
        # Out of order on purpose: the list is applied by version, whatever the order given.
        Migration(top + 2, "note_default", "INSERT INTO notes (text) VALUES ('from 3');"),
        Migration(
            top + 1, "notes", "CREATE TABLE notes (\n  id INTEGER PRIMARY KEY,\n  text TEXT -- a; b\n);"
        ),
    ]
    migrations = sorted([*bundled_migrations(), *extra], key=lambda m: m.version)
    upgraded = SqliteStorage(path, migrations=migrations)
    await upgraded.open()
    assert await upgraded.get_submission(s.id) is not None
    await upgraded.close()
    again = SqliteStorage(path, migrations=migrations)
    await again.open()
    await again.close()
    with _connect(path) as db:
        assert db.execute("SELECT text FROM notes").fetchall() == [("from 3",)]  # applied once
        versions = [r[0] for r in db.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == list(range(1, top + 3))
        assert db.execute("PRAGMA user_version").fetchone()[0] == top + 2
    # An older tokbot refuses a newer database instead of running against a schema it doesn't know.
    old = SqliteStorage(path)
    with pytest.raises(StorageError, match="newer"):
        await old.open()


async def test_a_failing_migration_leaves_no_trace(tmp_path: Path) -> None:
    path = str(tmp_path / "m.db")
    bad_sql = "CREATE TABLE half (x);\nSELECT no_such_function();"
    top = max(m.version for m in bundled_migrations())
    broken = [*bundled_migrations(), Migration(top + 1, "broken", bad_sql)]
    with pytest.raises(sqlite3.OperationalError):
        await SqliteStorage(path, migrations=broken).open()
    with _connect(path) as db:
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        versions = [r[0] for r in db.execute("SELECT version FROM schema_migrations")]
    assert "half" not in tables and versions == list(range(1, top + 1))


async def test_a_database_from_the_first_schema_upgrades_and_keeps_its_rows(tmp_path: Path) -> None:
    """A database made by the first release (migration 0001 only) gains every later migration on
    open (flag_details, the live-fingerprint index, ...), its rows intact."""
    path = str(tmp_path / "v1.db")
    old = SqliteStorage(path, migrations=bundled_migrations()[:1])
    await old.open()
    writer = old._writer
    assert writer is not None
    await writer.execute(
        "INSERT INTO submissions (gpu_id, model_id, quant, decode_tps, measurement, platform, user_id, "
        "chat_id, status, origin, created_at) VALUES ('v100-32g', 'gemma-3-27b', 'Q4_K_M', 20.5, "
        '\'{"gpu_id": "v100-32g", "model_id": "gemma-3-27b", "quant": "Q4_K_M", "decode_tps": 20.5}\', '
        "'telegram', '111', 'chat-111', 'pending', 'community', '2026-01-01T12:00:00.000000+00:00')"
    )
    await old.close()
    current = SqliteStorage(path)
    await current.open()
    try:
        [kept] = await current.submissions()
        assert kept.flag_details == () and kept.measurement.decode_tps == 20.5 and kept.created_at == T0
        with _connect(path) as db:
            versions = [r[0] for r in db.execute("SELECT version FROM schema_migrations ORDER BY version")]
        assert versions == [m.version for m in bundled_migrations()]
    finally:
        await current.close()


def test_split_statements() -> None:
    script = (
        "-- head; comment\nCREATE TABLE a (x TEXT DEFAULT 'a;b');\nINSERT INTO a VALUES ('c');\n-- tail\n"
    )
    assert split_statements(script) == [
        "-- head; comment\nCREATE TABLE a (x TEXT DEFAULT 'a;b');",
        "INSERT INTO a VALUES ('c');",
    ]
    with pytest.raises(StorageError):
        split_statements("CREATE TABLE b (x)")


async def test_pragmas(sqlite_store: SqliteStorage) -> None:
    writer = sqlite_store._writer
    assert writer is not None
    assert (await writer.execute_fetchall("PRAGMA journal_mode"))[0][0] == "wal"
    assert (await writer.execute_fetchall("PRAGMA busy_timeout"))[0][0] == 5000
    assert (await writer.execute_fetchall("PRAGMA foreign_keys"))[0][0] == 1
    assert (await writer.execute_fetchall("PRAGMA synchronous"))[0][0] == 2  # FULL
    with _connect(sqlite_store.path) as other:
        assert other.execute("PRAGMA journal_mode").fetchone()[0] == "wal"  # persistent in the file


async def test_indexed_columns(sqlite_store: SqliteStorage) -> None:
    with _connect(sqlite_store.path) as db:
        indexed: set[str] = set()
        names = db.execute("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'submissions'")
        for (name,) in names.fetchall():
            indexed |= {r[2] for r in db.execute(f"PRAGMA index_info('{name}')")}
    required = {"gpu_id", "model_id", "status", "origin", "platform", "user_id", "fingerprint", "created_at"}
    assert required <= indexed


async def test_a_failure_inside_approve_rolls_everything_back(
    sqlite_store: SqliteStorage, monkeypatch: pytest.MonkeyPatch
) -> None:
    await sqlite_store.subscribe(sub("u1", "c1"))
    s = await sqlite_store.add_submission(new())

    async def broken(*args: object) -> None:  # fails after status, audit and fan-out were written
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(SqlStore, "tell_submitter", broken)
    with pytest.raises(RuntimeError):
        await sqlite_store.approve(s.id, MOD, T0)
    assert (await sqlite_store.get_submission(s.id)).status == "pending"  # type: ignore[union-attr]
    assert (await sqlite_store.outbox_stats()).pending == 0
    assert await sqlite_store.audit_log() == []
    monkeypatch.undo()
    assert (await sqlite_store.approve(s.id, MOD, T0)).status == "approved"  # the writer is usable again


async def test_reopen_keeps_everything(tmp_path: Path) -> None:
    path = str(tmp_path / "keep.db")
    store = SqliteStorage(path)
    await store.open()
    await store.subscribe(sub("u1", "c1"))
    s = await store.add_submission(new())
    approved = await store.approve(s.id, MOD, T0)
    await store.close()
    reopened = SqliteStorage(path)
    await reopened.open()
    try:
        assert await reopened.get_submission(s.id) == approved
        assert await reopened.count_subscriptions() == 1
        assert (await reopened.outbox_stats()).pending == 2
        assert [e.action for e in await reopened.audit_log()] == ["approve"]
    finally:
        await reopened.close()


async def test_closed_storage_says_so(tmp_path: Path) -> None:
    store = SqliteStorage(str(tmp_path / "c.db"))
    with pytest.raises(StorageError, match="not open"):
        await store.add_submission(new())
    with pytest.raises(StorageError, match="not open"):
        await store.submissions()


def test_memory_path_refused() -> None:
    with pytest.raises(ValueError):
        SqliteStorage(":memory:")


async def test_backup_copy_opens_and_holds_the_data(sqlite_store: SqliteStorage, tmp_path: Path) -> None:
    await sqlite_store.subscribe(sub("u1", "c1"))
    s = await sqlite_store.add_submission(new())
    await sqlite_store.approve(s.id, MOD, T0)
    dest = tmp_path / "backups" / "copy.db"
    dest.parent.mkdir()
    await sqlite_store.backup(str(dest))
    # Still writable while and after the copy is taken; the copy is the state at backup time.
    later = await sqlite_store.add_submission(new(at=T0 + timedelta(minutes=1)))
    assert not Path(f"{dest}.partial").exists()
    copy = SqliteStorage(str(dest))
    await copy.open()
    try:
        assert (await copy.get_submission(s.id)).status == "approved"  # type: ignore[union-attr]
        assert await copy.get_submission(later.id) is None
        assert (await copy.outbox_stats()).pending == 2
        assert await copy.count_subscriptions() == 1
    finally:
        await copy.close()
    with _connect(dest) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


async def test_backup_while_writing(sqlite_store: SqliteStorage, tmp_path: Path) -> None:
    import asyncio

    async def writer() -> None:
        for i in range(50):
            await sqlite_store.add_submission(new(ALICE, T0 + timedelta(seconds=i)))

    task = asyncio.create_task(writer())
    dest = tmp_path / "live.db"
    await asyncio.sleep(0)
    await sqlite_store.backup(str(dest))
    await task
    with _connect(dest) as db:
        assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert db.execute("SELECT COUNT(*) FROM submissions").fetchone()[0] <= 50


async def test_backup_database_refuses_missing_source_and_self(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        await backup_database(str(tmp_path / "nope.db"), str(tmp_path / "out.db"))
    path = tmp_path / "self.db"
    store = SqliteStorage(str(path))
    await store.open()
    await store.close()
    with pytest.raises(ValueError):
        await backup_database(str(path), str(path))
