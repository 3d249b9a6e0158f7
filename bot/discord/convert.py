"""Discord objects -> the command layer's `Actor`, `Where` and language hint (nothing decided here)."""

from __future__ import annotations

import re

import discord

from core.i18n import Lang
from core.storage.records import Actor

NO_MENTIONS = discord.AllowedMentions.none()  # every send: a reply never pings anyone


def actor_of(user: discord.User | discord.Member) -> Actor:
    """Roles only exist on a Member (a guild); their ids are what TOKBOT_MODERATOR_ROLES lists."""
    roles = tuple(str(r.id) for r in user.roles) if isinstance(user, discord.Member) else ()
    return Actor("discord", str(user.id), user.display_name, roles)


def lang_of(locale: discord.Locale | str | None) -> Lang | None:
    """The client's UI language as a hint; None lets the command layer read the text instead."""
    value = str(getattr(locale, "value", locale) or "")
    if value.startswith("zh"):
        return "zh"
    if value.startswith("en"):
        return "en"
    return None


def strip_mentions(text: str, bot_id: int) -> str:
    """'<@123> V100 27B?' -> 'V100 27B?' (both mention spellings, anywhere in the message)."""
    return re.sub(rf"<@!?{bot_id}>", " ", text).strip()
