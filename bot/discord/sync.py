"""`python -m bot sync-discord [--guild ID ...]`: upload the slash commands' schema to Discord.

Done on request, not at every start: Discord rate-limits command uploads, and a global upload takes
up to an hour to reach every client while a guild upload is immediate (use guilds while testing).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys

import discord
from discord import app_commands

from bot.discord.commands import I18nTranslator, build_commands

log = logging.getLogger(__name__)


async def sync_commands(token: str, guild_ids: list[int]) -> list[str]:
    """Upload the commands to each guild (or globally when `guild_ids` is empty). Returns one line per
    target: "guild 123: ask, submit, …" / "global: …". Only HTTP is used: no gateway connection."""
    client = discord.Client(intents=discord.Intents.none())
    tree = app_commands.CommandTree(client)
    for command in build_commands():
        tree.add_command(command)
    lines = []
    try:
        await client.login(token.strip())
        await tree.set_translator(I18nTranslator())
        if not guild_ids:
            synced = await tree.sync()
            lines.append("global: " + ", ".join(c.name for c in synced))
        for guild_id in guild_ids:
            guild = discord.Object(guild_id)
            tree.copy_global_to(guild=guild)
            synced = await tree.sync(guild=guild)
            lines.append(f"guild {guild_id}: " + ", ".join(c.name for c in synced))
    finally:
        await client.close()
    return lines


def _guild_ids(values: list[str]) -> list[int]:
    ids = []
    for value in values:
        for part in value.split(","):
            if part.strip():
                ids.append(int(part.strip()))
    return ids


def run_sync(args: argparse.Namespace) -> int:
    """CLI entry: 0 synced, 2 configuration problem, 1 Discord refused or unreachable."""
    from bot.settings import SettingsError, load_settings

    try:
        settings = load_settings()
        if settings.discord_token is None:
            raise SettingsError("TOKBOT_DISCORD_TOKEN: required to sync slash commands")
        guilds = _guild_ids(list(getattr(args, "guild", None) or []) or [settings.discord_guild_ids])
    except (SettingsError, ValueError) as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
    try:
        lines = asyncio.run(sync_commands(settings.discord_token.get_secret_value(), guilds))
    except discord.LoginFailure:
        print("tokbot: Discord refused TOKBOT_DISCORD_TOKEN (401)", file=sys.stderr)
        return 1
    except (discord.HTTPException, OSError) as exc:
        print(f"tokbot: syncing slash commands failed: {exc}", file=sys.stderr)
        return 1
    for line in lines:
        print(f"synced {line}")
    return 0
