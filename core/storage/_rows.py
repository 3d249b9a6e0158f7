"""Rows of the SQL backends as records, and records as row values: one copy for SQLite and PostgreSQL.

Both schemas have the same tables and column names; they differ in types only (SQLite keeps times as
fixed-width ISO text and booleans as 0/1, PostgreSQL as timestamptz and boolean; JSON is text in SQLite
and jsonb in PostgreSQL, which the drivers hand over as text). The converters accept either form, so a
row read from one backend and a row read from the other become the same record, which the contract
suite and `db copy` rely on.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, fields
from datetime import datetime
from typing import Any, Protocol

from core.storage._common import from_iso, utc
from core.storage.records import (
    Actor,
    AuditEntry,
    EstimateSnapshot,
    Feedback,
    Measurement,
    NewSubmission,
    OutboxItem,
    Submission,
    SubmissionStatus,
    Subscription,
)


class Row(Protocol):
    """sqlite3.Row, asyncpg.Record or a dict: whatever reads columns by name."""

    def __getitem__(self, key: str, /) -> Any: ...


_MEASUREMENT_FIELDS = frozenset(f.name for f in fields(Measurement))
_ESTIMATE_FIELDS = frozenset(f.name for f in fields(EstimateSnapshot))

# Every table's columns, in order, with the kind of value each holds: what `db copy` moves and how it
# converts it. "time" is ISO text in SQLite and timestamptz in PostgreSQL; "bool" 0/1 and boolean.
TABLE_COLUMNS: dict[str, tuple[tuple[str, str], ...]] = {
    "submissions": (
        ("id", "int"),
        ("gpu_id", "text"),
        ("model_id", "text"),
        ("quant", "text"),
        ("decode_tps", "real"),
        ("measurement", "json"),
        ("platform", "text"),
        ("user_id", "text"),
        ("user_name", "text"),
        ("user_roles", "json"),
        ("chat_id", "text"),
        ("lang", "text"),
        ("status", "text"),
        ("origin", "text"),
        ("estimate", "json"),
        ("flags", "json"),
        ("fingerprint", "text"),
        ("source", "text"),
        ("source_date", "text"),
        ("created_at", "time"),
        ("decided_by", "json"),
        ("decided_at", "time"),
        ("reason", "text"),
        ("flag_details", "json"),
    ),
    "subscriptions": (
        ("id", "int"),
        ("platform", "text"),
        ("user_id", "text"),
        ("chat_id", "text"),
        ("gpu_id", "text"),
        ("model_id", "text"),
        ("lang", "text"),
        ("active", "bool"),
        ("created_at", "time"),
    ),
    "outbox": (
        ("id", "int"),
        ("platform", "text"),
        ("chat_id", "text"),
        ("user_id", "text"),
        ("kind", "text"),
        ("payload", "json"),
        ("lang", "text"),
        ("dedupe_key", "text"),
        ("submission_id", "int"),
        ("subscription_id", "int"),
        ("status", "text"),
        ("attempts", "int"),
        ("created_at", "time"),
        ("next_attempt_at", "time"),
        ("lease_until", "time"),
        ("sent_at", "time"),
        ("last_error", "text"),
    ),
    "audit_log": (
        ("id", "int"),
        ("at", "time"),
        ("platform", "text"),
        ("user_id", "text"),
        ("user_name", "text"),
        ("user_roles", "json"),
        ("action", "text"),
        ("submission_id", "int"),
        ("ok", "bool"),
        ("detail", "text"),
        ("count", "int"),
    ),
    "feedback": (
        ("id", "int"),
        ("answer_key", "text"),
        ("platform", "text"),
        ("user_id", "text"),
        ("user_name", "text"),
        ("user_roles", "json"),
        ("chat_id", "text"),
        ("helpful", "bool"),
        ("question", "text"),
        ("query", "text"),
        ("reply", "text"),
        ("engine_version", "text"),
        ("lang", "text"),
        ("at", "time"),
    ),
    "resolved_models": (
        ("key", "text"),
        ("payload", "json"),
        ("resolved_at", "time"),
    ),
}
# Parents before children (outbox references submissions and subscriptions).
COPY_ORDER = ("submissions", "subscriptions", "outbox", "audit_log", "feedback", "resolved_models")


def as_time(value: str | datetime) -> datetime:
    return utc(value) if isinstance(value, datetime) else from_iso(value)


def as_time_or_none(value: str | datetime | None) -> datetime | None:
    return None if value is None else as_time(value)


def _known(data: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    # Rows written by an older or newer tokbot may carry a field this version doesn't have.
    return {k: v for k, v in data.items() if k in names}


def actor_json(actor: Actor | None) -> str | None:
    if actor is None:
        return None
    return json.dumps(
        {
            "platform": actor.platform,
            "user_id": actor.user_id,
            "name": actor.name,
            "roles": list(actor.roles),
        },
        ensure_ascii=False,
    )


def actor_from_json(text: str | None) -> Actor | None:
    if not text:
        return None
    data = json.loads(text)
    return Actor(
        platform=data["platform"],
        user_id=data["user_id"],
        name=data.get("name", ""),
        roles=tuple(data.get("roles", ())),
    )


def _user(row: Row) -> Actor:
    """The person a submission, audit entry or vote row names (its platform, user_id, user_name and
    user_roles columns)."""
    return Actor(
        platform=row["platform"],
        user_id=row["user_id"],
        name=row["user_name"],
        roles=tuple(json.loads(row["user_roles"])),
    )


def measurement_json(m: Measurement) -> str:
    return json.dumps(asdict(m), ensure_ascii=False)


def submission_values(new: NewSubmission, status: SubmissionStatus, origin: str) -> dict[str, Any]:
    """The column values of a new submission; times as aware datetimes (each backend formats them)."""
    m = new.measurement
    created = utc(new.created_at)
    return {
        "gpu_id": m.gpu_id,
        "model_id": m.model_id,
        "quant": m.quant,
        "decode_tps": m.decode_tps,
        "measurement": measurement_json(m),
        "platform": new.submitter.platform,
        "user_id": new.submitter.user_id,
        "user_name": new.submitter.name,
        "user_roles": json.dumps(list(new.submitter.roles)),
        "chat_id": new.chat_id,
        "lang": new.lang,
        "status": status,
        "origin": origin,
        "estimate": json.dumps(asdict(new.estimate), ensure_ascii=False) if new.estimate else None,
        "flags": json.dumps(list(new.flags), ensure_ascii=False),
        "flag_details": json.dumps([list(d) for d in new.flag_details], ensure_ascii=False),
        "fingerprint": new.fingerprint,
        "source": new.source,
        "source_date": new.source_date,
        "created_at": created,
        # Published anchors are approved on arrival; their decision time is their arrival.
        "decided_at": created if status == "approved" else None,
    }


def submission(row: Row) -> Submission:
    estimate = row["estimate"]
    return Submission(
        id=row["id"],
        measurement=Measurement(**_known(json.loads(row["measurement"]), _MEASUREMENT_FIELDS)),
        submitter=_user(row),
        created_at=as_time(row["created_at"]),
        chat_id=row["chat_id"],
        lang=row["lang"],
        status=row["status"],
        estimate=EstimateSnapshot(**_known(json.loads(estimate), _ESTIMATE_FIELDS)) if estimate else None,
        flags=tuple(json.loads(row["flags"])),
        flag_details=tuple((str(c), str(p)) for c, p in json.loads(row["flag_details"])),
        fingerprint=row["fingerprint"],
        origin=row["origin"],
        source=row["source"],
        source_date=row["source_date"],
        decided_by=actor_from_json(row["decided_by"]),
        decided_at=as_time_or_none(row["decided_at"]),
        reason=row["reason"],
    )


def _same(row: Row, *names: str) -> dict[str, Any]:
    """The columns whose value is the record's field as it is (same name, no conversion)."""
    return {name: row[name] for name in names}


def subscription(row: Row) -> Subscription:
    return Subscription(
        **_same(row, "platform", "user_id", "chat_id", "gpu_id", "model_id", "lang", "id"),
        active=bool(row["active"]),
        created_at=as_time(row["created_at"]),
    )


def outbox_item(row: Row) -> OutboxItem:
    return OutboxItem(
        **_same(row, "id", "platform", "chat_id", "user_id", "kind", "lang", "dedupe_key", "attempts"),
        payload=json.loads(row["payload"]),
        created_at=as_time(row["created_at"]),
        next_attempt_at=as_time(row["next_attempt_at"]),
        subscription_id=row["subscription_id"],
    )


def audit_entry(row: Row) -> AuditEntry:
    return AuditEntry(
        **_same(row, "action", "submission_id", "detail", "id", "count"),
        at=as_time(row["at"]),
        actor=_user(row),
        ok=bool(row["ok"]),
    )


def portable(
    kind: str, value: Any, time: Callable[[Any], Any] = as_time, boolean: Callable[[Any], Any] = bool
) -> Any:
    """A column value as `db copy` carries it between backends: times as aware datetimes, booleans as
    bool, JSON as its text; everything else as the driver gave it. `time` and `boolean` convert the
    other way for a backend that keeps them differently (SQLite: ISO text and 0/1)."""
    if value is None:
        return None
    if kind == "time":
        return time(value)
    if kind == "bool":
        return boolean(value)
    return value


def feedback_values(vote: Feedback) -> dict[str, Any]:
    """The column values of a vote; the time as an aware datetime (each backend formats it)."""
    return {
        "answer_key": vote.answer_key,
        "platform": vote.voter.platform,
        "user_id": vote.voter.user_id,
        "user_name": vote.voter.name,
        "user_roles": json.dumps(list(vote.voter.roles)),
        "chat_id": vote.chat_id,
        "helpful": vote.helpful,
        "question": vote.question,
        "query": vote.query,
        "reply": vote.reply,
        "engine_version": vote.engine_version,
        "lang": vote.lang,
        "at": utc(vote.at),
    }


FEEDBACK_ORDER = tuple(name for name, _ in TABLE_COLUMNS["feedback"][1:])  # every column but id


def feedback(row: Row) -> Feedback:
    return Feedback(
        **_same(row, "answer_key", "chat_id", "question", "query", "reply", "engine_version", "lang", "id"),
        voter=_user(row),
        helpful=bool(row["helpful"]),
        at=as_time(row["at"]),
    )
