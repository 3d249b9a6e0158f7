"""The Discord adapter keeps trying when the network isn't there: at start (a name that doesn't
resolve, a server that refuses the first connections) and when the gateway connection drops. Each
attempt is one warning line without a traceback; a stop during the back-off ends the run at once.

The real discord.py client against the fake Discord on 127.0.0.1, behind a proxy that refuses or cuts
connections; the back-off is shrunk to milliseconds through the settings. No test waits on a clock."""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import discord
import pytest
import yarl

from bot.adapter import Backoff
from bot.app import App, build_app
from bot.discord.adapter import DiscordAdapter
from bot.runner import Service
from bot.settings import Settings
from core.storage.memory import MemoryStorage
from tests.bot.telegram.test_telegram_reconnect import FAST, GUARD, UNRESOLVABLE
from tests.fakes.discord_api import API, FakeDiscord
from tests.fakes.flaky_proxy import FlakyProxy
from tests.fakes.log_lines import Lines, captured

TOKEN = "MTAxMjM0NTY3ODkwMTIzNDU2Nzg5.GaBcDe.abcdefghijklmnopqrstuvwxyz0123456789AB"
ALICE = 101


@pytest.fixture
def lines() -> Iterator[Lines]:
    yield from captured()


@pytest.fixture
async def fake() -> AsyncIterator[FakeDiscord]:
    server = FakeDiscord()
    await server.start()
    yield server
    await server.close()


@pytest.fixture
async def proxy(fake: FakeDiscord, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FlakyProxy]:
    """discord.py's REST and gateway both through the proxy (resumes too)."""
    assert fake.server is not None
    flaky = await FlakyProxy(fake.server.port).start()
    point_at(f"127.0.0.1:{flaky.port}", monkeypatch)
    fake.resume_url = f"ws://127.0.0.1:{flaky.port}/gateway"
    yield flaky
    await flaky.stop()


def point_at(host: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(discord.http.Route, "BASE", f"http://{host}{API}")
    monkeypatch.setattr(discord.gateway.DiscordWebSocket, "DEFAULT_GATEWAY", yarl.URL(f"ws://{host}/gateway"))


@pytest.fixture
def app(tmp_path: Path) -> App:
    settings = Settings(_env_file=None, discord_token=TOKEN, db_path=tmp_path / "t.db", **FAST)  # type: ignore[call-arg]
    return build_app(settings, storage=MemoryStorage())


def service_for(app: App) -> tuple[DiscordAdapter, Service, asyncio.Task[int]]:
    adapter = DiscordAdapter(app, TOKEN, guild_ready_timeout=0.05)
    service = Service(app, [adapter], serve_http=False, backoff=Backoff.from_settings(app.settings))
    return adapter, service, asyncio.create_task(service.run())


async def ask(fake: FakeDiscord) -> str:
    token = await fake.slash("ask", {"question": "V100 32G gemma 3 27b q4 8k"}, user_id=ALICE)
    [answer] = await fake.answers(token, timeout=GUARD)
    return answer.content


async def test_refused_connections_at_start_are_retried_until_it_connects(
    app: App, fake: FakeDiscord, proxy: FlakyProxy, lines: Lines
) -> None:
    proxy.refuse(3)
    adapter, service, run = service_for(app)
    await lines.wait("discord connected as")
    assert "gemma-3-27b" in await ask(fake)
    retries = lines.matching("discord unreachable")
    assert retries and proxy.refused == 3  # discord.py itself may retry a reset once
    assert all(r.exc_info is None for r in retries) and not lines.tracebacks()
    assert service.adapters_up() == {"discord": True}
    service.stop()
    assert await asyncio.wait_for(run, GUARD) == 0


async def test_a_name_that_does_not_resolve_is_retried_and_sigterm_still_stops_it(
    app: App, lines: Lines, monkeypatch: pytest.MonkeyPatch
) -> None:
    real = socket.getaddrinfo

    def getaddrinfo(host: Any, *args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - socket's own signature
        name = host.decode() if isinstance(host, bytes) else host
        if name == UNRESOLVABLE:  # what a resolver says with no network: never a real DNS query
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    point_at(UNRESOLVABLE, monkeypatch)
    _, service, run = service_for(app)
    records = await lines.wait("discord unreachable", 4)
    assert all(r.levelno == logging.WARNING and r.exc_info is None for r in records)
    assert not lines.tracebacks()
    assert service.adapters_up() == {"discord": False}
    service.stop("SIGTERM")
    assert await asyncio.wait_for(run, GUARD) == 0


async def test_the_gateway_reconnects_after_the_connection_drops(
    app: App, fake: FakeDiscord, proxy: FlakyProxy, lines: Lines
) -> None:
    adapter, service, run = service_for(app)
    await lines.wait("discord connected as")
    assert "gemma-3-27b" in await ask(fake)
    first = adapter.client

    fake.identified.clear()  # the next dispatch waits for the new connection's IDENTIFY
    proxy.refuse(3)
    proxy.cut()  # the network goes away under the gateway connection
    await lines.wait("discord reconnected")
    assert lines.matching("discord connection lost")
    assert "gemma-3-27b" in await ask(fake)
    assert adapter.client is not first and adapter.notifier.client is adapter.client
    assert adapter.running and service.adapters_up() == {"discord": True}
    assert not lines.tracebacks()
    service.stop()
    assert await asyncio.wait_for(run, GUARD) == 0
