"""What the runner needs from a chat platform adapter (Telegram, Discord, a fake in tests).

A Protocol, not a base class: adapters live in their own packages with their own platform library
and only have to have this shape; the runner never imports them until their token is set.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from core.community.delivery import Notifier


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
        (`app.add_notifier`) and expose `running`. Raising means it could not start (bad token, no
        network).
        """
        ...

    async def stop(self) -> None:
        """Stop receiving, let in-flight replies finish, close the connection. Must be idempotent."""
        ...
