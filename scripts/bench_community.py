"""Community figures for the closing note, per storage backend: submissions accepted per second
through the command layer, a concurrent burst from one user against the hourly limit, and
notification fan-out to 10,000 subscribers (approve time, delivery time, and that each subscriber got
exactly one notice).

    .venv/bin/python scripts/bench_community.py [--submissions 1000] [--subscribers 10000]
        [--backend sqlite|postgres|both] [--database-url postgresql://postgres@127.0.0.1:5432/test]

PostgreSQL runs in a schema of its own, dropped at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import replace
from pathlib import Path

import asyncpg
from pydantic import SecretStr

from bot.app import build_app
from bot.settings import Settings
from core.commands.types import Where
from core.community.delivery import Delivery
from core.storage.records import Actor, Subscription


class Counting:
    # A platform name with no pacing in catalogs/community.toml: this measures our side only; the
    # real Telegram pacing is reported separately.
    platform = "bench"
    per_second = 0.0

    def __init__(self) -> None:
        self.chats: Counter[str] = Counter()

    async def deliver(self, chat_id: str, text: str) -> Delivery:
        self.chats[chat_id] += 1
        return Delivery("sent")


async def burst(router, limit: int, size: int = 40) -> tuple[int, int]:  # noqa: ANN001
    """`size` concurrent /submit from one user, a quarter of them the same measurement (issue 13):
    how many were stored, against `limit`."""
    who = Actor("console", "burster", "burster")
    lines = [
        f'/submit gpu=3090 model="qwen3 8b" quant=Q4_K_M ctx=4096 decode={70 + (0 if i % 4 == 0 else i):.1f}'
        for i in range(size)
    ]
    replies = await asyncio.gather(*(router.handle_text(who, Where("burster"), line) for line in lines))
    stored = sum("Received as #" in r.text for [r] in replies)
    return stored, limit


async def bench(submissions: int, subscribers: int, backend: str, database_url: str) -> None:
    schema = f"tokbot_bench_{uuid.uuid4().hex[:8]}"
    with tempfile.TemporaryDirectory() as tmp:
        settings = Settings(
            db_path=Path(tmp) / "bench.db", moderators="console:bob", submissions_per_hour=1000
        )
        if backend == "postgres":
            settings = settings.model_copy(
                update={"database_url": SecretStr(database_url), "database_schema": schema}
            )
        app = build_app(settings)
        try:
            await app.start()
            print(f"--- {backend}: {settings.database_label()}")
            await _measure(app, submissions, subscribers)
        finally:
            await app.close()
            if backend == "postgres":
                con = await asyncpg.connect(database_url)
                await con.execute(f'DROP SCHEMA IF EXISTS "{schema}" CASCADE')
                await con.close()


async def _measure(app, submissions: int, subscribers: int) -> None:  # noqa: ANN001
    router = app.router
    ids = []
    t0 = time.perf_counter()
    for i in range(submissions):
        user = f"user{i % 200}"
        line = f'/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M ctx=4096 decode={90 + i * 0.01:.2f}'
        [r] = await router.handle_text(Actor("console", user, user), Where(user), line)
        ids.append(int(r.text.split("Received as #")[1].split(":")[0]))
    dt = time.perf_counter() - t0
    print(
        f"submissions through the command layer (parse, validate, estimate, dedupe, store): "
        f"{submissions} in {dt:.2f} s = {submissions / dt:.0f}/s "
        f"({dt / submissions * 1000:.2f} ms each)"
    )

    for i in range(subscribers):
        await app.storage.subscribe(Subscription("bench", str(10_000 + i), str(10_000 + i), lang="en"))
    t0 = time.perf_counter()
    [r] = await router.handle_text(Actor("console", "bob", "bob"), Where("bob"), f"/approve {ids[0]}")
    approve = time.perf_counter() - t0
    assert "Approved" in r.text
    notifier = Counting()
    app.add_notifier(notifier)
    t0 = time.perf_counter()
    handled = await app.worker.run_once("bench")
    deliver = time.perf_counter() - t0
    exactly_once = len(notifier.chats) == subscribers and set(notifier.chats.values()) == {1}
    again = await app.worker.run_once("bench")
    print(
        f"approve with {subscribers} subscribers (status + audit + outbox rows, one transaction): "
        f"{approve * 1000:.0f} ms"
    )
    print(
        f"fan-out delivery of {handled} notices by the worker (claim, render, send, mark): "
        f"{deliver:.2f} s = {handled / deliver:.0f}/s; each subscriber exactly one: {exactly_once}; "
        f"second run sent {again}"
    )
    rate = app.worker.settings.per_second.get("telegram", 25.0)
    minutes = subscribers / rate / 60
    print(f"with Telegram's pacing ({rate:g}/s) the same fan-out takes ~{minutes:.1f} min")
    app.bot.limits = replace(app.bot.limits, submissions_per_hour=10)
    stored, limit = await burst(router, 10)
    print(f"burst of 40 concurrent /submit from one user (10 identical): {stored} stored, limit {limit}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--submissions", type=int, default=1000)
    parser.add_argument("--subscribers", type=int, default=10_000)
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="sqlite")
    parser.add_argument("--database-url", default="postgresql://postgres@127.0.0.1:5432/test")
    args = parser.parse_args()
    for backend in ("sqlite", "postgres") if args.backend == "both" else (args.backend,):
        asyncio.run(bench(args.submissions, args.subscribers, backend, args.database_url))


if __name__ == "__main__":
    main()
