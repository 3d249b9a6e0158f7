"""`python -m bot ask "V100 32G 27B 多少 token"`: the reply exactly as a chat would show it.

The question goes through the same command router as a chat message, with the measured anchors a
chat has: the published ones and, when the bot's database exists (TOKBOT_DB_PATH / --db, or
TOKBOT_DATABASE_URL), the approved community ones. Without a database nothing is created: the
published anchors are loaded into memory. The reply's buttons are listed as the console lists them
(`[!1 ...]`; pressing them is for `python -m bot console`).

With --json: {"status", "query", "candidates", "reply"} (see core.ask.answer.Reply.as_dict), with
the same anchors. The exit code is 0 for an answer, 1 when the bot asks back, shows help or reports
an error, 2 for a broken catalog or configuration.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TextIO

from bot.app import App
from core.catalog.loader import CatalogError
from core.commands.types import Response, Where
from core.storage.records import Actor

USER = "cli"


def _build(args: argparse.Namespace) -> App:
    from bot.app import build_app
    from bot.settings import load_settings
    from core.storage.memory import MemoryStorage

    overrides = {"db_path": Path(args.db)} if getattr(args, "db", None) else {}
    settings = load_settings(**overrides)
    # An existing database gives the community anchors; `ask` never creates one, and reads it without
    # taking its write lock (several `ask` processes, or a bot writing, never make it wait).
    has_database = settings.database_url is not None or settings.db_path.exists()
    if not has_database:
        return build_app(settings, storage=MemoryStorage())
    from bot.storage.select import storage_for

    return build_app(settings, storage=storage_for(settings, read_only=True))


async def _ask(args: argparse.Namespace, out: TextIO) -> int:
    from bot.cli.console import CAPABILITIES
    from bot.cli.console_buttons import ButtonBoard
    from core.commands import ask, feedback, model

    app = _build(args)
    try:
        # Started inside the `try`: a start that fails still closes the storage (its thread would
        # otherwise keep the process alive after the error).
        await app.start(read_only=True)
        question = " ".join(args.question)
        if args.json:
            # The same resolution as chat: a model the catalog doesn't hold is looked up (issue 9).
            reply = await model.answer_for(app.bot, question, args.lang, args.target)
            print(json.dumps(reply.as_dict(), ensure_ascii=False), file=out)
            return 0 if reply.status == "answer" else 1
        app.bot.platforms["console"] = CAPABILITIES
        actor, where = Actor("console", USER, USER), Where(USER, private=True)
        inv = app.router.parse(actor, where, f"/ask {question}", None, args.target)
        responses: list[Response]
        if args.lang:  # told the language: that one, whatever the question is written in
            responses = await ask.respond(app.bot, app.router.prepare(inv), question, args.lang)
        else:
            responses = await app.router.handle(inv)
        board = ButtonBoard()
        for response in responses:
            if response.text:
                print(response.text, file=out)
            for line in board.add(board.new_message(), response.buttons):
                print(line, file=out)
        return 0 if any(feedback.is_answer(r) for r in responses) else 1
    finally:
        await app.close()


def run_ask(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    from bot.settings import SettingsError

    try:
        return asyncio.run(_ask(args, out))
    except CatalogError as exc:
        print(f"catalog error: {exc}", file=sys.stderr)
        return 2
    except SettingsError as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
