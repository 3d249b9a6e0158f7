"""`python -m bot ask` on a database another process is writing: a question needs no write lock, so
it answers while a write transaction holds the lock (several `ask` processes once queued on it for
tens of seconds). The lock waits are cut to milliseconds: a write would fail, not wait."""

from __future__ import annotations

import asyncio
import io
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

import core.storage.sqlite as sqlite_backend
from bot.app import build_app
from bot.cli.ask import run_ask
from bot.cli.main import build_parser
from bot.settings import Settings
from core.storage.interface import StorageError
from core.storage.sqlite import SqliteStorage

QUESTION = "4090 llama 3 8b"


@pytest.fixture(autouse=True)
def elsewhere(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("TOKBOT_DB_PATH", "TOKBOT_DATABASE_URL", "TOKBOT_HUB", "HF_ENDPOINT"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(sqlite_backend, "BUSY_TIMEOUT_MS", 10)  # a write would give up at once
    monkeypatch.setattr(sqlite_backend, "LOCK_WAIT_SECONDS", 0.05)


@pytest.fixture
def db(tmp_path: Path) -> str:
    """A bot's database as a running bot leaves it: migrated and seeded."""
    path = str(tmp_path / "t.db")

    async def seed() -> None:
        app = build_app(Settings(_env_file=None, db_path=Path(path)))  # type: ignore[call-arg]
        await app.start()
        await app.close()

    asyncio.run(seed())
    return path


@pytest.fixture
def writer_holding_the_lock(db: str) -> Iterator[sqlite3.Connection]:
    """Another process's connection in the middle of a write transaction."""
    con = sqlite3.connect(db, isolation_level=None)
    con.execute("BEGIN IMMEDIATE")
    con.execute("UPDATE submissions SET status = status WHERE id = 1")
    yield con
    con.execute("ROLLBACK")
    con.close()


def ask(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    code = run_ask(build_parser().parse_args(["ask", *argv]), out)
    return code, out.getvalue()


def test_ask_answers_while_another_connection_holds_the_write_lock(
    db: str, writer_holding_the_lock: sqlite3.Connection
) -> None:
    code, text = ask(QUESTION, "--db", db)
    assert code == 0, text
    assert "RTX 4090" in text
    code, text = ask(QUESTION, "--db", db, "--json")
    assert code == 0 and '"status": "answer"' in text


def test_the_read_only_handle_never_writes(db: str) -> None:
    async def check() -> None:
        storage = SqliteStorage(db, read_only=True)
        await storage.open()
        try:
            assert await storage.schema_version() > 0
            with pytest.raises(StorageError, match="read-only"):
                await storage.record_audit(None)  # type: ignore[arg-type]
        finally:
            await storage.close()

    asyncio.run(check())


def test_a_database_behind_on_migrations_is_migrated_once_then_read(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    sqlite3.connect(path).close()  # an empty file: nothing applied yet

    async def check() -> None:
        storage = SqliteStorage(str(path), read_only=True)
        await storage.open()
        try:
            assert await storage.schema_version() == max(
                m.version for m in sqlite_backend.bundled_migrations()
            )
        finally:
            await storage.close()

    asyncio.run(check())


def test_anchors_newer_than_the_database_still_answer_and_exit(
    db: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An upgrade ships published anchors the database lacks: `ask` (read-only) can't store them; it
    answers from what is stored and exits (the failed write once left the storage thread alive and
    the process hung)."""
    import bot.app as app_module

    async def not_current(self: SqliteStorage, items: object) -> bool:
        return False

    monkeypatch.setattr(SqliteStorage, "published_current", not_current)
    assert app_module  # the module whose load_anchors is under test
    code, text = ask(QUESTION, "--db", db)
    assert code == 0, text
    assert "RTX 4090" in text
