"""`MemoryStorage`: the storage port in plain dicts, for fast service tests.

It passes the same contract suite as the SQLite backend (tests/core/storage/contract.py), which is
the proof that services written against `Storage` don't depend on SQL. One asyncio.Lock stands in for
transactions: every method does all its work under it and never awaits anything else in between, so a
multi-step change (approve = status + audit + outbox) is never seen half-done.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from core.records import (
    Actor,
    AuditEntry,
    Feedback,
    FeedbackCounts,
    NewSubmission,
    OutboxItem,
    OutboxStats,
    Submission,
    SubmissionStatus,
    Subscription,
)
from core.storage._common import (
    OUTBOX_DEAD,
    OUTBOX_PENDING,
    OUTBOX_SENT,
    anchor_key,
    anchor_payload,
    decision_action,
    decision_key,
    decision_payload,
    is_notice_of,
    may_undo,
    refused_minute,
    utc,
)
from core.storage.interface import (
    AuditKind,
    DuplicateSubmission,
    NotFound,
    SubmitOutcome,
    UndoOutcome,
    UndoRefused,
    WrongState,
)


@dataclass(slots=True)
class _OutboxRow:
    """An outbox item plus the bookkeeping the worker never sees (mutable: it changes in place)."""

    item: OutboxItem
    status: str = OUTBOX_PENDING
    lease_until: datetime | None = None
    sent_at: datetime | None = None
    last_error: str | None = None


class MemoryStorage:
    """Everything in dicts; lost when the process ends. `backup` pickles the state to a file."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._submissions: dict[int, Submission] = {}
        self._subscriptions: dict[int, Subscription] = {}
        self._outbox: dict[int, _OutboxRow] = {}
        self._outbox_keys: set[str] = set()
        self._audit: list[AuditEntry] = []
        self._resolved: dict[str, tuple[str, datetime]] = {}
        self._feedback: dict[tuple[str, str, str], Feedback] = {}  # (platform, user, answer) -> vote
        self._next_id: dict[str, int] = {
            "submission": 1,
            "subscription": 1,
            "outbox": 1,
            "audit": 1,
            "feedback": 1,
        }

    def _new_id(self, table: str) -> int:
        value = self._next_id[table]
        self._next_id[table] = value + 1
        return value

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    # --- submissions and anchors -----------------------------------------------------------
    def _store_new(self, new: NewSubmission, status: SubmissionStatus) -> Submission:
        sub_id = self._new_id("submission")
        created = utc(new.created_at)
        decided = created if status == "approved" else None
        sub = Submission(
            id=sub_id,
            measurement=new.measurement,
            submitter=new.submitter,
            created_at=created,
            chat_id=new.chat_id,
            lang=new.lang,
            status=status,
            estimate=new.estimate,
            flags=tuple(new.flags),
            flag_details=tuple(new.flag_details),
            fingerprint=new.fingerprint,
            origin=new.origin,
            source=new.source,
            source_date=new.source_date,
            decided_at=decided,
        )
        self._submissions[sub_id] = sub
        return sub

    def _live_duplicate(self, fingerprint: str) -> Submission | None:
        # The SQL backends' partial unique index: blank fingerprints never collide, and only pending
        # or approved submissions hold theirs (a rejected measurement may be sent again).
        if not fingerprint:
            return None
        for sub_id in sorted(self._submissions):
            sub = self._submissions[sub_id]
            if sub.fingerprint == fingerprint and sub.status in ("pending", "approved"):
                return sub
        return None

    def _count_since(self, platform: str, user_id: str, since: datetime) -> int:
        since = utc(since)
        return sum(
            1
            for s in self._submissions.values()
            if s.submitter.platform == platform and s.submitter.user_id == user_id and s.created_at >= since
        )

    async def add_submission(self, new: NewSubmission) -> Submission:
        async with self._lock:
            existing = self._live_duplicate(new.fingerprint)
            if existing is not None:
                raise DuplicateSubmission(existing.id)
            return self._store_new(new, "pending")

    async def add_submission_checked(self, new: NewSubmission, since: datetime, limit: int) -> SubmitOutcome:
        async with self._lock:
            existing = self._live_duplicate(new.fingerprint)
            if existing is not None:
                return SubmitOutcome("duplicate", existing)
            if self._count_since(new.submitter.platform, new.submitter.user_id, since) >= limit:
                return SubmitOutcome("rate_limited")
            return SubmitOutcome("stored", self._store_new(new, "pending"))

    async def add_published(self, items: list[NewSubmission]) -> int:
        async with self._lock:
            known = {s.fingerprint for s in self._submissions.values() if s.fingerprint}
            added = 0
            for new in items:
                if new.fingerprint and new.fingerprint in known:
                    continue
                self._store_new(replace(new, origin="published"), "approved")
                if new.fingerprint:
                    known.add(new.fingerprint)
                added += 1
            return added

    async def get_submission(self, submission_id: int) -> Submission | None:
        return self._submissions.get(submission_id)

    async def submissions(
        self,
        status: SubmissionStatus | None = None,
        origin: str | None = None,
        platform: str | None = None,
        user_id: str | None = None,
        limit: int | None = None,
    ) -> list[Submission]:
        found = [
            s
            for s in self._submissions.values()
            if (status is None or s.status == status)
            and (origin is None or s.origin == origin)
            and (platform is None or s.submitter.platform == platform)
            and (user_id is None or s.submitter.user_id == user_id)
        ]
        found.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        return found if limit is None else found[:limit]

    async def count_submissions_since(self, platform: str, user_id: str, since: datetime) -> int:
        return self._count_since(platform, user_id, since)

    async def find_duplicate(self, fingerprint: str) -> Submission | None:
        return self._live_duplicate(fingerprint)

    def _transition(
        self,
        submission_id: int,
        expected: SubmissionStatus,
        new_status: SubmissionStatus,
        moderator: Actor,
        reason: str | None,
        at: datetime,
    ) -> Submission:
        current = self._submissions.get(submission_id)
        if current is None:
            raise NotFound(f"submission {submission_id}")
        if current.status != expected:
            raise WrongState(submission_id, current.status)
        decided = replace(current, status=new_status, decided_by=moderator, decided_at=utc(at), reason=reason)
        self._submissions[submission_id] = decided
        self._audit.append(
            AuditEntry(
                at=utc(at),
                actor=moderator,
                action=decision_action(new_status),
                submission_id=submission_id,
                ok=True,
                detail=reason or "",
                id=self._new_id("audit"),
            )
        )
        return decided

    def _enqueue(
        self,
        *,
        platform: str,
        chat_id: str,
        user_id: str,
        kind: str,
        payload: dict[str, Any],
        lang: str,
        dedupe_key: str,
        at: datetime,
        subscription_id: int | None = None,
    ) -> None:
        if dedupe_key in self._outbox_keys:
            return
        item_id = self._new_id("outbox")
        # Each item gets its own copy: a worker mutating one payload must not change another's.
        self._outbox[item_id] = _OutboxRow(
            OutboxItem(
                id=item_id,
                platform=platform,
                chat_id=chat_id,
                user_id=user_id,
                kind=kind,
                payload=copy.deepcopy(payload),
                lang=lang,
                dedupe_key=dedupe_key,
                attempts=0,
                created_at=at,
                next_attempt_at=at,
                subscription_id=subscription_id,
            )
        )
        self._outbox_keys.add(dedupe_key)

    def _enqueue_decision(self, sub: Submission, at: datetime) -> None:
        self._enqueue(
            platform=sub.submitter.platform,
            chat_id=sub.chat_id,
            user_id=sub.submitter.user_id,
            kind="decision",
            payload=decision_payload(sub),
            lang=sub.lang,
            dedupe_key=decision_key(sub.id, sub.status),
            at=at,
        )

    async def approve(self, submission_id: int, moderator: Actor, at: datetime) -> Submission:
        at = utc(at)
        async with self._lock:
            sub = self._transition(submission_id, "pending", "approved", moderator, None, at)
            payload = anchor_payload(sub)
            m = sub.measurement
            # Oldest subscription first, like the SQL backend: it decides subscription_id / lang when
            # several of a chat's subscriptions match.
            for sid in sorted(self._subscriptions):
                s = self._subscriptions[sid]
                if not s.active:
                    continue
                if s.gpu_id is not None and s.gpu_id != m.gpu_id:
                    continue
                if s.model_id is not None and s.model_id != m.model_id:
                    continue
                self._enqueue(
                    platform=s.platform,
                    chat_id=s.chat_id,
                    user_id=s.user_id,
                    kind="anchor",
                    payload=payload,
                    lang=s.lang,
                    dedupe_key=anchor_key(sub.id, s.platform, s.chat_id),
                    at=at,
                    subscription_id=s.id,
                )
            self._enqueue_decision(sub, at)
            return sub

    async def reject(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        at = utc(at)
        async with self._lock:
            sub = self._transition(submission_id, "pending", "rejected", moderator, reason, at)
            self._enqueue_decision(sub, at)
            return sub

    async def withdraw(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        at = utc(at)
        async with self._lock:
            sub = self._transition(submission_id, "approved", "withdrawn", moderator, reason, at)
            if sub.origin == "community":
                self._enqueue_decision(sub, at)
            return sub

    # --- audit -----------------------------------------------------------------------------
    async def record_audit(self, entry: AuditEntry) -> None:
        async with self._lock:
            self._audit.append(replace(entry, at=utc(entry.at), id=self._new_id("audit")))

    async def record_refused(self, entry: AuditEntry) -> None:
        minute, who = refused_minute(entry.at), (entry.actor.platform, entry.actor.user_id)
        async with self._lock:
            for i, e in enumerate(self._audit):
                same_actor = (e.actor.platform, e.actor.user_id) == who
                if not e.ok and same_actor and e.action == entry.action and e.at == minute:
                    self._audit[i] = replace(e, count=e.count + 1)
                    return
            self._audit.append(replace(entry, at=minute, ok=False, count=1, id=self._new_id("audit")))

    async def audit_log(self, limit: int = 50, kind: AuditKind | None = None) -> list[AuditEntry]:
        kept = [e for e in self._audit if kind is None or e.ok == (kind == "decisions")]
        ordered = sorted(kept, key=lambda e: (e.at, e.id), reverse=True)
        return ordered[:limit]

    async def undo_decision(
        self, submission_id: int, moderator: Actor, at: datetime, since: datetime
    ) -> UndoOutcome:
        async with self._lock:
            current = self._submissions.get(submission_id)
            if current is None:
                raise NotFound(f"submission {submission_id}")
            if current.status not in ("approved", "rejected"):
                raise WrongState(submission_id, current.status)
            if not may_undo(current, moderator, utc(since)):
                raise UndoRefused(submission_id)
            live = self._live_duplicate(current.fingerprint) if current.status == "rejected" else None
            if live is not None:
                raise DuplicateSubmission(live.id)
            undone = replace(current, status="pending", decided_by=None, decided_at=None, reason=None)
            self._submissions[submission_id] = undone
            sent = 0
            for item_id, row in list(self._outbox.items()):
                if not is_notice_of(row.item.dedupe_key, submission_id):
                    continue
                if row.status == OUTBOX_PENDING:
                    del self._outbox[item_id]
                    self._outbox_keys.discard(row.item.dedupe_key)
                else:
                    sent += 1
            self._audit.append(AuditEntry(
                at=utc(at), actor=moderator, action=f"undo:{decision_action(current.status)}",
                submission_id=submission_id, ok=True, detail=current.reason or "", id=self._new_id("audit"),
            ))  # fmt: skip
            return UndoOutcome(undone, sent)

    # --- subscriptions ---------------------------------------------------------------------
    async def subscribe(self, sub: Subscription) -> tuple[Subscription, bool]:
        async with self._lock:
            for sid, existing in self._subscriptions.items():
                if (existing.platform, existing.user_id, existing.gpu_id, existing.model_id) == (
                    sub.platform,
                    sub.user_id,
                    sub.gpu_id,
                    sub.model_id,
                ):
                    updated = replace(existing, chat_id=sub.chat_id, lang=sub.lang, active=True)
                    self._subscriptions[sid] = updated
                    return updated, False
            stored = replace(
                sub,
                id=self._new_id("subscription"),
                active=True,
                created_at=utc(sub.created_at) if sub.created_at else datetime.now(UTC),
            )
            self._subscriptions[stored.id] = stored
            return stored, True

    async def unsubscribe(
        self, platform: str, user_id: str, gpu_id: str | None, model_id: str | None, everything: bool = False
    ) -> int:
        async with self._lock:
            changed = 0
            for sid, s in self._subscriptions.items():
                if not s.active or s.platform != platform or s.user_id != user_id:
                    continue
                if not everything and (s.gpu_id, s.model_id) != (gpu_id, model_id):
                    continue
                self._subscriptions[sid] = replace(s, active=False)
                changed += 1
            return changed

    async def subscriptions_of(self, platform: str, user_id: str) -> list[Subscription]:
        return [
            s
            for _, s in sorted(self._subscriptions.items())
            if s.active and s.platform == platform and s.user_id == user_id
        ]

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        async with self._lock:
            changed = 0
            for sid, s in self._subscriptions.items():
                if s.active and s.platform == platform and s.chat_id == chat_id:
                    self._subscriptions[sid] = replace(s, active=False)
                    changed += 1
            return changed

    async def count_subscriptions(self) -> int:
        return sum(1 for s in self._subscriptions.values() if s.active)

    # --- outbox ----------------------------------------------------------------------------
    async def claim_outbox(
        self,
        platform: str,
        now: datetime,
        limit: int,
        lease_seconds: float = 60.0,
        chat_id: str | None = None,
    ) -> list[OutboxItem]:
        now = utc(now)
        async with self._lock:
            due = [
                row
                for row in self._outbox.values()
                if row.status == OUTBOX_PENDING
                and row.item.platform == platform
                and (chat_id is None or row.item.chat_id == chat_id)
                and row.item.next_attempt_at is not None
                and row.item.next_attempt_at <= now
                and (row.lease_until is None or row.lease_until <= now)
            ]
            due.sort(key=lambda row: (row.item.created_at or now, row.item.id))
            claimed = due[:limit]
            lease_until = now + timedelta(seconds=lease_seconds)
            for row in claimed:
                row.lease_until = lease_until
            return [replace(row.item, payload=copy.deepcopy(row.item.payload)) for row in claimed]

    def _row(self, item_id: int) -> _OutboxRow:
        row = self._outbox.get(item_id)
        if row is None:
            raise NotFound(f"outbox item {item_id}")
        return row

    async def mark_sent(self, item_id: int, at: datetime) -> None:
        async with self._lock:
            row = self._row(item_id)
            row.status, row.sent_at, row.lease_until = OUTBOX_SENT, utc(at), None

    async def mark_retry(self, item_id: int, next_attempt_at: datetime, error: str) -> None:
        async with self._lock:
            row = self._row(item_id)
            if row.status != OUTBOX_PENDING:
                return  # a late report from a worker whose lease ran out; the item is settled
            row.item = replace(row.item, attempts=row.item.attempts + 1, next_attempt_at=utc(next_attempt_at))
            row.lease_until, row.last_error = None, error

    async def mark_dead(self, item_id: int, error: str) -> None:
        async with self._lock:
            row = self._row(item_id)
            if row.status != OUTBOX_PENDING:
                return
            row.item = replace(row.item, attempts=row.item.attempts + 1)
            row.status, row.lease_until, row.last_error = OUTBOX_DEAD, None, error

    async def outbox_stats(self) -> OutboxStats:
        counts = {OUTBOX_PENDING: 0, OUTBOX_SENT: 0, OUTBOX_DEAD: 0}
        by_platform: dict[str, int] = {}
        for row in self._outbox.values():
            counts[row.status] += 1
            if row.status == OUTBOX_PENDING:
                by_platform[row.item.platform] = by_platform.get(row.item.platform, 0) + 1
        return OutboxStats(
            pending=counts[OUTBOX_PENDING],
            sent=counts[OUTBOX_SENT],
            dead=counts[OUTBOX_DEAD],
            by_platform=by_platform,
        )

    # --- "was this helpful?" -----------------------------------------------------------------
    async def record_feedback(self, feedback: Feedback) -> bool:
        key = (feedback.voter.platform, feedback.voter.user_id, feedback.answer_key)
        async with self._lock:
            earlier = self._feedback.get(key)
            vote_id = earlier.id if earlier is not None else self._new_id("feedback")
            self._feedback[key] = replace(feedback, at=utc(feedback.at), id=vote_id)
            return earlier is None

    async def feedback_counts(self) -> FeedbackCounts:
        helpful = sum(1 for v in self._feedback.values() if v.helpful)
        return FeedbackCounts(helpful=helpful, unhelpful=len(self._feedback) - helpful)

    async def unhelpful_feedback(self, limit: int = 20) -> list[Feedback]:
        votes = sorted(
            (v for v in self._feedback.values() if not v.helpful), key=lambda v: (v.at, v.id), reverse=True
        )
        return votes[:limit]

    # --- models resolved outside the catalog ------------------------------------------------
    async def cached_model(self, key: str) -> tuple[str, datetime] | None:
        return self._resolved.get(key)

    async def cache_model(self, key: str, payload: str, at: datetime) -> None:
        async with self._lock:
            self._resolved[key] = (payload, utc(at))

    # --- operations ------------------------------------------------------------------------
    async def backup(self, destination: str) -> None:
        async with self._lock:
            state = (
                self._submissions,
                self._subscriptions,
                self._outbox,
                self._audit,
                self._next_id,
                self._resolved,
            )
            data = pickle.dumps(state)
        Path(destination).write_bytes(data)

    # --- models resolved outside the catalog: every one, for the catalog overlay at start ------
    async def cached_models(self, limit: int = 10000) -> list[tuple[str, str, datetime]]:
        rows = [(key, payload, at) for key, (payload, at) in self._resolved.items()]
        return sorted(rows, key=lambda r: (r[2], r[0]), reverse=True)[:limit]
