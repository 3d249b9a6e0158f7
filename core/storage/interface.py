"""The storage port: everything the community services need to persist, as one async interface.

The memory (`core.storage.memory`) and SQLite (`core.storage.sqlite`) backends implement it here; the
PostgreSQL one for several bot processes lives at the edge (`bot.storage.postgres`: it needs a network
driver) and passes the same contract suite (`tests/core/storage/contract.py`). The rules themselves are
written once, in `core.storage._rules.StorageRules`, which every backend extends with its primitives
(`core.storage._sql` holds the SQL that SQLite and PostgreSQL share). Multi-step changes are
one method each (approve = status + audit + outbox rows for every matching subscriber and the
submitter; /submit's check-and-insert), so each backend can make them one transaction and nothing
half-done is ever visible.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Literal, Protocol

from core.storage.records import (
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


class StorageError(Exception):
    """Base of the errors a backend raises on purpose (not a crash)."""


class NotFound(StorageError):
    pass


class WrongState(StorageError):
    """E.g. approving a submission that is already rejected. `status` is the current one."""

    def __init__(self, submission_id: int, status: str):
        super().__init__(f"submission {submission_id} is {status}")
        self.submission_id = submission_id
        self.status = status


class StorageUnavailable(StorageError):
    """The database can't be used at all (a directory, not a database, read-only, unreachable). `where`
    is the path or address and `why` one short clause, so the command line can say it in one sentence
    that names the setting to fix."""

    def __init__(self, where: str, why: str):
        super().__init__(f"{where}: {why}")
        self.where = where
        self.why = why


class DuplicateSubmission(StorageError):
    """`add_submission` with the fingerprint of a pending or approved submission (`existing_id`)."""

    def __init__(self, existing_id: int):
        super().__init__(f"duplicate of submission {existing_id}")
        self.existing_id = existing_id


class UndoRefused(StorageError):
    """`undo_decision` by someone other than the deciding moderator, or after its window."""

    def __init__(self, submission_id: int):
        super().__init__(f"submission {submission_id}: not this moderator's recent decision")
        self.submission_id = submission_id


SubmitResult = Literal["stored", "duplicate", "rate_limited"]
# /review audit's views: the decisions (ok entries) or the refused attempts; None: both.
AuditKind = Literal["decisions", "refused"]


@dataclass(frozen=True, slots=True)
class UndoOutcome:
    """`submission` is pending again; `notices_sent` of its notices had already been delivered (they
    can't be taken back); the ones not yet sent were dropped."""

    submission: Submission
    notices_sent: int


@dataclass(frozen=True, slots=True)
class SubmitOutcome:
    """What `add_submission_checked` did. `submission` is the new one (stored), the one already there
    (duplicate) or None (rate_limited)."""

    result: SubmitResult
    submission: Submission | None = None


class Storage(Protocol):
    async def open(self) -> None:
        """Connect and apply pending migrations. Idempotent."""

    async def close(self) -> None: ...

    # --- submissions and anchors -----------------------------------------------------------
    async def add_submission(self, new: NewSubmission) -> Submission:
        """Store a pending submission; raises DuplicateSubmission when its (non-blank) fingerprint is
        that of a pending or approved one (a unique constraint in the SQL backends)."""

    async def add_published(self, items: list[NewSubmission]) -> int:
        """Insert published measurements as approved anchors (origin "published"), skipping any
        whose fingerprint is already stored; no outbox, no audit. Returns how many were added."""

    async def published_current(self, items: list[NewSubmission]) -> bool:
        """Whether add_published(items) would change nothing; reads only (no write lock)."""

    async def add_submission_checked(self, new: NewSubmission, since: datetime, limit: int) -> SubmitOutcome:
        """The /submit step as ONE atomic operation, safe against concurrent calls from any number of
        coroutines or processes: if a pending or approved submission has `new.fingerprint` (not blank)
        -> duplicate (that one); else if the submitter already has `limit` or more submissions created
        at or after `since` -> rate_limited; else store it pending -> stored. A burst of N calls for one
        user stores exactly min(N, limit) distinct ones."""

    async def get_submission(self, submission_id: int) -> Submission | None: ...

    async def submissions(
        self,
        status: SubmissionStatus | None = None,
        origin: str | None = None,
        platform: str | None = None,
        user_id: str | None = None,
        limit: int | None = None,
    ) -> list[Submission]:
        """Newest first. Filters are ANDed; None means any."""

    async def count_submissions_since(self, platform: str, user_id: str, since: datetime) -> int:
        """For the per-user rate limit."""

    async def find_duplicate(self, fingerprint: str) -> Submission | None:
        """A pending or approved submission with this fingerprint, if any."""

    async def approve(self, submission_id: int, moderator: Actor, at: datetime) -> Submission:
        """pending -> approved, in one transaction with: an audit entry; one outbox item per
        matching active subscription, at most one per (platform, chat) (dedupe key
        "anchor:<id>:<platform>:<chat>"), and one "decision" item for the submitter (dedupe key
        "decision:<id>:approved"). Raises NotFound / WrongState."""

    async def reject(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        """pending -> rejected, with audit and the submitter's "decision" item."""

    async def withdraw(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        """approved -> withdrawn (community or published), with audit and the submitter's
        "decision" item for community ones."""

    # --- audit -----------------------------------------------------------------------------
    async def record_audit(self, entry: AuditEntry) -> None:
        """Refused attempts (a non-moderator pressing approve) and other events worth keeping."""

    async def record_refused(self, entry: AuditEntry) -> None:
        """A refused attempt (`entry.ok` False), aggregated: one row per actor (platform, user id),
        action and minute, whose `count` grows, so a flood of forged presses writes one row a minute,
        not one per press (issue 13). The row's time is the minute's start; its submission id and
        detail are the first attempt's."""

    async def audit_log(self, limit: int = 50, kind: AuditKind | None = None) -> list[AuditEntry]:
        """Newest first; `kind` "decisions" keeps the ok entries, "refused" the refused ones."""

    async def undo_decision(
        self, submission_id: int, moderator: Actor, at: datetime, since: datetime
    ) -> UndoOutcome:
        """approved or rejected -> pending again, in one transaction with an audit entry
        ("undo:approve" / "undo:reject") and the submission's unsent notices dropped. Only by the
        moderator who decided it (same platform and user id), decided at or after `since`: else
        UndoRefused. NotFound / WrongState (not approved or rejected) / DuplicateSubmission (a live
        one with its fingerprint came in meanwhile)."""

    # --- subscriptions ---------------------------------------------------------------------
    async def subscribe(self, sub: Subscription) -> tuple[Subscription, bool]:
        """Returns (the stored subscription, created?). Subscribing twice to the same thing
        (platform, user, gpu, model) reactivates / updates chat and lang, and says created=False."""

    async def unsubscribe(
        self, platform: str, user_id: str, gpu_id: str | None, model_id: str | None, everything: bool = False
    ) -> int:
        """Deactivates the matching subscription (or all of the user's with everything=True)."""

    async def subscriptions_of(self, platform: str, user_id: str) -> list[Subscription]:
        """Active ones only."""

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        """The platform refused delivery for good (Telegram 403): stop every subscription there."""

    async def count_subscriptions(self) -> int: ...

    # --- outbox ----------------------------------------------------------------------------
    async def claim_outbox(
        self,
        platform: str,
        now: datetime,
        limit: int,
        lease_seconds: float = 60.0,
        chat_id: str | None = None,
    ) -> list[OutboxItem]:
        """Due, unsent items of one platform (optionally one chat), oldest first; claiming leases
        them so a second worker doesn't send them too. An item whose lease ran out (its worker
        died) is due again: delivery is at-least-once."""

    async def mark_sent(self, item_id: int, at: datetime) -> None: ...

    async def mark_retry(self, item_id: int, next_attempt_at: datetime, error: str) -> None: ...

    async def mark_dead(self, item_id: int, error: str) -> None:
        """Given up (too many attempts or a permanent refusal)."""

    async def outbox_stats(self) -> OutboxStats: ...

    # --- models resolved outside the catalog ------------------------------------------------
    async def cached_model(self, key: str) -> tuple[str, datetime] | None:
        """(payload, when it was resolved) stored under `key` by cache_model, or None."""

    async def cache_model(self, key: str, payload: str, at: datetime) -> None:
        """Keep `payload` (JSON text, the resolver's own) under `key`, replacing what was there."""

    # --- operations ------------------------------------------------------------------------
    async def backup(self, destination: str) -> None:
        """A consistent copy of the live database, safe while the bot runs."""

    # --- "was this helpful?" -----------------------------------------------------------------
    async def record_feedback(self, feedback: Feedback) -> bool:
        """Keep one reader's vote on one answer: True when it is their first on that answer, False when
        it replaced their earlier one (platform, user id and answer key identify it)."""

    async def feedback_counts(self) -> FeedbackCounts:
        """Helpful and unhelpful votes over every answer."""

    async def unhelpful_feedback(self, limit: int = 20) -> list[Feedback]:
        """The answers voted unhelpful, newest vote first (moderators' /review feedback)."""

    # --- models resolved outside the catalog: every one, for the catalog overlay at start ------
    async def cached_models(self, limit: int = 10000) -> list[tuple[str, str, datetime]]:
        """Every (key, payload, when it was resolved) kept by cache_model, newest first."""
