"""The Discord adapter: slash commands, persistent buttons, modals and DM notices over discord.py.

Imported only when a Discord token is configured (discord.py is heavy to import); `DiscordAdapter`
is loaded lazily so `import bot.discord` alone stays cheap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.discord.adapter import DiscordAdapter

__all__ = ["DiscordAdapter"]


def __getattr__(name: str) -> Any:
    if name == "DiscordAdapter":
        from bot.discord.adapter import DiscordAdapter

        return DiscordAdapter
    raise AttributeError(name)
