"""Nothing acknowledged is lost: SIGKILL the running bot in the middle of submissions, approvals and
deliveries; after a restart every acknowledged submission and approval is there, and the outbox
delivers every notice that was not yet sent (at-least-once: only a notice in flight at the kill may
come twice)."""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
from collections import Counter
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import build_app
from bot.settings import Settings
from tests.fakes.notifier import RecordingNotifier

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")
ACKS_BEFORE_KILL = 120


def run_child_until_killed(db: Path, delivered: Path) -> tuple[set[int], dict[int, str]]:
    child = Path(__file__).with_name("kill_app_child.py")
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    proc = subprocess.Popen(
        [sys.executable, str(child), str(db), str(delivered)], stdout=subprocess.PIPE, text=True, env=env
    )
    subs: set[int] = set()
    approved: dict[int, str] = {}
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            parts = line.split()
            if parts[:2] == ["ack", "sub"]:
                subs.add(int(parts[2]))
            elif parts[:2] == ["ack", "approve"]:
                approved[int(parts[2])] = parts[3]
            if len(subs) + len(approved) >= ACKS_BEFORE_KILL:
                proc.send_signal(signal.SIGKILL)
                break
    finally:
        proc.kill()
        proc.wait(timeout=10)
    assert proc.returncode == -signal.SIGKILL
    return subs, approved


def test_sigkill_mid_stream_loses_nothing(tmp_path):
    db, delivered = tmp_path / "bot.db", tmp_path / "delivered.tsv"
    subs, approved = run_child_until_killed(db, delivered)
    assert len(approved) >= 20

    async def after_restart() -> tuple[dict, list[tuple[str, str]]]:
        app = build_app(Settings(db_path=db, moderators="console:bob"))
        await app.start()
        recorder = RecordingNotifier("console")
        app.add_notifier(recorder)
        # Leases of items claimed by the dead worker must run out before they are due again.
        app.worker.clock = lambda: app.bot.clock() + timedelta(minutes=10)
        await app.worker.run_once()
        rows = {s.id: s for s in await app.storage.submissions(origin="community")}
        stats = await app.storage.outbox_stats()
        await app.close()
        assert stats.pending == 0
        return rows, recorder.sent

    rows, sent_after = asyncio.run(after_restart())
    assert subs <= set(rows), "every acknowledged submission survived"
    for sid in approved:
        assert rows[sid].status == "approved", sid
    before = [tuple(line.rstrip("\n").split("\t", 1)) for line in delivered.read_text().splitlines()]
    everything = Counter(before + sent_after)
    for sid, user in approved.items():
        anchor_notices = [k for k in everything if k[1].startswith(f"New measured anchor #{sid}:")]
        assert {chat for chat, _ in anchor_notices} == {"carol", "dave"}, sid
        assert any(chat == user and f"#{sid} was approved" in text for chat, text in everything), sid
    twice = [k for k, n in everything.items() if n > 1]
    assert len(twice) <= 100, "only notices in flight at the kill (one claimed batch) may repeat"
