"""`python -m bot migrate` and `python -m bot db copy`: the database's schema and moving its data.

- `migrate` opens the configured database (TOKBOT_DATABASE_URL, else TOKBOT_DB_PATH or --db), which
  applies any pending numbered migration, and prints the schema version. Starting the bot does the
  same; this is for doing it ahead of a deploy, or checking.
- `db copy --from ADDRESS --to ADDRESS` copies every table (submissions, subscriptions, the outbox,
  the audit log, resolved models), ids kept, from one snapshot of the source into an EMPTY destination in one
  transaction, then compares the row counts. Addresses are sqlite:///file.db or postgresql://…
  Stop the bot first: rows written after the snapshot are not copied.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from bot.storage.select import SqlStorage, storage_at, storage_for
from core.storage.interface import StorageError, StorageUnavailable


async def _migrate(storage: SqlStorage) -> int:
    await storage.open()
    try:
        return await storage.schema_version()
    finally:
        await storage.close()


def run_migrate(args: argparse.Namespace) -> int:
    """StorageUnavailable propagates: bot.cli.main says it in one sentence and exits 2."""
    from bot.settings import SettingsError, load_settings

    overrides = {"db_path": Path(args.db), "database_url": None} if getattr(args, "db", None) else {}
    try:
        settings = load_settings(**overrides)
    except SettingsError as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
    version = asyncio.run(_migrate(storage_for(settings)))
    print(f"{settings.database_label()}: schema version {version}")
    return 0


async def copy_database(source: SqlStorage, target: SqlStorage) -> dict[str, int]:
    """Copy everything; returns the row count per table. Raises StorageError when the destination is
    not empty or the counts differ afterwards."""
    await source.open()
    try:
        await target.open()
        try:
            tables = await source.dump_tables()
            await target.load_tables(tables)
            copied = await target.table_counts()
        finally:
            await target.close()
    finally:
        await source.close()
    expected = {table: len(rows) for table, rows in tables.items()}
    if copied != expected:
        raise StorageError(f"row counts differ after the copy: source {expected}, destination {copied}")
    return copied


def run_db(args: argparse.Namespace) -> int:
    if args.db_command != "copy":
        return 2
    try:
        source = storage_at(args.source, args.from_schema)
        target = storage_at(args.target, args.to_schema)
    except ValueError as exc:
        print(f"tokbot: {exc}", file=sys.stderr)
        return 2
    try:
        counts = asyncio.run(copy_database(source, target))
    except StorageUnavailable:
        raise
    except StorageError as exc:
        print(f"tokbot: nothing was copied: {exc}", file=sys.stderr)
        return 1
    summary = ", ".join(f"{n} {table}" for table, n in counts.items())
    print(f"copied {summary}; counts verified")
    return 0
