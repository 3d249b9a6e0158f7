"""Everything a command handler needs, built once by the composition root (bot/app.py)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from core.catalog.loader import Catalog
from core.community.moderators import ModeratorPolicy
from core.storage.interface import Storage
from core.understanding.language import has_chinese


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class BotLimits:
    submissions_per_hour: int = 10
    review_page: int = 5
    max_subscriptions: int = 50
    followups_kept: int = 20000
    dialogue_minutes: int = 30
    export_max_rows: int = 100000
    private_only: tuple[str, ...] = ("telegram",)

    @classmethod
    def from_catalog(cls, catalog: Catalog, **overrides: Any) -> BotLimits:
        table = catalog.tables.get("community", {})
        raw = dict(table.get("limits", {}))
        raw["private_only"] = tuple(table.get("subscriptions", {}).get("private_only", ("telegram",)))
        raw.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__})


class FollowUps:
    """Answers whose buttons still work: a short key -> the answer's query dict.

    Button payloads are limited to 64 bytes (Telegram), too small for a query, so the button carries
    a key. Kept in memory (bounded, oldest dropped): after a restart an old button asks to re-ask,
    which is harmless; moderation buttons carry the submission id instead and survive restarts.
    """

    def __init__(self, capacity: int):
        self._items: OrderedDict[str, dict[str, Any]] = OrderedDict()
        self._capacity = capacity
        self._counter = 0

    def put(self, query: dict[str, Any]) -> str:
        self._counter += 1
        key = format(self._counter, "x")
        self._items[key] = query
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return key

    def get(self, key: str) -> dict[str, Any] | None:
        return self._items.get(key)


@dataclass
class BotContext:
    catalog: Catalog
    storage: Storage
    moderators: ModeratorPolicy
    limits: BotLimits
    clock: Callable[[], datetime] = utcnow
    anchors: Any = None  # core.anchors.anchor_index.AnchorIndex once loaded
    followups: FollowUps = field(default_factory=lambda: FollowUps(20000))
    dialogues: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    # Called after every decision that changes the anchors (approve / withdraw), e.g. to wake the
    # notification worker at once instead of at its next poll.
    on_outbox: Callable[[], None] | None = None
    default_lang: str = "en"  # for chats that give no language and questions that show none
    default_os: str | None = None  # assumed when a question names no OS (None: the card decides)
    # Metrics hook: (platform, command, status, seconds) after every handled invocation or action.
    observe: Callable[[str, str, str, float], None] | None = None


def language(text: str, hint: str | None) -> str:
    """Chinese when the user wrote Chinese, else the platform's hint, else English."""
    if has_chinese(text or ""):
        return "zh"
    return hint if hint in ("en", "zh") else "en"
