"""The port through which the notification worker reaches a chat platform."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

Outcome = Literal["sent", "retry", "forbidden", "failed"]


@dataclass(frozen=True, slots=True)
class Delivery:
    outcome: Outcome
    retry_after: float | None = None  # seconds, when the platform said so (HTTP 429)
    error: str = ""


class Notifier(Protocol):
    """One per platform. `deliver` must not raise: every failure is a `Delivery`."""

    platform: str
    per_second: float  # the platform's sending budget for this bot (the worker paces itself)

    async def deliver(self, chat_id: str, text: str) -> Delivery: ...
