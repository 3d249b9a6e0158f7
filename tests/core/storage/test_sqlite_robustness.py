"""SQLite under other processes and on bad paths (issue 13): lock contention is waited out, close never
fails on `PRAGMA optimize`, and a path that can't be a database is StorageUnavailable with a reason."""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
from pathlib import Path

import pytest
from contract import T0, new

from core.storage import sqlite as sqlite_backend
from core.storage.interface import StorageUnavailable
from core.storage.sqlite import SqliteStorage, check_database_file


def _hold_write_lock(path: Path, seconds: float, held: threading.Event) -> threading.Thread:
    """Another process's writer, as far as SQLite can tell: its own connection in IMMEDIATE mode."""

    def hold() -> None:
        other = sqlite3.connect(path, isolation_level=None)
        other.execute("BEGIN IMMEDIATE")
        held.set()
        threading.Event().wait(seconds)
        other.execute("COMMIT")
        other.close()

    thread = threading.Thread(target=hold)
    thread.start()
    return thread


async def test_a_write_waits_past_busy_timeout_for_another_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_MS", 50)  # SQLite gives up after 50 ms each time
    path = tmp_path / "busy.db"
    store = SqliteStorage(str(path))
    await store.open()
    held = threading.Event()
    thread = _hold_write_lock(path, 0.6, held)
    await asyncio.to_thread(held.wait)
    try:
        added = await store.add_submission(new())  # retried until the other writer commits
        assert await store.get_submission(added.id) is not None
    finally:
        await asyncio.to_thread(thread.join)
        await store.close()


async def test_close_does_not_fail_while_another_process_writes(tmp_path: Path) -> None:
    path = tmp_path / "optimize.db"
    store = SqliteStorage(str(path))
    await store.open()
    for i in range(3):
        await store.add_submission(new(fingerprint=f"fp{i}"))
    held = threading.Event()
    thread = _hold_write_lock(path, 0.5, held)
    await asyncio.to_thread(held.wait)
    try:
        await store.close()  # PRAGMA optimize is skipped, not an error, while the lock is held
    finally:
        await asyncio.to_thread(thread.join)


async def test_many_processes_worth_of_handles_open_and_close_together(tmp_path: Path) -> None:
    """120 console processes once closed at the same moment; 53 died on `database is locked`."""
    path = str(tmp_path / "crowd.db")
    first = SqliteStorage(path)
    await first.open()
    await first.close()
    handles = [SqliteStorage(path) for _ in range(20)]
    await asyncio.gather(*(h.open() for h in handles))
    await asyncio.gather(*(h.add_submission(new(fingerprint=f"c{i}")) for i, h in enumerate(handles)))
    await asyncio.gather(*(h.close() for h in handles))


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        (lambda p: p.mkdir(), "is a directory"),
        (lambda p: p.write_bytes(os.urandom(4096)), "not an SQLite database"),
        (lambda p: p.write_text("name,value\n"), "not an SQLite database"),
    ],
    ids=["directory", "random-bytes", "text-file"],
)
async def test_a_path_that_cant_be_a_database(tmp_path: Path, make, reason: str) -> None:  # noqa: ANN001
    path = tmp_path / "bad.db"
    make(path)
    with pytest.raises(StorageUnavailable) as refused:
        check_database_file(str(path))
    assert reason in refused.value.why and refused.value.where == str(path)
    with pytest.raises(StorageUnavailable):
        await SqliteStorage(str(path)).open()


async def test_a_corrupt_database_past_the_header(tmp_path: Path) -> None:
    path = tmp_path / "torn.db"
    store = SqliteStorage(str(path))
    await store.open()
    await store.close()
    data = bytearray(path.read_bytes())
    data[100:] = os.urandom(len(data) - 100)  # the header survives, the pages don't
    path.write_bytes(bytes(data))
    for leftover in (Path(f"{path}-wal"), Path(f"{path}-shm")):
        leftover.unlink(missing_ok=True)
    with pytest.raises(StorageUnavailable, match="not an SQLite database"):
        await SqliteStorage(str(path)).open()


async def test_empty_file_is_a_new_database_and_empty_path_is_refused(tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    store = SqliteStorage(str(empty))
    await store.open()  # SQLite's empty database: tables are created
    await store.add_submission(new(at=T0))
    await store.close()
    with pytest.raises(StorageUnavailable, match="empty"):
        check_database_file("  ")


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="root writes read-only files anyway")
async def test_read_only_file_and_folder(tmp_path: Path) -> None:
    folder = tmp_path / "ro"
    folder.mkdir()
    db = folder / "ro.db"
    store = SqliteStorage(str(db))
    await store.open()
    await store.close()
    db.chmod(0o444)
    with pytest.raises(StorageUnavailable, match="read-only"):
        check_database_file(str(db))
    db.chmod(0o644)
    folder.chmod(0o555)
    try:
        with pytest.raises(StorageUnavailable, match="folder"):
            check_database_file(str(db))
    finally:
        folder.chmod(0o755)
