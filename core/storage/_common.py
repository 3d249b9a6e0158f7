"""What every storage backend must do the same way: time normalisation, outbox payloads and dedupe
keys. Kept in one place so that the memory, SQLite and PostgreSQL backends produce byte-for-byte the
same notices, which the contract suite checks."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from core.storage.records import Actor, Submission, SubmissionStatus

# Pending, leased and retried items are all "pending": the status only changes when the worker is
# done with an item for good.
OUTBOX_PENDING = "pending"
OUTBOX_SENT = "sent"
OUTBOX_DEAD = "dead"


def utc(moment: datetime) -> datetime:
    """Aware UTC. A naive datetime is taken to be UTC already (every caller uses UTC clocks), so
    that comparisons never mix naive and aware values and text sorts like time."""
    if moment.tzinfo is None:
        return moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


def iso(moment: datetime) -> str:
    """Fixed-width ISO-8601 UTC text (always with microseconds), so SQL `<=` on text is `<=` in time."""
    return utc(moment).isoformat(timespec="microseconds")


def from_iso(text: str) -> datetime:
    return utc(datetime.fromisoformat(text))


def anchor_key(submission_id: int, platform: str, chat_id: str) -> str:
    return f"anchor:{submission_id}:{platform}:{chat_id}"


def decision_key(submission_id: int, status: SubmissionStatus) -> str:
    return f"decision:{submission_id}:{status}"


def refused_minute(moment: datetime) -> datetime:
    """The row a refused attempt is counted in: its minute's start (record_refused aggregates)."""
    return utc(moment).replace(second=0, microsecond=0)


def may_undo(sub: Submission, moderator: Actor, since: datetime) -> bool:
    """Only the moderator who decided (same platform and id), and only a decision made since `since`."""
    by = sub.decided_by
    if by is None or sub.decided_at is None:
        return False
    same = (by.platform, by.user_id) == (moderator.platform, moderator.user_id)
    return same and utc(sub.decided_at) >= since


def is_notice_of(dedupe_key: str, submission_id: int) -> bool:
    """Whether an outbox item (by its dedupe key) tells of this submission: an anchor or a decision."""
    kind, _, rest = dedupe_key.partition(":")
    return kind in ("anchor", "decision") and rest.partition(":")[0] == str(submission_id)


def decision_action(status: SubmissionStatus) -> str:
    """The audit action of the decision that led to `status`."""
    return {"approved": "approve", "rejected": "reject", "withdrawn": "withdraw"}.get(status, status)


def anchor_payload(sub: Submission) -> dict[str, Any]:
    """What a subscriber's notice is rendered from: the new anchor, with its credit. Plain JSON
    values only; the notice is rendered at send time in the subscriber's language."""
    m = sub.measurement
    return {
        "submission_id": sub.id,
        "origin": sub.origin,
        "gpu_id": m.gpu_id,
        "model_id": m.model_id,
        "quant": m.quant,
        "gpu_count": m.gpu_count,
        "memory_gib": m.memory_gib,
        "decode_tps": m.decode_tps,
        "prefill_tps": m.prefill_tps,
        "context": m.context,
        "framework": m.framework,
        "credit": sub.submitter.name,
    }


def decision_payload(sub: Submission) -> dict[str, Any]:
    """What the submitter's outcome notice is rendered from (`sub` is already in its new state)."""
    m = sub.measurement
    return {
        "submission_id": sub.id,
        "status": sub.status,
        "reason": sub.reason,
        "gpu_id": m.gpu_id,
        "model_id": m.model_id,
        "quant": m.quant,
        "decode_tps": m.decode_tps,
    }
