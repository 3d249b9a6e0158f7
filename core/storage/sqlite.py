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
- /submit's check-and-insert is one IMMEDIATE transaction (count, duplicate look-up, insert), and a
  partial unique index on the fingerprint backs the duplicate rule, so neither can be raced.
- Lock contention from other processes is waited out (busy_timeout, then BEGIN IMMEDIATE retried up
  to LOCK_WAIT_SECONDS); `PRAGMA optimize` at close never waits for a lock (skipped when busy).
- A path that can't be a database (a directory, not SQLite, read-only) raises StorageUnavailable with
  a short reason, which the command line turns into one sentence and exit status 2.
"""

from __future__ import annotations

import asyncio
import json
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import aiosqlite

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
    iso,
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

__all__ = [
    "Migration",
    "SqliteStorage",
    "backup_database",
    "bundled_migrations",
    "check_database_file",
    "split_statements",
]

BUSY_TIMEOUT_MS = 5000
# Beyond one busy_timeout: BEGIN IMMEDIATE is tried again (nothing was done yet, so it is safe) until
# this much time has passed. 43 concurrent writer processes once waited past 5 s (issue 13).
LOCK_WAIT_SECONDS = 30.0
_BUSY_CODES = {sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED}
_SQLITE_HEADER = b"SQLite format 3\x00"


async def _retry_while_busy(step: Callable[[], Awaitable[object]]) -> None:
    """`step`, tried again with a growing pause while SQLite answers BUSY / locked, up to
    LOCK_WAIT_SECONDS in all; any other error, or BUSY past the deadline, is raised."""
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    pause = 0.01
    while True:
        try:
            await step()
            return
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc) or time.monotonic() >= deadline:
                raise
        await asyncio.sleep(pause)
        pause = min(pause * 2, 0.5)


def _is_busy(exc: sqlite3.OperationalError) -> bool:
    code = getattr(exc, "sqlite_errorcode", None)
    return (code is not None and code & 0xFF in _BUSY_CODES) or "locked" in str(exc)


async def _fetchall(db: aiosqlite.Connection, sql: str, params: Any = ()) -> list[sqlite3.Row]:
    # aiosqlite types execute_fetchall as an Iterable; it is a list, indexed all over this module.
    return list(await db.execute_fetchall(sql, params))


def check_database_file(path: str) -> None:
    """Raise StorageUnavailable, with the reason in a few words, when `path` can't be tokbot's SQLite
    database; called before anything opens it so that the first thing an operator sees is a sentence,
    not a traceback. A missing file is fine (it is created), as is an empty one (SQLite's empty
    database); its folder must be writable, since WAL keeps two files next to it."""
    if not path.strip():
        raise StorageUnavailable(path, "is empty; it must name a file, e.g. data/tokbot.db")
    target = Path(path)
    if target.is_dir():
        raise StorageUnavailable(path, "is a directory, not a database file")
    if target.exists():
        try:
            with target.open("rb") as handle:
                head = handle.read(len(_SQLITE_HEADER))
        except OSError as exc:
            raise StorageUnavailable(path, f"can't be read ({exc.strerror or exc})") from None
        if head and head != _SQLITE_HEADER:
            raise StorageUnavailable(path, "is not an SQLite database (another kind of file, or corrupt)")
        if not os.access(target, os.W_OK):
            raise StorageUnavailable(path, "is read-only; tokbot must be able to write it")
    folder = target.parent
    if folder.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise StorageUnavailable(path, f"is in a folder tokbot can't write ({folder})")


def _unavailable(path: str, exc: BaseException) -> StorageUnavailable | None:
    """SQLite's and the OS's words for a database that can't be used, as one short clause; None for
    any other error (a broken migration, say), which is a bug to see in full, not a bad path."""
    text = str(exc)
    if "not a database" in text or "malformed" in text:
        why = "is not an SQLite database (another kind of file, or corrupt)"
    elif "readonly" in text or "read-only" in text or getattr(exc, "errno", None) == 30:  # EROFS
        why = "is on read-only storage or read-only; tokbot must be able to write it"
    elif "unable to open" in text or "disk I/O" in text:
        why = "can't be opened (does its folder exist, and may tokbot write there?)"
    elif isinstance(exc, OSError):
        why = f"can't be used ({exc.strerror or exc})"
    else:
        return None
    return StorageUnavailable(path, why)


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
        """Connect, switch to WAL and migrate. A path that can't be a database raises
        StorageUnavailable (never a raw sqlite3 or OS error)."""
        if self._writer is not None:
            return
        check_database_file(self.path)
        try:
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            await self._connect_retrying()
        except (sqlite3.DatabaseError, OSError) as exc:
            unusable = _unavailable(self.path, exc)
            if unusable is None:
                raise
            raise unusable from exc

    async def _connect_retrying(self) -> None:
        """`_connect`, tried again while another process holds a lock it can't wait for: switching a
        new file to WAL and the first schema statements are not all covered by busy_timeout (SQLite
        answers BUSY at once where waiting could deadlock), and two processes may start together."""
        await _retry_while_busy(self._connect)

    async def _connect(self) -> None:
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
                    await self._optimize(writer)
                finally:
                    await writer.close()

    @staticmethod
    async def _optimize(writer: aiosqlite.Connection) -> None:
        """`PRAGMA optimize` keeps the planner's statistics fresh, but it may run ANALYZE, which needs
        the write lock: with busy_timeout 0 it never waits for another process and, when that one
        holds the lock, it is simply skipped (the next close does it). 53 of 120 concurrent console
        processes once exited with "database is locked" from here (issue 13)."""
        try:
            await writer.execute("PRAGMA busy_timeout = 0")
            await writer.execute("PRAGMA optimize")
        except sqlite3.OperationalError as exc:
            if not _is_busy(exc):
                raise

    async def _migrate(self, db: aiosqlite.Connection) -> None:
        migrations = self._migrations if self._migrations is not None else bundled_migrations()
        await db.execute(
            "CREATE TABLE IF NOT EXISTS schema_migrations ("
            " version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TEXT NOT NULL)"
        )
        applied = {r[0] for r in await _fetchall(db, "SELECT version FROM schema_migrations")}
        newer_than_known(applied, migrations, self.path)
        for migration in migrations:
            if migration.version in applied:
                continue
            await self._begin_immediate(db)
            try:
                # Checked again inside the write lock: another process may have just applied it.
                again = await _fetchall(
                    db, "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
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

    async def schema_version(self) -> int:
        """The newest migration applied (what `python -m bot migrate` prints)."""
        rows = await _fetchall(self._read(), "SELECT MAX(version) FROM schema_migrations")
        return int(rows[0][0] or 0)

    @staticmethod
    async def _begin_immediate(db: aiosqlite.Connection) -> None:
        """BEGIN IMMEDIATE, tried again while another process holds the write lock past busy_timeout,
        up to LOCK_WAIT_SECONDS in all. Nothing has been done yet, so trying again is always safe."""
        await _retry_while_busy(lambda: db.execute("BEGIN IMMEDIATE"))

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
            await self._begin_immediate(db)
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
        values = _rows.submission_values(new, status, origin)
        values["created_at"] = iso(values["created_at"])
        if values["decided_at"] is not None:
            values["decided_at"] = iso(values["decided_at"])
        return values

    @staticmethod
    async def _insert_pending(db: aiosqlite.Connection, new: NewSubmission) -> Submission:
        """Inside an open transaction. The unique index on live fingerprints is the last word on
        duplicates; a collision becomes DuplicateSubmission naming the one already there."""
        try:
            cursor = await db.execute(
                _INSERT_SUBMISSION, SqliteStorage._submission_params(new, "pending", new.origin)
            )
        except sqlite3.IntegrityError:
            existing = await SqliteStorage._live_duplicate(db, new.fingerprint)
            if existing is None:
                raise
            raise DuplicateSubmission(existing.id) from None
        assert cursor.lastrowid is not None
        rows = await _fetchall(db, "SELECT * FROM submissions WHERE id = ?", (cursor.lastrowid,))
        return _rows.submission(rows[0])

    @staticmethod
    async def _live_duplicate(db: aiosqlite.Connection, fingerprint: str) -> Submission | None:
        if not fingerprint:
            return None  # no fingerprint: nothing to compare, not "equal to every other blank one"
        rows = await _fetchall(
            db,
            "SELECT * FROM submissions WHERE fingerprint = ? AND status IN ('pending', 'approved') "
            "ORDER BY id LIMIT 1",
            (fingerprint,),
        )
        return _rows.submission(rows[0]) if rows else None

    async def add_submission(self, new: NewSubmission) -> Submission:
        async with self._write() as db:
            return await self._insert_pending(db, new)

    async def add_submission_checked(self, new: NewSubmission, since: datetime, limit: int) -> SubmitOutcome:
        # One IMMEDIATE transaction: no other writer, in this process or another, can insert between
        # the count and the insert.
        async with self._write() as db:
            existing = await self._live_duplicate(db, new.fingerprint)
            if existing is not None:
                return SubmitOutcome("duplicate", existing)
            rows = await _fetchall(
                db,
                "SELECT COUNT(*) FROM submissions WHERE platform = ? AND user_id = ? AND created_at >= ?",
                (new.submitter.platform, new.submitter.user_id, iso(since)),
            )
            if int(rows[0][0]) >= limit:
                return SubmitOutcome("rate_limited")
            return SubmitOutcome("stored", await self._insert_pending(db, new))

    async def add_published(self, items: list[NewSubmission]) -> int:
        added = 0
        async with self._write() as db:
            for new in items:
                if new.fingerprint and await _fetchall(
                    db, "SELECT 1 FROM submissions WHERE fingerprint = ? LIMIT 1", (new.fingerprint,)
                ):
                    continue
                await db.execute(_INSERT_SUBMISSION, self._submission_params(new, "approved", "published"))
                added += 1
        return added

    async def get_submission(self, submission_id: int) -> Submission | None:
        rows = await _fetchall(self._read(), "SELECT * FROM submissions WHERE id = ?", (submission_id,))
        return _rows.submission(rows[0]) if rows else None

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
        return [_rows.submission(r) for r in await _fetchall(self._read(), sql, params)]

    async def count_submissions_since(self, platform: str, user_id: str, since: datetime) -> int:
        rows = await _fetchall(
            self._read(),
            "SELECT COUNT(*) FROM submissions WHERE platform = ? AND user_id = ? AND created_at >= ?",
            (platform, user_id, iso(since)),
        )
        return int(rows[0][0])

    async def find_duplicate(self, fingerprint: str) -> Submission | None:
        return await self._live_duplicate(self._read(), fingerprint)

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
        rows = await _fetchall(db, "SELECT status FROM submissions WHERE id = ?", (submission_id,))
        if not rows:
            raise NotFound(f"submission {submission_id}")
        if rows[0][0] != expected:
            raise WrongState(submission_id, rows[0][0])
        await db.execute(
            "UPDATE submissions SET status = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ?",
            (new_status, _rows.actor_json(moderator), iso(at), reason, submission_id),
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
        rows = await _fetchall(db, "SELECT * FROM submissions WHERE id = ?", (submission_id,))
        return _rows.submission(rows[0])

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

    async def record_refused(self, entry: AuditEntry) -> None:
        minute = refused_minute(entry.at)
        key = (entry.actor.platform, entry.actor.user_id, entry.action, iso(minute))
        async with self._write() as db:
            # IMMEDIATE holds the write lock: no other writer can insert this minute's row meanwhile.
            cursor = await db.execute(
                "UPDATE audit_log SET count = count + 1 "
                "WHERE ok = 0 AND platform = ? AND user_id = ? AND action = ? AND at = ?",
                key,
            )
            if cursor.rowcount == 0:
                await self._insert_audit(db, replace(entry, at=minute, ok=False))

    async def audit_log(self, limit: int = 50, kind: AuditKind | None = None) -> list[AuditEntry]:
        where = "" if kind is None else f"WHERE ok = {int(kind == 'decisions')} "
        rows = await _fetchall(
            self._read(), f"SELECT * FROM audit_log {where}ORDER BY at DESC, id DESC LIMIT ?", (limit,)
        )
        return [_rows.audit_entry(r) for r in rows]

    async def undo_decision(
        self, submission_id: int, moderator: Actor, at: datetime, since: datetime
    ) -> UndoOutcome:
        async with self._write() as db:
            rows = await _fetchall(db, "SELECT * FROM submissions WHERE id = ?", (submission_id,))
            if not rows:
                raise NotFound(f"submission {submission_id}")
            current = _rows.submission(rows[0])
            if current.status not in ("approved", "rejected"):
                raise WrongState(submission_id, current.status)
            if not may_undo(current, moderator, utc(since)):
                raise UndoRefused(submission_id)
            live = (
                await self._live_duplicate(db, current.fingerprint) if current.status == "rejected" else None
            )
            if live is not None:
                raise DuplicateSubmission(live.id)
            await db.execute(
                "UPDATE submissions SET status = 'pending', decided_by = NULL, decided_at = NULL, "
                "reason = NULL WHERE id = ?",
                (submission_id,),
            )
            await db.execute(
                "DELETE FROM outbox WHERE submission_id = ? AND status = ?", (submission_id, OUTBOX_PENDING)
            )
            sent = await _fetchall(
                db, "SELECT COUNT(*) FROM outbox WHERE submission_id = ?", (submission_id,)
            )
            await self._insert_audit(db, AuditEntry(
                at=at, actor=moderator, action=f"undo:{decision_action(current.status)}",
                submission_id=submission_id, ok=True, detail=current.reason or "",
            ))  # fmt: skip
            rows = await _fetchall(db, "SELECT * FROM submissions WHERE id = ?", (submission_id,))
        return UndoOutcome(_rows.submission(rows[0]), int(sent[0][0]))

    # --- subscriptions ---------------------------------------------------------------------
    async def subscribe(self, sub: Subscription) -> tuple[Subscription, bool]:
        async with self._write() as db:
            # COALESCE as in the unique index, so the lookup uses it.
            rows = await _fetchall(
                db,
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
            stored = await _fetchall(db, "SELECT * FROM subscriptions WHERE id = ?", (sub_id,))
        return _rows.subscription(stored[0]), created

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
        rows = await _fetchall(
            self._read(),
            "SELECT * FROM subscriptions WHERE active = 1 AND platform = ? AND user_id = ? ORDER BY id",
            (platform, user_id),
        )
        return [_rows.subscription(r) for r in rows]

    async def deactivate_chat(self, platform: str, chat_id: str) -> int:
        async with self._write() as db:
            cursor = await db.execute(
                "UPDATE subscriptions SET active = 0 WHERE active = 1 AND platform = ? AND chat_id = ?",
                (platform, chat_id),
            )
            return cursor.rowcount

    async def count_subscriptions(self) -> int:
        rows = await _fetchall(self._read(), "SELECT COUNT(*) FROM subscriptions WHERE active = 1")
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
            rows = await _fetchall(db, sql, params)
            await db.executemany(
                "UPDATE outbox SET lease_until = ? WHERE id = ?", [(lease_until, r["id"]) for r in rows]
            )
        return [_rows.outbox_item(r) for r in rows]

    @staticmethod
    async def _outbox_status(db: aiosqlite.Connection, item_id: int) -> str:
        rows = await _fetchall(db, "SELECT status FROM outbox WHERE id = ?", (item_id,))
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
        rows = await _fetchall(
            self._read(), "SELECT status, platform, COUNT(*) FROM outbox GROUP BY status, platform"
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

    # --- "was this helpful?" -----------------------------------------------------------------
    async def record_feedback(self, feedback: Feedback) -> bool:
        values = _rows.feedback_values(feedback)
        values.update(at=iso(values["at"]), helpful=int(values["helpful"]))
        async with self._write() as db:
            existing = await _fetchall(
                db,
                "SELECT id FROM feedback WHERE platform = :platform AND user_id = :user_id "
                "AND answer_key = :answer_key",
                values,
            )
            if existing:  # the other button: the vote changes, it is not a second one
                changes = ", ".join(f"{name} = :{name}" for name in _rows.FEEDBACK_ORDER)
                await db.execute(
                    f"UPDATE feedback SET {changes} WHERE id = :id", {**values, "id": existing[0][0]}
                )
                return False
            names = ", ".join(_rows.FEEDBACK_ORDER)
            marks = ", ".join(f":{name}" for name in _rows.FEEDBACK_ORDER)
            await db.execute(f"INSERT INTO feedback ({names}) VALUES ({marks})", values)
            return True

    async def feedback_counts(self) -> FeedbackCounts:
        rows = await _fetchall(
            self._read(),
            "SELECT COALESCE(SUM(helpful), 0), COUNT(*) - COALESCE(SUM(helpful), 0) FROM feedback",
        )
        return FeedbackCounts(helpful=int(rows[0][0]), unhelpful=int(rows[0][1]))

    async def unhelpful_feedback(self, limit: int = 20) -> list[Feedback]:
        rows = await _fetchall(
            self._read(),
            "SELECT * FROM feedback WHERE helpful = 0 ORDER BY at DESC, id DESC LIMIT ?",
            (limit,),
        )
        return [_rows.feedback(r) for r in rows]

    # --- models resolved outside the catalog ------------------------------------------------
    async def cached_model(self, key: str) -> tuple[str, datetime] | None:
        rows = await _fetchall(
            self._read(), "SELECT payload, resolved_at FROM resolved_models WHERE key = ?", (key,)
        )
        return None if not rows else (str(rows[0]["payload"]), _rows.as_time(rows[0]["resolved_at"]))

    async def cache_model(self, key: str, payload: str, at: datetime) -> None:
        async with self._write() as db:
            await db.execute(
                "INSERT INTO resolved_models (key, payload, resolved_at) VALUES (?, ?, ?) "
                "ON CONFLICT (key) DO UPDATE SET payload = excluded.payload, "
                "resolved_at = excluded.resolved_at",
                (key, payload, iso(at)),
            )

    # --- operations ------------------------------------------------------------------------
    async def backup(self, destination: str) -> None:
        if self._writer is None:
            raise StorageError("storage is not open")
        # A connection of its own: the backup reads one snapshot and the writer carries on (WAL).
        await backup_database(self.path, destination)

    # --- moving data (python -m bot db copy) -------------------------------------------------
    async def table_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for table in _rows.COPY_ORDER:  # table names come from this constant only
            rows = await _fetchall(self._read(), f"SELECT COUNT(*) FROM {table}")
            counts[table] = int(rows[0][0])
        return counts

    async def dump_tables(self) -> dict[str, list[dict[str, Any]]]:
        """Every row of every table (id order, values made portable), read in ONE read transaction:
        a snapshot, even while a bot process keeps writing (WAL)."""
        db = self._read()
        dumped: dict[str, list[dict[str, Any]]] = {}
        await db.execute("BEGIN")
        try:
            for table in _rows.COPY_ORDER:  # table and column names come from the constants only
                columns = _rows.TABLE_COLUMNS[table]
                names = ", ".join(name for name, _ in columns)
                rows = await _fetchall(db, f"SELECT {names} FROM {table} ORDER BY {columns[0][0]}")
                dumped[table] = [
                    {name: _rows.portable(kind, r[name]) for name, kind in columns} for r in rows
                ]
        finally:
            await db.execute("COMMIT")
        return dumped

    async def load_tables(self, tables: dict[str, list[dict[str, Any]]]) -> None:
        """Insert rows dumped from another backend, ids kept, all in one transaction; refuses a
        database that already holds any (a copy never merges)."""
        async with self._write() as db:
            for table in _rows.COPY_ORDER:
                if await _fetchall(db, f"SELECT 1 FROM {table} LIMIT 1"):
                    raise StorageError(f"{self.path} already holds {table}; copy into an empty database")
            for table in _rows.COPY_ORDER:
                columns = _rows.TABLE_COLUMNS[table]
                names = ", ".join(name for name, _ in columns)
                marks = ", ".join("?" for _ in columns)
                await db.executemany(
                    f"INSERT INTO {table} ({names}) VALUES ({marks})",
                    [
                        tuple(_sqlite_value(kind, row[name]) for name, kind in columns)
                        for row in tables[table]
                    ],
                )

    # --- models resolved outside the catalog: every one, for the catalog overlay at start ------
    async def cached_models(self, limit: int = 10000) -> list[tuple[str, str, datetime]]:
        rows = await _fetchall(
            self._read(),
            "SELECT key, payload, resolved_at FROM resolved_models "
            "ORDER BY resolved_at DESC, key DESC LIMIT ?",
            (limit,),
        )
        return [(str(r["key"]), str(r["payload"]), _rows.as_time(r["resolved_at"])) for r in rows]


def _sqlite_value(kind: str, value: Any) -> Any:
    if value is None:
        return None
    if kind == "time":
        return iso(value)
    if kind == "bool":
        return int(value)
    return value
