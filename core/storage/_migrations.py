"""Numbered schema migrations, shipped as .sql files: core/storage/migrations/NNNN_name.sql for SQLite
and core/storage/migrations/postgres/NNNN_name.sql for PostgreSQL. Each backend applies the ones it
hasn't recorded in its schema_migrations table, in order, each in one transaction with its row."""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib import resources
from typing import Literal

from core.storage.interface import StorageError

Dialect = Literal["sqlite", "postgres"]
_MIGRATION_NAME = re.compile(r"^(\d{4})_([a-z0-9_]+)\.sql$")


@dataclass(frozen=True, slots=True)
class Migration:
    version: int
    name: str
    sql: str


def bundled_migrations(dialect: Dialect = "sqlite") -> list[Migration]:
    """The .sql files shipped for `dialect`, by version. Read through importlib.resources so they are
    found in a wheel too (pyproject packages them as package data)."""
    folder = resources.files("core.storage").joinpath("migrations")
    if dialect == "postgres":
        folder = folder.joinpath("postgres")
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _MIGRATION_NAME.match(entry.name)
        if match:
            found.append(Migration(int(match.group(1)), match.group(2), entry.read_text(encoding="utf-8")))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if len(set(versions)) != len(versions):
        raise StorageError(f"two {dialect} migrations share a number: {versions}")
    return found


def newer_than_known(applied: set[int], migrations: list[Migration], where: str) -> None:
    """Refuse a database migrated by a newer tokbot instead of running against a schema it doesn't know."""
    known = {m.version for m in migrations}
    newer = sorted(v for v in applied if v not in known and v > max(known, default=0))
    if newer:
        raise StorageError(
            f"{where} has schema version {newer[-1]}, newer than this tokbot knows "
            f"({max(known, default=0)}); upgrade tokbot or restore an older backup"
        )
