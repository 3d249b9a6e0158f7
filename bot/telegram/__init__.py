"""The Telegram adapter (python-telegram-bot): imported only when a Telegram token is set.

`TelegramAdapter` is loaded lazily so `bot.telegram.capabilities` stays cheap to import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from bot.telegram.adapter import TelegramAdapter

__all__ = ["TelegramAdapter"]


def __getattr__(name: str) -> Any:
    if name == "TelegramAdapter":
        from bot.telegram.adapter import TelegramAdapter

        return TelegramAdapter
    raise AttributeError(name)
