"""`python -m bot backup DEST`: a consistent copy of the bot's database, safe to take while the bot runs.

- SQLite (TOKBOT_DB_PATH, or --db): SQLite's online backup API (core.storage.sqlite.backup_database);
  the copy is itself a database file, opened as it is.
- PostgreSQL (TOKBOT_DATABASE_URL): `pg_dump --format=custom` (one snapshot; restore into an empty
  database with `pg_restore --dbname URL FILE`). Needs the PostgreSQL client tools.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from core.storage.interface import StorageError, StorageUnavailable
from core.storage.sqlite import backup_database

if TYPE_CHECKING:
    from bot.settings import Settings


def _folder_meant(destination: str | Path) -> bool:
    """DEST names a folder: one that exists, or one written with a trailing slash ("bk/"), which is
    created (issue 24: a missing "bk/" used to become a file called bk)."""
    if Path(destination).is_dir():
        return True
    if str(destination).endswith(("/", "\\")):  # Path() would drop the slash: read the text typed
        Path(destination).mkdir(parents=True, exist_ok=True)
        return True
    return False


def destination_path(source: Path, destination: str | Path, now: datetime | None = None) -> Path:
    """DEST itself, or, when DEST is a folder, a time-stamped file in it (so a daily cron job keeps
    every copy instead of overwriting yesterday's)."""
    if _folder_meant(destination):
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        return Path(destination) / f"{source.stem}-{stamp}{source.suffix or '.db'}"
    return Path(destination)


def run_backup(args: argparse.Namespace) -> int:
    if not args.db:
        from bot.settings import SettingsError, load_settings

        try:
            settings = load_settings()
        except SettingsError as exc:
            print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
            return 2
        if settings.database_url is not None:
            return _backup_postgres(settings, str(args.destination))
        args = argparse.Namespace(**{**vars(args), "db": str(settings.db_path)})
    return _backup_sqlite(args)


def _backup_postgres(settings: Settings, given: str) -> int:
    from bot.storage.postgres import PostgresStorage

    assert settings.database_url is not None
    destination = Path(given)
    if _folder_meant(given):
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        destination = destination / f"tokbot-{stamp}.dump"
    store = PostgresStorage(settings.database_url.get_secret_value().strip(), schema=settings.database_schema)

    async def dump() -> None:
        await store.open()  # StorageUnavailable: bot.cli.main says it in one sentence, exit 2
        try:
            await store.backup(str(destination))
        finally:
            await store.close()

    try:
        asyncio.run(dump())
    except StorageError as exc:
        if isinstance(exc, StorageUnavailable):
            raise
        print(f"error: {exc}", file=sys.stderr)
        return 1
    size_kib = destination.stat().st_size / 1024
    print(
        f"backed up {settings.database_label()} -> {destination} ({size_kib:.0f} KiB, pg_dump custom format)"
    )
    return 0


def _backup_sqlite(args: argparse.Namespace) -> int:
    source = Path(args.db)
    if not source.is_file():
        print(f"error: no database at {source} (is --db the bot's database file?)", file=sys.stderr)
        return 1
    target = destination_path(source, str(args.destination))
    if not target.parent.is_dir():
        print(f"error: folder {target.parent} does not exist", file=sys.stderr)
        return 1
    try:
        written = asyncio.run(backup_database(str(source), str(target)))
    except ValueError as exc:  # the destination is the database itself
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except sqlite3.DatabaseError as exc:
        print(f"error: {source} is not a usable SQLite database ({exc})", file=sys.stderr)
        return 1
    except OSError as exc:
        print(f"error: could not write {target}: {exc}", file=sys.stderr)
        return 1
    size_kib = written.stat().st_size / 1024
    print(f"backed up {source} -> {written} ({size_kib:.0f} KiB)")
    return 0
