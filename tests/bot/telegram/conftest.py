"""Fixtures for the Telegram adapter: an App over real storage, and the adapter two ways —
in-process (PTB's transport seam, updates fed to process_update) and polled over HTTP from the fake
Bot API on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from telegram import Update

from bot.app import App, build_app
from bot.settings import Settings
from bot.telegram import TelegramAdapter
from core.storage.memory import MemoryStorage
from core.storage.sqlite import SqliteStorage
from tests.fakes.telegram_api import FakeTelegram

MODERATOR = 900
QUESTION = "V100 32G gemma 3 27b"
SUBMISSION = '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode=21.5'


def settings(tmp_path: Path, **overrides: Any) -> Settings:
    return Settings(
        _env_file=None, moderators=f"telegram:{MODERATOR}", db_path=tmp_path / "t.db", **overrides
    )  # type: ignore[call-arg]


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    application = build_app(settings(tmp_path), storage=MemoryStorage())
    await application.start()
    yield application
    await application.close()


class Harness:
    """The adapter with PTB's transport replaced by the fake in process: no sockets, no polling."""

    def __init__(self, app: App):
        self.app = app
        self.fake = FakeTelegram()
        self.adapter = TelegramAdapter(app, self.fake.token, request=self.fake.request(), rate_limit=False)

    async def feed(self, update: dict[str, Any]) -> dict[str, Any]:
        self.fake.register(update)
        ptb = self.adapter.application
        await ptb.process_update(Update.de_json(update, ptb.bot))
        return update

    async def say(
        self,
        user: dict[str, Any],
        text: str,
        chat: dict[str, Any] | None = None,
        reply_to: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Send a message; returns the message dict (to reply to it)."""
        return (await self.feed(self.fake.build.message(user, text, chat, reply_to)))["message"]

    async def press(self, user: dict[str, Any], message: dict[str, Any], data: str) -> None:
        await self.feed(self.fake.build.callback(user, message, data))

    def new(self, since: int) -> list:
        return self.fake.calls[since:]


@pytest.fixture
async def tg(app: App) -> AsyncIterator[Harness]:
    harness = Harness(app)
    await harness.adapter.start()
    yield harness
    await harness.adapter.stop()


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    server = await FakeTelegram().start()
    yield server
    await server.stop()


@pytest.fixture
async def live(fake: FakeTelegram, tmp_path: Path) -> AsyncIterator[tuple[App, TelegramAdapter]]:
    """The real stack: settings pointing at the fake, SQLite storage, the adapter polling over HTTP."""
    conf = settings(
        tmp_path, telegram_token=fake.token, telegram_api_url=fake.base_url, telegram_file_url=fake.file_url
    )
    application = build_app(conf, storage=SqliteStorage(str(tmp_path / "t.db")))
    await application.start()
    assert conf.telegram_token is not None
    token = conf.telegram_token.get_secret_value()
    adapter = TelegramAdapter(
        application,
        token,
        base_url=conf.telegram_api_url,
        base_file_url=conf.telegram_file_url,
        poll_timeout=1,
    )
    await adapter.start()
    yield application, adapter
    await adapter.stop()
    await application.close()
