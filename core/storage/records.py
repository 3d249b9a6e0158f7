"""The community data that outlives a process: submissions (which become anchors when approved),
subscriptions, the notification outbox and the audit log.

These frozen dataclasses are what the storage interface takes and returns; every backend maps them
to its own rows. Names are catalog ids (already resolved), never what the user typed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Literal

Platform = Literal["console", "telegram", "discord"]
SubmissionStatus = Literal["pending", "approved", "rejected", "withdrawn"]
Origin = Literal["community", "published"]


@dataclass(frozen=True, slots=True)
class Actor:
    """Who did something: a user on one platform. `name` is shown as the credit on anchors."""

    platform: str
    user_id: str
    name: str = ""
    roles: tuple[str, ...] = ()  # Discord role ids (moderator roles); empty elsewhere

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.user_id}"


@dataclass(frozen=True, slots=True)
class Measurement:
    """One measured benchmark, resolved to catalog ids. Only decode speed is required."""

    gpu_id: str
    model_id: str
    quant: str
    decode_tps: float
    gpu_count: int = 1
    memory_gib: float | None = None  # per card, where the chip comes in several sizes
    context: int | None = None  # context size the run was started with
    depth: int | None = None  # tokens already in the KV cache when decode was measured
    framework: str = "llama.cpp"
    framework_version: str | None = None
    backend: str | None = None  # cuda / rocm / metal / vulkan / sycl / cpu
    os: str | None = None
    prefill_tps: float | None = None
    prompt_tokens: int | None = None  # prompt length of the prefill measurement
    kv_type: str | None = None
    flash_attn: bool | None = None
    memory_used_gib: float | None = None
    evidence: str | None = None  # a link or the pasted log
    notes: str | None = None


@dataclass(frozen=True, slots=True)
class EstimateSnapshot:
    """What tokbot estimated for a measurement when it was submitted (for /accuracy)."""

    decode_low: float
    decode_mid: float
    decode_high: float
    prefill_mid: float | None = None
    fits: str = ""  # smooth / tight / no_fit
    engine_version: str = ""  # which calibration produced it (catalogs/calibration.toml meta)


@dataclass(frozen=True, slots=True)
class NewSubmission:
    measurement: Measurement
    submitter: Actor
    created_at: datetime
    chat_id: str  # where to tell the submitter the outcome
    lang: str = "en"
    estimate: EstimateSnapshot | None = None
    flags: tuple[str, ...] = ()  # codes for the moderator, e.g. "far_from_estimate"
    fingerprint: str = ""  # equal for duplicates (same person, same setup, same numbers)
    # (flag code, JSON of its numbers): the moderator's view renders them in its own language.
    flag_details: tuple[tuple[str, str], ...] = ()
    origin: Origin = "community"
    source: str | None = None  # published anchors: where the number was printed
    source_date: str | None = None  # published anchors: the source's date (YYYY-MM)


@dataclass(frozen=True, slots=True)
class Submission:
    id: int
    measurement: Measurement
    submitter: Actor
    created_at: datetime
    chat_id: str
    lang: str
    status: SubmissionStatus
    estimate: EstimateSnapshot | None = None
    flags: tuple[str, ...] = ()
    fingerprint: str = ""
    # (flag code, JSON of its numbers): the moderator's view renders them in its own language.
    flag_details: tuple[tuple[str, str], ...] = ()
    origin: Origin = "community"
    source: str | None = None
    source_date: str | None = None
    decided_by: Actor | None = None
    decided_at: datetime | None = None
    reason: str | None = None


@dataclass(frozen=True, slots=True)
class Subscription:
    """A wish to hear about new anchors. gpu_id / model_id None means "any"; both None is everything."""

    platform: str
    user_id: str
    chat_id: str  # where notices go (Telegram: the private chat the user started)
    gpu_id: str | None = None
    model_id: str | None = None
    lang: str = "en"
    id: int = 0
    active: bool = True
    created_at: datetime | None = None


@dataclass(frozen=True, slots=True)
class OutboxItem:
    """A notification waiting to be sent. `kind` + `payload` are rendered at send time, in `lang`."""

    id: int
    platform: str
    chat_id: str
    user_id: str
    kind: str  # "anchor" (a subscriber's notice) | "decision" (the submitter's outcome)
    payload: dict[str, Any]
    lang: str
    dedupe_key: str
    attempts: int = 0
    created_at: datetime | None = None
    next_attempt_at: datetime | None = None
    subscription_id: int | None = None


@dataclass(frozen=True, slots=True)
class AuditEntry:
    at: datetime
    actor: Actor
    action: str  # approve / reject / withdraw / refused:<action>
    submission_id: int | None
    ok: bool
    detail: str = ""
    id: int = 0
    count: int = 1  # refused attempts are aggregated: how many this row stands for (its minute)


@dataclass(frozen=True, slots=True)
class OutboxStats:
    pending: int = 0
    sent: int = 0
    dead: int = 0
    by_platform: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Feedback:
    """One reader's "was this helpful?" on one answer. One per person per answer (`answer_key`, the
    answer's follow-up key): pressing the other button changes it."""

    answer_key: str
    voter: Actor
    chat_id: str
    helpful: bool
    question: str  # as asked
    query: str  # the answer's AskQuery as JSON (AskQuery.as_json): what was estimated
    reply: str  # the reply's first lines, plain text: what a moderator reads in /review feedback
    engine_version: str  # the calibration that produced the estimate (core.community.submit_limits)
    lang: str
    at: datetime
    id: int = 0


@dataclass(frozen=True, slots=True)
class FeedbackCounts:
    helpful: int = 0
    unhelpful: int = 0

    @property
    def total(self) -> int:
        return self.helpful + self.unhelpful
