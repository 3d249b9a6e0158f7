"""Benchmark SqliteStorage on a temporary file: the figures the community features depend on.

    .venv/bin/python scripts/bench_storage.py [--submissions 2000] [--subscribers 10000] [--sends 2000]

- add_submission: sequential submissions per second (one transaction, one fsync each: synchronous=FULL);
- approve fan-out: one approval reaching N subscribers (one INSERT ... SELECT), and a check that exactly
  one notice per subscriber chat was queued even though every chat has two overlapping subscriptions;
- outbox: claim (batches of 30, Telegram's per-second budget) + mark_sent per item, items per second.
Prints figures only; timing is not asserted anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import sqlite3
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.records import Actor, Measurement, NewSubmission  # noqa: E402
from core.storage._common import iso  # noqa: E402
from core.storage.sqlite import SqliteStorage  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MOD = Actor("discord", "900", "mod")


def submission(n: int) -> NewSubmission:
    return NewSubmission(
        measurement=Measurement("v100-32g", "gemma-3-27b", "Q4_K_M", 20.0 + n / 1000, context=8192),
        submitter=Actor("telegram", f"user{n % 50}", "bench"),
        created_at=T0 + timedelta(seconds=n),
        chat_id=f"dm{n % 50}",
    )


async def bench(path: str, submissions: int, subscribers: int, sends: int) -> None:
    store = SqliteStorage(path)
    await store.open()
    try:
        t = time.perf_counter()
        last = None
        for n in range(submissions):
            last = await store.add_submission(submission(n))
        elapsed = time.perf_counter() - t
        print(
            f"add_submission: {submissions} in {elapsed:.2f} s = {submissions / elapsed:,.0f}/s "
            f"({elapsed / submissions * 1000:.2f} ms each)"
        )
        assert last is not None

        # Subscribers, inserted straight into the table (subscribe() one by one would take a while and
        # isn't what is measured): every chat has an "everything" and a GPU-specific subscription.
        with sqlite3.connect(path) as db:
            rows = []
            for i in range(subscribers):
                platform = "telegram" if i % 2 else "discord"
                rows.append((platform, f"u{i}", f"c{i}", None, None, iso(T0)))
                rows.append((platform, f"u{i}", f"c{i}", "v100-32g", None, iso(T0)))
            db.executemany(
                "INSERT INTO subscriptions (platform, user_id, chat_id, gpu_id, model_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?)",
                rows,
            )
        print(f"subscriptions: {await store.count_subscriptions():,} active, {subscribers:,} chats")

        t = time.perf_counter()
        await store.approve(last.id, MOD, T0)
        elapsed = time.perf_counter() - t
        with sqlite3.connect(path) as db:
            anchors, chats = db.execute(
                "SELECT COUNT(*), COUNT(DISTINCT platform || ':' || chat_id) FROM outbox "
                "WHERE submission_id = ? AND kind = 'anchor'",
                (last.id,),
            ).fetchone()
        exact = anchors == chats == subscribers
        print(
            f"approve fan-out: {anchors:,} notices to {chats:,} chats in {elapsed * 1000:.0f} ms "
            f"(one per chat: {'yes' if exact else 'NO'})"
        )
        if not exact:
            raise SystemExit("fan-out did not queue exactly one notice per subscriber chat")

        done = 0
        t = time.perf_counter()
        now = T0 + timedelta(minutes=1)
        while done < sends:
            batch = await store.claim_outbox("telegram", now, limit=min(30, sends - done))
            if not batch:
                break
            for item in batch:
                await store.mark_sent(item.id, now)
            done += len(batch)
        elapsed = time.perf_counter() - t
        print(f"claim + mark_sent: {done} items in {elapsed:.2f} s = {done / elapsed:,.0f}/s")
        stats = await store.outbox_stats()
        print(f"outbox: {stats.pending:,} pending, {stats.sent:,} sent, {stats.dead} dead")
    finally:
        await store.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--submissions", type=int, default=2000)
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--sends", type=int, default=2000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        asyncio.run(bench(str(Path(folder) / "bench.db"), args.submissions, args.subscribers, args.sends))


if __name__ == "__main__":
    main()
