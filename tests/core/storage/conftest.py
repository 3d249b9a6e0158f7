"""The `postgres_url` fixture (skips without a server) and the run's one line about it."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.core.storage.postgres_server import (
    drop_schema,
    migrated_schema,
    need_server,
    new_schema,
    run_in_thread,
    skip_line,
)


@pytest.fixture(scope="session")
def postgres_url() -> str:
    return need_server()


@pytest.fixture(scope="session")
def postgres_schema(postgres_url: str) -> Iterator[str]:
    """This run's schema, migrated once; dropped when the run ends."""
    schema = new_schema()
    run_in_thread(migrated_schema(postgres_url, schema))
    try:
        yield schema
    finally:
        run_in_thread(drop_schema(postgres_url, schema))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = skip_line()
    if line:
        terminalreporter.write_line(line, yellow=True)
