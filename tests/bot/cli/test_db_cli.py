"""`python -m bot migrate`, `python -m bot db copy`, and what every command does with a database it
can't use: exit 2 and one sentence naming the setting, no traceback (issue 13)."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.cli.main import main
from core.storage._migrations import bundled_migrations
from core.storage.sqlite import SqliteStorage
from tests.core.storage.contract import new
from tests.core.storage.postgres_server import drop_schema, need_server, new_schema

ROOT = Path(__file__).resolve().parents[3]


async def _one_submission(path: Path) -> None:
    store = SqliteStorage(str(path))
    await store.open()
    try:
        await store.add_submission(new())
    finally:
        await store.close()


def _env(**values: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKBOT_")}
    env.update(values)
    return env


def test_migrate_prints_the_schema_version(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "m.db"
    assert main(["migrate", "--db", str(db)]) == 0
    assert f"schema version {bundled_migrations()[-1].version}" in capsys.readouterr().out
    assert main(["migrate", "--db", str(db)]) == 0  # nothing left to apply: same version


@pytest.mark.parametrize("kind", ["directory", "corrupt", "empty-setting"])
@pytest.mark.parametrize("command", [["console"], ["run"], ["export", "-"], ["migrate"]])
def test_an_unusable_database_is_one_sentence_and_exit_2(
    tmp_path: Path, kind: str, command: list[str]
) -> None:
    target = tmp_path / "bad.db"
    if kind == "directory":
        target.mkdir()
    elif kind == "corrupt":
        target.write_bytes(b"PK\x03\x04 not a database" * 100)
    value = "" if kind == "empty-setting" else str(target)
    # `run` with a token is the service path: it must stop before reaching for the network.
    env = _env(TOKBOT_DB_PATH=value, TOKBOT_TELEGRAM_TOKEN="123456789:" + "A" * 35, TOKBOT_METRICS_PORT="0")
    if command == ["console"]:
        env.pop("TOKBOT_TELEGRAM_TOKEN")
    done = subprocess.run(
        [sys.executable, "-m", "bot", *command],
        cwd=tmp_path,
        env={**env, "PYTHONPATH": str(ROOT)},
        input="/quit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = [ln for ln in done.stderr.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("tokbot: the database TOKBOT_DB_PATH="), lines


def test_unreachable_postgres_is_one_sentence_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("TOKBOT_DATABASE_URL", "postgresql://tokbot:secret@127.0.0.1:1/tokbot")
    assert main(["migrate"]) == 2
    err = capsys.readouterr().err
    assert "TOKBOT_DATABASE_URL=" in err and "can't be reached" in err and "secret" not in err


def test_db_copy_sqlite_to_postgres(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = need_server()
    db = tmp_path / "from.db"
    asyncio.run(_one_submission(db))
    schema = new_schema()
    try:
        args = ["db", "copy", "--from", f"sqlite:///{db}", "--to", url, "--to-schema", schema]
        assert main(args) == 0
        out = capsys.readouterr().out
        assert "copied 1 submissions" in out and "0 resolved_models" in out and "counts verified" in out
        assert main(args) == 1  # never merges into a database that holds rows
        assert "nothing was copied" in capsys.readouterr().err
    finally:
        asyncio.run(drop_schema(url, schema))


def test_db_copy_refuses_a_bad_address(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["db", "copy", "--from", "sqlite:relative.db", "--to", "postgresql://x@127.0.0.1:1/db"]) == 2
    assert "sqlite:///" in capsys.readouterr().err
