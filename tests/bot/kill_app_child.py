"""Child process of test_kill_app.py: the real app on SQLite, a stream of submissions and approvals,
a notification worker delivering at the same time. Prints "begin approve ID" just before an approval
and "begin deliver" just before a notice is written, so the parent can land its SIGKILL inside one;
"ack ..." only after a command returned; each delivered notice is appended to a file, so the parent
knows what was acknowledged and sent when it killed this process."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from bot.app import build_app
from bot.settings import Settings
from core.commands.types import Where
from core.community.delivery import Delivery
from core.storage.records import Actor


class FileNotifier:
    platform = "console"
    per_second = 0.0

    def __init__(self, path: Path):
        self.file = path.open("a", buffering=1)

    async def deliver(self, chat_id: str, text: str) -> Delivery:
        print("begin deliver", flush=True)
        await asyncio.sleep(0.002)  # a platform call takes a while: the kill may land inside it
        self.file.write(f"{chat_id}\t{text}\n")
        return Delivery("sent")


async def main(db: str, delivered: str) -> None:
    app = build_app(Settings(db_path=Path(db), moderators="console:bob", submissions_per_hour=1000))
    await app.start()
    app.add_notifier(FileNotifier(Path(delivered)))
    stop = asyncio.Event()
    worker = asyncio.create_task(app.worker.run(stop))
    router = app.router
    for name in ("carol", "dave"):
        await router.handle_text(Actor("console", name, name), Where(name), "/subscribe all")
    print("ready", flush=True)
    i = 0
    while True:
        i += 1
        user = f"user{i % 40}"
        line = f'/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M ctx=4096 decode={100 + i * 0.1:.1f}'
        [r] = await router.handle_text(Actor("console", user, user), Where(user), line)
        sid = int(r.text.split("Received as #")[1].split(":")[0])
        print(f"ack sub {sid}", flush=True)
        if i % 3 == 0:
            print(f"begin approve {sid} {user}", flush=True)
            [r] = await router.handle_text(Actor("console", "bob", "bob"), Where("bob"), f"/approve {sid}")
            assert "Approved" in r.text, r.text
            print(f"ack approve {sid} {user}", flush=True)
        await asyncio.sleep(0)
    await worker  # never reached: the parent kills us


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
