"""The "/" command menu Telegram shows, per chat kind and language, from the commands' summaries."""

from __future__ import annotations

import logging

from telegram import Bot, BotCommand, BotCommandScopeAllGroupChats, BotCommandScopeAllPrivateChats
from telegram.constants import BotCommandLimit
from telegram.error import TelegramError

from core.commands.registry import COMMANDS, SPECS
from core.i18n import Lang, translate

log = logging.getLogger(__name__)

# In a group the menu is seen by everyone: moderation and personal lists would only be noise there
# (they still work when typed); each command declares whether it belongs (CommandSpec.group_menu).
GROUP_COMMANDS: tuple[str, ...] = tuple(spec.name for spec in SPECS if spec.group_menu)
LANGS: dict[Lang, str | None] = {"en": None, "zh": "zh"}  # menu language -> language_code (None: default)


def description(name: str, lang: Lang) -> str:
    text = " ".join(translate(f"cmd.{name}.summary", lang).split())
    limit = BotCommandLimit.MAX_DESCRIPTION
    return text if len(text) <= limit else text[: limit - 1] + "…"


def menu(names: tuple[str, ...], lang: Lang) -> list[BotCommand]:
    return [BotCommand(name, description(name, lang)) for name in names]


async def set_menus(bot: Bot) -> int:
    """Set every menu; returns how many were set. A failure is logged, not raised: the menu is a
    convenience, and typed commands work without it."""
    done = 0
    for lang, code in LANGS.items():
        for scope, names in (
            (BotCommandScopeAllPrivateChats(), COMMANDS),
            (BotCommandScopeAllGroupChats(), GROUP_COMMANDS),
        ):
            try:
                await bot.set_my_commands(menu(names, lang), scope=scope, language_code=code)
                done += 1
            except TelegramError as exc:
                log.warning(
                    "telegram command menu not set",
                    extra={"scope": scope.type, "lang": lang, "error": str(exc)},
                )
    return done
