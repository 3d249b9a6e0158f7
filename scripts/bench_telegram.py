"""Benchmark the Telegram adapter end to end against the fake Bot API on 127.0.0.1.

    .venv/bin/python scripts/bench_telegram.py [--questions 400] [--limited 120] [--sequential 30]

The real TelegramAdapter (python-telegram-bot, long polling, concurrent updates) answers questions
injected into the fake (tests/fakes/telegram_api.py), each from its own private chat:

Questions are six card + model pairs, each with its own context size (most computed afresh);
--repeat asks the six as they are, so answers come from the command layer's caches.

- sequential: one question at a time, idle bot: latency of one update (inject -> sendMessage received);
- burst, no rate limiter: N questions at once: what the adapter + command layer can do (questions/s,
  p50/p99 latency including queueing);
- burst, production rate limiter (AIORateLimiter, Telegram's ~30 messages/s): what users would see
  under a flood, capped by Telegram's limit rather than by tokbot;
- resident memory (VmRSS) after start and the peak (VmHWM), of this one process, which also runs the
  fake server and the load generator.
Prints figures only; nothing is asserted.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.app import App, build_app  # noqa: E402
from bot.settings import Settings  # noqa: E402
from bot.telegram import TelegramAdapter  # noqa: E402
from core.storage.sqlite import SqliteStorage  # noqa: E402
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402

QUESTIONS = (
    "V100 32G gemma 3 27b",
    "RTX 4090 llama 3 8b q4",
    "2x 3090 llama 3 70b q4 32k",
    "A100 80G qwen 2.5 72b",
    "4060 Ti 16G qwen3 14b",
    "双3090 跑 llama3 70b q4 速度",
)


def memory_mib() -> tuple[float, float]:
    """(VmRSS, VmHWM) of this process in MiB, from /proc (Linux)."""
    values = {}
    for line in Path("/proc/self/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


class Bench:
    def __init__(self, fake: FakeTelegram, repeat: bool):
        self.fake = fake
        self.repeat = repeat
        self.next_user = 10_000
        self.asked = 0

    def question(self) -> str:
        """Six questions over and over (--repeat: answers come from core's caches), or by default each
        with its own context size, so most are computed afresh as in a real group."""
        self.asked += 1
        base = QUESTIONS[self.asked % len(QUESTIONS)]
        return base if self.repeat else f"{base} {1 + (self.asked // len(QUESTIONS)) % 250}k"

    def inject(self, n: int) -> dict[int, int]:
        """n questions, each from a new user in their own private chat; returns chat id -> update id."""
        updates = {}
        for _ in range(n):
            self.next_user += 1
            user = self.fake.user(self.next_user, f"user{self.next_user}")
            update = self.fake.push(self.fake.build.message(user, self.question()))
            updates[self.next_user] = update["update_id"]
        return updates

    async def run(self, n: int, timeout: float) -> tuple[float, list[float]]:
        """Inject n at once; (seconds until the last reply, per-update latencies in ms)."""
        updates = self.inject(n)
        first = min(self.fake.injected_at[u] for u in updates.values())
        await self.fake.wait_for(lambda: self._answered(updates) >= n, timeout)
        replies: dict[int, float] = {}
        for call in self.fake.sent:
            if call.chat_id in updates and call.chat_id not in replies:
                replies[call.chat_id] = call.at
        latencies = [(replies[chat] - self.fake.injected_at[u]) * 1000 for chat, u in updates.items()]
        return max(replies.values()) - first, latencies

    def _answered(self, updates: dict[int, int]) -> int:
        return len({c.chat_id for c in self.fake.sent if c.chat_id in updates})


async def started(fake: FakeTelegram, app: App, rate_limit: bool) -> TelegramAdapter:
    adapter = TelegramAdapter(
        app,
        fake.token,
        base_url=fake.base_url,
        base_file_url=fake.file_url,
        rate_limit=rate_limit,
        poll_timeout=1,
    )
    await adapter.start()
    return adapter


def report(name: str, n: int, elapsed: float, latencies: list[float]) -> None:
    print(
        f"{name}: {n} questions in {elapsed:.2f} s = {n / elapsed:,.1f} questions/s; latency p50 "
        f"{percentile(latencies, 0.5):,.0f} ms, p99 {percentile(latencies, 0.99):,.0f} ms, "
        f"max {max(latencies):,.0f} ms"
    )


async def main(args: argparse.Namespace) -> None:
    logging.basicConfig(level=logging.WARNING)
    with tempfile.TemporaryDirectory() as tmp:
        fake = await FakeTelegram().start()
        settings = Settings(_env_file=None, db_path=Path(tmp) / "bench.db")  # type: ignore[call-arg]
        app = build_app(settings, storage=SqliteStorage(str(Path(tmp) / "bench.db")))
        await app.start()
        bench = Bench(fake, args.repeat)
        try:
            adapter = await started(fake, app, rate_limit=False)
            rss, _ = memory_mib()
            print(f"memory after start: {rss:,.0f} MiB resident (python + PTB + catalog + fake server)")
            await bench.run(len(QUESTIONS), 30)  # import and load everything once, as a running bot has

            latencies = []
            for _ in range(args.sequential):
                _, one = await bench.run(1, 30)
                latencies += one
            print(
                f"sequential (idle bot): {args.sequential} questions, latency p50 "
                f"{percentile(latencies, 0.5):,.1f} ms, p99 {percentile(latencies, 0.99):,.1f} ms"
            )

            elapsed, latencies = await bench.run(args.questions, 600)
            report("burst, no rate limiter", args.questions, elapsed, latencies)
            await adapter.stop()

            if args.limited:
                adapter = await started(fake, app, rate_limit=True)
                elapsed, latencies = await bench.run(args.limited, 600)
                report("burst, AIORateLimiter (Telegram's 30/s)", args.limited, elapsed, latencies)
                await adapter.stop()
            rss, peak = memory_mib()
            print(f"memory at the end: {rss:,.0f} MiB resident, peak {peak:,.0f} MiB")
        finally:
            await app.close()
            await fake.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=400, help="burst size without the rate limiter")
    parser.add_argument("--limited", type=int, default=120, help="burst size with the rate limiter (0: skip)")
    parser.add_argument("--sequential", type=int, default=30, help="one-at-a-time questions for idle latency")
    parser.add_argument("--repeat", action="store_true", help="repeat six questions (cached answers)")
    started_at = time.perf_counter()
    asyncio.run(main(parser.parse_args()))
    print(f"(bench took {time.perf_counter() - started_at:.1f} s)")
