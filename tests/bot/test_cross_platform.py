"""One bot on both platforms: the same command set, and one moderation queue — a submission made on
Telegram is approved on Discord and the submitter is told on Telegram, a Discord subscriber by DM."""

from __future__ import annotations

import re
from pathlib import Path
from unittest.mock import AsyncMock, MagicMock

import discord
import pytest
from telegram.ext import CommandHandler

from bot.app import build_app
from bot.discord.adapter import DiscordAdapter
from bot.discord.commands import build_commands
from bot.settings import Settings
from bot.telegram import TelegramAdapter
from core.catalog.loader import default_catalog
from core.commands.registry import COMMANDS, SPECS
from core.commands.spec import Arg, ArgKind
from core.commands.types import ArgValue, Invocation
from core.storage.sqlite import SqliteStorage
from tests.fakes.discord_api import FakeDiscord, point_discord_py_at
from tests.fakes.telegram_api import FakeTelegram

DISCORD_TOKEN = "MTAxMjM0NTY3ODkwMTIzNDU2Nzg5.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
TG_ALICE, DC_BOB, DC_CAROL = 1001, 202, 203


def test_both_adapters_expose_the_same_commands_and_none_shadows_another():
    discord_names = [c.name for c in build_commands()]
    assert sorted(discord_names) == sorted(COMMANDS) and len(set(discord_names)) == len(discord_names)
    assert len(set(COMMANDS)) == len(COMMANDS)
    assert all(re.fullmatch(r"[a-z]{2,32}", name) for name in COMMANDS), "valid on both platforms"
    # No command is a prefix-free duplicate of another once the platforms normalise case.
    assert len({n.lower() for n in COMMANDS}) == len(COMMANDS)


# A value per argument kind, as a typed platform sends it and as a person types it.
_SAMPLES = {
    ArgKind.ID: (7, "7"),
    ArgKind.NUMBER: (21.5, "21.5"),
    ArgKind.WORD: ("csv", "csv"),
    ArgKind.COMMAND: ("submit", "submit"),
}


def _sample(arg: Arg) -> tuple[ArgValue, str]:
    return _SAMPLES.get(arg.kind, ("V100 32G gemma 3 27b", "V100 32G gemma 3 27b"))


def test_every_declared_command_has_the_same_arguments_on_discord_and_in_text():
    """Discord's slash options are the declaration's arguments (names, required, types); a console or
    Telegram line with the same values reads to the same typed arguments."""
    from core.commands.context import BotContext, BotLimits
    from core.commands.router import CommandRouter
    from core.commands.types import Where
    from core.community.moderators import ModeratorPolicy
    from core.storage.memory import MemoryStorage
    from core.storage.records import Actor

    catalog = default_catalog()
    router = CommandRouter(BotContext(catalog, MemoryStorage(), ModeratorPolicy.parse(""), BotLimits()))
    by_name = {c.name: c for c in build_commands()}
    assert tuple(by_name) == COMMANDS
    for spec in SPECS:
        options = {p.name: p for p in by_name[spec.name].parameters}
        assert list(options) == [a.name for a in sorted(spec.args, key=lambda a: not a.required)], spec.name
        for arg in spec.args:
            assert options[arg.name].required == arg.required, (spec.name, arg.name)
            expected = {ArgKind.ID: "integer", ArgKind.NUMBER: "number"}.get(arg.kind, "string")
            assert options[arg.name].type.name == expected, (spec.name, arg.name)
        # Text: the non-typed-only arguments in order; each reads back as the typed value.
        text_args = [a for a in spec.args if not a.typed_only]
        typed = {a.name: _sample(a)[0] for a in text_args}
        line = " ".join(_sample(a)[1] for a in text_args)
        inv = router.prepare(router.parse(Actor("console", "u", "U"), Where("u"), f"/{spec.name} {line}"))
        assert dict(inv.args) == typed, spec.name


async def test_discord_options_reach_the_router_as_typed_arguments(tmp_path: Path):
    """No text rebuilt from options: what the slash command got is what the command reads."""
    app = build_app(Settings(_env_file=None, db_path=tmp_path / "t.db"))  # type: ignore[call-arg]
    adapter = DiscordAdapter(app, DISCORD_TOKEN)
    seen: list[Invocation] = []

    async def handle(inv: Invocation) -> list:
        seen.append(inv)
        return []

    app.router.handle = handle  # type: ignore[method-assign]
    interaction = MagicMock(spec=discord.Interaction)
    interaction.client = MagicMock(adapter=adapter)
    interaction.user = MagicMock(spec=discord.User, id=5, display_name="u5")
    interaction.channel_id, interaction.guild_id, interaction.locale = 1, 2, discord.Locale("en-US")
    interaction.type = discord.InteractionType.application_command
    interaction.response = MagicMock(defer=AsyncMock(), send_message=AsyncMock())
    interaction.delete_original_response = AsyncMock()
    submit = next(c for c in build_commands() if c.name == "submit")
    await submit.callback(interaction, gpu="RTX 4090", decode=128.0, notes='said "hi"')
    [inv] = seen
    assert inv.command == "submit" and inv.text == ""
    assert dict(inv.args) == {"gpu": "RTX 4090", "decode": 128.0, "notes": 'said "hi"'}


async def test_telegram_registers_every_command(tmp_path: Path):
    fake = FakeTelegram()
    app = build_app(Settings(_env_file=None, db_path=tmp_path / "t.db"))  # type: ignore[call-arg]
    await app.start()
    adapter = TelegramAdapter(app, fake.token, request=fake.request(), rate_limit=False)
    await adapter.start()
    try:
        handled: set[str] = set()
        for group in adapter.application.handlers.values():
            for handler in group:
                if isinstance(handler, CommandHandler):
                    handled |= set(handler.commands)
        assert set(COMMANDS) <= handled and handled - set(COMMANDS) == {"start"}
    finally:
        await adapter.stop()
        await app.close()


@pytest.fixture
async def both(tmp_path: Path, monkeypatch):
    tg = await FakeTelegram().start()
    dc = FakeDiscord()
    await dc.start()
    point_discord_py_at(dc, monkeypatch)
    settings = Settings(
        _env_file=None,
        telegram_token=tg.token,
        telegram_api_url=tg.base_url,
        telegram_file_url=tg.file_url,
        discord_token=DISCORD_TOKEN,
        moderators=f"discord:{DC_BOB}",
        db_path=tmp_path / "t.db",
    )  # type: ignore[call-arg]
    app = build_app(settings, storage=SqliteStorage(str(tmp_path / "t.db")))
    await app.start()
    telegram = TelegramAdapter(app, tg.token, base_url=tg.base_url, base_file_url=tg.file_url, poll_timeout=1)
    discord = DiscordAdapter(app, DISCORD_TOKEN, guild_ready_timeout=0.05)
    await telegram.start()
    await discord.start()
    yield app, tg, dc
    await telegram.stop()
    await discord.stop()
    await app.close()
    await tg.stop()
    await dc.close()


async def test_submitted_on_telegram_approved_on_discord_told_on_telegram(both):
    app, tg, dc = both
    sub = await dc.slash("subscribe", {"target": "Tesla V100 PCIe 32GB"}, user_id=DC_CAROL, user_name="carol")
    assert "Subscribed" in (await dc.answers(sub))[0].content

    alice = tg.user(TG_ALICE, "Alice")
    tg.message(alice, '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode=21.5')
    [received] = await tg.wait_sent(1, chat_id=TG_ALICE)
    sid = int(re.search(r"Received as #(\d+)", received.text).group(1))

    review = await dc.slash("review", user_id=DC_BOB)
    card = next(a for a in await dc.answers(review, 2) if f"m:a:{sid}" in a.custom_ids)
    assert "Alice" in card.content
    press = await dc.press(f"m:a:{sid}", dc.message(dc.channel_id, card.data), user_id=DC_BOB)
    assert f"Approved #{sid}" in (await dc.answers(press))[0].content

    assert await app.worker.run_once() == 2
    told = tg.sent_to(TG_ALICE)[-1].text
    assert f"Your measurement #{sid} was approved" in told
    carol_dm = dc.dm_channels[DC_CAROL]
    assert f"New measured anchor #{sid}" in dc.messages[carol_dm][0]["content"]
    [entry] = [e for e in await app.storage.audit_log() if e.action == "approve"]
    assert entry.actor.platform == "discord" and entry.submission_id == sid
