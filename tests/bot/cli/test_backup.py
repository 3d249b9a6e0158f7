"""`python -m bot backup`: the copy it writes opens and holds the data; bad paths get a plain message."""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli.backup import destination_path, run_backup
from core.storage.records import Actor, Measurement, NewSubmission
from core.storage.sqlite import SqliteStorage


async def _make_db(path: Path) -> int:
    store = SqliteStorage(str(path))
    await store.open()
    try:
        measurement = Measurement(gpu_id="v100-32g", model_id="gemma-3-27b", quant="Q4_K_M", decode_tps=20.0)
        added = await store.add_submission(
            NewSubmission(
                measurement=measurement,
                submitter=Actor("telegram", "1", "alice"),
                created_at=datetime(2026, 1, 1, tzinfo=UTC),
                chat_id="1",
            )
        )
        return added.id
    finally:
        await store.close()


def _args(db: Path, destination: Path) -> argparse.Namespace:
    return argparse.Namespace(db=str(db), destination=str(destination))


async def _run(args: argparse.Namespace) -> int:
    # run_backup calls asyncio.run, which can't nest inside the test's running loop: use a thread.
    return await asyncio.to_thread(run_backup, args)


async def test_backup_to_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "bot.db"
    sub_id = await _make_db(db)
    dest = tmp_path / "copy.db"
    assert await _run(_args(db, dest)) == 0
    out = capsys.readouterr().out
    assert str(dest) in out and "backed up" in out
    with sqlite3.connect(dest) as copy:
        assert copy.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert copy.execute("SELECT id FROM submissions").fetchall() == [(sub_id,)]


async def test_backup_to_folder_is_time_stamped(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "bot.db"
    await _make_db(db)
    folder = tmp_path / "backups"
    folder.mkdir()
    assert await _run(_args(db, folder)) == 0
    [written] = list(folder.iterdir())
    assert written.name.startswith("bot-") and written.suffix == ".db"
    assert str(written) in capsys.readouterr().out


def test_destination_path() -> None:
    now = datetime(2026, 2, 3, 4, 5, 6, tzinfo=UTC)
    file = Path("/nonexistent/out.db")
    assert destination_path(Path("/x/bot.db"), file, now) == file
    assert destination_path(Path("/x/bot.db"), Path("/"), now) == Path("/bot-20260203-040506.db")


def test_missing_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_backup(_args(tmp_path / "nope.db", tmp_path / "out.db")) == 1
    err = capsys.readouterr().err
    assert "no database at" in err and "Traceback" not in err
    assert not (tmp_path / "out.db").exists()


def test_not_a_database(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"this is not sqlite" * 100)
    assert run_backup(_args(junk, tmp_path / "out.db")) == 1
    assert "not a usable SQLite database" in capsys.readouterr().err
    assert not (tmp_path / "out.db").exists() and not (tmp_path / "out.db.partial").exists()


def test_missing_destination_folder(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "bot.db"
    db.write_bytes(b"")
    assert run_backup(_args(db, tmp_path / "no" / "such" / "out.db")) == 1
    assert "does not exist" in capsys.readouterr().err


async def test_destination_is_source(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "bot.db"
    await _make_db(db)
    assert await _run(_args(db, db)) == 1
    assert "database itself" in capsys.readouterr().err


async def test_a_missing_folder_named_with_a_slash_is_created(tmp_path: Path) -> None:
    """Issue 24: `bot backup --db t.db bk/` with no bk folder wrote a file called bk."""
    db = tmp_path / "bot.db"
    await _make_db(db)
    folder = tmp_path / "bk"
    args = argparse.Namespace(db=str(db), destination=f"{folder}/")
    assert await _run(args) == 0
    assert folder.is_dir() and len(list(folder.glob("bot-*.db"))) == 1
