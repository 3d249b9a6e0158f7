"""`python -m bot console [--user NAME] [--db PATH]`: the whole bot in a terminal.

One line is one message, exactly as a chat would send it: `/submit ...`, `/review`, a plain
question. Piped input (not a terminal) is read to the end, one reply printed per line, so a whole
flow can be scripted over one database by several users in turn. Each console user is their own
private chat: notices for them (a decision on their submission, a new anchor they subscribed to)
wait in the outbox and are shown when that user next starts the console, or at once if they are
the one at the keyboard.

Buttons are printed as `[!1 Approve]`; typing `!1` presses it. A prompt (the reason for a
rejection) takes the next line as its answer (the router keeps that, as for every platform). A
line ending in a backslash continues on the next
one, so pasted tool output (`/submit \` then the llama-bench table, each line ending in `\`) is
one message, as it would be in a chat.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import TextIO

from bot.app import App, build_app
from bot.settings import load_settings
from core.commands.types import Button, Invocation, PlatformCapabilities, Response, Where
from core.i18n import Lang, is_lang, translate
from core.records import Actor
from core.render.notices import notice_text

PROMPT = "tokbot> "
QUIT = {"/quit", "/exit"}
# Each console user is their own private chat, and their notices wait for them there.
CAPABILITIES = PlatformCapabilities(ephemeral=False, unprompted_dm=True, private_address="{user_id}")


class Console:
    actor_platform = "console"

    def __init__(self, app: App, user: str, out: TextIO, files_dir: Path):
        self.app = app
        app.bot.platforms[self.actor_platform] = CAPABILITIES
        self.actor = Actor(self.actor_platform, user, user)
        self.where = Where(chat_id=user, private=True)
        self.out = out
        self.files_dir = files_dir
        self.buttons: list[Button] = []
        self.files_written = 0
        self.continued: list[str] = []  # lines of a message that ended in a backslash

    def say(self, text: str) -> None:
        print(text, file=self.out, flush=True)

    async def show_notices(self, header: bool) -> int:
        """Deliver this user's waiting notices here (the console is their private chat)."""
        storage, now = self.app.storage, self.app.bot.clock()
        items = await storage.claim_outbox("console", now, 1000, chat_id=self.actor.user_id)
        if not items:
            return 0
        if header:
            lang: Lang = items[0].lang if is_lang(items[0].lang) else "en"
            self.say(translate("console.notices", lang, n=len(items)))
        for item in items:
            self.say(f"* {notice_text(item, self.app.catalog)}")
            await self.app.storage.mark_sent(item.id, self.app.bot.clock())
        return len(items)

    async def line(self, raw: str) -> bool:
        """Handle one input line; False means quit."""
        stripped = raw.rstrip("\r\n")
        if stripped.endswith("\\"):
            self.continued.append(stripped[:-1])
            return True
        if self.continued:
            stripped = "\n".join([*self.continued, stripped])
            self.continued = []
        text = stripped.strip()
        if text in QUIT:
            return False
        if not text:
            return True
        if text.startswith("!") and text[1:].isdigit():
            index = int(text[1:]) - 1
            if not 0 <= index < len(self.buttons):
                self.say(f"no button {text}")
                return True
            action = self.buttons[index].action
            inv = Invocation(self.actor, self.where, "", action)
            responses = await self.app.router.handle_action(inv)
        else:
            responses = await self.app.router.handle_text(self.actor, self.where, text)
        self.buttons = []
        for response in responses:
            self.show(response)
        await self.show_notices(header=False)
        return True

    def show(self, response: Response) -> None:
        if response.text:
            self.say(response.text)
        for row in response.buttons:
            labels = []
            for button in row:
                self.buttons.append(button)
                labels.append(f"[!{len(self.buttons)} {button.label}]")
            self.say(" ".join(labels))
        for name, data in self._files(response):
            path = self.files_dir / name
            path.write_bytes(data)
            self.say(f"(wrote {path})")

    def _files(self, response: Response) -> list[tuple[str, bytes]]:
        files = []
        if response.attachment is not None:
            files.append((response.attachment.filename, response.attachment.data))
        if response.photo is not None:
            self.files_written += 1
            files.append((f"tokbot-chart-{self.files_written}.png", response.photo))
        return files


def _tolerant(stdin: TextIO) -> TextIO:
    """stdin that reads a byte it can't decode as U+FFFD instead of raising: one bad byte (a strict
    PYTHONIOENCODING, a pasted binary) must get an answer, not end the console with a traceback."""
    reconfigure = getattr(stdin, "reconfigure", None)
    if reconfigure is not None:
        reconfigure(errors="replace")
    return stdin


async def _run(args: argparse.Namespace, stdin: TextIO, out: TextIO) -> int:
    stdin = _tolerant(stdin)
    overrides = {"db_path": Path(args.db)} if getattr(args, "db", None) else {}
    settings = load_settings(**overrides)
    app = build_app(settings)
    await app.start()
    try:
        console = Console(app, args.user, out, Path.cwd())
        interactive = stdin.isatty()
        if interactive:
            out.write(f"tokbot console ({args.user}, {settings.db_path}): /help lists commands, /quit ends\n")
        await console.show_notices(header=True)
        loop = asyncio.get_running_loop()
        while True:
            if interactive:
                print(PROMPT, end="", file=out, flush=True)
            raw = await loop.run_in_executor(None, stdin.readline) if interactive else stdin.readline()
            if not raw or not await console.line(raw):
                return 0
    finally:
        await app.close()


def run_console(args: argparse.Namespace, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    from bot.settings import SettingsError

    try:
        return asyncio.run(_run(args, stdin or sys.stdin, out or sys.stdout))
    except SettingsError as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
