"""The Telegram adapter (python-telegram-bot): imported only when a Telegram token is set."""

from bot.telegram.adapter import TelegramAdapter

__all__ = ["TelegramAdapter"]
