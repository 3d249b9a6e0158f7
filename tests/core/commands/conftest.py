from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from bot.discord.capabilities import CAPABILITIES as DISCORD
from bot.telegram.capabilities import CAPABILITIES as TELEGRAM
from core.anchors.anchor_index import AnchorIndex
from core.catalog.loader import default_catalog
from core.commands.context import BotContext, BotLimits
from core.commands.router import CommandRouter
from core.commands.types import Where
from core.community.moderators import ModeratorPolicy
from core.storage.memory import MemoryStorage
from core.storage.records import Actor


class Clock:
    """A clock the test moves by hand (rate limits, dialogue expiry, outbox backoff)."""

    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **kw: float) -> None:
        self.now += timedelta(**kw)


class Harness:
    def __init__(self) -> None:
        self.catalog = default_catalog()
        self.storage = MemoryStorage()
        self.clock = Clock()
        self.observed: list[tuple[str, str, str, float]] = []
        self.bot = BotContext(
            catalog=self.catalog, storage=self.storage,
            moderators=ModeratorPolicy.parse("console:bob,telegram:900", discord_roles="777"),
            limits=BotLimits.from_catalog(self.catalog), clock=self.clock,
            anchors=AnchorIndex.from_submissions([], self.catalog),
            observe=lambda *a: self.observed.append(a),
            platforms={"discord": DISCORD, "telegram": TELEGRAM},
        )  # fmt: skip
        self.router = CommandRouter(self.bot)

    async def say(
        self,
        user: str,
        text: str,
        platform: str = "console",
        private: bool = True,
        chat: str | None = None,
        roles: tuple[str, ...] = (),
    ):
        actor = Actor(platform, user, user.title(), roles)
        return await self.router.handle_text(actor, Where(chat or user, private), text)

    async def press(self, user: str, action: str, platform: str = "console", chat: str | None = None):
        from core.commands.types import Invocation

        actor = Actor(platform, user, user.title())
        return await self.router.handle_action(Invocation(actor, Where(chat or user, True), "", action))


@pytest.fixture
async def h() -> Harness:
    harness = Harness()
    await harness.storage.open()
    return harness
