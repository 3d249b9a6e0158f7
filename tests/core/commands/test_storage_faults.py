"""Issue 24: a database fault is not "Something went wrong": its own reply, one log line a minute.

Before: SQLite disk full gave 189 "went wrong" replies and 189 logged tracebacks.
"""

from __future__ import annotations

import logging
import sqlite3

import pytest

from core.commands.faults import fault_recent
from tests.core.commands.conftest import Harness

SUBMIT = '/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M decode={decode}'


async def test_a_full_disk_gets_its_own_reply_and_one_log_line(
    h: Harness, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    async def full(*_a: object, **_k: object) -> object:
        raise sqlite3.OperationalError("database or disk is full")

    monkeypatch.setattr(h.storage, "add_submission_checked", full)
    caplog.set_level(logging.INFO)
    replies = [(await h.say(f"u{n}", SUBMIT.format(decode=40 + n)))[0] for n in range(20)]
    assert all("wasn't stored" in r.text and "operator has been told" in r.text for r in replies)
    assert not any("went wrong" in r.text for r in replies)
    faults = [r for r in caplog.records if "database fault" in r.getMessage()]
    assert len(faults) == 1 and not any(r.exc_info for r in caplog.records)
    assert fault_recent(h.bot, h.clock())  # /healthz says degraded for a minute
    h.clock.advance(minutes=2)
    assert not fault_recent(h.bot, h.clock())
