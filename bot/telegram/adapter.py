"""`TelegramAdapter`: python-telegram-bot polling, wired to the command layer and the outbox worker.

One PTB `Application`: long polling, updates handled concurrently (a slow chart must not hold up
everyone else's questions), every outgoing call through PTB's `AIORateLimiter` (Telegram's ~30
messages/s overall and 20/min per group; a 429 is waited out and retried).
"""

from __future__ import annotations

import logging
from datetime import timedelta
from typing import Any

from telegram import Update
from telegram.error import InvalidToken, NetworkError
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder
from telegram.request import BaseRequest

from bot.adapter import AdapterOffline, Backoff
from bot.app import App
from bot.telegram.capabilities import CAPABILITIES
from bot.telegram.handlers import Handlers
from bot.telegram.menu import set_menus
from bot.telegram.notifier import TelegramNotifier
from bot.telegram.reconnect import ReconnectingRequest
from bot.telegram.replies import Replier
from core.community.worker import OutboxSettings

log = logging.getLogger(__name__)

CONCURRENT_UPDATES = 64
POLL_TIMEOUT_SECONDS = 10  # long-poll length: an idle bot makes one request per this many seconds
RATE_RETRIES = 3  # a 429 is retried this often (after Telegram's retry_after) before it is an error
ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY, Update.INLINE_QUERY]


def rate_limiter(retries: int = RATE_RETRIES) -> AIORateLimiter:
    # PTB's defaults are Telegram's documented limits (30/s overall, 20/min per group).
    return AIORateLimiter(max_retries=retries)


class TelegramAdapter:
    platform = "telegram"

    def __init__(
        self,
        app: App,
        token: str,
        base_url: str | None = None,
        base_file_url: str | None = None,
        *,
        concurrent_updates: int = CONCURRENT_UPDATES,
        rate_limit: bool = True,
        poll_timeout: float = POLL_TIMEOUT_SECONDS,
        request: BaseRequest | None = None,
        backoff: Backoff | None = None,
    ):
        """`rate_limit=False` is for benchmarks of the adapter itself; `request` replaces the HTTP
        transport (handler tests) and then no updater is built: updates are fed to `process_update`.
        `backoff` paces the long poll's reconnections (default: the app's TOKBOT_RECONNECT_* settings)."""
        self.app = app
        self.poll_timeout = poll_timeout
        # For /healthz: polling, and the last poll reached Telegram (False while reconnecting).
        self._started = self.running = False
        builder = ApplicationBuilder().token(token).concurrent_updates(concurrent_updates)
        if base_url:
            builder = builder.base_url(base_url)
        if base_file_url:
            builder = builder.base_file_url(base_file_url)
        if rate_limit:
            # PTB types the builder by its rate limiter's argument type; AIORateLimiter takes an int.
            builder = builder.rate_limiter(rate_limiter())  # type: ignore[arg-type]
        if request is not None:
            builder = builder.request(request).get_updates_request(request).updater(None)
        else:
            poll = ReconnectingRequest(
                backoff or Backoff.from_settings(app.settings), self._polling, self._connection_changed
            )
            builder = builder.get_updates_request(poll)
        self.application: Application[Any, Any, Any, Any, Any, Any] = builder.build()
        app.bot.platforms[self.platform] = CAPABILITIES
        self.replier = Replier(self.application.bot)
        self.handlers = Handlers(app, self.replier)
        self.handlers.install(self.application)
        per_second = OutboxSettings.from_catalog(app.catalog).per_second.get("telegram", 25.0)
        self.notifier = TelegramNotifier(self.application.bot, per_second)

    @property
    def username(self) -> str:
        return self.handlers.username

    def _polling(self) -> bool:
        updater = self.application.updater
        return self._started and updater is not None and updater.running

    def _connection_changed(self, up: bool) -> None:
        self.running = up and self._started

    async def start(self) -> None:
        """getMe, command menus, notifier, then polling; returns once updates are being fetched.
        Telegram out of reach (DNS, refused, dropped, timed out) raises AdapterOffline, which the
        runner retries; a refused token (InvalidToken) is raised as it is."""
        try:
            await self._start()
        except InvalidToken:
            raise
        except NetworkError as exc:  # TimedOut included
            raise AdapterOffline(f"Telegram unreachable: {exc}") from exc

    async def _start(self) -> None:
        await self.application.initialize()  # getMe; raises InvalidToken / NetworkError if it can't
        self.handlers.bind(self.application.bot.bot)
        menus = await set_menus(self.application.bot)
        self.app.add_notifier(self.notifier)
        await self.application.start()
        if self.application.updater is not None:
            await self.application.updater.start_polling(
                timeout=timedelta(seconds=self.poll_timeout), allowed_updates=ALLOWED_UPDATES
            )
        self._started = self.running = True
        log.info(
            "telegram adapter running",
            extra={"bot": self.username, "menus": menus, "polling": self.application.updater is not None},
        )

    async def stop(self) -> None:
        """Stop fetching, let handlers in flight finish their replies, close the HTTP clients.
        Idempotent, and safe after a start() that failed half-way."""
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()
        if self.application.running:
            await self.application.stop()  # waits for the update queue and handler tasks
        await self.application.shutdown()  # no-op if never initialized
        if self._started:
            log.info("telegram adapter stopped", extra={"bot": self.username})
        self._started = self.running = False
