"""Child process of test_kill.py: writes to SqliteStorage in a loop and acknowledges each write on stdout
only after its await returned (= committed), until the parent SIGKILLs it.

    python tests/core/storage/kill_child.py DB_PATH

Protocol (one line each, flushed): "ready" once the subscriptions exist, then "ack sub <id>" after every
add_submission and "ack approve <id>" after every third one is approved.
"""

from __future__ import annotations

import asyncio
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[3]))

from core.storage.records import Actor, Measurement, NewSubmission, Subscription  # noqa: E402
from core.storage.sqlite import SqliteStorage  # noqa: E402

T0 = datetime(2026, 1, 1, tzinfo=UTC)
MOD = Actor("discord", "900", "mod")
SUBSCRIPTIONS = (
    Subscription("telegram", "u1", "chat-a"),  # everything
    Subscription("telegram", "u1", "chat-a", gpu_id="v100-32g"),  # overlaps: still one notice in chat-a
    Subscription("telegram", "u2", "chat-b", model_id="gemma-3-27b"),
    Subscription("discord", "u3", "chat-c", gpu_id="v100-32g", model_id="gemma-3-27b"),
    Subscription("discord", "u4", "chat-d", gpu_id="rtx-4090"),  # never matches
)
MAX_SECONDS = 60.0  # never outlive a parent that died before killing us


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main(path: str) -> None:
    store = SqliteStorage(path)
    await store.open()
    for sub in SUBSCRIPTIONS:
        await store.subscribe(sub)
    say("ready")
    started = time.monotonic()
    n = 0
    while time.monotonic() - started < MAX_SECONDS:
        at = T0 + timedelta(seconds=n)
        added = await store.add_submission(
            NewSubmission(
                measurement=Measurement("v100-32g", "gemma-3-27b", "Q4_K_M", 20.0 + n / 100),
                submitter=Actor("telegram", f"s{n % 7}", "tester"),
                created_at=at,
                chat_id=f"dm-{n % 7}",
            )
        )
        say(f"ack sub {added.id}")
        n += 1
        if n % 3 == 0:
            await store.approve(added.id, MOD, at)
            say(f"ack approve {added.id}")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
