"""`MemoryStorage`: the storage port in plain dicts, for fast service tests.

The rules are `core.storage._rules.StorageRules`, the ones the SQL backends run; this module holds
only the primitives on dicts, and passes the same contract suite (tests/core/storage/contract.py),
which is the proof that services written against `Storage` don't depend on SQL. One asyncio.Lock
stands in for transactions: every change does all its work under it and never awaits anything else
in between, so a multi-step change (approve = status + audit + outbox) is never seen half-done; the
rules check before they change anything, so a refusal leaves nothing to roll back.
"""

from __future__ import annotations

import asyncio
import copy
import pickle
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path
from typing import Any

from core.storage._common import OUTBOX_PENDING, anchor_key, is_notice_of, utc
from core.storage._rules import Conflict, Filters, Settlement, StorageRules, Store, Which
from core.storage.interface import AuditKind
from core.storage.records import (
    Actor,
    AuditEntry,
    Feedback,
    FeedbackCounts,
    NewSubmission,
    Origin,
    OutboxItem,
    Submission,
    SubmissionStatus,
    Subscription,
)


@dataclass(slots=True)
class _OutboxRow:
    """An outbox item plus the bookkeeping the worker never sees (mutable: it changes in place)."""

    item: OutboxItem
    status: str = OUTBOX_PENDING
    lease_until: datetime | None = None
    sent_at: datetime | None = None
    last_error: str | None = None


class _Tables:
    """The primitives (`core.storage._rules.Store`) on dicts; the caller holds the lock for changes."""

    def __init__(self) -> None:
        self.submissions: dict[int, Submission] = {}
        # fingerprint -> submission ids in insertion order: the duplicate checks stay O(1) per
        # insert (seeding 542 published anchors was a quadratic scan of every stored one)
        self.by_fingerprint: dict[str, list[int]] = {}
        self.subscriptions: dict[int, Subscription] = {}
        self.outbox: dict[int, _OutboxRow] = {}
        self.outbox_keys: set[str] = set()
        self.audit_rows: list[AuditEntry] = []
        self.resolved: dict[str, tuple[str, datetime]] = {}
        self.votes: dict[tuple[str, str, str], Feedback] = {}  # (platform, user, answer) -> vote
        self.next_id: dict[str, int] = {
            "submission": 1,
            "subscription": 1,
            "outbox": 1,
            "audit": 1,
            "feedback": 1,
        }

    def _new_id(self, table: str) -> int:
        value = self.next_id[table]
        self.next_id[table] = value + 1
        return value

    async def lock(self, key: str, per_schema: bool = False) -> None:
        return None  # one process, and the caller holds the one lock already

    # --- submissions -------------------------------------------------------------------------
    async def submission(self, submission_id: int, lock: bool = False) -> Submission | None:
        return self.submissions.get(submission_id)

    async def live_submission(self, fingerprint: str) -> Submission | None:
        for sub_id in self.by_fingerprint.get(fingerprint, ()):
            sub = self.submissions[sub_id]
            if sub.status in ("pending", "approved"):
                return sub
        return None

    async def fingerprint_stored(self, fingerprint: str) -> bool:
        return fingerprint in self.by_fingerprint

    async def count_since(self, platform: str, user_id: str, since: datetime) -> int:
        return sum(
            1
            for s in self.submissions.values()
            if s.submitter.platform == platform and s.submitter.user_id == user_id and s.created_at >= since
        )

    async def insert_submission(
        self, new: NewSubmission, status: SubmissionStatus, origin: Origin
    ) -> Submission:
        if new.fingerprint and await self.live_submission(new.fingerprint) is not None:
            raise Conflict("the live-fingerprint index")  # as the SQL backends' partial unique index
        sub_id = self._new_id("submission")
        created = utc(new.created_at)
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
            origin=origin,
            source=new.source,
            source_date=new.source_date,
            # Published anchors are approved on arrival; their decision time is their arrival.
            decided_at=created if status == "approved" else None,
        )
        self.submissions[sub_id] = sub
        if sub.fingerprint:
            self.by_fingerprint.setdefault(sub.fingerprint, []).append(sub_id)
        return sub

    async def find_submissions(self, where: Filters, limit: int | None) -> list[Submission]:
        found = [
            s
            for s in self.submissions.values()
            if where.status in (None, s.status)
            and where.origin in (None, s.origin)
            and where.platform in (None, s.submitter.platform)
            and where.user_id in (None, s.submitter.user_id)
        ]
        found.sort(key=lambda s: (s.created_at, s.id), reverse=True)
        return found if limit is None else found[:limit]

    async def set_state(self, sub: Submission) -> Submission:
        self.submissions[sub.id] = sub
        return sub

    async def set_measurement(self, sub: Submission) -> None:
        self.submissions[sub.id] = sub

    # --- audit -------------------------------------------------------------------------------
    async def insert_audit(self, entry: AuditEntry) -> None:
        self.audit_rows.append(replace(entry, id=self._new_id("audit")))

    async def count_refused(self, actor: Actor, action: str, minute: datetime) -> bool:
        for i, e in enumerate(self.audit_rows):
            same_actor = (e.actor.platform, e.actor.user_id) == (actor.platform, actor.user_id)
            if not e.ok and same_actor and e.action == action and e.at == minute:
                self.audit_rows[i] = replace(e, count=e.count + 1)
                return True
        return False

    async def audit(self, limit: int, kind: AuditKind | None) -> list[AuditEntry]:
        kept = [e for e in self.audit_rows if kind is None or e.ok == (kind == "decisions")]
        return sorted(kept, key=lambda e: (e.at, e.id), reverse=True)[:limit]

    # --- outbox ------------------------------------------------------------------------------
    def _add_item(self, item: OutboxItem) -> None:
        if item.dedupe_key in self.outbox_keys:
            return
        # Each item gets its own copy: a worker mutating one payload must not change another's.
        stored = replace(item, id=self._new_id("outbox"), payload=copy.deepcopy(item.payload))
        self.outbox[stored.id] = _OutboxRow(stored)
        self.outbox_keys.add(stored.dedupe_key)

    async def fan_out(self, sub: Submission, payload: dict[str, Any], at: datetime) -> None:
        m = sub.measurement
        for sid in sorted(self.subscriptions):  # oldest first: it decides a chat's lang and id
            s = self.subscriptions[sid]
            if not s.active or s.gpu_id not in (None, m.gpu_id) or s.model_id not in (None, m.model_id):
                continue
            key = anchor_key(sub.id, s.platform, s.chat_id)
            self._add_item(
                OutboxItem(
                    0, s.platform, s.chat_id, s.user_id, "anchor", payload, s.lang, key, 0, at, at, s.id
                )
            )

    async def tell_submitter(self, sub: Submission, payload: dict[str, Any], key: str, at: datetime) -> None:
        who = sub.submitter
        self._add_item(
            OutboxItem(
                0, who.platform, sub.chat_id, who.user_id, "decision", payload, sub.lang, key, 0, at, at
            )
        )

    async def drop_unsent(self, submission_id: int) -> int:
        sent = 0
        for item_id, row in list(self.outbox.items()):
            if not is_notice_of(row.item.dedupe_key, submission_id):
                continue
            if row.status == OUTBOX_PENDING:
                del self.outbox[item_id]
                self.outbox_keys.discard(row.item.dedupe_key)
            else:
                sent += 1
        return sent

    async def claim(
        self, platform: str, now: datetime, lease_until: datetime, limit: int, chat_id: str | None
    ) -> list[OutboxItem]:
        due = [
            row
            for row in self.outbox.values()
            if row.status == OUTBOX_PENDING
            and row.item.platform == platform
            and (chat_id is None or row.item.chat_id == chat_id)
            and row.item.next_attempt_at is not None
            and row.item.next_attempt_at <= now
            and (row.lease_until is None or row.lease_until <= now)
        ]
        due.sort(key=lambda row: (row.item.created_at or now, row.item.id))
        claimed = due[:limit]
        for row in claimed:
            row.lease_until = lease_until
        return [replace(row.item, payload=copy.deepcopy(row.item.payload)) for row in claimed]

    async def settle(self, item_id: int, change: Settlement) -> bool:
        row = self.outbox.get(item_id)
        if row is None or (change.only_pending and row.status != OUTBOX_PENDING):
            return False
        attempts = row.item.attempts + (1 if change.attempt else 0)
        row.item = replace(
            row.item, attempts=attempts, next_attempt_at=change.next_attempt_at or row.item.next_attempt_at
        )
        row.status = change.status or row.status
        row.sent_at = change.sent_at or row.sent_at
        row.last_error = row.last_error if change.error is None else change.error
        row.lease_until = None
        return True

    async def outbox_exists(self, item_id: int) -> bool:
        return item_id in self.outbox

    async def outbox_counts(self) -> list[tuple[str, str, int]]:
        counts: dict[tuple[str, str], int] = {}
        for row in self.outbox.values():
            key = (row.status, row.item.platform)
            counts[key] = counts.get(key, 0) + 1
        return [(status, platform, n) for (status, platform), n in counts.items()]

    # --- subscriptions -----------------------------------------------------------------------
    async def upsert_subscription(self, sub: Subscription) -> tuple[Subscription, bool]:
        identity = (sub.platform, sub.user_id, sub.gpu_id, sub.model_id)
        for sid, existing in self.subscriptions.items():
            if (existing.platform, existing.user_id, existing.gpu_id, existing.model_id) == identity:
                updated = replace(existing, chat_id=sub.chat_id, lang=sub.lang, active=True)
                self.subscriptions[sid] = updated
                return updated, False
        stored = replace(sub, id=self._new_id("subscription"))
        self.subscriptions[stored.id] = stored
        return stored, True

    def _deactivate(self, platform: str, matches: Callable[[Subscription], bool]) -> int:
        changed = 0
        for sid, s in self.subscriptions.items():
            if s.active and s.platform == platform and matches(s):
                self.subscriptions[sid] = replace(s, active=False)
                changed += 1
        return changed

    async def deactivate_subscriptions(self, platform: str, user_id: str, which: Which) -> int:
        return self._deactivate(
            platform, lambda s: s.user_id == user_id and (which is None or (s.gpu_id, s.model_id) == which)
        )

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        return self._deactivate(platform, lambda s: s.chat_id == chat_id)

    async def active_subscriptions(self, platform: str, user_id: str) -> list[Subscription]:
        return [
            s
            for _, s in sorted(self.subscriptions.items())
            if s.active and s.platform == platform and s.user_id == user_id
        ]

    async def count_active_subscriptions(self) -> int:
        return sum(1 for s in self.subscriptions.values() if s.active)

    # --- feedback ----------------------------------------------------------------------------
    async def upsert_feedback(self, vote: Feedback) -> bool:
        key = (vote.voter.platform, vote.voter.user_id, vote.answer_key)
        earlier = self.votes.get(key)
        self.votes[key] = replace(vote, id=earlier.id if earlier is not None else self._new_id("feedback"))
        return earlier is None

    async def feedback_counts(self) -> FeedbackCounts:
        helpful = sum(1 for v in self.votes.values() if v.helpful)
        return FeedbackCounts(helpful=helpful, unhelpful=len(self.votes) - helpful)

    async def unhelpful(self, limit: int) -> list[Feedback]:
        votes = sorted(
            (v for v in self.votes.values() if not v.helpful), key=lambda v: (v.at, v.id), reverse=True
        )
        return votes[:limit]

    # --- models resolved outside the catalog -------------------------------------------------
    async def cached_model(self, key: str) -> tuple[str, datetime] | None:
        return self.resolved.get(key)

    async def cache_model(self, key: str, payload: str, at: datetime) -> None:
        self.resolved[key] = (payload, at)

    async def cached_models(self, limit: int) -> list[tuple[str, str, datetime]]:
        rows = [(key, payload, at) for key, (payload, at) in self.resolved.items()]
        return sorted(rows, key=lambda r: (r[2], r[0]), reverse=True)[:limit]


class MemoryStorage(StorageRules):
    """Everything in dicts; lost when the process ends. `backup` pickles the state to a file."""

    def __init__(self) -> None:
        self._lock = asyncio.Lock()
        self._tables = _Tables()

    async def open(self) -> None:
        return None

    async def close(self) -> None:
        return None

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Store]:
        async with self._lock:
            yield self._tables

    _autocommit = _transaction

    @asynccontextmanager
    async def _query(self) -> AsyncIterator[Store]:
        yield self._tables  # reads never await in between: they see a whole change or none of it

    # --- operations ------------------------------------------------------------------------
    async def backup(self, destination: str) -> None:
        t = self._tables
        async with self._lock:
            data = pickle.dumps(
                (t.submissions, t.subscriptions, t.outbox, t.audit_rows, t.next_id, t.resolved)
            )
        Path(destination).write_bytes(data)
