"""Which storage backend a process uses: PostgreSQL when TOKBOT_DATABASE_URL is set, else the SQLite
file at TOKBOT_DB_PATH; and the `sqlite:///…` / `postgresql://…` addresses of `python -m bot db copy`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from core.storage.interface import Storage, StorageUnavailable

if TYPE_CHECKING:
    from bot.settings import Settings


class SqlStorage(Storage, Protocol):
    """What the SQL backends offer beyond the port: migrations and moving data."""

    async def schema_version(self) -> int: ...

    async def table_counts(self) -> dict[str, int]: ...

    async def dump_tables(self) -> dict[str, list[dict[str, Any]]]: ...

    async def load_tables(self, tables: dict[str, list[dict[str, Any]]]) -> None: ...


def sqlite_storage(path: Path, *, read_only: bool = False) -> SqlStorage:
    """The SQLite backend on `path`, checked first: a path that can't be a database raises
    StorageUnavailable before anything is opened (one sentence, exit 2, no traceback). `read_only`:
    a reader that takes no write lock when the schema is current (core.storage.sqlite)."""
    from core.storage.sqlite import SqliteStorage, check_database_file

    check_database_file(str(path))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise StorageUnavailable(
            str(path), f"is in a folder that can't be created ({exc.strerror})"
        ) from None
    return SqliteStorage(str(path), read_only=read_only)


def postgres_storage(url: str, schema: str | None = None) -> SqlStorage:
    from bot.storage.postgres import PostgresStorage  # the driver is imported only when used

    return PostgresStorage(url, schema=schema)


def storage_for(settings: Settings, *, read_only: bool = False) -> SqlStorage:
    """`read_only` matters to SQLite only (PostgreSQL readers never wait for a writer)."""
    if settings.database_url is not None:
        return postgres_storage(settings.database_url.get_secret_value().strip(), settings.database_schema)
    return sqlite_storage(settings.db_path, read_only=read_only)


def storage_at(address: str, schema: str | None = None) -> SqlStorage:
    """`sqlite:///relative.db`, `sqlite:////absolute.db` (SQLAlchemy's spelling), a plain file path,
    or `postgresql://…`."""
    if address.startswith(("postgresql://", "postgres://")):
        return postgres_storage(address, schema)
    path = address.removeprefix("sqlite:///") if address.startswith("sqlite:///") else address
    if address.startswith("sqlite:") and not address.startswith("sqlite:///"):
        raise ValueError(f"{address}: write sqlite:///relative/path.db or sqlite:////absolute/path.db")
    return sqlite_storage(Path(path))


def setting_of(error: StorageUnavailable) -> str:
    """The variable an operator fixes for this error."""
    return "TOKBOT_DATABASE_URL" if error.where.startswith(("postgresql:", "postgres:")) else "TOKBOT_DB_PATH"
