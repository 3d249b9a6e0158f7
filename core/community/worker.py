"""The notification worker: sends what the outbox holds, with retries and per-platform pacing.

Delivery is at-least-once: an item is claimed (leased), sent, then marked sent. If the process dies
between sending and marking, the lease runs out and the item is sent again — the rare duplicate is
the price of never losing one. In the normal case nobody gets a notice twice: the storage keeps one
item per (anchor, chat), and this worker remembers what it sent in this process so a re-claimed item
that was in fact delivered is only marked, not re-sent.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.community.delivery import Delivery, Notifier
from core.storage.interface import Storage
from core.storage.records import OutboxItem

log = logging.getLogger(__name__)

# The text of an item in its recipient's language and markup (core.render.notices.notice_text):
# passed in, so the community package doesn't import the renderer that renders its records.
NoticeRenderer = Callable[[OutboxItem, Catalog], str]


# A module constant, not `cls.backoff_seconds`: on a slots dataclass that name is the slot descriptor.
_DEFAULT_BACKOFF_SECONDS: tuple[float, ...] = (5, 15, 60, 300, 900, 3600)


@dataclass(frozen=True, slots=True)
class OutboxSettings:
    batch: int = 100
    lease_seconds: float = 120.0
    max_attempts: int = 8
    backoff_seconds: tuple[float, ...] = _DEFAULT_BACKOFF_SECONDS
    idle_poll_seconds: float = 2.0
    per_second: dict[str, float] = field(default_factory=dict)

    @classmethod
    def from_catalog(cls, catalog: Catalog) -> OutboxSettings:
        raw = dict(sections(catalog).community.outbox)
        raw["backoff_seconds"] = tuple(raw.get("backoff_seconds", _DEFAULT_BACKOFF_SECONDS))
        raw["per_second"] = dict(raw.get("per_second", {}))
        return cls(**{k: v for k, v in raw.items() if k in cls.__dataclass_fields__})


@dataclass
class WorkerCounts:
    sent: int = 0
    failed: int = 0  # attempts that will be retried
    dead: int = 0  # given up
    forbidden: int = 0  # the platform refused for good (subscription deactivated)


class _Pacer:
    """At most `rate` sends per second, spread evenly (simple and enough for one process)."""

    def __init__(self, rate: float):
        self.interval = 1.0 / rate if rate > 0 else 0.0
        self.next_at = 0.0

    async def wait(self) -> None:
        if not self.interval:
            return
        now = time.monotonic()
        if self.next_at > now:
            await asyncio.sleep(self.next_at - now)
        self.next_at = max(now, self.next_at) + self.interval


class OutboxWorker:
    def __init__(
        self,
        storage: Storage,
        notifiers: dict[str, Notifier],
        catalog: Catalog,
        settings: OutboxSettings,
        clock: Callable[[], datetime],
        render: NoticeRenderer,
        on_result: Callable[[str, str], None] | None = None,
    ):
        self.storage = storage
        self.render = render  # core.render.notices.notice_text, given by the composition root
        self.notifiers: dict[str, Notifier] = {}
        self.catalog = catalog
        self.settings = settings
        self.clock = clock
        self.counts = WorkerCounts()
        self.on_result = on_result  # metrics hook: (platform, outcome)
        self._wake = asyncio.Event()
        self._sent_keys: OrderedDict[str, None] = OrderedDict()
        self._pacers: dict[str, _Pacer] = {}
        for notifier in notifiers.values():
            self.add_notifier(notifier)

    def add_notifier(self, notifier: Notifier) -> None:
        self.notifiers[notifier.platform] = notifier
        rate = self.settings.per_second.get(notifier.platform, getattr(notifier, "per_second", 0.0))
        self._pacers[notifier.platform] = _Pacer(rate)

    def wake(self) -> None:
        """Something new is in the outbox: look now instead of at the next poll."""
        self._wake.set()

    async def run_once(self, platform: str | None = None) -> int:
        """Send every due item (of one platform, or all with a notifier). Returns how many were handled."""
        handled = 0
        for name in [platform] if platform else list(self.notifiers):
            while True:
                items = await self.storage.claim_outbox(
                    name, self.clock(), self.settings.batch, self.settings.lease_seconds
                )
                if not items:
                    break
                for item in items:
                    await self._deliver(item)
                    handled += 1
        return handled

    async def run(self, stop: asyncio.Event) -> None:
        """Until `stop` is set: drain, then sleep until woken or the poll interval passes."""
        while not stop.is_set():
            try:
                await self.run_once()
            except Exception:  # noqa: BLE001 - a storage hiccup must not end delivery for good
                log.exception("outbox round failed")
            self._wake.clear()
            waits = [asyncio.ensure_future(self._wake.wait()), asyncio.ensure_future(stop.wait())]
            await asyncio.wait(
                waits, timeout=self.settings.idle_poll_seconds, return_when=asyncio.FIRST_COMPLETED
            )
            for w in waits:
                w.cancel()

    def _remember(self, key: str) -> None:
        self._sent_keys[key] = None
        while len(self._sent_keys) > 100_000:
            self._sent_keys.popitem(last=False)

    async def _deliver(self, item: OutboxItem) -> None:
        notifier = self.notifiers.get(item.platform)
        if notifier is None:
            return
        if item.dedupe_key in self._sent_keys:  # delivered earlier; only the mark was lost
            await self.storage.mark_sent(item.id, self.clock())
            return
        try:
            text = self.render(item, self.catalog)
        except Exception as exc:  # noqa: BLE001 - a payload we can't render will never render
            log.exception("notice %s can't be rendered", item.id)
            await self._dead(item, f"render: {exc}")
            return
        await self._pacers[item.platform].wait()
        try:
            result = await notifier.deliver(item.chat_id, text)
        except Exception as exc:  # noqa: BLE001 - the Notifier contract says never raise; be safe anyway
            result = Delivery("retry", error=repr(exc))
        await self._record(item, result)

    async def _record(self, item: OutboxItem, result: Delivery) -> None:
        self._result(item.platform, result.outcome)
        if result.outcome == "sent":
            self._remember(item.dedupe_key)
            await self.storage.mark_sent(item.id, self.clock())
            self.counts.sent += 1
        elif result.outcome == "forbidden":
            # The person blocked the bot or never opened a private chat: stop writing there.
            self.counts.forbidden += 1
            await self.storage.deactivate_chat(item.platform, item.chat_id)
            await self._dead(item, result.error or "forbidden")
        elif result.outcome == "failed" or item.attempts + 1 >= self.settings.max_attempts:
            await self._dead(item, result.error or "failed")
        else:
            backoff = self.settings.backoff_seconds
            delay = backoff[min(item.attempts, len(backoff) - 1)]
            if result.retry_after:
                delay = max(delay, result.retry_after)
            self.counts.failed += 1
            await self.storage.mark_retry(item.id, self.clock() + timedelta(seconds=delay), result.error)

    async def _dead(self, item: OutboxItem, error: str) -> None:
        self.counts.dead += 1
        await self.storage.mark_dead(item.id, error)

    def _result(self, platform: str, outcome: str) -> None:
        if self.on_result is not None:
            self.on_result(platform, outcome)
