"""`SqliteStorage`: the storage port on one SQLite file, for a single bot process.

Design, and why:
- WAL journal: readers never block the writer and the writer never blocks readers, and the online
  backup can copy the file while the bot keeps writing.
- ONE writer connection behind an asyncio.Lock, and every change is one `BEGIN IMMEDIATE`
  transaction (approve = status + audit + every subscriber's notice + the submitter's notice). The
  lock keeps the coroutines of this process from interleaving statements inside one transaction;
  IMMEDIATE takes SQLite's write lock up front, so a second process (a CLI backup, an admin script)
  makes us wait (busy_timeout) instead of failing half-way with SQLITE_BUSY on upgrade.
- A separate read-only connection for queries, so a slow read never holds up a write and reads
  never see another coroutine's uncommitted transaction.
- Migrations are numbered .sql files (core/storage/migrations/NNNN_name.sql), applied in order at
  open(), each in its own transaction together with its row in schema_migrations (and
  PRAGMA user_version, for sqlite3 command-line users): a crash mid-migration leaves the schema at the
  previous version, never half-way.
- Datetimes are ISO-8601 UTC text of fixed width, so SQL compares them as time.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sqlite3
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime, timedelta
from importlib import resources
from pathlib import Path
from typing import Any

import aiosqlite

from core.records import (
    Actor,
    AuditEntry,
    EstimateSnapshot,
    Measurement,
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
    anchor_payload,
    decision_action,
    decision_key,
    decision_payload,
    from_iso,
    iso,
    utc,
)
from core.storage.interface import NotFound, StorageError, WrongState

BUSY_TIMEOUT_MS = 5000
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def bundled_migrations() -> list[Migration]:
    """The .sql files shipped in core/storage/migrations, by version. Read through importlib.resources
    so they are found in a wheel too (pyproject packages them as package data)."""
    found: list[Migration] = []
    for entry in resources.files("core.storage").joinpath("migrations").iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise StorageError(f"two migrations share a number: {versions}")
    return found


def split_statements(script: str) -> list[str]:
    """One SQL statement per item. `executescript` can't be used: it COMMITs first and would take the
    migration out of its transaction. sqlite3.complete_statement knows about strings, comments and
    CREATE TRIGGER bodies, so a `;` inside them doesn't split."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    leftover = "\n".join(ln for ln in buffer.splitlines() if ln.strip() and not ln.strip().startswith("--"))
    if leftover:
        raise StorageError(f"unterminated SQL statement: {leftover[:80]!r}")
    return statements


async def backup_database(source: str, destination: str) -> Path:
    """A consistent copy of the SQLite database at `source`, written to `destination` (replaced if it
    exists) with SQLite's online backup API. Safe while another process writes: the copy is taken in
    one step (pages=-1) inside one read transaction, and WAL lets the writer carry on meanwhile. The copy
    goes to a temporary name first, so `destination` is never a half-written file. Returns its path."""
    src_path = Path(source)
    dest_path = Path(destination)
    if not src_path.is_file():
        raise FileNotFoundError(f"no database at {source}")
    if dest_path.exists() and dest_path.resolve() == src_path.resolve():
        raise ValueError("the backup destination is the database itself")
    partial = dest_path.with_name(dest_path.name + ".partial")
    for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
        leftover.unlink(missing_ok=True)
    try:
        async with aiosqlite.connect(src_path) as src, aiosqlite.connect(partial) as dst:
            await src.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            await src.backup(dst)
            # The copy carries the source's WAL flag; fold everything into the main file so that the one
            # file we rename is the whole backup.
            await dst.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        os.replace(partial, dest_path)
    finally:
        for leftover in (partial, Path(f"{partial}-wal"), Path(f"{partial}-shm")):
            leftover.unlink(missing_ok=True)
    return dest_path


# --- row <-> record -----------------------------------------------------------------------------

_MEASUREMENT_FIELDS = frozenset(f.name for f in fields(Measurement))
_ESTIMATE_FIELDS = frozenset(f.name for f in fields(EstimateSnapshot))


def _known(data: dict[str, Any], names: frozenset[str]) -> dict[str, Any]:
    # Rows written by an older or newer tokbot may carry a field this version doesn't have.
    return {k: v for k, v in data.items() if k in names}


def _actor_json(actor: Actor | None) -> str | None:
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


def _actor_from_json(text: str | None) -> Actor | None:
    if not text:
        return None
    data = json.loads(text)
    return Actor(
        platform=data["platform"],
        user_id=data["user_id"],
        name=data.get("name", ""),
        roles=tuple(data.get("roles", ())),
    )


def _from_iso_or_none(text: str | None) -> datetime | None:
    return None if text is None else from_iso(text)


def _submission(row: sqlite3.Row) -> Submission:
    estimate = row["estimate"]
    return Submission(
        id=row["id"],
        measurement=Measurement(**_known(json.loads(row["measurement"]), _MEASUREMENT_FIELDS)),
        submitter=Actor(
            platform=row["platform"],
            user_id=row["user_id"],
            name=row["user_name"],
            roles=tuple(json.loads(row["user_roles"])),
        ),
        created_at=from_iso(row["created_at"]),
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
        decided_by=_actor_from_json(row["decided_by"]),
        decided_at=_from_iso_or_none(row["decided_at"]),
        reason=row["reason"],
    )


def _subscription(row: sqlite3.Row) -> Subscription:
    return Subscription(
        platform=row["platform"],
        user_id=row["user_id"],
        chat_id=row["chat_id"],
        gpu_id=row["gpu_id"],
        model_id=row["model_id"],
        lang=row["lang"],
        id=row["id"],
        active=bool(row["active"]),
        created_at=from_iso(row["created_at"]),
    )


def _outbox_item(row: sqlite3.Row) -> OutboxItem:
    return OutboxItem(
        id=row["id"],
        platform=row["platform"],
        chat_id=row["chat_id"],
        user_id=row["user_id"],
        kind=row["kind"],
        payload=json.loads(row["payload"]),
        lang=row["lang"],
        dedupe_key=row["dedupe_key"],
        attempts=row["attempts"],
        created_at=from_iso(row["created_at"]),
        next_attempt_at=from_iso(row["next_attempt_at"]),
        subscription_id=row["subscription_id"],
    )


def _audit_entry(row: sqlite3.Row) -> AuditEntry:
    return AuditEntry(
        at=from_iso(row["at"]),
        actor=Actor(
            platform=row["platform"],
            user_id=row["user_id"],
            name=row["user_name"],
            roles=tuple(json.loads(row["user_roles"])),
        ),
        action=row["action"],
        submission_id=row["submission_id"],
        ok=bool(row["ok"]),
        detail=row["detail"],
        id=row["id"],
    )


_INSERT_SUBMISSION = """
INSERT INTO submissions (gpu_id, model_id, quant, decode_tps, measurement, platform, user_id, user_name,
    user_roles, chat_id, lang, status, origin, estimate, flags, flag_details, fingerprint, source,
    source_date, created_at, decided_at)
VALUES (:gpu_id, :model_id, :quant, :decode_tps, :measurement, :platform, :user_id, :user_name, :user_roles,
    :chat_id, :lang, :status, :origin, :estimate, :flags, :flag_details, :fingerprint, :source, :source_date,
    :created_at, :decided_at)
"""

# The approve fan-out: one statement, however many subscribers. INSERT OR IGNORE on the UNIQUE
# dedupe_key keeps one notice per (platform, chat) when several of a chat's subscriptions match; the
# ORDER BY makes the oldest subscription the one recorded (its lang, its id).
_FAN_OUT = """
INSERT OR IGNORE INTO outbox (platform, chat_id, user_id, kind, payload, lang, dedupe_key, submission_id,
    subscription_id, status, attempts, created_at, next_attempt_at)
SELECT platform, chat_id, user_id, 'anchor', :payload, lang,
    'anchor:' || :submission_id || ':' || platform || ':' || chat_id, :submission_id, id, 'pending', 0,
    :at, :at
FROM subscriptions
WHERE active = 1 AND (gpu_id IS NULL OR gpu_id = :gpu_id) AND (model_id IS NULL OR model_id = :model_id)
ORDER BY id
"""


class SqliteStorage:
    """The `Storage` port on the SQLite file at `path` (created if missing).

    `migrations` replaces the bundled migration list (tests use it to check ordering); leave it None.
    """

    def __init__(self, path: str, *, migrations: Sequence[Migration] | None = None) -> None:
        if path == ":memory:" or path.startswith("file:"):
            # Two connections (writer + reader) must see the same database: a real file only.
            raise ValueError("SqliteStorage needs a file path; use MemoryStorage for an in-memory store")
        self.path = path
        self._migrations = list(migrations) if migrations is not None else None
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    # --- connection --------------------------------------------------------------------------
    async def open(self) -> None:
        if self._writer is not None:
            return
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        writer = await aiosqlite.connect(self.path, isolation_level=None)
        try:
            writer.row_factory = sqlite3.Row
            await writer.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            row = await (await writer.execute("PRAGMA journal_mode = WAL")).fetchone()
            if row is None or str(row[0]).lower() != "wal":
                raise StorageError(f"could not switch {self.path} to WAL (journal_mode={row and row[0]})")
            # synchronous=FULL: fsync the WAL at every commit. In WAL mode NORMAL would already keep
            # every committed transaction through a process crash or SIGKILL (the data sits in the OS
            # page cache), but not through a power cut or kernel panic; FULL keeps those too. A commit
            # here is an acknowledged submission or a moderator's decision, human-paced (a few per
            # second at most), so one fsync each is cheap insurance.
            await writer.execute("PRAGMA synchronous = FULL")
            await writer.execute("PRAGMA foreign_keys = ON")
            await self._migrate(writer)
            reader = await aiosqlite.connect(self.path, isolation_level=None)
        except BaseException:
            await writer.close()
            raise
        reader.row_factory = sqlite3.Row
        await reader.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await reader.execute("PRAGMA query_only = ON")  # reads only: a bug can't write around the lock
        self._writer, self._reader = writer, reader

    async def close(self) -> None:
        reader, writer = self._reader, self._writer
        self._reader = self._writer = None
        if reader is not None:
            await reader.close()
        if writer is not None:
            async with self._lock:
                try:
                    await writer.execute("PRAGMA optimize")  # cheap; keeps the planner's statistics fresh
                finally:
                    await writer.close()

    async def _migrate(self, db: aiosqlite.Connection) -> None:
        migrations = self._migrations if self._migrations is not None else bundled_migrations()
        await db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        applied = {r[0] for r in await db.execute_fetchall("SELECT version FROM schema_migrations")}
        known = {m.version for m in migrations}
        newer = sorted(v for v in applied if v not in known and v > max(known, default=0))
        if newer:
            raise StorageError(
                f"{self.path} has schema version {newer[-1]}, newer than this tokbot knows "
                f"({max(known, default=0)}); upgrade tokbot or restore an older backup"
            )
        for migration in migrations:
            if migration.version in applied:
                continue
            await db.execute("BEGIN IMMEDIATE")
            try:
                # Checked again inside the write lock: another process may have just applied it.
                again = await db.execute_fetchall(
                    "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
                )
                if not again:
                    for statement in split_statements(migration.sql):
                        await db.execute(statement)
                    await db.execute(
                        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                        (migration.version, migration.name, iso(datetime.now(UTC))),
                    )
                    await db.execute(f"PRAGMA user_version = {int(migration.version)}")
                await db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    await db.execute("ROLLBACK")
                raise

    def _read(self) -> aiosqlite.Connection:
        if self._reader is None:
            raise StorageError("storage is not open")
        return self._reader

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[aiosqlite.Connection]:
        """One transaction on the writer: all of the block's statements commit together, or none do."""
        db = self._writer
        if db is None:
            raise StorageError("storage is not open")
        async with self._lock:
            await db.execute("BEGIN IMMEDIATE")
            try:
                yield db
                await db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    await db.execute("ROLLBACK")
                raise

    # --- submissions and anchors -----------------------------------------------------------
    @staticmethod
    def _submission_params(new: NewSubmission, status: SubmissionStatus, origin: str) -> dict[str, Any]:
        m = new.measurement
        created = iso(new.created_at)
        return {
            "gpu_id": m.gpu_id,
            "model_id": m.model_id,
            "quant": m.quant,
            "decode_tps": m.decode_tps,
            "measurement": json.dumps(asdict(m), ensure_ascii=False),
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

    async def add_submission(self, new: NewSubmission) -> Submission:
        async with self._write() as db:
            cursor = await db.execute(_INSERT_SUBMISSION, self._submission_params(new, "pending", new.origin))
            submission_id = cursor.lastrowid
        assert submission_id is not None
        return Submission(
            id=submission_id,
            measurement=new.measurement,
            submitter=new.submitter,
            created_at=utc(new.created_at),
            chat_id=new.chat_id,
            lang=new.lang,
            status="pending",
            estimate=new.estimate,
            flags=tuple(new.flags),
            flag_details=tuple(new.flag_details),
            fingerprint=new.fingerprint,
            origin=new.origin,
            source=new.source,
            source_date=new.source_date,
        )

    async def add_published(self, items: list[NewSubmission]) -> int:
        added = 0
        async with self._write() as db:
            for new in items:
                if new.fingerprint and await db.execute_fetchall(
                    "SELECT 1 FROM submissions WHERE fingerprint = ? LIMIT 1", (new.fingerprint,)
                ):
                    continue
                await db.execute(_INSERT_SUBMISSION, self._submission_params(new, "approved", "published"))
                added += 1
        return added

    async def get_submission(self, submission_id: int) -> Submission | None:
        rows = await self._read().execute_fetchall("SELECT * FROM submissions WHERE id = ?", (submission_id,))
        return _submission(rows[0]) if rows else None

    async def submissions(
        self,
        status: SubmissionStatus | None = None,
        origin: str | None = None,
        platform: str | None = None,
        user_id: str | None = None,
        limit: int | None = None,
    ) -> list[Submission]:
        where: list[str] = []
        params: list[Any] = []
        for column, value in (
            ("status", status),
            ("origin", origin),
            ("platform", platform),
            ("user_id", user_id),
        ):
            if value is not None:
                where.append(f"{column} = ?")  # column names come from this literal tuple only
                params.append(value)
        sql = "SELECT * FROM submissions"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY created_at DESC, id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(limit)
        return [_submission(r) for r in await self._read().execute_fetchall(sql, params)]

    async def count_submissions_since(self, platform: str, user_id: str, since: datetime) -> int:
        rows = await self._read().execute_fetchall(
            "SELECT COUNT(*) FROM submissions WHERE platform = ? AND user_id = ? AND created_at >= ?",
            (platform, user_id, iso(since)),
        )
        return int(rows[0][0])

    async def find_duplicate(self, fingerprint: str) -> Submission | None:
        if not fingerprint:
            return None  # no fingerprint: nothing to compare, not "equal to every other blank one"
        rows = await self._read().execute_fetchall(
            "SELECT * FROM submissions WHERE fingerprint = ? AND status IN ('pending', 'approved') "
            "ORDER BY id LIMIT 1",
            (fingerprint,),
        )
        return _submission(rows[0]) if rows else None

    async def _transition(
        self,
        db: aiosqlite.Connection,
        submission_id: int,
        expected: SubmissionStatus,
        new_status: SubmissionStatus,
        moderator: Actor,
        reason: str | None,
        at: datetime,
    ) -> Submission:
        """Inside an open transaction: the state change and its audit entry."""
        rows = await db.execute_fetchall("SELECT status FROM submissions WHERE id = ?", (submission_id,))
        if not rows:
            raise NotFound(f"submission {submission_id}")
        if rows[0][0] != expected:
            raise WrongState(submission_id, rows[0][0])
        await db.execute(
            "UPDATE submissions SET status = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ?",
            (new_status, _actor_json(moderator), iso(at), reason, submission_id),
        )
        await self._insert_audit(
            db,
            AuditEntry(
                at=at,
                actor=moderator,
                action=decision_action(new_status),
                submission_id=submission_id,
                ok=True,
                detail=reason or "",
            ),
        )
        rows = await db.execute_fetchall("SELECT * FROM submissions WHERE id = ?", (submission_id,))
        return _submission(rows[0])

    @staticmethod
    async def _enqueue_decision(db: aiosqlite.Connection, sub: Submission, at: datetime) -> None:
        await db.execute(
            "INSERT OR IGNORE INTO outbox (platform, chat_id, user_id, kind, payload, lang, dedupe_key, "
            "submission_id, status, attempts, created_at, next_attempt_at) "
            "VALUES (?, ?, ?, 'decision', ?, ?, ?, ?, 'pending', 0, ?, ?)",
            (
                sub.submitter.platform,
                sub.chat_id,
                sub.submitter.user_id,
                json.dumps(decision_payload(sub), ensure_ascii=False),
                sub.lang,
                decision_key(sub.id, sub.status),
                sub.id,
                iso(at),
                iso(at),
            ),
        )

    async def approve(self, submission_id: int, moderator: Actor, at: datetime) -> Submission:
        async with self._write() as db:
            sub = await self._transition(db, submission_id, "pending", "approved", moderator, None, at)
            await db.execute(
                _FAN_OUT,
                {
                    "payload": json.dumps(anchor_payload(sub), ensure_ascii=False),
                    "submission_id": sub.id,
                    "at": iso(at),
                    "gpu_id": sub.measurement.gpu_id,
                    "model_id": sub.measurement.model_id,
                },
            )
            await self._enqueue_decision(db, sub, at)
        return sub

    async def reject(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        async with self._write() as db:
            sub = await self._transition(db, submission_id, "pending", "rejected", moderator, reason, at)
            await self._enqueue_decision(db, sub, at)
        return sub

    async def withdraw(self, submission_id: int, moderator: Actor, reason: str, at: datetime) -> Submission:
        async with self._write() as db:
            sub = await self._transition(db, submission_id, "approved", "withdrawn", moderator, reason, at)
            if sub.origin == "community":  # a published anchor has nobody to tell
                await self._enqueue_decision(db, sub, at)
        return sub

    # --- audit -----------------------------------------------------------------------------
    @staticmethod
    async def _insert_audit(db: aiosqlite.Connection, entry: AuditEntry) -> None:
        await db.execute(
            "INSERT INTO audit_log (at, platform, user_id, user_name, user_roles, action, submission_id, ok, "
            "detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                iso(entry.at),
                entry.actor.platform,
                entry.actor.user_id,
                entry.actor.name,
                json.dumps(list(entry.actor.roles)),
                entry.action,
                entry.submission_id,
                int(entry.ok),
                entry.detail,
            ),
        )

    async def record_audit(self, entry: AuditEntry) -> None:
        async with self._write() as db:
            await self._insert_audit(db, entry)

    async def audit_log(self, limit: int = 50) -> list[AuditEntry]:
        rows = await self._read().execute_fetchall(
            "SELECT * FROM audit_log ORDER BY at DESC, id DESC LIMIT ?", (limit,)
        )
        return [_audit_entry(r) for r in rows]

    # --- subscriptions ---------------------------------------------------------------------
    async def subscribe(self, sub: Subscription) -> tuple[Subscription, bool]:
        async with self._write() as db:
            # COALESCE as in the unique index, so the lookup uses it.
            rows = await db.execute_fetchall(
                "SELECT id FROM subscriptions WHERE platform = ? AND user_id = ? "
                "AND COALESCE(gpu_id, '') = COALESCE(?, '') AND COALESCE(model_id, '') = COALESCE(?, '')",
                (sub.platform, sub.user_id, sub.gpu_id, sub.model_id),
            )
            if rows:
                sub_id, created = int(rows[0][0]), False
                await db.execute(
                    "UPDATE subscriptions SET chat_id = ?, lang = ?, active = 1 WHERE id = ?",
                    (sub.chat_id, sub.lang, sub_id),
                )
            else:
                cursor = await db.execute(
                    "INSERT INTO subscriptions (platform, user_id, chat_id, gpu_id, model_id, lang, active, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?, 1, ?)",
                    (
                        sub.platform,
                        sub.user_id,
                        sub.chat_id,
                        sub.gpu_id,
                        sub.model_id,
                        sub.lang,
                        iso(sub.created_at or datetime.now(UTC)),
                    ),
                )
                assert cursor.lastrowid is not None
                sub_id, created = cursor.lastrowid, True
            stored = await db.execute_fetchall("SELECT * FROM subscriptions WHERE id = ?", (sub_id,))
        return _subscription(stored[0]), created

    async def unsubscribe(
        self, platform: str, user_id: str, gpu_id: str | None, model_id: str | None, everything: bool = False
    ) -> int:
        sql = "UPDATE subscriptions SET active = 0 WHERE active = 1 AND platform = ? AND user_id = ?"
        params: list[Any] = [platform, user_id]
        if not everything:
            sql += " AND COALESCE(gpu_id, '') = COALESCE(?, '') AND COALESCE(model_id, '') = COALESCE(?, '')"
            params += [gpu_id, model_id]
        async with self._write() as db:
            cursor = await db.execute(sql, params)
            return cursor.rowcount

    async def subscriptions_of(self, platform: str, user_id: str) -> list[Subscription]:
        rows = await self._read().execute_fetchall(
            "SELECT * FROM subscriptions WHERE active = 1 AND platform = ? AND user_id = ? ORDER BY id",
            (platform, user_id),
        )
        return [_subscription(r) for r in rows]

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        async with self._write() as db:
            cursor = await db.execute(
                "UPDATE subscriptions SET active = 0 WHERE active = 1 AND platform = ? AND chat_id = ?",
                (platform, chat_id),
            )
            return cursor.rowcount

    async def count_subscriptions(self) -> int:
        rows = await self._read().execute_fetchall("SELECT COUNT(*) FROM subscriptions WHERE active = 1")
        return int(rows[0][0])

    # --- outbox ----------------------------------------------------------------------------
    async def claim_outbox(
        self,
        platform: str,
        now: datetime,
        limit: int,
        lease_seconds: float = 60.0,
        chat_id: str | None = None,
    ) -> list[OutboxItem]:
        now_text = iso(now)
        sql = (
            "SELECT * FROM outbox WHERE platform = ? AND status = 'pending' AND next_attempt_at <= ? "
            "AND (lease_until IS NULL OR lease_until <= ?)"
        )
        params: list[Any] = [platform, now_text, now_text]
        if chat_id is not None:
            sql += " AND chat_id = ?"
            params.append(chat_id)
        sql += " ORDER BY created_at, id LIMIT ?"
        params.append(limit)
        lease_until = iso(utc(now) + timedelta(seconds=lease_seconds))
        async with self._write() as db:
            rows = await db.execute_fetchall(sql, params)
            await db.executemany(
                "UPDATE outbox SET lease_until = ? WHERE id = ?", [(lease_until, r["id"]) for r in rows]
            )
        return [_outbox_item(r) for r in rows]

    @staticmethod
    async def _outbox_status(db: aiosqlite.Connection, item_id: int) -> str:
        rows = await db.execute_fetchall("SELECT status FROM outbox WHERE id = ?", (item_id,))
        if not rows:
            raise NotFound(f"outbox item {item_id}")
        return str(rows[0][0])

    async def mark_sent(self, item_id: int, at: datetime) -> None:
        async with self._write() as db:
            await self._outbox_status(db, item_id)
            await db.execute(
                "UPDATE outbox SET status = ?, sent_at = ?, lease_until = NULL WHERE id = ?",
                (OUTBOX_SENT, iso(at), item_id),
            )

    async def mark_retry(self, item_id: int, next_attempt_at: datetime, error: str) -> None:
        async with self._write() as db:
            if await self._outbox_status(db, item_id) != OUTBOX_PENDING:
                return  # a late report from a worker whose lease ran out; the item is settled
            await db.execute(
                "UPDATE outbox SET attempts = attempts + 1, next_attempt_at = ?, lease_until = NULL, "
                "last_error = ? WHERE id = ?",
                (iso(next_attempt_at), error, item_id),
            )

    async def mark_dead(self, item_id: int, error: str) -> None:
        async with self._write() as db:
            if await self._outbox_status(db, item_id) != OUTBOX_PENDING:
                return
            await db.execute(
                "UPDATE outbox SET status = ?, attempts = attempts + 1, lease_until = NULL, last_error = ? "
                "WHERE id = ?",
                (OUTBOX_DEAD, error, item_id),
            )

    async def outbox_stats(self) -> OutboxStats:
        rows = await self._read().execute_fetchall(
            "SELECT status, platform, COUNT(*) FROM outbox GROUP BY status, platform"
        )
        totals = {OUTBOX_PENDING: 0, OUTBOX_SENT: 0, OUTBOX_DEAD: 0}
        by_platform: dict[str, int] = {}
        for status, platform, count in rows:
            totals[status] = totals.get(status, 0) + count
            if status == OUTBOX_PENDING:
                by_platform[platform] = count
        return OutboxStats(
            pending=totals[OUTBOX_PENDING],
            sent=totals[OUTBOX_SENT],
            dead=totals[OUTBOX_DEAD],
            by_platform=by_platform,
        )

    # --- operations ------------------------------------------------------------------------
    async def backup(self, destination: str) -> None:
        if self._writer is None:
            raise StorageError("storage is not open")
        # A connection of its own: the backup reads one snapshot and the writer carries on (WAL).
        await backup_database(self.path, destination)
