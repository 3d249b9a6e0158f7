"""`python -m bot console [--user NAME] [--db PATH]`: the whole bot in a terminal.

One line is one message, exactly as a chat would send it: `/submit ...`, `/review`, a plain
question. Piped input (not a terminal) is read to the end, one reply printed per line, so a whole
flow can be scripted over one database by several users in turn. Each console user is their own
private chat: notices for them (a decision on their submission, a new anchor they subscribed to)
wait in the outbox and are shown when that user next starts the console, or at once if they are
the one at the keyboard.

Buttons are printed as `[!1 Approve]`; typing `!1` presses it. Every message keeps its buttons (an
answer's others after one is pressed, the other /review cards after one is decided); a message that
is replaced (a decided card) loses them. A prompt (the reason for a rejection) takes the next line as
its answer (the router keeps that, as for every platform). A pasted block (a llama-bench table, a
log) is one message, as it would be in a chat: see bot.cli.console_input. Charts and exports are
written to bot.cli.out_dir (a temporary folder), never the working directory.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path
from typing import TextIO

from bot.app import App, build_app
from bot.cli.console_buttons import ButtonBoard
from bot.cli.console_input import BRACKETED_PASTE_OFF, BRACKETED_PASTE_ON, PipedMessages, TerminalMessages
from bot.cli.out_dir import output_dir
from bot.settings import load_settings
from core.commands.types import Invocation, PlatformCapabilities, Response, Where
from core.i18n import Lang, is_lang, translate
from core.render.notices import notice_text
from core.storage.records import Actor

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
        self.session = f"{os.getpid()}"
        self.buttons = ButtonBoard()
        self.files_written = 0
        # The message whose button asked a question (a rejection's reason): the answer replaces it.
        self.prompted_from: int | None = None

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
        """Handle one message (a line, or a pasted block); False means quit."""
        text = raw.strip()
        if text in QUIT:
            return False
        if not text:
            return True
        message: int | None
        if text.startswith("!") and text[1:].isdigit():
            pressed = self.buttons.press(int(text[1:]))
            if pressed is None:
                self.say(f"no button {text}")
                return True
            message, button = pressed
            inv = Invocation(self.actor, self.where, "", button.action)
            responses = await self.app.router.handle_action(inv)
        else:
            # A line answering a button's question (not a command: that drops the question) edits
            # the message the button was on, as a chat's modal answer does.
            message = self.prompted_from if not text.startswith("/") else None
            responses = await self.app.router.handle_text(self.actor, self.where, text)
        self.prompted_from = None
        for response in responses:
            self.show(response, replaces=message if response.edit else None)
            if response.prompt is not None and message is not None:
                self.prompted_from = message
        await self.show_notices(header=False)
        return True

    def show(self, response: Response, replaces: int | None = None) -> None:
        """Print a response; `replaces` is the message it replaces (whose buttons go with it)."""
        if replaces is not None:
            self.buttons.retire(replaces)
        if response.text:
            self.say(response.text)
        message = replaces if replaces is not None else self.buttons.new_message()
        for printed in self.buttons.add(message, response.buttons):
            self.say(printed)
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
            # Numbered per session and stamped, so two consoles never overwrite each other's charts.
            files.append((f"tokbot-chart-{self.session}-{self.files_written}.png", response.photo))
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
        console = Console(app, args.user, out, output_dir())
        interactive = stdin.isatty()
        if interactive:
            out.write(f"tokbot console ({args.user}, {settings.db_path}): /help lists commands, /quit ends\n")
        await console.show_notices(header=True)
        if interactive:
            await _converse(console, TerminalMessages(stdin), out)
        else:
            piped = PipedMessages(stdin)
            while (message := piped.read()) is not None and await console.line(message):
                pass
        return 0
    finally:
        await app.close()


async def _converse(console: Console, messages: TerminalMessages, out: TextIO) -> None:
    """The terminal's loop: the prompt, then a message (a line or a pasted block) read off the event
    loop. Bracketed paste is switched on meanwhile, so a terminal that has it marks a paste exactly."""
    loop = asyncio.get_running_loop()
    print(BRACKETED_PASTE_ON, end="", file=out, flush=True)
    try:
        while True:
            print(PROMPT, end="", file=out, flush=True)
            message = await loop.run_in_executor(None, messages.read)
            if message is None or not await console.line(message):
                return
    finally:
        print(BRACKETED_PASTE_OFF, end="", file=out, flush=True)


def run_console(args: argparse.Namespace, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    from bot.settings import SettingsError

    try:
        return asyncio.run(_run(args, stdin or sys.stdin, out or sys.stdout))
    except SettingsError as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
