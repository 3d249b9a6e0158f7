"""The Telegram adapter keeps trying when the network isn't there: at start (a name that doesn't
resolve, a server that refuses the first connections) and when it drops while polling. Each attempt
is one warning line without a traceback; a stop during the back-off ends the run at once.

Against the fake Bot API on 127.0.0.1, behind a proxy that refuses or cuts connections; the back-off
is shrunk to milliseconds through the settings. No test waits on a clock: they wait for events."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.adapter import Backoff
from bot.app import App, build_app
from bot.runner import Service
from bot.telegram import TelegramAdapter
from core.storage.memory import MemoryStorage
from tests.bot.telegram.conftest import QUESTION, settings
from tests.fakes.flaky_proxy import FlakyProxy
from tests.fakes.log_lines import Lines, captured
from tests.fakes.telegram_api import FakeTelegram

FAST = {"reconnect_first_seconds": 0.001, "reconnect_max_seconds": 0.01, "reconnect_jitter": 0.5}
GUARD = 60.0  # s: only against a hang; nothing here depends on how fast the machine is
UNRESOLVABLE = "tokbot-offline.invalid"


@pytest.fixture
def lines() -> Iterator[Lines]:
    yield from captured()


@pytest.fixture
async def fake() -> AsyncIterator[FakeTelegram]:
    server = await FakeTelegram().start()
    yield server
    await server.stop()


@pytest.fixture
async def proxy(fake: FakeTelegram) -> AsyncIterator[FlakyProxy]:
    flaky = await FlakyProxy(fake.port).start()
    yield flaky
    await flaky.stop()


@pytest.fixture
async def app(tmp_path: Path) -> AsyncIterator[App]:
    application = build_app(settings(tmp_path, **FAST), storage=MemoryStorage())
    yield application


def adapter_at(app: App, fake: FakeTelegram, base: str) -> TelegramAdapter:
    return TelegramAdapter(
        app, fake.token, base_url=f"{base}/bot", base_file_url=f"{base}/file/bot", poll_timeout=1
    )


def service_for(app: App, adapter: TelegramAdapter) -> tuple[Service, asyncio.Task[int]]:
    service = Service(app, [adapter], serve_http=False, backoff=Backoff.from_settings(app.settings))
    return service, asyncio.create_task(service.run())


async def test_refused_connections_at_start_are_retried_until_it_answers(
    app: App, fake: FakeTelegram, proxy: FlakyProxy, lines: Lines
) -> None:
    proxy.refuse(3)
    adapter = adapter_at(app, fake, f"http://127.0.0.1:{proxy.port}")
    service, run = service_for(app, adapter)
    await lines.wait("telegram adapter running")
    alice = fake.user(1001, "Alice")
    fake.message(alice, QUESTION)
    [reply] = await fake.wait_sent(1, chat_id=1001)
    assert "Q4_K_M" in reply.text
    retries = lines.matching("telegram unreachable")
    assert [r.getMessage().split("; ")[1].split(" in ")[0] for r in retries] == [
        "retry 1",
        "retry 2",
        "retry 3",
    ]
    assert proxy.refused == 3
    assert not lines.tracebacks(), "one line per attempt, no traceback"
    assert service.adapters_up() == {"telegram": True}
    service.stop()
    assert await asyncio.wait_for(run, GUARD) == 0


async def test_a_name_that_does_not_resolve_is_retried_and_sigterm_still_stops_it(
    app: App, fake: FakeTelegram, lines: Lines, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = socket.getaddrinfo
    asked: list[str] = []

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - socket's own signature
        name = host.decode() if isinstance(host, bytes) else host  # anyio passes IDNA bytes
        if name == UNRESOLVABLE:  # what a resolver says with no network: never a real DNS query
            asked.append(name)
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    adapter = adapter_at(app, fake, f"http://{UNRESOLVABLE}")
    service, run = service_for(app, adapter)
    records = await lines.wait("telegram unreachable", 4)
    assert "Name or service not known" in records[0].getMessage()
    assert all(r.levelno == logging.WARNING and r.exc_info is None for r in records)
    assert not lines.tracebacks()
    assert len(asked) >= 4
    assert service.adapters_up() == {"telegram": False}, "/healthz says it is down meanwhile"
    service.stop("SIGTERM")
    assert await asyncio.wait_for(run, GUARD) == 0, "a stop while offline is a clean stop"
    assert not lines.matching("telegram adapter running")


async def test_polling_reconnects_after_the_connection_drops(
    app: App, fake: FakeTelegram, proxy: FlakyProxy, lines: Lines
) -> None:
    adapter = adapter_at(app, fake, f"http://127.0.0.1:{proxy.port}")
    service, run = service_for(app, adapter)
    await lines.wait("telegram adapter running")
    alice = fake.user(1001, "Alice")
    fake.message(alice, QUESTION)
    await fake.wait_sent(1, chat_id=1001)

    proxy.refuse(3)
    proxy.cut()  # the network goes away under the long poll
    await lines.wait("telegram connection lost", 3)
    fake.message(alice, QUESTION)
    await fake.wait_sent(2, chat_id=1001)
    await lines.wait("telegram reconnected")
    assert adapter.running
    lost = lines.matching("telegram connection lost")
    assert all(r.exc_info is None for r in lost) and not lines.tracebacks()
    service.stop()
    assert await asyncio.wait_for(run, GUARD) == 0
