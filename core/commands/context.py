"""Everything a command handler needs, built once by the composition root (bot/app.py)."""

from __future__ import annotations

import secrets
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from core.catalog.loader import Catalog
from core.catalog.model_source import ModelSource
from core.catalog.sections import sections
from core.commands.answer_log import AnswerLog
from core.commands.model_lookup import HubModels
from core.commands.prompts import PendingPrompts
from core.commands.types import Invocation, PlatformCapabilities
from core.community.moderators import ModeratorPolicy
from core.i18n import Lang
from core.storage.interface import Storage
from core.understanding.query import AskQuery

if TYPE_CHECKING:
    from core.commands.submit import Dialogue

FOLLOWUP_KEY_BYTES = 6  # 8 url-safe characters: unguessable, and "v:q:<key>:<quant>" fits 64 bytes


def utcnow() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True, slots=True)
class BotLimits:
    submissions_per_hour: int = 10
    review_page: int = 5
    max_subscriptions: int = 50
    followups_kept: int = 20000
    dialogue_minutes: int = 30
    # The guided /submit (issue 13): its gathered text is capped, and one person's dialogue messages
    # are throttled (a burst of pastes re-read the whole text on every message).
    dialogue_max_chars: int = 60000
    dialogue_burst: int = 6  # messages per dialogue_burst_seconds; more get one "slow down"
    dialogue_burst_seconds: int = 10
    undo_minutes: int = 10  # how long a moderator may undo their own decision
    export_max_rows: int = 100000

    @classmethod
    def from_catalog(cls, catalog: Catalog, **overrides: Any) -> BotLimits:
        raw = dict(sections(catalog).community.limits)
        raw.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__})


@dataclass(frozen=True, slots=True)
class _FollowUp:
    query: AskQuery
    chat_id: str
    user: str  # Actor.key of the person who got the answer


class FollowUps:
    """Answers whose buttons still work: a short random key -> the answer's query.

    Button payloads are limited to 64 bytes (Telegram), too small for a query, so the button carries
    a key. The key is random (a counter would let anyone forge "v:f:<next>" and read another
    person's private question) and bound to the chat and person that got the answer: a press by
    anyone else, or elsewhere, reads as expired. Kept in memory (bounded, oldest dropped): after a
    restart an old button asks to re-ask, which is harmless; moderation buttons carry the submission
    id instead and survive restarts.
    """

    def __init__(self, capacity: int):
        self._items: OrderedDict[str, _FollowUp] = OrderedDict()
        self._capacity = capacity

    def put(self, query: AskQuery, inv: Invocation) -> str:
        key = secrets.token_urlsafe(FOLLOWUP_KEY_BYTES)
        while key in self._items:  # 48 random bits: a collision is as good as impossible, but cheap
            key = secrets.token_urlsafe(FOLLOWUP_KEY_BYTES)
        self._items[key] = _FollowUp(query, inv.where.chat_id, inv.actor.key)
        while len(self._items) > self._capacity:
            self._items.popitem(last=False)
        return key

    def get(self, key: str, inv: Invocation) -> AskQuery | None:
        item = self._items.get(key)
        if item is None or item.chat_id != inv.where.chat_id or item.user != inv.actor.key:
            return None
        return item.query


@dataclass
class BotContext:
    catalog: Catalog
    storage: Storage
    moderators: ModeratorPolicy
    limits: BotLimits
    clock: Callable[[], datetime] = utcnow
    anchors: Any = None  # core.anchors.anchor_index.AnchorIndex once loaded
    followups: FollowUps = field(default_factory=lambda: FollowUps(20000))
    # Answers whose 👍 / 👎 still work (core.commands.feedback).
    answers: AnswerLog = field(default_factory=lambda: AnswerLog(20000))
    dialogues: dict[tuple[str, str, str], Dialogue] = field(default_factory=dict)  # the guided /submit
    dialogues_swept: datetime | None = None  # when stale dialogues were last dropped (submit.py)
    # The last database fault a command met, and its log line (core.commands.faults; /healthz).
    storage_fault_at: datetime | None = None
    storage_fault_logged: datetime | None = None
    storage_faults: int = 0
    # "The next line answers this prompt", for every platform (a rejection reason, ...).
    prompts: PendingPrompts = field(default_factory=lambda: PendingPrompts(timedelta(minutes=30)))
    # What each chat platform can do: each adapter registers its declaration when it is built; a
    # platform not registered gets the most cautious answer (no ephemeral messages, no unprompted DMs).
    platforms: dict[str, PlatformCapabilities] = field(default_factory=dict)
    # Called after every decision that changes the anchors (approve / withdraw), e.g. to wake the
    # notification worker at once instead of at its next poll.
    on_outbox: Callable[[], None] | None = None
    default_lang: Lang = "en"  # for chats that give no language and questions that show none
    default_os: str | None = None  # assumed when a question names no OS (None: the card decides)
    # Where the web pages are reached (TOKBOT_PUBLIC_URL, bot/web): answers then carry a "Full
    # page" link to the same question there. None: no link.
    page_url: str | None = None
    # Metrics hook: (platform, command, status, seconds) after every handled invocation or action.
    observe: Callable[[str, str, str, float], None] | None = None
    # Models the catalog doesn't hold, read through the model source (core.catalog.model_source; None: no
    # Hub configured): `/model add`'s kept as an overlay of the catalog, a question's only for it
    # (core.commands.model_lookup.HubModels).
    model_source: ModelSource | None = None
    hub_models: HubModels = field(default_factory=HubModels)

    def capabilities(self, platform: str) -> PlatformCapabilities:
        return self.platforms.get(platform) or PlatformCapabilities()

    def catalog_for(self, query: AskQuery) -> Catalog:
        """The catalog `query` is priced with: the shared one, or -- for a model read from the Hub
        for one question (a button under its answer) -- the shared one with that model in it."""
        return self.hub_models.catalog_for(self.catalog, query.model_id)
