"""The console answers a line it can't decode instead of dying with a traceback (issue 13)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_invalid_utf8_on_strict_stdin_gets_an_answer(tmp_path: Path) -> None:
    env = {**os.environ, "PYTHONIOENCODING": "utf-8:strict", "TOKBOT_DB_PATH": str(tmp_path / "t.db")}
    done = subprocess.run(
        [sys.executable, "-m", "bot", "console"],
        input=b"\xff\n\xc3\n/submit \xed\xa0\x80\n",
        capture_output=True,
        cwd=ROOT,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    assert b"Traceback" not in done.stderr and b"Traceback" not in done.stdout
    assert done.stdout.strip()  # each line got a reply
