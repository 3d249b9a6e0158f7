"""`PostgresStorage`: the storage port on a PostgreSQL server, for several bot processes on one database.

Chosen with `TOKBOT_DATABASE_URL=postgresql://…`. It lives at the edge, not in core/, because it
needs a network driver (asyncpg). It passes the same contract suite as the memory and SQLite backends.

Design, and why:
- A connection pool (asyncpg); every change is one transaction on one pooled connection, so approve's
  status + audit + fan-out + decision notice commit together or not at all.
- Several processes share the rows, so the SQLite backend's in-process lock is replaced by the
  server's: the outbox is claimed with `FOR UPDATE SKIP LOCKED` (two workers never lease the same
  item, and neither waits for the other); a decision locks its submission row (`FOR UPDATE`), so two
  moderators can't both approve; /submit's check-and-insert takes a transaction-scoped advisory lock
  per submitter, so the count and the insert can't interleave with another process's, and the partial
  unique index on live fingerprints is the last word on duplicates.
- Numbered migrations in core/storage/migrations/postgres, applied at open(), each in one transaction
  under an advisory lock (two processes starting together apply each once).
- `schema` (TOKBOT_DATABASE_SCHEMA) puts the tables in a schema of their own (created if missing):
  tests give every run a fresh one.
"""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import asyncpg

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
from core.storage import _rows
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
from core.storage._migrations import Migration, bundled_migrations, newer_than_known
from core.storage.interface import (
    AuditKind,
    DuplicateSubmission,
    NotFound,
    StorageError,
    StorageUnavailable,
    SubmitOutcome,
    UndoOutcome,
    UndoRefused,
    WrongState,
)

CONNECT_TIMEOUT_S = 10.0
_IDENTIFIER_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

_INSERT_SUBMISSION = """
INSERT INTO submissions (gpu_id, model_id, quant, decode_tps, measurement, platform, user_id, user_name,
    user_roles, chat_id, lang, status, origin, estimate, flags, flag_details, fingerprint, source,
    source_date, created_at, decided_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)
RETURNING *
"""
_SUBMISSION_ORDER = (
    "gpu_id", "model_id", "quant", "decode_tps", "measurement", "platform", "user_id", "user_name",
    "user_roles", "chat_id", "lang", "status", "origin", "estimate", "flags", "flag_details", "fingerprint",
    "source", "source_date", "created_at", "decided_at",
)  # fmt: skip

# The approve fan-out in one statement: one notice per (platform, chat), the oldest matching
# subscription deciding its lang and subscription_id (as in the SQLite backend), inserted in
# subscription order; ON CONFLICT keeps an approval retried after a crash from doubling notices.
_FAN_OUT = """
INSERT INTO outbox (platform, chat_id, user_id, kind, payload, lang, dedupe_key, submission_id,
    subscription_id, status, attempts, created_at, next_attempt_at)
SELECT platform, chat_id, user_id, 'anchor', $1::jsonb, lang,
    'anchor:' || $2::bigint::text || ':' || platform || ':' || chat_id, $2::bigint, id, 'pending', 0, $3, $3
FROM (
    SELECT DISTINCT ON (platform, chat_id) *
    FROM subscriptions
    WHERE active AND (gpu_id IS NULL OR gpu_id = $4) AND (model_id IS NULL OR model_id = $5)
    ORDER BY platform, chat_id, id
) AS firsts
ORDER BY id
ON CONFLICT (dedupe_key) DO NOTHING
"""

_CLAIM = """
UPDATE outbox SET lease_until = $1
WHERE id IN (
    SELECT id FROM outbox
    WHERE platform = $2 AND status = 'pending' AND next_attempt_at <= $3
      AND (lease_until IS NULL OR lease_until <= $3) AND ($4::text IS NULL OR chat_id = $4)
    ORDER BY created_at, id
    LIMIT $5
    FOR UPDATE SKIP LOCKED
)
RETURNING *
"""


def redacted(url: str) -> str:
    """The URL without its password, for messages and logs."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    host = parts.hostname or ""
    user = parts.username or ""
    netloc = f"{user}:***@{host}" + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, parts.query, parts.fragment))


def _unavailable(url: str, exc: BaseException) -> StorageUnavailable:
    if isinstance(exc, asyncpg.InvalidCatalogNameError):
        why = "names a database that does not exist on that server"
    elif isinstance(exc, asyncpg.InvalidAuthorizationSpecificationError | asyncpg.InvalidPasswordError):
        why = f"was refused by the server ({exc})"
    elif isinstance(exc, TimeoutError):
        why = f"did not answer within {CONNECT_TIMEOUT_S:.0f} s"
    elif isinstance(exc, OSError):
        why = f"can't be reached ({exc.strerror or exc})"
    else:
        why = f"can't be used ({exc})"
    return StorageUnavailable(redacted(url), why)


class PostgresStorage:
    """The `Storage` port on the PostgreSQL database at `url` (postgresql://user@host:port/db)."""

    def __init__(
        self,
        url: str,
        *,
        schema: str | None = None,
        pool_size: int = 10,
        migrations: Sequence[Migration] | None = None,
    ) -> None:
        if schema is not None and (not schema or set(schema) - _IDENTIFIER_OK or schema[0].isdigit()):
            raise ValueError(f"schema {schema!r}: lower-case letters, digits and _ only")
        self.url = url
        self.schema = schema
        self._pool_size = pool_size
        self._migrations = list(migrations) if migrations is not None else None
        self._pool: asyncpg.Pool | None = None

    @property
    def where(self) -> str:
        return redacted(self.url) + (f" (schema {self.schema})" if self.schema else "")

    # --- connection --------------------------------------------------------------------------
    async def open(self) -> None:
        """Connect and apply pending migrations. An unreachable server or a database that does not
        exist raises StorageUnavailable (one sentence for the operator, no traceback)."""
        if self._pool is not None:
            return
        settings = {"search_path": self.schema} if self.schema else {}
        try:
            pool = await asyncpg.create_pool(
                self.url,
                min_size=1,
                max_size=self._pool_size,
                timeout=CONNECT_TIMEOUT_S,
                server_settings=settings,
            )
        except (OSError, TimeoutError, asyncpg.PostgresError, asyncpg.InterfaceError) as exc:
            raise _unavailable(self.url, exc) from exc
        assert pool is not None
        try:
            await self._migrate(pool)
        except BaseException:
            await pool.close()
            raise
        self._pool = pool

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await pool.close()

    async def _migrate(self, pool: asyncpg.Pool) -> None:
        migrations = self._migrations if self._migrations is not None else bundled_migrations("postgres")
        async with pool.acquire() as con:
            if self.schema:
                try:
                    await con.execute(f'CREATE SCHEMA IF NOT EXISTS "{self.schema}"')  # a checked identifier
                except asyncpg.UniqueViolationError:
                    pass  # created by another process at the same moment
            if await self._applied(con, migrations) >= {m.version for m in migrations}:
                return  # the usual start: nothing to do, no lock taken
            for migration in migrations:
                async with con.transaction():
                    # One process at a time per schema; the others wait here, then find it applied.
                    await con.execute(
                        "SELECT pg_advisory_xact_lock(hashtext('tokbot-migrate:' || current_schema()))"
                    )
                    await con.execute(
                        "CREATE TABLE IF NOT EXISTS schema_migrations ("
                        " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)"
                    )
                    if migration.version in await self._applied(con, migrations):
                        continue
                    await con.execute(migration.sql)  # several statements: the simple query protocol
                    await con.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)",
                        migration.version,
                        migration.name,
                        datetime.now(UTC),
                    )

    async def _applied(self, con: asyncpg.Connection, migrations: list[Migration]) -> set[int]:
        """The versions recorded; refuses a schema migrated by a newer tokbot."""
        if await con.fetchval("SELECT to_regclass('schema_migrations')") is None:
            return set()
        applied = {int(r[0]) for r in await con.fetch("SELECT version FROM schema_migrations")}
        newer_than_known(applied, migrations, self.where)
        return applied

    async def schema_version(self) -> int:
        """The newest migration applied (what `python -m bot migrate` prints)."""
        async with self._connection() as con:
            return int(await con.fetchval("SELECT COALESCE(MAX(version), 0) FROM schema_migrations"))

    def _require_pool(self) -> asyncpg.Pool:
        if self._pool is None:
            raise StorageError("storage is not open")
        return self._pool

    @asynccontextmanager
    async def _connection(self) -> AsyncIterator[asyncpg.Connection]:
        async with self._require_pool().acquire() as con:
            yield con

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[asyncpg.Connection]:
        """One transaction: all of the block's statements commit together, or none do."""
        async with self._require_pool().acquire() as con, con.transaction():
            yield con

    # --- submissions and anchors -----------------------------------------------------------
    @staticmethod
    def _submission_args(new: NewSubmission, status: SubmissionStatus, origin: str) -> list[Any]:
        values = _rows.submission_values(new, status, origin)
        return [values[name] for name in _SUBMISSION_ORDER]

    @staticmethod
    async def _live_duplicate(con: asyncpg.Connection, fingerprint: str) -> Submission | None:
        if not fingerprint:
            return None
        row = await con.fetchrow(
            "SELECT * FROM submissions WHERE fingerprint = $1 AND status IN ('pending', 'approved') "
            "ORDER BY id LIMIT 1",
            fingerprint,
        )
        return _rows.submission(row) if row is not None else None

    async def _insert_pending(self, con: asyncpg.Connection, new: NewSubmission) -> Submission:
        try:
            # A savepoint, so that a unique violation leaves the outer transaction usable.
            async with con.transaction():
                row = await con.fetchrow(
                    _INSERT_SUBMISSION, *self._submission_args(new, "pending", new.origin)
                )
        except asyncpg.UniqueViolationError:
            existing = await self._live_duplicate(con, new.fingerprint)
            if existing is None:
                raise
            raise DuplicateSubmission(existing.id) from None
        assert row is not None
        return _rows.submission(row)

    async def add_submission(self, new: NewSubmission) -> Submission:
        async with self._write() as con:
            return await self._insert_pending(con, new)

    async def add_submission_checked(self, new: NewSubmission, since: datetime, limit: int) -> SubmitOutcome:
        who = new.submitter
        async with self._write() as con:
            # Held until commit: the same submitter's other /submit (any process) waits here, then
            # counts this one's row. Read committed: each statement below sees what they committed.
            await con.execute(
                "SELECT pg_advisory_xact_lock(hashtext('tokbot-submit:' || $1 || ':' || $2))",
                who.platform,
                who.user_id,
            )
            existing = await self._live_duplicate(con, new.fingerprint)
            if existing is not None:
                return SubmitOutcome("duplicate", existing)
            recent = await con.fetchval(
                "SELECT COUNT(*) FROM submissions WHERE platform = $1 AND user_id = $2 AND created_at >= $3",
                who.platform,
                who.user_id,
                utc(since),
            )
            if int(recent) >= limit:
                return SubmitOutcome("rate_limited")
            try:
                return SubmitOutcome("stored", await self._insert_pending(con, new))
            except DuplicateSubmission as dup:  # the same fingerprint from another submitter's lock
                again = await self.get_submission_on(con, dup.existing_id)
                return SubmitOutcome("duplicate", again)

    @staticmethod
    async def get_submission_on(con: asyncpg.Connection, submission_id: int) -> Submission | None:
        row = await con.fetchrow("SELECT * FROM submissions WHERE id = $1", submission_id)
        return _rows.submission(row) if row is not None else None

    async def add_published(self, items: list[NewSubmission]) -> int:
        added = 0
        async with self._write() as con:
            # Every process seeds the published anchors at start: one at a time, so two starting
            # together can't both find a fingerprint missing and insert it twice.
            await con.execute(
                "SELECT pg_advisory_xact_lock(hashtext('tokbot-published:' || current_schema()))"
            )
            for new in items:
                if new.fingerprint and await con.fetchval(
                    "SELECT 1 FROM submissions WHERE fingerprint = $1 LIMIT 1", new.fingerprint
                ):
                    continue
                await con.execute(_INSERT_SUBMISSION, *self._submission_args(new, "approved", "published"))
                added += 1
        return added

    async def get_submission(self, submission_id: int) -> Submission | None:
        async with self._connection() as con:
            return await self.get_submission_on(con, submission_id)

    async def submissions(
        self,
        status: SubmissionStatus | None = None,
        origin: str | None = None,
        platform: str | None = None,
        user_id: str | None = None,
        limit: int | None = None,
    ) -> list[Submission]:
        sql = (
            "SELECT * FROM submissions WHERE ($1::text IS NULL OR status = $1) AND ($2::text IS NULL OR "
            "origin = $2) AND ($3::text IS NULL OR platform = $3) AND ($4::text IS NULL OR user_id = $4) "
            "ORDER BY created_at DESC, id DESC LIMIT $5"
        )
        async with self._connection() as con:
            rows = await con.fetch(sql, status, origin, platform, user_id, limit)
        return [_rows.submission(r) for r in rows]

    async def count_submissions_since(self, platform: str, user_id: str, since: datetime) -> int:
        async with self._connection() as con:
            count = await con.fetchval(
                "SELECT COUNT(*) FROM submissions WHERE platform = $1 AND user_id = $2 AND created_at >= $3",
                platform,
                user_id,
                utc(since),
            )
        return int(count)

    async def find_duplicate(self, fingerprint: str) -> Submission | None:
        async with self._connection() as con:
            return await self._live_duplicate(con, fingerprint)

    async def _transition(
        self,
        con: asyncpg.Connection,
        submission_id: int,
        expected: SubmissionStatus,
        new_status: SubmissionStatus,
        moderator: Actor,
        reason: str | None,
        at: datetime,
    ) -> Submission:
        """Inside an open transaction: the state change and its audit entry. FOR UPDATE: a second
        moderator deciding the same submission waits, then sees the new status (WrongState)."""
        status = await con.fetchval("SELECT status FROM submissions WHERE id = $1 FOR UPDATE", submission_id)
        if status is None:
            raise NotFound(f"submission {submission_id}")
        if status != expected:
            raise WrongState(submission_id, status)
        row = await con.fetchrow(
            "UPDATE submissions SET status = $1, decided_by = $2, decided_at = $3, reason = $4 WHERE id = $5 "
            "RETURNING *",
            new_status,
            _rows.actor_json(moderator),
            utc(at),
            reason,
            submission_id,
        )
        await self._insert_audit(
            con,
            AuditEntry(
                at=at,
                actor=moderator,
                action=decision_action(new_status),
                submission_id=submission_id,
                ok=True,
                detail=reason or "",
            ),
        )
        return _rows.submission(row)

    @staticmethod
    async def _enqueue_decision(con: asyncpg.Connection, sub: Submission, at: datetime) -> None:
        await con.execute(
            "INSERT INTO outbox (platform, chat_id, user_id, kind, payload, lang, dedupe_key, submission_id, "
            "status, attempts, created_at, next_attempt_at) "
            "VALUES ($1, $2, $3, 'decision', $4, $5, $6, $7, 'pending', 0, $8, $8) "
            "ON CONFLICT (dedupe_key) DO NOTHING",
            sub.submitter.platform,
            sub.chat_id,
            sub.submitter.user_id,
            json.dumps(decision_payload(sub), ensure_ascii=False),
            sub.lang,
            decision_key(sub.id, sub.status),
            sub.id,
            utc(at),
        )

    async def approve(self, submission_id: int, moderator: Actor, at: datetime) -> Submission:
        async with self._write() as con:
            sub = await self._transition(con, submission_id, "pending", "approved", moderator, None, at)
            await con.execute(
                _FAN_OUT,
                json.dumps(anchor_payload(sub), ensure_ascii=False),
                sub.id,
                utc(at),
                sub.measurement.gpu_id,
                sub.measurement.model_id,
            )
            await self._enqueue_decision(con, sub, at)
        return sub

    async def reject(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        async with self._write() as con:
            sub = await self._transition(con, submission_id, "pending", "rejected", moderator, reason, at)
            await self._enqueue_decision(con, sub, at)
        return sub

    async def withdraw(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        async with self._write() as con:
            sub = await self._transition(con, submission_id, "approved", "withdrawn", moderator, reason, at)
            if sub.origin == "community":  # a published anchor has nobody to tell
                await self._enqueue_decision(con, sub, at)
        return sub

    # --- audit -----------------------------------------------------------------------------
    @staticmethod
    async def _insert_audit(con: asyncpg.Connection, entry: AuditEntry) -> None:
        await con.execute(
            "INSERT INTO audit_log (at, platform, user_id, user_name, user_roles, action, submission_id, ok, "
            "detail) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
            utc(entry.at),
            entry.actor.platform,
            entry.actor.user_id,
            entry.actor.name,
            json.dumps(list(entry.actor.roles)),
            entry.action,
            entry.submission_id,
            entry.ok,
            entry.detail,
        )

    async def record_audit(self, entry: AuditEntry) -> None:
        async with self._write() as con:
            await self._insert_audit(con, entry)

    async def record_refused(self, entry: AuditEntry) -> None:
        minute = refused_minute(entry.at)
        who, action = entry.actor, entry.action
        async with self._write() as con:
            # One row per actor, action and minute even across processes: the key's lock is held to commit.
            await con.execute(
                "SELECT pg_advisory_xact_lock(hashtext('tokbot-refused:' || $1 || ':' || $2 || ':' || $3))",
                who.platform,
                who.user_id,
                action,
            )
            updated = await con.execute(
                "UPDATE audit_log SET count = count + 1 "
                "WHERE NOT ok AND platform = $1 AND user_id = $2 AND action = $3 AND at = $4",
                who.platform,
                who.user_id,
                action,
                minute,
            )
            if updated.endswith(" 0"):
                await self._insert_audit(con, replace(entry, at=minute, ok=False))

    async def audit_log(self, limit: int = 50, kind: AuditKind | None = None) -> list[AuditEntry]:
        where = "" if kind is None else ("WHERE ok " if kind == "decisions" else "WHERE NOT ok ")
        async with self._connection() as con:
            sql = f"SELECT * FROM audit_log {where}ORDER BY at DESC, id DESC LIMIT $1"
            rows = await con.fetch(sql, limit)
        return [_rows.audit_entry(r) for r in rows]

    async def undo_decision(
        self, submission_id: int, moderator: Actor, at: datetime, since: datetime
    ) -> UndoOutcome:
        async with self._write() as con:
            row = await con.fetchrow("SELECT * FROM submissions WHERE id = $1 FOR UPDATE", submission_id)
            if row is None:
                raise NotFound(f"submission {submission_id}")
            current = _rows.submission(row)
            if current.status not in ("approved", "rejected"):
                raise WrongState(submission_id, current.status)
            if not may_undo(current, moderator, utc(since)):
                raise UndoRefused(submission_id)
            if current.status == "rejected":
                live = await self._live_duplicate(con, current.fingerprint)
                if live is not None:
                    raise DuplicateSubmission(live.id)
            row = await con.fetchrow(
                "UPDATE submissions SET status = 'pending', decided_by = NULL, decided_at = NULL, "
                "reason = NULL WHERE id = $1 RETURNING *",
                submission_id,
            )
            await con.execute(
                "DELETE FROM outbox WHERE submission_id = $1 AND status = $2", submission_id, OUTBOX_PENDING
            )
            sent = await con.fetchval("SELECT COUNT(*) FROM outbox WHERE submission_id = $1", submission_id)
            await self._insert_audit(con, AuditEntry(
                at=at, actor=moderator, action=f"undo:{decision_action(current.status)}",
                submission_id=submission_id, ok=True, detail=current.reason or "",
            ))  # fmt: skip
        return UndoOutcome(_rows.submission(row), int(sent))

    # --- subscriptions ---------------------------------------------------------------------
    async def subscribe(self, sub: Subscription) -> tuple[Subscription, bool]:
        # One upsert on the identity index; xmax = 0 only for a row this statement inserted.
        async with self._write() as con:
            row = await con.fetchrow(
                "INSERT INTO subscriptions (platform, user_id, chat_id, gpu_id, model_id, lang, active, "
                "created_at) VALUES ($1, $2, $3, $4, $5, $6, TRUE, $7) "
                "ON CONFLICT (platform, user_id, COALESCE(gpu_id, ''), COALESCE(model_id, '')) "
                "DO UPDATE SET chat_id = EXCLUDED.chat_id, lang = EXCLUDED.lang, active = TRUE "
                "RETURNING *, (xmax = 0) AS created",
                sub.platform,
                sub.user_id,
                sub.chat_id,
                sub.gpu_id,
                sub.model_id,
                sub.lang,
                utc(sub.created_at or datetime.now(UTC)),
            )
        assert row is not None
        return _rows.subscription(row), bool(row["created"])

    async def unsubscribe(
        self, platform: str, user_id: str, gpu_id: str | None, model_id: str | None, everything: bool = False
    ) -> int:
        async with self._write() as con:
            status = await con.execute(
                "UPDATE subscriptions SET active = FALSE WHERE active AND platform = $1 AND user_id = $2 "
                "AND ($3 OR (COALESCE(gpu_id, '') = COALESCE($4, '') AND COALESCE(model_id, '') = "
                "COALESCE($5, '')))",
                platform,
                user_id,
                everything,
                gpu_id,
                model_id,
            )
        return _affected(status)

    async def subscriptions_of(self, platform: str, user_id: str) -> list[Subscription]:
        async with self._connection() as con:
            rows = await con.fetch(
                "SELECT * FROM subscriptions WHERE active AND platform = $1 AND user_id = $2 ORDER BY id",
                platform,
                user_id,
            )
        return [_rows.subscription(r) for r in rows]

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        async with self._write() as con:
            status = await con.execute(
                "UPDATE subscriptions SET active = FALSE WHERE active AND platform = $1 AND chat_id = $2",
                platform,
                chat_id,
            )
        return _affected(status)

    async def count_subscriptions(self) -> int:
        async with self._connection() as con:
            return int(await con.fetchval("SELECT COUNT(*) FROM subscriptions WHERE active"))

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
        lease_until = now + timedelta(seconds=lease_seconds)
        async with self._write() as con:
            rows = await con.fetch(_CLAIM, lease_until, platform, now, chat_id, limit)
        items = [_rows.outbox_item(r) for r in rows]
        items.sort(key=lambda i: (i.created_at or now, i.id))  # RETURNING has no order of its own
        return items

    async def _settle(self, sql: str, item_id: int, *args: Any) -> None:
        """An UPDATE of one pending item; a settled item is left alone (a late report from a worker
        whose lease ran out), an unknown one is NotFound."""
        async with self._connection() as con:  # one statement: atomic without BEGIN/COMMIT round trips
            done = await con.fetchval(sql, item_id, *args)
            if done is None and await con.fetchval("SELECT 1 FROM outbox WHERE id = $1", item_id) is None:
                raise NotFound(f"outbox item {item_id}")

    async def mark_sent(self, item_id: int, at: datetime) -> None:
        await self._settle(
            "UPDATE outbox SET status = $2, sent_at = $3, lease_until = NULL WHERE id = $1 RETURNING id",
            item_id,
            OUTBOX_SENT,
            utc(at),
        )

    async def mark_retry(self, item_id: int, next_attempt_at: datetime, error: str) -> None:
        await self._settle(
            "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $2, lease_until = NULL, "
            "last_error = $3 WHERE id = $1 AND status = 'pending' RETURNING id",
            item_id,
            utc(next_attempt_at),
            error,
        )

    async def mark_dead(self, item_id: int, error: str) -> None:
        await self._settle(
            "UPDATE outbox SET status = $2, attempts = attempts + 1, lease_until = NULL, last_error = $3 "
            "WHERE id = $1 AND status = 'pending' RETURNING id",
            item_id,
            OUTBOX_DEAD,
            error,
        )

    async def outbox_stats(self) -> OutboxStats:
        async with self._connection() as con:
            rows = await con.fetch(
                "SELECT status, platform, COUNT(*) AS n FROM outbox GROUP BY status, platform"
            )
        totals = {OUTBOX_PENDING: 0, OUTBOX_SENT: 0, OUTBOX_DEAD: 0}
        by_platform: dict[str, int] = {}
        for row in rows:
            totals[row["status"]] = totals.get(row["status"], 0) + row["n"]
            if row["status"] == OUTBOX_PENDING:
                by_platform[row["platform"]] = row["n"]
        return OutboxStats(
            pending=totals[OUTBOX_PENDING],
            sent=totals[OUTBOX_SENT],
            dead=totals[OUTBOX_DEAD],
            by_platform=by_platform,
        )

    # --- "was this helpful?" -----------------------------------------------------------------
    async def record_feedback(self, feedback: Feedback) -> bool:
        values = _rows.feedback_values(feedback)
        names = ", ".join(_rows.FEEDBACK_ORDER)
        marks = ", ".join(f"${i}" for i in range(1, len(_rows.FEEDBACK_ORDER) + 1))
        changes = ", ".join(f"{name} = EXCLUDED.{name}" for name in _rows.FEEDBACK_ORDER)
        async with self._connection() as con:  # one upsert: atomic on its own
            created = await con.fetchval(
                f"INSERT INTO feedback ({names}) VALUES ({marks}) "
                f"ON CONFLICT (platform, user_id, answer_key) DO UPDATE SET {changes} RETURNING (xmax = 0)",
                *(values[name] for name in _rows.FEEDBACK_ORDER),
            )
        return bool(created)

    async def feedback_counts(self) -> FeedbackCounts:
        async with self._connection() as con:
            row = await con.fetchrow(
                "SELECT COUNT(*) FILTER (WHERE helpful) AS yes, COUNT(*) FILTER (WHERE NOT helpful) AS no "
                "FROM feedback"
            )
        assert row is not None
        return FeedbackCounts(helpful=int(row["yes"]), unhelpful=int(row["no"]))

    async def unhelpful_feedback(self, limit: int = 20) -> list[Feedback]:
        async with self._connection() as con:
            rows = await con.fetch(
                "SELECT * FROM feedback WHERE NOT helpful ORDER BY at DESC, id DESC LIMIT $1", limit
            )
        return [_rows.feedback(r) for r in rows]

    # --- models resolved outside the catalog ------------------------------------------------
    async def cached_model(self, key: str) -> tuple[str, datetime] | None:
        async with self._connection() as con:
            row = await con.fetchrow("SELECT payload, resolved_at FROM resolved_models WHERE key = $1", key)
        return None if row is None else (row["payload"], utc(row["resolved_at"]))

    async def cache_model(self, key: str, payload: str, at: datetime) -> None:
        async with self._connection() as con:
            await con.execute(
                "INSERT INTO resolved_models (key, payload, resolved_at) VALUES ($1, $2, $3) "
                "ON CONFLICT (key) DO UPDATE SET payload = EXCLUDED.payload, "
                "resolved_at = EXCLUDED.resolved_at",
                key,
                payload,
                utc(at),
            )

    # --- operations ------------------------------------------------------------------------
    async def backup(self, destination: str) -> None:
        """`pg_dump --format=custom` of this database (one consistent snapshot; restore with
        pg_restore). Needs the PostgreSQL client tools on PATH."""
        self._require_pool()
        pg_dump = shutil.which("pg_dump")
        if pg_dump is None:
            raise StorageError("pg_dump is not installed (the PostgreSQL client tools)")
        command = [pg_dump, "--format=custom", f"--file={destination}", "--dbname", self.url]
        if self.schema:
            command.append(f"--schema={self.schema}")
        process = await asyncio.create_subprocess_exec(
            *command, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE
        )
        _, err = await process.communicate()
        if process.returncode != 0:
            raise StorageError(f"pg_dump failed: {err.decode(errors='replace').strip()}")

    # --- moving data (python -m bot db copy) -------------------------------------------------
    async def table_counts(self) -> dict[str, int]:
        async with self._connection() as con:
            return {t: int(await con.fetchval(f"SELECT COUNT(*) FROM {t}")) for t in _rows.COPY_ORDER}

    async def dump_tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of every table (id order, values made portable), from one snapshot (a read-only
        repeatable-read transaction), even while bot processes keep writing."""
        dumped: dict[str, list[dict[str, Any]]] = {}
        async with self._connection() as con, con.transaction(isolation="repeatable_read", readonly=True):
            for table in _rows.COPY_ORDER:  # table and column names come from the constants only
                columns = _rows.TABLE_COLUMNS[table]
                names = ", ".join(name for name, _ in columns)
                rows = await con.fetch(f"SELECT {names} FROM {table} ORDER BY {columns[0][0]}")
                dumped[table] = [
                    {name: _rows.portable(kind, r[name]) for name, kind in columns} for r in rows
                ]
        return dumped

    async def load_tables(self, tables: dict[str, list[dict[str, Any]]]) -> None:
        """Insert rows dumped from another backend, ids kept, in one transaction (COPY, so a large
        database moves quickly); refuses a database that already holds any. The id sequences are moved
        past the copied ids so that new rows don't collide."""
        async with self._write() as con:
            for table in _rows.COPY_ORDER:
                if await con.fetchval(f"SELECT 1 FROM {table} LIMIT 1"):
                    raise StorageError(f"{self.where} already holds {table}; copy into an empty database")
            for table in _rows.COPY_ORDER:
                columns = _rows.TABLE_COLUMNS[table]
                records = [tuple(row[name] for name, _ in columns) for row in tables.get(table, [])]
                if records:
                    await con.copy_records_to_table(
                        table, records=records, columns=[n for n, _ in columns], schema_name=self.schema
                    )
                if columns[0][0] == "id":
                    await con.execute(
                        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                        f"COALESCE((SELECT MAX(id) FROM {table}), 0) + 1, false)"
                    )

    # --- models resolved outside the catalog: every one, for the catalog overlay at start ------
    async def cached_models(self, limit: int = 10000) -> list[tuple[str, str, datetime]]:
        async with self._connection() as con:
            rows = await con.fetch(
                "SELECT key, payload, resolved_at FROM resolved_models "
                "ORDER BY resolved_at DESC, key DESC LIMIT $1",
                limit,
            )
        return [(r["key"], r["payload"], utc(r["resolved_at"])) for r in rows]


def _affected(status: str) -> int:
    """asyncpg's command tag ("UPDATE 3") as a count."""
    return int(status.rsplit(" ", 1)[-1])
