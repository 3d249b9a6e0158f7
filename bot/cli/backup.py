"""`python -m bot backup --db PATH DEST`: a consistent copy of the bot's SQLite database, safe to take
while the bot runs (SQLite's online backup API; see core.storage.sqlite.backup_database)."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
from datetime import UTC, datetime
from pathlib import Path

from core.storage.sqlite import backup_database


def destination_path(source: Path, destination: Path, now: datetime | None = None) -> Path:
    """DEST itself, or, when DEST is a folder, a time-stamped file in it (so a daily cron job keeps
    every copy instead of overwriting yesterday's)."""
    if destination.is_dir():
        stamp = (now or datetime.now(UTC)).strftime("%Y%m%d-%H%M%S")
        return destination / f"{source.stem}-{stamp}{source.suffix or '.db'}"
    return destination


def run_backup(args: argparse.Namespace) -> int:
    source = Path(args.db)
    if not source.is_file():
        print(f"error: no database at {source} (is --db the bot's database file?)", file=sys.stderr)
        return 1
    target = destination_path(source, Path(args.destination))
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
