"""The SQL of the storage primitives, written once for SQLite and PostgreSQL.

Both schemas have the same tables and columns (core/storage/migrations and migrations/postgres). The
statements are written here with `?` placeholders; a `Dialect` says what differs (boolean literals,
how times are passed, row locks, casts where PostgreSQL can't infer a parameter's type, how an upsert
tells an insert from an update), and each backend's `Connection` adapts its driver (aiosqlite in
core/storage/sqlite.py, asyncpg in bot/storage/postgres.py, which turns `?` into `$n`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from core.storage import _rows
from core.storage import records as rec
from core.storage._common import OUTBOX_PENDING, iso
from core.storage._rules import Filters, Settlement, Which
from core.storage.interface import AuditKind


class Row(Protocol):
    """sqlite3.Row or asyncpg.Record: columns by name or by position."""

    def __getitem__(self, key: str | int, /) -> Any: ...


@dataclass(frozen=True, slots=True)
class Dialect:
    """What a dialect says differently; the defaults are SQLite's (times as fixed-width ISO text,
    booleans 0/1, one writer holding the whole database so no row locks)."""

    true: str = "1"  # the boolean literals
    false: str = "0"
    for_update: str = ""  # appended to a SELECT that locks its row until commit
    skip_locked: str = ""  # appended to the outbox claim: rows another worker holds are passed over
    # CAST targets for "json", "time", "int" and "text" parameters
    types: dict[str, str] = field(
        default_factory=lambda: {"json": "TEXT", "time": "TEXT", "int": "INTEGER", "text": "TEXT"}
    )
    time: Callable[[datetime], Any] = iso  # a time as a parameter
    # Selected by an upsert's RETURNING: true when the row was inserted. None: no RETURNING, so the
    # row is looked up first (in a transaction that holds the only write lock).
    inserted: str | None = None


class Connection(Protocol):
    """One driver connection, inside the transaction (or not) that the backend opened."""

    async def fetch(self, sql: str, *args: Any) -> Sequence[Row]: ...

    async def execute(self, sql: str, *args: Any) -> int:
        """The number of rows changed."""

    async def insert(self, sql: str, *args: Any) -> int:
        """Run an INSERT; the new row's id."""

    async def lock(self, key: str, per_schema: bool) -> None: ...

    def savepoint(self) -> AbstractAsyncContextManager[None]:
        """A unique-index refusal inside raises Conflict and leaves the transaction usable."""


_SUBSCRIPTION_IDENTITY = (
    "platform = ? AND user_id = ? AND COALESCE(gpu_id, '') = COALESCE(?, '') "
    "AND COALESCE(model_id, '') = COALESCE(?, '')"
)
_OUTBOX_COLUMNS = (
    "platform, chat_id, user_id, kind, payload, lang, dedupe_key, submission_id, subscription_id, status, "
    "attempts, created_at, next_attempt_at"
)


class SqlStore:
    """`core.storage._rules.Store` on one connection of either SQL backend."""

    def __init__(self, con: Connection, dialect: Dialect) -> None:
        self.con = con
        self.d = dialect

    async def _first(self, sql: str, *args: Any) -> Row | None:
        rows = await self.con.fetch(sql, *args)
        return rows[0] if rows else None

    async def _count(self, sql: str, *args: Any) -> int:
        row = await self._first(sql, *args)
        assert row is not None
        return int(row[0])

    async def _upsert(
        self, sql: str, args: Sequence[Any], find: str, keys: Sequence[Any]
    ) -> tuple[int, bool]:
        """(row id, inserted?) of an INSERT … ON CONFLICT DO UPDATE."""
        if self.d.inserted is not None:
            row = await self._first(f"{sql} RETURNING id, {self.d.inserted} AS inserted", *args)
            assert row is not None
            return int(row["id"]), bool(row["inserted"])
        existing = await self._first(find, *keys)
        if existing is not None:
            await self.con.execute(sql, *args)
            return int(existing[0]), False
        return await self.con.insert(sql, *args), True

    async def lock(self, key: str, per_schema: bool = False) -> None:
        await self.con.lock(key, per_schema)

    # --- submissions -------------------------------------------------------------------------
    async def submission(self, submission_id: int, lock: bool = False) -> rec.Submission | None:
        row = await self._first(
            "SELECT * FROM submissions WHERE id = ?" + (self.d.for_update if lock else ""), submission_id
        )
        return _rows.submission(row) if row is not None else None

    async def live_submission(self, fingerprint: str) -> rec.Submission | None:
        row = await self._first(
            "SELECT * FROM submissions WHERE fingerprint = ? AND status IN ('pending', 'approved') "
            "ORDER BY id LIMIT 1",
            fingerprint,
        )
        return _rows.submission(row) if row is not None else None

    async def fingerprint_stored(self, fingerprint: str) -> bool:
        return bool(
            await self.con.fetch("SELECT 1 FROM submissions WHERE fingerprint = ? LIMIT 1", fingerprint)
        )

    async def count_since(self, platform: str, user_id: str, since: datetime) -> int:
        return await self._count(
            "SELECT COUNT(*) FROM submissions WHERE platform = ? AND user_id = ? AND created_at >= ?",
            platform,
            user_id,
            self.d.time(since),
        )

    async def insert_submission(
        self, new: rec.NewSubmission, status: rec.SubmissionStatus, origin: rec.Origin
    ) -> rec.Submission:
        values = _rows.submission_values(new, status, origin)
        for name in ("created_at", "decided_at"):
            if values[name] is not None:
                values[name] = self.d.time(values[name])
        names = ", ".join(values)  # column names come from submission_values only
        marks = ", ".join("?" for _ in values)
        async with self.con.savepoint():
            new_id = await self.con.insert(
                f"INSERT INTO submissions ({names}) VALUES ({marks})", *values.values()
            )
        stored = await self.submission(new_id)
        assert stored is not None
        return stored

    async def find_submissions(self, where: Filters, limit: int | None) -> list[rec.Submission]:
        given = [
            (column, value)
            for column, value in (
                ("status", where.status),
                ("origin", where.origin),
                ("platform", where.platform),
                ("user_id", where.user_id),
            )
            if value is not None
        ]
        conditions = " AND ".join(f"{column} = ?" for column, _ in given)  # literal column names only
        params: list[Any] = [value for _, value in given]
        sql = "SELECT * FROM submissions" + (f" WHERE {conditions}" if given else "")
        sql += " ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_rows.submission(r) for r in await self.con.fetch(sql, *params)]

    async def set_state(self, sub: rec.Submission) -> rec.Submission:
        decided_at = None if sub.decided_at is None else self.d.time(sub.decided_at)
        await self.con.execute(
            "UPDATE submissions SET status = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ?",
            sub.status,
            _rows.actor_json(sub.decided_by),
            decided_at,
            sub.reason,
            sub.id,
        )
        stored = await self.submission(sub.id)
        assert stored is not None
        return stored

    async def set_measurement(self, sub: rec.Submission) -> None:
        m = sub.measurement
        await self.con.execute(
            "UPDATE submissions SET gpu_id = ?, model_id = ?, quant = ?, decode_tps = ?, measurement = ?, "
            "source = ?, source_date = ? WHERE id = ?",
            m.gpu_id,
            m.model_id,
            m.quant,
            m.decode_tps,
            _rows.measurement_json(m),
            sub.source,
            sub.source_date,
            sub.id,
        )

    # --- audit -------------------------------------------------------------------------------
    async def insert_audit(self, entry: rec.AuditEntry) -> None:
        await self.con.execute(
            "INSERT INTO audit_log (at, platform, user_id, user_name, user_roles, action, submission_id, ok, "
            "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            self.d.time(entry.at),
            entry.actor.platform,
            entry.actor.user_id,
            entry.actor.name,
            json.dumps(list(entry.actor.roles)),
            entry.action,
            entry.submission_id,
            entry.ok,
            entry.detail,
        )

    async def count_refused(self, actor: rec.Actor, action: str, minute: datetime) -> bool:
        changed = await self.con.execute(
            f"UPDATE audit_log SET count = count + 1 WHERE ok = {self.d.false} "
            "AND platform = ? AND user_id = ? AND action = ? AND at = ?",
            actor.platform,
            actor.user_id,
            action,
            self.d.time(minute),
        )
        return changed > 0

    async def audit(self, limit: int, kind: AuditKind | None) -> list[rec.AuditEntry]:
        where = "" if kind is None else f"WHERE ok = {self.d.true if kind == 'decisions' else self.d.false} "
        rows = await self.con.fetch(
            f"SELECT * FROM audit_log {where}ORDER BY at DESC, id DESC LIMIT ?", limit
        )
        return [_rows.audit_entry(r) for r in rows]

    # --- outbox ------------------------------------------------------------------------------
    async def fan_out(self, sub: rec.Submission, payload: dict[str, Any], at: datetime) -> None:
        # One statement, however many subscribers. ON CONFLICT on the UNIQUE dedupe_key keeps one
        # notice per (platform, chat) when several of a chat's subscriptions match, and an approval
        # retried after a crash from doubling them; ORDER BY makes the oldest subscription the one
        # recorded (its lang, its id).
        t = self.d.types
        await self.con.execute(
            f"INSERT INTO outbox ({_OUTBOX_COLUMNS}) "
            f"SELECT platform, chat_id, user_id, 'anchor', CAST(? AS {t['json']}), lang, "
            f"'anchor:' || CAST(? AS {t['text']}) || ':' || platform || ':' || chat_id, "
            f"CAST(? AS {t['int']}), id, 'pending', 0, CAST(? AS {t['time']}), CAST(? AS {t['time']}) "
            f"FROM subscriptions WHERE active = {self.d.true} "
            "AND (gpu_id IS NULL OR gpu_id = ?) AND (model_id IS NULL OR model_id = ?) "
            "ORDER BY id ON CONFLICT (dedupe_key) DO NOTHING",
            json.dumps(payload, ensure_ascii=False),
            str(sub.id),
            sub.id,
            self.d.time(at),
            self.d.time(at),
            sub.measurement.gpu_id,
            sub.measurement.model_id,
        )

    async def tell_submitter(
        self, sub: rec.Submission, payload: dict[str, Any], key: str, at: datetime
    ) -> None:
        await self.con.execute(
            f"INSERT INTO outbox ({_OUTBOX_COLUMNS}) "
            "VALUES (?, ?, ?, 'decision', ?, ?, ?, ?, NULL, 'pending', 0, ?, ?) "
            "ON CONFLICT (dedupe_key) DO NOTHING",
            sub.submitter.platform,
            sub.chat_id,
            sub.submitter.user_id,
            json.dumps(payload, ensure_ascii=False),
            sub.lang,
            key,
            sub.id,
            self.d.time(at),
            self.d.time(at),
        )

    async def drop_unsent(self, submission_id: int) -> int:
        await self.con.execute(
            "DELETE FROM outbox WHERE submission_id = ? AND status = ?", submission_id, OUTBOX_PENDING
        )
        return await self._count("SELECT COUNT(*) FROM outbox WHERE submission_id = ?", submission_id)

    async def claim(
        self, platform: str, now: datetime, lease_until: datetime, limit: int, chat_id: str | None
    ) -> list[rec.OutboxItem]:
        sql = (
            "SELECT * FROM outbox WHERE platform = ? AND status = 'pending' AND next_attempt_at <= ? "
            "AND (lease_until IS NULL OR lease_until <= ?)"
        )
        params: list[Any] = [platform, self.d.time(now), self.d.time(now)]
        if chat_id is not None:
            sql += " AND chat_id = ?"
            params.append(chat_id)
        rows = await self.con.fetch(
            sql + " ORDER BY created_at, id LIMIT ?" + self.d.skip_locked, *params, limit
        )
        if rows:
            marks = ", ".join("?" for _ in rows)
            await self.con.execute(
                f"UPDATE outbox SET lease_until = ? WHERE id IN ({marks})",
                self.d.time(lease_until),
                *(r["id"] for r in rows),
            )
        return [_rows.outbox_item(r) for r in rows]

    async def settle(self, item_id: int, change: Settlement) -> bool:
        sets, params = ["lease_until = NULL"], []
        for column, value in (
            ("status", change.status),
            ("sent_at", None if change.sent_at is None else self.d.time(change.sent_at)),
            (
                "next_attempt_at",
                None if change.next_attempt_at is None else self.d.time(change.next_attempt_at),
            ),
            ("last_error", change.error),
        ):
            if value is not None:
                sets.append(f"{column} = ?")  # column names come from this literal tuple only
                params.append(value)
        if change.attempt:
            sets.append("attempts = attempts + 1")
        only = " AND status = 'pending'" if change.only_pending else ""
        return (
            await self.con.execute(
                f"UPDATE outbox SET {', '.join(sets)} WHERE id = ?{only}", *params, item_id
            )
            > 0
        )

    async def outbox_exists(self, item_id: int) -> bool:
        return bool(await self.con.fetch("SELECT 1 FROM outbox WHERE id = ?", item_id))

    async def outbox_counts(self) -> list[tuple[str, str, int]]:
        rows = await self.con.fetch("SELECT status, platform, COUNT(*) FROM outbox GROUP BY status, platform")
        return [(str(r[0]), str(r[1]), int(r[2])) for r in rows]

    # --- subscriptions -----------------------------------------------------------------------
    async def upsert_subscription(self, sub: rec.Subscription) -> tuple[rec.Subscription, bool]:
        # The conflict target is the identity index (COALESCE, so that NULL is one value).
        sql = (
            "INSERT INTO subscriptions (platform, user_id, chat_id, gpu_id, model_id, lang, active, "
            f"created_at) VALUES (?, ?, ?, ?, ?, ?, {self.d.true}, ?) "
            "ON CONFLICT (platform, user_id, COALESCE(gpu_id, ''), COALESCE(model_id, '')) "
            f"DO UPDATE SET chat_id = excluded.chat_id, lang = excluded.lang, active = {self.d.true}"
        )
        assert sub.created_at is not None
        args = (
            sub.platform,
            sub.user_id,
            sub.chat_id,
            sub.gpu_id,
            sub.model_id,
            sub.lang,
            self.d.time(sub.created_at),
        )
        find = f"SELECT id FROM subscriptions WHERE {_SUBSCRIPTION_IDENTITY}"
        sub_id, created = await self._upsert(
            sql, args, find, (sub.platform, sub.user_id, sub.gpu_id, sub.model_id)
        )
        row = await self._first("SELECT * FROM subscriptions WHERE id = ?", sub_id)
        assert row is not None
        return _rows.subscription(row), created

    async def deactivate_subscriptions(self, platform: str, user_id: str, which: Which) -> int:
        sql = f"UPDATE subscriptions SET active = {self.d.false} WHERE active = {self.d.true} "
        if which is None:
            return await self.con.execute(sql + "AND platform = ? AND user_id = ?", platform, user_id)
        return await self.con.execute(f"{sql}AND {_SUBSCRIPTION_IDENTITY}", platform, user_id, *which)

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        return await self.con.execute(
            f"UPDATE subscriptions SET active = {self.d.false} WHERE active = {self.d.true} "
            "AND platform = ? AND chat_id = ?",
            platform,
            chat_id,
        )

    async def active_subscriptions(self, platform: str, user_id: str) -> list[rec.Subscription]:
        rows = await self.con.fetch(
            f"SELECT * FROM subscriptions WHERE active = {self.d.true} AND platform = ? AND user_id = ? "
            "ORDER BY id",
            platform,
            user_id,
        )
        return [_rows.subscription(r) for r in rows]

    async def count_active_subscriptions(self) -> int:
        return await self._count(f"SELECT COUNT(*) FROM subscriptions WHERE active = {self.d.true}")

    # --- feedback ----------------------------------------------------------------------------
    async def upsert_feedback(self, vote: rec.Feedback) -> bool:
        values = _rows.feedback_values(vote)
        values["at"] = self.d.time(values["at"])
        names = _rows.FEEDBACK_ORDER
        changes = ", ".join(f"{name} = excluded.{name}" for name in names)
        sql = (
            f"INSERT INTO feedback ({', '.join(names)}) VALUES ({', '.join('?' for _ in names)}) "
            f"ON CONFLICT (platform, user_id, answer_key) DO UPDATE SET {changes}"
        )
        find = "SELECT id FROM feedback WHERE platform = ? AND user_id = ? AND answer_key = ?"
        keys = (values["platform"], values["user_id"], values["answer_key"])
        _, created = await self._upsert(sql, [values[name] for name in names], find, keys)
        return created

    async def feedback_counts(self) -> rec.FeedbackCounts:
        rows = await self.con.fetch("SELECT helpful, COUNT(*) FROM feedback GROUP BY helpful")
        by_vote = {bool(r[0]): int(r[1]) for r in rows}
        return rec.FeedbackCounts(helpful=by_vote.get(True, 0), unhelpful=by_vote.get(False, 0))

    async def unhelpful(self, limit: int) -> list[rec.Feedback]:
        rows = await self.con.fetch(
            f"SELECT * FROM feedback WHERE helpful = {self.d.false} ORDER BY at DESC, id DESC LIMIT ?", limit
        )
        return [_rows.feedback(r) for r in rows]

    # --- models resolved outside the catalog -------------------------------------------------
    async def cached_model(self, key: str) -> tuple[str, datetime] | None:
        row = await self._first("SELECT payload, resolved_at FROM resolved_models WHERE key = ?", key)
        return None if row is None else (str(row["payload"]), _rows.as_time(row["resolved_at"]))

    async def cache_model(self, key: str, payload: str, at: datetime) -> None:
        await self.con.execute(
            "INSERT INTO resolved_models (key, payload, resolved_at) VALUES (?, ?, ?) "
            "ON CONFLICT (key) DO UPDATE SET payload = excluded.payload, resolved_at = excluded.resolved_at",
            key,
            payload,
            self.d.time(at),
        )

    async def cached_models(self, limit: int) -> list[tuple[str, str, datetime]]:
        rows = await self.con.fetch(
            "SELECT key, payload, resolved_at FROM resolved_models "
            "ORDER BY resolved_at DESC, key DESC LIMIT ?",
            limit,
        )
        return [(str(r["key"]), str(r["payload"]), _rows.as_time(r["resolved_at"])) for r in rows]
