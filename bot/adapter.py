"""What the runner needs from a chat platform adapter (Telegram, Discord, a fake in tests).

A Protocol, not a base class: adapters live in their own packages with their own platform library
and only have to have this shape; the runner never imports them until their token is set.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, runtime_checkable

from core.community.delivery import Notifier

if TYPE_CHECKING:
    from bot.settings import Settings


@runtime_checkable
class Adapter(Protocol):
    platform: str  # "telegram" | "discord": the label on metrics and in /healthz

    @property
    def notifier(self) -> Notifier:
        """Registered with the outbox worker before the adapter starts (read-only: any Notifier)."""
        ...

    # Each adapter also registers its platform's `PlatformCapabilities` with `app.bot.platforms` when
    # it is built, so the command layer knows what the platform can do (ephemeral messages, DMs).
    # Optional, not part of the Protocol's required shape: a `running: bool` attribute or property.
    # Where present, /healthz reports it (e.g. False once the gateway connection died after start()
    # returned); without it, a platform is up from the moment start() returns until stop().

    async def start(self) -> None:
        """Connect and begin receiving (polling / gateway), and return once running.

        The runner registers `notifier` with the outbox worker when start() returns. An adapter whose
        start() blocks until stop() is supported too, but must then register its notifier itself
        (`app.add_notifier`) and expose `running`. Raising means it could not start: `AdapterOffline`
        when the network is at fault (the runner retries with back-off, after calling stop() to tidy
        up), anything else (a bad token) ends the run.
        """
        ...

    async def stop(self) -> None:
        """Stop receiving, let in-flight replies finish, close the connection. Must be idempotent."""
        ...


class AdapterOffline(RuntimeError):
    """start() could not reach the platform (DNS, a refused or dropped connection, a timeout): the
    network's fault, not the configuration's, so the runner tries again with `Backoff` instead of
    ending the process. Anything else raised by start() (a refused token) still ends it."""


@dataclass(frozen=True, slots=True)
class Backoff:
    """How long to wait before reconnection attempt N (1, 2, ...): `first` doubled each time up to
    `ceiling`, less a random share of up to `jitter` (so bots that lost the network together don't
    all come back in the same second, and the ceiling is never exceeded). The figures come from the
    settings (TOKBOT_RECONNECT_*), never from here."""

    first: float
    ceiling: float
    jitter: float

    @classmethod
    def from_settings(cls, settings: Settings) -> Backoff:
        return cls(
            settings.reconnect_first_seconds, settings.reconnect_max_seconds, settings.reconnect_jitter
        )

    def delay(self, attempt: int, rand: Callable[[], float] = random.random) -> float:
        doublings = min(max(attempt - 1, 0), 64)  # 2**64 × first is past any ceiling; no overflow
        base = min(self.ceiling, self.first * 2.0**doublings)
        return base * (1.0 - self.jitter * rand())


def one_line(exc: BaseException) -> str:
    """An error as a short clause for the one log line per attempt (the traceback says nothing new
    about a network that is down, and would repeat every few seconds)."""
    text = " ".join(str(exc).split())
    while not text and exc.__cause__ is not None:  # a wrapper without words: its cause's
        exc = exc.__cause__
        text = " ".join(str(exc).split())
    name = type(exc).__name__
    return f"{name}: {text[:200]}" if text else name
