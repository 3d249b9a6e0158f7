"""Benchmark the SQL storage backends: the figures the community features depend on.

    .venv/bin/python scripts/bench_storage.py [--submissions 2000] [--subscribers 10000] [--sends 2000]
        [--backend sqlite|postgres|both] [--database-url postgresql://postgres@127.0.0.1:5432/test]

SQLite on a temporary file; PostgreSQL in a schema of its own, dropped at the end.

- add_submission: sequential submissions per second (one transaction each; SQLite: one fsync each,
  synchronous=FULL);
- approve fan-out: one approval reaching N subscribers (one INSERT ... SELECT), and a check that exactly
  one notice per subscriber chat was queued even though every chat has two overlapping subscriptions;
- outbox: claim (batches of 30, Telegram's per-second budget) + mark_sent per item, items per second.
- `--kills N`: the kill probe instead: 4 processes /submit on one database (add_submission_checked, a
  unique fingerprint each, "ack" printed only once the call returned); N times a random one is
  SIGKILLed after a random number of acks and replaced; then acknowledged submissions lost and
  fingerprints stored twice are counted.
Prints figures only; timing is not asserted anywhere.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import asyncpg  # noqa: E402

from bot.storage.select import SqlStorage, storage_at  # noqa: E402
from core.storage.records import Actor, Measurement, NewSubmission  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MOD = Actor("discord", "900", "mod")


def submission(n: int) -> NewSubmission:
    return NewSubmission(
        measurement=Measurement("v100-32g", "gemma-3-27b", "Q4_K_M", 20.0 + n / 1000, context=8192),
        submitter=Actor("telegram", f"user{n % 50}", "bench"),
        created_at=T0 + timedelta(seconds=n),
        chat_id=f"dm{n % 50}",
    )


async def bench(store: SqlStorage, submissions: int, subscribers: int, sends: int) -> None:
    await store.open()
    try:
        # Subscribers first, loaded in one go (subscribe() one by one would take a while and isn't
        # what is measured): every chat has an "everything" and a GPU-specific subscription.
        rows = []
        for i in range(subscribers):
            platform = "telegram" if i % 2 else "discord"
            for gpu in (None, "v100-32g"):
                rows.append(
                    {"id": len(rows) + 1, "platform": platform, "user_id": f"u{i}", "chat_id": f"c{i}",
                     "gpu_id": gpu, "model_id": None, "lang": "en", "active": True, "created_at": T0}
                )  # fmt: skip
        await store.load_tables({"submissions": [], "subscriptions": rows, "outbox": [], "audit_log": []})
        print(f"subscriptions: {await store.count_subscriptions():,} active, {subscribers:,} chats")

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

        t = time.perf_counter()
        await store.approve(last.id, MOD, T0)
        elapsed = time.perf_counter() - t
        outbox = (await store.dump_tables())["outbox"]
        notices = [r for r in outbox if r["submission_id"] == last.id and r["kind"] == "anchor"]
        anchors, chats = len(notices), len({(r["platform"], r["chat_id"]) for r in notices})
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


async def drop(url: str, schema: str) -> None:
    con = await asyncpg.connect(url)
    try:
        await con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
    finally:
        await con.close()


async def kill_child(address: str, schema: str | None, tag: str) -> None:
    """One submitting process: acknowledges each submission on stdout once it is committed."""
    store = storage_at(address, schema)
    await store.open()
    print("ready", flush=True)
    for i in range(1_000_000):
        base = submission(i)
        who = Actor("telegram", f"{tag}-{i % 50}", tag)
        new = NewSubmission(base.measurement, who, base.created_at, base.chat_id, fingerprint=f"{tag}-{i}")
        outcome = await store.add_submission_checked(new, T0 + timedelta(days=3650), 1_000_000)
        if outcome.result == "stored" and outcome.submission is not None:
            print(f"ack {outcome.submission.id} {tag}-{i}", flush=True)


def _spawn(address: str, schema: str | None, tag: str) -> subprocess.Popen[str]:
    command = [sys.executable, __file__, "--child", address, "--child-tag", tag]
    if schema:
        command += ["--child-schema", schema]
    return subprocess.Popen(command, stdout=subprocess.PIPE, text=True, bufsize=1)


def _acks(proc: subprocess.Popen[str], until: int, acked: dict[str, int]) -> None:
    """Read `until` acks (fewer if the child ends), recording fingerprint -> id."""
    assert proc.stdout is not None
    seen = 0
    for line in proc.stdout:
        parts = line.split()
        if parts[:1] == ["ack"]:
            acked[parts[2]] = int(parts[1])
            seen += 1
            if seen >= until:
                return


def kill_probe(address: str, schema: str | None, rounds: int, processes: int = 4) -> tuple[int, int, int]:
    """(acknowledged, lost, stored twice) after `rounds` SIGKILLs of random submitting processes."""
    rng = random.Random(24)
    acked: dict[str, int] = {}
    live = [_spawn(address, schema, f"p{n}") for n in range(processes)]
    for n in range(rounds):
        victim = rng.randrange(processes)
        _acks(live[victim], rng.randint(5, 80), acked)
        os.kill(live[victim].pid, signal.SIGKILL)
        rest, _ = live[victim].communicate()
        for line in rest.splitlines():  # acknowledged before the kill, still in the pipe
            parts = line.split()
            if parts[:1] == ["ack"]:
                acked[parts[2]] = int(parts[1])
        live[victim] = _spawn(address, schema, f"r{n}")
    for proc in live:
        proc.kill()
        rest, _ = proc.communicate()
        for line in rest.splitlines():
            parts = line.split()
            if parts[:1] == ["ack"]:
                acked[parts[2]] = int(parts[1])

    async def stored() -> list[str]:
        store = storage_at(address, schema)
        await store.open()
        try:
            return [s.fingerprint for s in await store.submissions()]
        finally:
            await store.close()

    fingerprints = asyncio.run(stored())
    present = set(fingerprints)
    lost = sum(1 for fp in acked if fp not in present)
    return len(acked), lost, len(fingerprints) - len(present)


def _kills(args: argparse.Namespace, backend: str) -> None:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            figures = kill_probe(str(Path(folder) / "kill.db"), None, args.kills)
    else:
        schema = f"tokbot_bench_{uuid.uuid4().hex[:8]}"
        try:
            figures = kill_probe(args.database_url, schema, args.kills)
        finally:
            asyncio.run(drop(args.database_url, schema))
    acked, lost, twice = figures
    print(
        f"SIGKILL x{args.kills} across 4 processes: {acked} acknowledged, {lost} lost, {twice} stored twice"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=0, help="run the kill probe with this many SIGKILLs")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--child-schema", help=argparse.SUPPRESS)
    parser.add_argument("--child-tag", help=argparse.SUPPRESS)
    parser.add_argument("--submissions", type=int, default=2000)
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--sends", type=int, default=2000)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    if args.child:
        asyncio.run(kill_child(args.child, args.child_schema, args.child_tag))
        return
    for backend in ("sqlite", "postgres") if args.backend == "both" else (args.backend,):
        print(f"--- {backend}")
        if args.kills:
            _kills(args, backend)
            continue
        if backend == "sqlite":
            with tempfile.TemporaryDirectory() as folder:
                store = storage_at(str(Path(folder) / "bench.db"))
                asyncio.run(bench(store, args.submissions, args.subscribers, args.sends))
            continue
        schema = f"tokbot_bench_{uuid.uuid4().hex[:8]}"
        try:
            asyncio.run(
                bench(storage_at(args.database_url, schema), args.submissions, args.subscribers, args.sends)
            )
        finally:
            asyncio.run(drop(args.database_url, schema))


if __name__ == "__main__":
    main()
