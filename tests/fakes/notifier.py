"""A platform notifier for tests: records what it delivered and answers per chat as told."""

from __future__ import annotations

from core.community.delivery import Delivery


class RecordingNotifier:
    def __init__(self, platform: str = "console", outcomes: dict[str, list[Delivery]] | None = None):
        self.platform = platform
        self.per_second = 0.0
        self.sent: list[tuple[str, str]] = []
        self.outcomes = outcomes or {}  # chat -> what the platform answers, in turn (then "sent")

    async def deliver(self, chat_id: str, text: str) -> Delivery:
        queue = self.outcomes.get(chat_id) or []
        result = queue.pop(0) if queue else Delivery("sent")
        if result.outcome == "sent":
            self.sent.append((chat_id, text))
        return result
