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
    notifier: Notifier  # registered with the outbox worker before the adapter starts

    async def start(self) -> None:
        """Connect and begin receiving (polling / gateway).

        May return once running (the library keeps going in the background) or block until stop();
        the runner supports both. Raising means the adapter could not start (bad token, no network).
        """
        ...

    async def stop(self) -> None:
        """Stop receiving, let in-flight replies finish, close the connection. Must be idempotent."""
        ...
