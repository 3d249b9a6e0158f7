"""`PostgresStorage`: the storage port on a PostgreSQL server, for several bot processes on one database.

Chosen with `TOKBOT_DATABASE_URL=postgresql://…`. It lives at the edge, not in core/, because it
needs a network driver (asyncpg). The rules are `core.storage._rules.StorageRules` and the statements
`core.storage._sql`, shared with the SQLite backend; this module holds the pool, the migrations, the
dialect and the driver's adapter. It passes the same contract suite as the memory and SQLite backends.

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
- A connection the server closed (a restart, `pg_terminate_backend`, a proxy's idle cut) fails the
  operation on it only: an operation that lost its connection before COMMIT was sent is run once more
  on a fresh one (the server rolled the lost transaction back, so nothing is done twice); a read is
  always safe to run again; a statement outside a transaction only when it was never sent. A
  connection lost during COMMIT is not retried: the change may have been stored.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import re
import shutil
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, ParamSpec, TypeVar
from urllib.parse import urlsplit, urlunsplit

import asyncpg

from core.storage import _rows
from core.storage._common import utc
from core.storage._migrations import Migration, bundled_migrations, newer_than_known
from core.storage._rules import Conflict, StorageRules, Store
from core.storage._sql import Dialect, SqlStore
from core.storage.interface import StorageError, StorageUnavailable

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 10.0
# What a connection the server or the network closed raises (asyncpg): class 08 (connection
# exception), 57P01-57P03 (terminated by an administrator, a crash, or a server that can't connect
# now), and the socket's own errors.
_LOST: tuple[type[BaseException], ...] = (
    asyncpg.PostgresConnectionError,
    asyncpg.AdminShutdownError,
    asyncpg.CrashShutdownError,
    asyncpg.CannotConnectNowError,
    ConnectionError,
)
_IDENTIFIER_OK = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_")

# What PostgreSQL's SQL says differently from SQLite's (core.storage._sql): timestamptz and boolean
# columns; several processes share the rows, so a decision locks its submission row and two workers
# claiming the outbox pass over each other's rows; an upsert's RETURNING tells an insert by xmax.
POSTGRES = Dialect(
    true="TRUE",
    false="FALSE",
    for_update=" FOR UPDATE",
    skip_locked=" FOR UPDATE SKIP LOCKED",
    types={"json": "JSONB", "time": "TIMESTAMPTZ", "int": "BIGINT", "text": "TEXT"},
    time=utc,
    inserted="(xmax = 0)",
)
_MARK = re.compile(r"\?")


@lru_cache(maxsize=256)
def _numbered(sql: str) -> str:
    """The shared SQL's `?` placeholders as asyncpg's $1, $2, … (the statements hold no other `?`)."""
    counter = iter(range(1, 10_000))
    return _MARK.sub(lambda _: f"${next(counter)}", sql)


class _Connection:
    """`core.storage._sql.Connection` on the asyncpg connection `con`."""

    def __init__(self, con: asyncpg.Connection) -> None:
        self.con = con

    async def fetch(self, sql: str, *args: Any) -> list[asyncpg.Record]:
        return list(await self.con.fetch(_numbered(sql), *args))

    async def execute(self, sql: str, *args: Any) -> int:
        return _affected(await self.con.execute(_numbered(sql), *args))

    async def insert(self, sql: str, *args: Any) -> int:
        return int(await self.con.fetchval(_numbered(sql + " RETURNING id"), *args))

    async def lock(self, key: str, per_schema: bool) -> None:
        """A transaction-scoped advisory lock on `key` (and this schema, with per_schema)."""
        if per_schema:
            await self.con.execute("SELECT pg_advisory_xact_lock(hashtext($1 || current_schema()))", key)
        else:
            await self.con.execute("SELECT pg_advisory_xact_lock(hashtext($1))", key)

    @asynccontextmanager
    async def savepoint(self) -> AsyncIterator[None]:
        try:
            async with self.con.transaction():  # nested: a savepoint, so the outer one stays usable
                yield
        except asyncpg.UniqueViolationError as exc:
            raise Conflict(str(exc)) from exc


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


P = ParamSpec("P")
T = TypeVar("T")


class RetryableLoss(StorageError):
    """The connection closed before anything of the operation was committed: safe to run it again."""


def _lost(exc: BaseException) -> bool:
    return isinstance(exc, _LOST) or _never_sent(exc)


def _never_sent(exc: BaseException) -> bool:
    """asyncpg refused to send on a connection it already knew closed ("connection is closed"), or on
    one that read the server's "terminating connection" while idle and still waits for the rest of
    it ("cannot switch to state …; another operation is in progress": checked before sending)."""
    if isinstance(exc, asyncpg.InterfaceError) and "connection is closed" in str(exc):
        return True
    return isinstance(exc, asyncpg.InternalClientError) and "cannot switch to state" in str(exc)


def _discard(con: asyncpg.Connection) -> None:
    """Close a connection that lost its server, so the pool opens a fresh one for the retry instead of
    handing out the same broken one (one the driver already let go of needs nothing)."""
    with suppress(asyncpg.InterfaceError):
        if not con.is_closed():
            con.terminate()


def _retried_once(operation: Callable[P, Awaitable[T]]) -> Callable[P, Awaitable[T]]:
    """`operation` run once more when it lost its connection before committing (RetryableLoss); a
    second loss raises the driver's own error, as before."""

    @functools.wraps(operation)
    async def run(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return await operation(*args, **kwargs)
        except RetryableLoss as loss:
            log.warning("database connection lost (%s); %s retried once", loss.__cause__, operation.__name__)
        try:
            return await operation(*args, **kwargs)
        except RetryableLoss as again:
            raise (again.__cause__ or again) from None

    return run


class PostgresStorage(StorageRules):
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
    async def _connection(self, retry_safe: bool = True) -> AsyncIterator[asyncpg.Connection]:
        """A pooled connection. A lost connection is RetryableLoss when running the block again is
        safe: always for reads (`retry_safe`), else only when nothing was sent."""
        async with self._require_pool().acquire() as con:
            try:
                yield con
            except Exception as exc:
                if _never_sent(exc) or (retry_safe and _lost(exc)):
                    _discard(con)
                    raise RetryableLoss(str(exc)) from exc
                raise

    @asynccontextmanager
    async def _write(self) -> AsyncIterator[asyncpg.Connection]:
        """One transaction: all of the block's statements commit together, or none do. A connection
        lost before COMMIT is RetryableLoss (the server rolled the transaction back); lost during
        COMMIT, the error is raised as it is (the change may be stored: not safe to run again)."""
        async with self._require_pool().acquire() as con:
            transaction = con.transaction()
            try:
                await transaction.start()
                yield con
            except Exception as exc:
                if _lost(exc):
                    _discard(con)
                    raise RetryableLoss(str(exc)) from exc
                with suppress(*_LOST, asyncpg.InterfaceError):  # nothing to roll back on a dead connection
                    await transaction.rollback()
                raise
            except BaseException:  # cancelled: undo what the block did, then let it end
                with suppress(Exception):
                    await transaction.rollback()
                raise
            await transaction.commit()

    @asynccontextmanager
    async def _transaction(self) -> AsyncIterator[Store]:
        async with self._write() as con:
            yield SqlStore(_Connection(con), POSTGRES)

    @asynccontextmanager
    async def _autocommit(self) -> AsyncIterator[Store]:
        # Statement by statement: each is atomic on its own, without BEGIN/COMMIT round trips; run
        # again after a lost connection only when it never left (it may have been applied).
        async with self._connection(retry_safe=False) as con:
            yield SqlStore(_Connection(con), POSTGRES)

    @asynccontextmanager
    async def _query(self) -> AsyncIterator[Store]:
        async with self._connection() as con:
            yield SqlStore(_Connection(con), POSTGRES)

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


def _affected(status: str) -> int:
    """asyncpg's command tag ("UPDATE 3") as a count."""
    return int(status.rsplit(" ", 1)[-1])


# Every operation of the port (and of `db copy`) retried once after a connection lost before commit;
# open/close/backup are not operations on a pooled connection.
for _name, _member in [*vars(StorageRules).items(), *vars(PostgresStorage).items()]:
    if (
        not _name.startswith("_")
        and _name not in {"open", "close", "backup"}
        and asyncio.iscoroutinefunction(_member)
    ):
        setattr(PostgresStorage, _name, _retried_once(_member))
