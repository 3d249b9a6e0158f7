"""`SqliteStorage`: the storage port on one SQLite file, for a single bot process.

The rules are `core.storage._rules.StorageRules` and the statements `core.storage._sql`, shared with
the PostgreSQL backend; this module holds the connections, the migrations, the backup and the dialect.

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
- `read_only=True` (`python -m bot ask`): when the file's schema is current, only the query-only
  connection is opened: no WAL switch, no migration, no writer, no `PRAGMA optimize` at close, so
  any number of such processes answer while another holds the write lock. A file that needs a
  migration (or doesn't exist) is opened as usual first; a write on a read-only handle is an error.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import aiosqlite

from core.storage import _rows
from core.storage._common import iso
from core.storage._migrations import Migration, bundled_migrations, newer_than_known
from core.storage._rules import Conflict, StorageRules, Store
from core.storage._sql import Dialect, SqlStore
from core.storage.interface import StorageError, StorageUnavailable

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


SQLITE = Dialect()  # the shared SQL's defaults are SQLite's (core.storage._sql.Dialect)


class _Connection:
    """`core.storage._sql.Connection` on the aiosqlite connection `db`."""

    def __init__(self, db: aiosqlite.Connection) -> None:
        self.db = db

    async def fetch(self, sql: str, *args: Any) -> list[sqlite3.Row]:
        return await _fetchall(self.db, sql, args)

    async def execute(self, sql: str, *args: Any) -> int:
        cursor = await self.db.execute(sql, args)
        return cursor.rowcount

    async def insert(self, sql: str, *args: Any) -> int:
        cursor = await self.db.execute(sql, args)
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    async def lock(self, key: str, per_schema: bool) -> None:
        return None  # the IMMEDIATE transaction holds SQLite's one write lock already

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        # A failed statement is undone on its own in SQLite; the transaction stays usable.
        try:
            yield
        except sqlite3.IntegrityError as exc:
            raise Conflict(str(exc)) from exc


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


async def _query_only(path: str) -> aiosqlite.Connection:
    """A connection that only reads: a bug can't write around the writer's lock through it."""
    reader = await aiosqlite.connect(path, isolation_level=None)
    try:
        reader.row_factory = sqlite3.Row
        await reader.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await reader.execute("PRAGMA query_only = ON")
    except BaseException:
        await reader.close()
        raise
    return reader


class SqliteStorage(StorageRules):
    """The `Storage` port on the SQLite file at `path` (created if missing).

    `migrations` replaces the bundled migration list (tests use it to check ordering); leave it None.
    """

    def __init__(
        self, path: str, *, migrations: Sequence[Migration] | None = None, read_only: bool = False
    ) -> None:
        if path == ":memory:" or path.startswith("file:"):
            # Two connections (writer + reader) must see the same database: a real file only.
            raise ValueError("SqliteStorage needs a file path; use MemoryStorage for an in-memory store")
        self.path = path
        self.read_only = read_only
        self._migrations = list(migrations) if migrations is not None else None
        self._writer: aiosqlite.Connection | None = None
        self._reader: aiosqlite.Connection | None = None
        self._lock = asyncio.Lock()

    # --- connection --------------------------------------------------------------------------
    async def open(self) -> None:
        """Connect, switch to WAL and migrate. A path that can't be a database raises
        StorageUnavailable (never a raw sqlite3 or OS error)."""
        if self._writer is not None or self._reader is not None:
            return
        check_database_file(self.path)
        try:
            if self.read_only and await self._open_reader_if_current():
                return
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
            reader = await _query_only(self.path)
        except BaseException:
            await writer.close()
            raise
        if self.read_only:  # migrated once for this reader; it writes nothing from here on
            await writer.close()
            self._reader = reader
            return
        self._writer, self._reader = writer, reader

    async def _open_reader_if_current(self) -> bool:
        """The query-only connection alone, when every known migration is applied already (reading
        schema_migrations takes no write lock in WAL mode). False, with nothing left open, when the
        file is missing or behind: the caller then opens it as usual (migrating it once)."""
        if not Path(self.path).is_file() or Path(self.path).stat().st_size == 0:
            return False
        migrations = self._migrations if self._migrations is not None else bundled_migrations()
        reader = await _query_only(self.path)
        try:
            has_table = await _fetchall(
                reader, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
            )
            applied = (
                {r[0] for r in await _fetchall(reader, "SELECT version FROM schema_migrations")}
                if has_table
                else set()
            )
            newer_than_known(applied, migrations, self.path)
        except BaseException:
            await reader.close()
            raise
        if not {m.version for m in migrations} <= applied:
            await reader.close()
            return False
        self._reader = reader
        return True

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
            raise StorageError(
                "storage is opened read-only" if self._reader is not None else "storage is not open"
            )
        async with self._lock:
            await self._begin_immediate(db)
            try:
                yield db
                await db.execute("COMMIT")
            except BaseException:
                if db.in_transaction:
                    await db.execute("ROLLBACK")
                raise

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Store]:
        async with self._write() as db:
            yield SqlStore(_Connection(db), SQLITE)

    _autocommit = _transaction  # one writer connection: every change is a transaction on it

    @asynccontextmanager
    async def _query(self) -> AsyncIterator[Store]:
        yield SqlStore(_Connection(self._read()), SQLITE)

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
                        tuple(_rows.portable(kind, row[name], iso, int) for name, kind in columns)
                        for row in tables[table]
                    ],
                )
