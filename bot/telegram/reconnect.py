"""Telegram's long poll, kept up through network outages with the bot's own back-off.

PTB retries a failed getUpdates by itself, but logs a full traceback on every failure and waits on a
schedule of its own (×1.5 up to 30 s, no jitter). This transport, used for getUpdates only, waits a
network failure out itself: one warning line per attempt, the deployment's `Backoff`, and PTB sees
nothing but a slow poll. A stop cancels the poll, and with it the wait, at once.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, HTTPXRequest, RequestData

from bot.adapter import Backoff, one_line

if TYPE_CHECKING:
    from telegram._utils.types import ODVInput  # PTB's own annotation of do_request's timeouts

log = logging.getLogger(__name__)

_DEFAULT = BaseRequest.DEFAULT_NONE


class ReconnectingRequest(HTTPXRequest):
    """HTTPXRequest for getUpdates (one connection, as PTB's default for it) that retries a network
    error while `polling()` is true. A TimedOut is left to PTB, which polls again at once (a long
    poll that outlived its read timeout is not an outage); after polling stopped (PTB's last
    getUpdates at shutdown) an error is raised as usual, so stopping never waits for the network."""

    def __init__(
        self,
        backoff: Backoff,
        polling: Callable[[], bool],
        on_change: Callable[[bool], None] | None = None,
    ) -> None:
        super().__init__(connection_pool_size=1)
        self.backoff = backoff
        self.polling = polling
        self.on_change = on_change  # told False when the connection is lost, True when it is back

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = _DEFAULT,
        write_timeout: ODVInput[float] = _DEFAULT,
        connect_timeout: ODVInput[float] = _DEFAULT,
        pool_timeout: ODVInput[float] = _DEFAULT,
    ) -> tuple[int, bytes]:
        attempt = 0
        while True:
            try:
                result = await super().do_request(
                    url, method, request_data, read_timeout, write_timeout, connect_timeout, pool_timeout
                )
            except TimedOut:
                raise
            except NetworkError as exc:
                if not self.polling():
                    raise
                attempt += 1
                delay = self.backoff.delay(attempt)
                log.warning(
                    "telegram connection lost (%s); retry %d in %.1f s", one_line(exc), attempt, delay
                )
                self._tell(False)
                await asyncio.sleep(delay)
                continue
            if attempt:
                log.info("telegram reconnected after %d retries", attempt)
                self._tell(True)
            return result

    def _tell(self, up: bool) -> None:
        if self.on_change is not None:
            self.on_change(up)
