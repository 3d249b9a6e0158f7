"""`python -m bot export [FILE]`: every approved measured anchor as CSV or JSON (the open data set).
Without FILE it goes to bot.cli.out_dir (a temporary folder), not the working directory."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from core.storage.records import Submission


async def _anchors(db: Path) -> list[Submission]:
    from core.storage.sqlite import SqliteStorage

    storage = SqliteStorage(str(db))
    await storage.open()
    try:
        return await storage.submissions(status="approved")
    finally:
        await storage.close()


def run_export(args: argparse.Namespace) -> int:
    from bot.settings import SettingsError, load_settings
    from core.anchors.export import export_csv, export_json

    try:
        db = Path(args.db) if args.db else load_settings().db_path
    except SettingsError as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
    if not db.exists():
        print(f"tokbot: no database at {db} (start the bot once, or pass --db)", file=sys.stderr)
        return 1
    fmt = args.format or ("json" if str(args.destination).endswith(".json") else "csv")
    if args.destination is None:  # no file named: the output folder, never the working directory
        from bot.cli.out_dir import output_dir

        args.destination = str(output_dir() / f"tokbot-anchors.{fmt}")
    anchors = asyncio.run(_anchors(db))
    data = export_csv(anchors) if fmt == "csv" else export_json(anchors)
    if args.destination == "-":
        sys.stdout.buffer.write(data)
    else:
        Path(args.destination).write_bytes(data)
        print(f"wrote {len(anchors)} anchors to {args.destination} ({fmt})")
    return 0
