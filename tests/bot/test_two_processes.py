"""Two `python -m bot run` processes on ONE PostgreSQL database (issue 12): each polls its own fake
Telegram bot on 127.0.0.1 (two bots, one database, as a bot split across processes would be), and
both answer and deliver.

- The rate limit and the duplicate rule hold across the processes: one user's burst through both
  bots stores exactly the hourly limit, each measurement once.
- Notices are delivered exactly once in the normal case, whichever process's worker claims them
  (the outbox is claimed with FOR UPDATE SKIP LOCKED).
- SIGKILL one process mid-delivery: everything it had not sent is delivered by the other; what it
  had leased is sent after the lease runs out (here: by a worker whose clock is past the lease), so
  every subscriber gets each notice at least once, and only the dead process's lease may repeat.

Skipped without a PostgreSQL server (see tests/core/storage/postgres_server.py).
"""

from __future__ import annotations

import asyncio
import os
import re
import signal
import sys
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import timedelta
from pathlib import Path

import pytest

from bot.app import build_app
from bot.settings import Settings
from tests.core.storage.postgres_server import drop_schema, migrated_schema, need_server, new_schema
from tests.fakes.notifier import RecordingNotifier
from tests.fakes.telegram_api import FakeTelegram

pytestmark = pytest.mark.skipif(os.name != "posix", reason="SIGKILL is POSIX")

ROOT = Path(__file__).resolve().parents[2]
CHILD = Path(__file__).with_name("bot_run_child.py")
READ_BUDGET_S = 120.0
MODERATOR = 9000
ALICE = 1001
SUBSCRIBERS = [2000 + i for i in range(30)]
LIMIT = 10
_ANCHOR = re.compile(r"New measured anchor #(\d+)")
_RECEIVED = re.compile(r"Received as #(\d+)")


def _submit_line(decode: float) -> str:
    return f'/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode={decode:.1f}'


@asynccontextmanager
async def bot_process(
    fake: FakeTelegram, url: str, schema: str, log: Path
) -> AsyncIterator[asyncio.subprocess.Process]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKBOT_")} | {
        "PYTHONPATH": str(ROOT),
        "TOKBOT_TELEGRAM_TOKEN": fake.token,
        "TOKBOT_TELEGRAM_API_URL": fake.base_url,
        "TOKBOT_TELEGRAM_FILE_URL": fake.file_url,
        "TOKBOT_DATABASE_URL": url,
        "TOKBOT_DATABASE_SCHEMA": schema,
        "TOKBOT_MODERATORS": f"telegram:{MODERATOR}",
        "TOKBOT_SUBMISSIONS_PER_HOUR": str(LIMIT),
        "TOKBOT_METRICS_PORT": "0",
    }
    with log.open("wb") as log_file:
        # `bot run` with a /submit read budget that a busy machine can't pass (the burst below queues
        # 16 reads per process on two reader threads; the shipped 2 s counts the queueing too).
        proc = await asyncio.create_subprocess_exec(
            sys.executable, str(CHILD), str(READ_BUDGET_S), "run", cwd=log.parent, env=env,
            stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.DEVNULL, stderr=log_file,
        )  # fmt: skip
    try:
        yield proc
    finally:
        if proc.returncode is None:
            proc.kill()
        await proc.wait()


def anchor_notices(*fakes: FakeTelegram) -> Counter[tuple[int, int]]:
    """(chat, anchor id) -> how many times it was sent, over every fake bot."""
    seen: Counter[tuple[int, int]] = Counter()
    for fake in fakes:
        for call in fake.sent:
            match = _ANCHOR.search(call.text)
            if match:
                seen[(int(call.chat_id), int(match.group(1)))] += 1
    return seen


async def wait_until(predicate, timeout: float = 60.0) -> None:  # noqa: ANN001
    deadline = asyncio.get_running_loop().time() + timeout
    while not predicate():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.05)


async def test_two_processes_one_database(tmp_path: Path) -> None:
    url = need_server()
    schema = new_schema()
    await migrated_schema(url, schema)
    one = await FakeTelegram(token="111111111:" + "A" * 35).start()
    two = await FakeTelegram(token="222222222:" + "B" * 35).start()
    try:
        async with (
            bot_process(one, url, schema, tmp_path / "one.log") as proc_one,
            bot_process(two, url, schema, tmp_path / "two.log") as proc_two,
        ):
            # Updates queue in the fakes until each bot polls (getMe, setMyCommands, then getUpdates).
            await one.wait_calls("setMyCommands", timeout=60)
            await two.wait_calls("setMyCommands", timeout=60)
            for i, user_id in enumerate(SUBSCRIBERS):  # half subscribe through each bot
                fake = one if i % 2 else two
                fake.message(fake.user(user_id, f"sub{user_id}"), "/subscribe all")
            await wait_until(lambda: sum(len(f.sent_to(u)) for u in SUBSCRIBERS for f in (one, two)) >= 30)

            # One user's burst through both bots at once: 24 distinct measurements and 8 copies of one.
            for i in range(32):
                fake = one if i % 2 else two
                decode = 30.0 if i % 4 == 0 else 10.0 + i
                fake.message(fake.user(ALICE, "Alice"), _submit_line(decode))
            await wait_until(lambda: len(one.sent_to(ALICE)) + len(two.sent_to(ALICE)) >= 32)
            replies = [c.text for f in (one, two) for c in f.sent_to(ALICE)]
            stored = sorted({int(m.group(1)) for t in replies if (m := _RECEIVED.search(t))})
            assert len(stored) == LIMIT, replies
            limited = sum("please wait" in t for t in replies)
            duplicates = sum("Already have this one" in t for t in replies)
            assert limited + duplicates == 32 - LIMIT and duplicates <= 7, replies

            # Normal case: approvals through both bots, notices sent exactly once over both processes.
            moderator_one, moderator_two = one.user(MODERATOR, "Mod"), two.user(MODERATOR, "Mod")
            for sid in stored[:2]:
                one.message(moderator_one, f"/approve {sid}")
                two.message(moderator_two, f"/approve {sid}")  # the second one finds it approved
            await wait_until(lambda: len(anchor_notices(one, two)) >= 2 * len(SUBSCRIBERS))
            await asyncio.sleep(1.0)  # anything sent twice would show up by now
            normal = anchor_notices(one, two)
            assert set(normal) == {(u, sid) for u in SUBSCRIBERS for sid in stored[:2]}
            assert set(normal.values()) == {1}, "exactly once across two processes"

            # Crash: approve the rest, kill process two while notices are going out.
            for sid in stored[2:]:
                two.message(moderator_two, f"/approve {sid}")
            expected = {(u, sid) for u in SUBSCRIBERS for sid in stored}
            await wait_until(lambda: len(anchor_notices(one, two)) >= len(normal) + 20)
            proc_two.send_signal(signal.SIGKILL)
            await proc_two.wait()
            at_kill = len(anchor_notices(one, two))
            assert at_kill < len(expected), "killed mid-delivery, not after it"
            assert proc_two.returncode == -signal.SIGKILL
            # Process one sends everything that is not leased by the dead one, then goes quiet.
            settled = -1
            while settled != len(anchor_notices(one, two)):
                settled = len(anchor_notices(one, two))
                await asyncio.sleep(2.0)
            assert settled > at_kill, "the surviving process delivered what the dead one had not leased"
            proc_one.send_signal(signal.SIGTERM)
            assert await asyncio.wait_for(proc_one.wait(), 30) == 0

        # What the dead process had leased is due once its lease runs out.
        app = build_app(Settings(_env_file=None, database_url=url, database_schema=schema))  # type: ignore[call-arg]
        await app.start()
        recorder = RecordingNotifier("telegram")
        app.add_notifier(recorder)
        app.worker.clock = lambda: app.bot.clock() + timedelta(minutes=10)
        await app.worker.run_once()
        pending = (await app.storage.outbox_stats()).pending
        await app.close()
        assert pending == 0
        after: Counter[tuple[int, int]] = Counter()
        for chat, text in recorder.sent:
            match = _ANCHOR.search(text)
            if match:
                after[(int(chat), int(match.group(1)))] += 1
        everything = anchor_notices(one, two) + after
        assert set(everything) == expected, "every subscriber got every notice at least once"
        repeated = [k for k, n in everything.items() if n > 1]
        assert len(repeated) <= 100, "only what the killed process had leased (one batch) may repeat"
    finally:
        await one.stop()
        await two.stop()
        await drop_schema(url, schema)
