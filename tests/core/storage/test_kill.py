"""Durability: a process SIGKILLed mid-stream loses no acknowledged write and leaves nothing half-done.

The child (kill_child.py) acknowledges each submission and approval on stdout only after the call
returned; the parent kills it with SIGKILL (no cleanup, no close, possibly inside a transaction), reopens
the file and checks every acknowledged write, and that every approval is complete: status, audit entry,
one notice per matching chat and the submitter's decision, or none of them.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from core.storage.sqlite import SqliteStorage

CHILD = Path(__file__).with_name("kill_child.py")
KILL_AFTER_ACKS = 200
# chat-a (two overlapping subscriptions, one notice), chat-b, chat-c; chat-d's subscription doesn't match.
ANCHOR_CHATS = {("telegram", "chat-a"), ("telegram", "chat-b"), ("discord", "chat-c")}

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL is POSIX")


def _run_and_kill(db: Path) -> tuple[set[int], set[int]]:
    child = subprocess.Popen(
        [sys.executable, str(CHILD), str(db)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        bufsize=1,
    )
    subs: set[int] = set()
    approvals: set[int] = set()

    def take(line: str) -> None:
        parts = line.split()
        if parts[:2] == ["ack", "sub"]:
            subs.add(int(parts[2]))
        elif parts[:2] == ["ack", "approve"]:
            approvals.add(int(parts[2]))

    deadline = time.monotonic() + 30
    try:
        assert child.stdout is not None
        for line in child.stdout:
            take(line)
            if len(subs) + len(approvals) >= KILL_AFTER_ACKS or time.monotonic() > deadline:
                break
        os.kill(child.pid, signal.SIGKILL)
        # Lines already in the pipe were acknowledged before the kill: they count too.
        rest, err = child.communicate(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait()
    for line in rest.splitlines():
        take(line)
    assert child.returncode == -signal.SIGKILL, err
    assert len(subs) + len(approvals) >= KILL_AFTER_ACKS, f"child too slow or failed: {err[-2000:]}"
    return subs, approvals


async def test_sigkill_loses_no_acknowledged_write(tmp_path: Path) -> None:
    db = tmp_path / "kill.db"
    acked_subs, acked_approvals = _run_and_kill(db)

    store = SqliteStorage(str(db))
    await store.open()  # recovers from the WAL the killed process left behind
    try:
        for sub_id in acked_subs:
            assert await store.get_submission(sub_id) is not None, f"acknowledged submission {sub_id} lost"
        for sub_id in acked_approvals:
            got = await store.get_submission(sub_id)
            assert got is not None and got.status == "approved", f"acknowledged approval {sub_id} lost"
    finally:
        await store.close()

    # Nothing half-done, for every submission in the file (acknowledged or not).
    with sqlite3.connect(db) as conn:
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        rows = conn.execute("SELECT id, status FROM submissions").fetchall()
        assert rows
        for sub_id, status in rows:
            outbox = conn.execute(
                "SELECT kind, platform, chat_id, dedupe_key FROM outbox WHERE submission_id = ?", (sub_id,)
            ).fetchall()
            audit = conn.execute("SELECT action FROM audit_log WHERE submission_id = ?", (sub_id,)).fetchall()
            if status == "approved":
                anchors = {(p, c) for kind, p, c, _ in outbox if kind == "anchor"}
                decisions = [key for kind, _, _, key in outbox if kind == "decision"]
                assert anchors == ANCHOR_CHATS and len(outbox) == len(ANCHOR_CHATS) + 1, (sub_id, outbox)
                assert decisions == [f"decision:{sub_id}:approved"]
                assert audit == [("approve",)]
            else:
                assert status == "pending" and outbox == [] and audit == [], (sub_id, status, outbox, audit)
        approved = {r[0] for r in rows if r[1] == "approved"}
        assert acked_approvals <= approved
