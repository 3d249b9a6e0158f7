"""The `postgres_url` fixture (skips without a server) and the run's one line about it."""

from __future__ import annotations

import pytest

from tests.core.storage.postgres_server import need_server, skip_line


@pytest.fixture(scope="session")
def postgres_url() -> str:
    return need_server()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    line = skip_line()
    if line:
        terminalreporter.write_line(line, yellow=True)
