"""The storage port: everything the community services need to persist, as one async interface.

The SQLite backend (`core.storage.sqlite`) implements it; a PostgreSQL backend for several bot
processes would implement it too and must pass the same contract suite
(`tests/core/storage/contract.py`). Multi-step changes are one method each (approve = status +
audit + outbox rows for every matching subscriber and the submitter), so each backend can make
them one transaction and nothing half-done is ever visible.
"""

from __future__ import annotations

from datetime import datetime
from typing import Protocol

from core.records import (
    Actor,
    AuditEntry,
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


class Storage(Protocol):
    async def open(self) -> None:
        """Connect and apply pending migrations. Idempotent."""

    async def close(self) -> None: ...

    # --- submissions and anchors -----------------------------------------------------------
    async def add_submission(self, new: NewSubmission) -> Submission: ...

    async def add_published(self, items: list[NewSubmission]) -> int:
        """Insert published measurements as approved anchors (origin "published"), skipping any
        whose fingerprint is already stored; no outbox, no audit. Returns how many were added."""

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

    async def audit_log(self, limit: int = 50) -> list[AuditEntry]: ...

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

    # --- operations ------------------------------------------------------------------------
    async def backup(self, destination: str) -> None:
        """A consistent copy of the live database, safe while the bot runs."""
