"""The outbox worker's way into Telegram: one private message per notice, failures as `Delivery`."""

from __future__ import annotations

import logging
import warnings
from datetime import timedelta

from telegram import Bot
from telegram.error import BadRequest, Forbidden, NetworkError, RetryAfter, TelegramError
from telegram.warnings import PTBDeprecationWarning

from core.community.delivery import Delivery

log = logging.getLogger(__name__)

# BadRequest descriptions that mean "this chat can never be written to", not "this message was bad".
_GONE = ("chat not found", "user is deactivated", "peer_id_invalid", "bot was kicked", "have no rights")


def chat_ref(chat_id: str) -> int | str:
    # Numeric ids as ints: PTB's rate limiter tells groups (negative ids) from private chats by them.
    return int(chat_id) if chat_id.lstrip("-").isdigit() else chat_id


def retry_seconds(exc: RetryAfter) -> float:
    # PTB gives an int today (with a deprecation warning) and a timedelta once PTB_TIMEDELTA is the
    # default; both are handled, so the warning says nothing to us.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class TelegramNotifier:
    platform = "telegram"

    def __init__(self, bot: Bot, per_second: float):
        self.bot = bot
        self.per_second = per_second

    async def deliver(self, chat_id: str, text: str) -> Delivery:
        """Send one notice as plain text (notices hold no markup). Never raises."""
        try:
            await self.bot.send_message(chat_ref(chat_id), text)
        except RetryAfter as exc:  # still limited after the rate limiter's own retries
            return self._log(chat_id, Delivery("retry", retry_after=retry_seconds(exc), error=str(exc)))
        except Forbidden as exc:  # blocked, or never started a private chat with the bot
            return self._log(chat_id, Delivery("forbidden", error=str(exc)))
        except BadRequest as exc:
            gone = any(marker in exc.message.lower() for marker in _GONE)
            return self._log(chat_id, Delivery("forbidden" if gone else "failed", error=str(exc)))
        except NetworkError as exc:  # TimedOut is a NetworkError: try again later
            return self._log(chat_id, Delivery("retry", error=str(exc)))
        except TelegramError as exc:  # InvalidToken, Conflict, ChatMigrated...: won't get better by retrying
            return self._log(chat_id, Delivery("failed", error=str(exc)))
        except Exception as exc:  # noqa: BLE001 - the Notifier contract: never raise (e.g. bot shut down)
            log.exception("telegram notice to %s failed unexpectedly", chat_id)
            return Delivery("retry", error=repr(exc))
        return Delivery("sent")

    @staticmethod
    def _log(chat_id: str, result: Delivery) -> Delivery:
        log.warning("telegram notice not delivered", extra={
            "chat_id": chat_id, "outcome": result.outcome, "error": result.error,
            "retry_after": result.retry_after,
        })  # fmt: skip
        return result
