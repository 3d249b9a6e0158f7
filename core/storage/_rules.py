"""The storage rules, written once for every backend.

`StorageRules` implements the whole `Storage` port: /submit's duplicate and rate-limit checks, the
state machine of a submission (approve / reject / withdraw / undo, each with its audit entry and its
notices), refused attempts counted per minute, subscriptions, the outbox's lease and settle rules,
feedback votes. A backend supplies only `Store`, the primitive reads and writes of its tables, and
three ways of reaching it: `_transaction()` (all the block's work commits together, or none of it),
`_autocommit()` (work that is atomic statement by statement) and `_query()` (reads).

The memory backend's `Store` is plain dicts; the SQLite and PostgreSQL ones share `core.storage._sql`,
SQL written once for both dialects. The contract suite (tests/core/storage/contract.py) runs on each.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from core.storage import records as rec
from core.storage._common import (
    OUTBOX_DEAD,
    OUTBOX_PENDING,
    OUTBOX_SENT,
    anchor_payload,
    decision_action,
    decision_key,
    decision_payload,
    may_undo,
    refused_minute,
    utc,
)
from core.storage.interface import (
    AuditKind,
    DuplicateSubmission,
    NotFound,
    StorageError,
    SubmitOutcome,
    UndoOutcome,
    UndoRefused,
    WrongState,
)

# Which subscriptions `unsubscribe` stops: one (gpu_id, model_id) pair, or None for all of the user's.
Which = tuple[str | None, str | None] | None


class Conflict(StorageError):
    """A unique index refused an insert (a backend's `insert_submission`); the rules turn it into
    DuplicateSubmission when a live submission holds the fingerprint, else re-raise it."""


@dataclass(frozen=True, slots=True)
class Filters:
    """`submissions`' filters, ANDed; None: any."""

    status: str | None = None
    origin: str | None = None
    platform: str | None = None
    user_id: str | None = None


@dataclass(frozen=True, slots=True)
class Settlement:
    """How a worker's report changes an outbox item; the lease is always released. None: unchanged."""

    status: str | None = None
    sent_at: datetime | None = None
    next_attempt_at: datetime | None = None
    error: str | None = None
    attempt: bool = False  # counts as one more attempt
    only_pending: bool = True  # a settled item is left alone (a late report whose lease ran out)


class Store(Protocol):
    """The primitives of one backend, inside whatever `_transaction` / `_autocommit` / `_query` opened.
    Times come in as aware UTC datetimes."""

    async def lock(self, key: str, per_schema: bool = False) -> None:
        """Serialise with other processes on `key` until the transaction ends (no-op where one writer
        already holds the whole database)."""

    # submissions
    async def submission(self, submission_id: int, lock: bool = False) -> rec.Submission | None: ...
    async def live_submission(self, fingerprint: str) -> rec.Submission | None:
        """The oldest pending or approved submission with this (non-blank) fingerprint."""

    async def fingerprint_stored(self, fingerprint: str) -> bool: ...
    async def count_since(self, platform: str, user_id: str, since: datetime) -> int: ...
    async def insert_submission(
        self, new: rec.NewSubmission, status: rec.SubmissionStatus, origin: rec.Origin
    ) -> rec.Submission:
        """Raises Conflict when the live-fingerprint unique index refuses it."""

    async def find_submissions(self, where: Filters, limit: int | None) -> list[rec.Submission]:
        """Newest first; a None filter matches anything."""

    async def set_state(self, sub: rec.Submission) -> rec.Submission:
        """Write `sub`'s status, decider, decision time and reason; the submission as stored."""

    async def set_measurement(self, sub: rec.Submission) -> None:
        """Write `sub`'s measurement and source (a published row corrected at its source)."""

    # audit
    async def insert_audit(self, entry: rec.AuditEntry) -> None: ...
    async def count_refused(self, actor: rec.Actor, action: str, minute: datetime) -> bool:
        """One more on the refused row of (actor, action, minute); False when there is none yet."""

    async def audit(self, limit: int, kind: AuditKind | None) -> list[rec.AuditEntry]: ...

    # outbox
    async def fan_out(self, sub: rec.Submission, payload: dict[str, Any], at: datetime) -> None:
        """An "anchor" notice for every active subscription matching the submission's gpu and model (a
        None side matches anything), one per (platform, chat): the oldest subscription's."""

    async def tell_submitter(
        self, sub: rec.Submission, payload: dict[str, Any], key: str, at: datetime
    ) -> None:
        """A "decision" notice to the submitter's chat, in their language (unless `key` is queued already)."""

    async def drop_unsent(self, submission_id: int) -> int:
        """Delete the submission's unsent notices; returns how many of its notices were sent."""

    async def claim(
        self, platform: str, now: datetime, lease_until: datetime, limit: int, chat_id: str | None
    ) -> list[rec.OutboxItem]: ...
    async def settle(self, item_id: int, change: Settlement) -> bool:
        """False when no item was changed (unknown, or settled and `change.only_pending`)."""

    async def outbox_exists(self, item_id: int) -> bool: ...
    async def outbox_counts(self) -> list[tuple[str, str, int]]:
        """(status, platform, items) for every pair that has items."""

    # subscriptions
    async def upsert_subscription(self, sub: rec.Subscription) -> tuple[rec.Subscription, bool]:
        """Insert, or update chat and lang of the same (platform, user, gpu, model) and reactivate it."""

    async def deactivate_subscriptions(self, platform: str, user_id: str, which: Which) -> int: ...
    async def deactivate_chat(self, platform: str, chat_id: str) -> int: ...
    async def active_subscriptions(self, platform: str, user_id: str) -> list[rec.Subscription]: ...
    async def count_active_subscriptions(self) -> int: ...

    # feedback
    async def upsert_feedback(self, vote: rec.Feedback) -> bool:
        """True when the (platform, user, answer) vote is new, False when it replaced the earlier one."""

    async def feedback_counts(self) -> rec.FeedbackCounts: ...
    async def unhelpful(self, limit: int) -> list[rec.Feedback]: ...

    # models resolved outside the catalog
    async def cached_model(self, key: str) -> tuple[str, datetime] | None: ...
    async def cache_model(self, key: str, payload: str, at: datetime) -> None: ...
    async def cached_models(self, limit: int) -> list[tuple[str, str, datetime]]: ...


async def _live(store: Store, fingerprint: str) -> rec.Submission | None:
    # Blank fingerprints never collide, and only pending or approved submissions hold theirs (a
    # rejected measurement may be sent again): the SQL backends' partial unique index.
    return await store.live_submission(fingerprint) if fingerprint else None


async def _insert_pending(store: Store, new: rec.NewSubmission) -> rec.Submission:
    """The unique index on live fingerprints is the last word on duplicates; a collision becomes
    DuplicateSubmission naming the one already there."""
    try:
        return await store.insert_submission(new, "pending", new.origin)
    except Conflict as conflict:
        existing = await _live(store, new.fingerprint)
        if existing is None:
            raise conflict.__cause__ or conflict from None
        raise DuplicateSubmission(existing.id) from None


class StorageRules(ABC):
    """The `Storage` port's rules on a backend's `Store` (see the module's docstring)."""

    @abstractmethod
    def _transaction(self) -> AbstractAsyncContextManager[Store]: ...

    @abstractmethod
    def _autocommit(self) -> AbstractAsyncContextManager[Store]: ...

    @abstractmethod
    def _query(self) -> AbstractAsyncContextManager[Store]: ...

    # --- submissions and anchors -----------------------------------------------------------
    async def add_submission(self, new: rec.NewSubmission) -> rec.Submission:
        async with self._transaction() as store:
            return await _insert_pending(store, new)

    async def add_submission_checked(
        self, new: rec.NewSubmission, since: datetime, limit: int
    ) -> SubmitOutcome:
        who = new.submitter
        async with self._transaction() as store:
            # Held until commit: the same submitter's other /submit (any process) waits here, then
            # counts this one's row.
            await store.lock(f"tokbot-submit:{who.platform}:{who.user_id}")
            existing = await _live(store, new.fingerprint)
            if existing is not None:
                return SubmitOutcome("duplicate", existing)
            if await store.count_since(who.platform, who.user_id, utc(since)) >= limit:
                return SubmitOutcome("rate_limited")
            try:
                return SubmitOutcome("stored", await _insert_pending(store, new))
            except DuplicateSubmission as dup:  # the same fingerprint from another submitter's lock
                return SubmitOutcome("duplicate", await store.submission(dup.existing_id))

    async def add_published(self, items: list[rec.NewSubmission]) -> int:
        added = 0
        async with self._transaction() as store:
            # Every process seeds the published anchors at start: one at a time, so two starting
            # together can't both find a fingerprint missing and insert it twice.
            await store.lock("tokbot-published:", per_schema=True)
            for new in items:
                if new.fingerprint and await store.fingerprint_stored(new.fingerprint):
                    await _refresh_published(store, new)
                    continue
                await store.insert_submission(new, "approved", "published")
                added += 1
        return added

    async def published_current(self, items: list[rec.NewSubmission]) -> bool:
        """Whether `add_published(items)` would change nothing (every row stored, none re-filed at its
        source), read without a write transaction: `python -m bot ask` then skips the seeding step
        and never waits for, or takes, the database's write lock."""
        async with self._query() as store:
            stored = await store.find_submissions(Filters(), None)
        seen = {s.fingerprint for s in stored if s.fingerprint}
        live: dict[str, rec.Submission] = {}
        for s in sorted(stored, key=lambda s: s.id):  # the oldest live one, as live_submission picks
            if s.fingerprint and s.status in ("pending", "approved"):
                live.setdefault(s.fingerprint, s)
        for new in items:
            if not new.fingerprint or new.fingerprint not in seen:
                return False
            current = live.get(new.fingerprint)
            if current is not None and current.origin == "published" and _refreshed(current, new) != current:
                return False
        return True

    async def get_submission(self, submission_id: int) -> rec.Submission | None:
        async with self._query() as store:
            return await store.submission(submission_id)

    async def submissions(
        self,
        status: rec.SubmissionStatus | None = None,
        origin: str | None = None,
        platform: str | None = None,
        user_id: str | None = None,
        limit: int | None = None,
    ) -> list[rec.Submission]:
        async with self._query() as store:
            return await store.find_submissions(Filters(status, origin, platform, user_id), limit)

    async def count_submissions_since(self, platform: str, user_id: str, since: datetime) -> int:
        async with self._query() as store:
            return await store.count_since(platform, user_id, utc(since))

    async def find_duplicate(self, fingerprint: str) -> rec.Submission | None:
        async with self._query() as store:
            return await _live(store, fingerprint)

    async def approve(self, submission_id: int, moderator: rec.Actor, at: datetime) -> rec.Submission:
        return await self._decide(submission_id, "pending", "approved", moderator, None, at)

    async def reject(
        self, submission_id: int, moderator: rec.Actor, reason: str, at: datetime
    ) -> rec.Submission:
        return await self._decide(submission_id, "pending", "rejected", moderator, reason, at)

    async def withdraw(
        self, submission_id: int, moderator: rec.Actor, reason: str, at: datetime
    ) -> rec.Submission:
        return await self._decide(submission_id, "approved", "withdrawn", moderator, reason, at)

    async def _decide(
        self,
        submission_id: int,
        expected: rec.SubmissionStatus,
        new_status: rec.SubmissionStatus,
        moderator: rec.Actor,
        reason: str | None,
        at: datetime,
    ) -> rec.Submission:
        """expected -> new_status in one transaction with: its audit entry; for an approval, one notice
        per matching subscriber's chat; and the submitter's "decision" notice (a published anchor has
        nobody to tell)."""
        at = utc(at)
        async with self._transaction() as store:
            current = await store.submission(submission_id, lock=True)
            if current is None:
                raise NotFound(f"submission {submission_id}")
            if current.status != expected:
                raise WrongState(submission_id, current.status)
            sub = await store.set_state(
                replace(current, status=new_status, decided_by=moderator, decided_at=at, reason=reason)
            )
            action = decision_action(new_status)
            await store.insert_audit(
                rec.AuditEntry(at, moderator, action, submission_id, ok=True, detail=reason or "")
            )
            if new_status == "approved":
                await store.fan_out(sub, anchor_payload(sub), at)
            if sub.origin == "community":
                await store.tell_submitter(sub, decision_payload(sub), decision_key(sub.id, sub.status), at)
        return sub

    # --- audit -----------------------------------------------------------------------------
    async def record_audit(self, entry: rec.AuditEntry) -> None:
        async with self._transaction() as store:
            await store.insert_audit(replace(entry, at=utc(entry.at)))

    async def record_refused(self, entry: rec.AuditEntry) -> None:
        minute, who = refused_minute(entry.at), entry.actor
        async with self._transaction() as store:
            # One row per actor, action and minute, even across processes: the key's lock is held to commit.
            await store.lock(f"tokbot-refused:{who.platform}:{who.user_id}:{entry.action}")
            if not await store.count_refused(who, entry.action, minute):
                await store.insert_audit(replace(entry, at=minute, ok=False, count=1))

    async def audit_log(self, limit: int = 50, kind: AuditKind | None = None) -> list[rec.AuditEntry]:
        async with self._query() as store:
            return await store.audit(limit, kind)

    async def undo_decision(
        self, submission_id: int, moderator: rec.Actor, at: datetime, since: datetime
    ) -> UndoOutcome:
        async with self._transaction() as store:
            current = await store.submission(submission_id, lock=True)
            if current is None:
                raise NotFound(f"submission {submission_id}")
            if current.status not in ("approved", "rejected"):
                raise WrongState(submission_id, current.status)
            if not may_undo(current, moderator, utc(since)):
                raise UndoRefused(submission_id)
            live = await _live(store, current.fingerprint) if current.status == "rejected" else None
            if live is not None:
                raise DuplicateSubmission(live.id)
            undone = await store.set_state(
                replace(current, status="pending", decided_by=None, decided_at=None, reason=None)
            )
            sent = await store.drop_unsent(submission_id)
            action = f"undo:{decision_action(current.status)}"
            await store.insert_audit(
                rec.AuditEntry(
                    utc(at), moderator, action, submission_id, ok=True, detail=current.reason or ""
                )
            )
        return UndoOutcome(undone, sent)

    # --- subscriptions ---------------------------------------------------------------------
    async def subscribe(self, sub: rec.Subscription) -> tuple[rec.Subscription, bool]:
        created_at = utc(sub.created_at or datetime.now(UTC))
        async with self._transaction() as store:
            return await store.upsert_subscription(replace(sub, active=True, created_at=created_at))

    async def unsubscribe(
        self, platform: str, user_id: str, gpu_id: str | None, model_id: str | None, everything: bool = False
    ) -> int:
        async with self._transaction() as store:
            return await store.deactivate_subscriptions(
                platform, user_id, None if everything else (gpu_id, model_id)
            )

    async def subscriptions_of(self, platform: str, user_id: str) -> list[rec.Subscription]:
        async with self._query() as store:
            return await store.active_subscriptions(platform, user_id)

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        async with self._transaction() as store:
            return await store.deactivate_chat(platform, chat_id)

    async def count_subscriptions(self) -> int:
        async with self._query() as store:
            return await store.count_active_subscriptions()

    # --- outbox ----------------------------------------------------------------------------
    async def claim_outbox(
        self, platform: str, now: datetime, limit: int, lease_seconds: float = 60, chat_id: str | None = None
    ) -> list[rec.OutboxItem]:
        now = utc(now)
        async with self._transaction() as store:
            items = await store.claim(platform, now, now + timedelta(seconds=lease_seconds), limit, chat_id)
        return sorted(items, key=lambda i: (i.created_at or now, i.id))  # oldest first

    async def _settle(self, item_id: int, change: Settlement) -> None:
        async with self._autocommit() as store:
            if not await store.settle(item_id, change) and not await store.outbox_exists(item_id):
                raise NotFound(f"outbox item {item_id}")

    async def mark_sent(self, item_id: int, at: datetime) -> None:
        await self._settle(item_id, Settlement(status=OUTBOX_SENT, sent_at=utc(at), only_pending=False))

    async def mark_retry(self, item_id: int, next_attempt_at: datetime, error: str) -> None:
        await self._settle(
            item_id, Settlement(next_attempt_at=utc(next_attempt_at), error=error, attempt=True)
        )

    async def mark_dead(self, item_id: int, error: str) -> None:
        await self._settle(item_id, Settlement(status=OUTBOX_DEAD, error=error, attempt=True))

    async def outbox_stats(self) -> rec.OutboxStats:
        async with self._query() as store:
            counts = await store.outbox_counts()
        totals = {OUTBOX_PENDING: 0, OUTBOX_SENT: 0, OUTBOX_DEAD: 0}
        by_platform: dict[str, int] = {}
        for status, platform, count in counts:
            totals[status] = totals.get(status, 0) + count
            if status == OUTBOX_PENDING:
                by_platform[platform] = count
        return rec.OutboxStats(
            pending=totals[OUTBOX_PENDING],
            sent=totals[OUTBOX_SENT],
            dead=totals[OUTBOX_DEAD],
            by_platform=by_platform,
        )

    # --- "was this helpful?" -----------------------------------------------------------------
    async def record_feedback(self, feedback: rec.Feedback) -> bool:
        async with self._autocommit() as store:
            return await store.upsert_feedback(replace(feedback, at=utc(feedback.at)))

    async def feedback_counts(self) -> rec.FeedbackCounts:
        async with self._query() as store:
            return await store.feedback_counts()

    async def unhelpful_feedback(self, limit: int = 20) -> list[rec.Feedback]:
        async with self._query() as store:
            return await store.unhelpful(limit)

    # --- models resolved outside the catalog ------------------------------------------------
    async def cached_model(self, key: str) -> tuple[str, datetime] | None:
        async with self._query() as store:
            return await store.cached_model(key)

    async def cache_model(self, key: str, payload: str, at: datetime) -> None:
        async with self._autocommit() as store:
            await store.cache_model(key, payload, utc(at))

    async def cached_models(self, limit: int = 10000) -> list[tuple[str, str, datetime]]:
        async with self._query() as store:
            return await store.cached_models(limit)


async def _refresh_published(store: Store, new: rec.NewSubmission) -> None:
    """A published row already stored under this key takes the row's current measurement and
    source: a row re-filed at its source (the modded 48 GB 4090 runs, issue 20) reaches databases
    seeded before. A moderator's decision on it stands (only a live published row is refreshed), and
    a community submission with the same fingerprint is never touched."""
    stored = await store.live_submission(new.fingerprint)
    if stored is None or stored.origin != "published":
        return
    fresh = _refreshed(stored, new)
    if fresh != stored:
        await store.set_measurement(fresh)


def _refreshed(stored: rec.Submission, new: rec.NewSubmission) -> rec.Submission:
    """A stored published row with its source's current measurement (the one rule of re-filing)."""
    return replace(stored, measurement=new.measurement, source=new.source, source_date=new.source_date)
