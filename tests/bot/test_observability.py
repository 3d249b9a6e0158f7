"""/metrics and /healthz over a real server on 127.0.0.1 (port 0), fed by the app's own hooks."""

from __future__ import annotations

import asyncio
import json

import pytest
from aiohttp import ClientSession

from bot.app import build_app
from bot.observability import Metrics, Observability, instrument
from bot.settings import load_settings
from core.commands.types import Where
from core.storage.records import Actor

ALICE = Actor("telegram", "111", "alice")
HERE = Where("c1", private=True)


@pytest.fixture
async def app(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # no stray .env
    app = build_app(load_settings(db_path=tmp_path / "m.db", metrics_port=0))
    await app.start()
    yield app
    await app.close()


async def get(port: int, path: str) -> tuple[int, str, str]:
    async with ClientSession() as http, http.get(f"http://127.0.0.1:{port}{path}") as resp:
        return resp.status, resp.headers["Content-Type"], await resp.text()


async def test_metrics_count_a_question_that_went_through_the_router(app):
    metrics = instrument(app)
    obs = Observability(app, metrics, adapters=lambda: {"telegram": True})
    port = await obs.start("127.0.0.1", 0)
    try:
        await app.router.handle_text(ALICE, HERE, "4090 qwen3 32b q4 32k")
        await app.router.handle_text(ALICE, HERE, "/help")
        await app.router.handle_text(ALICE, HERE, "/nosuchcommand")
        status, content_type, text = await get(port, "/metrics")
    finally:
        await obs.stop()
    assert status == 200 and content_type.startswith("text/plain; version=")
    assert 'tokbot_questions_total{command="ask",platform="telegram",status="ok"} 1.0' in text
    assert 'tokbot_questions_total{command="help",platform="telegram",status="ok"} 1.0' in text
    assert 'tokbot_command_seconds_count{command="ask",platform="telegram"} 1.0' in text
    assert 'tokbot_command_seconds_bucket{command="ask",le="10.0",platform="telegram"} 1.0' in text
    # User-typed command names never become label values (one time series each, forever).
    assert "nosuchcommand" not in text and 'command="unknown"' in text
    assert "tokbot_outbox_pending 0.0" in text and "tokbot_outbox_dead 0.0" in text
    assert "tokbot_subscriptions 0.0" in text and "tokbot_db_up 1.0" in text
    assert 'tokbot_adapter_up{platform="telegram"} 1.0' in text


async def test_submissions_and_subscriptions_are_counted(app):
    metrics = instrument(app)
    await app.router.handle_text(ALICE, HERE, '/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M decode=131')
    await app.router.handle_text(ALICE, HERE, "/subscribe V100 32G")
    await Observability(app, metrics).check()
    text = metrics.render().decode()
    assert 'tokbot_submissions_total{platform="telegram",status="ok"} 1.0' in text
    assert 'tokbot_questions_total{command="submit",platform="telegram",status="ok"} 1.0' in text
    assert "tokbot_subscriptions 1.0" in text


async def test_instrument_keeps_hooks_already_set(app):
    seen: list[tuple] = []
    app.bot.observe = lambda *a: seen.append(("observe", *a))
    app.worker.on_result = lambda *a: seen.append(("result", *a))
    metrics = instrument(app)
    app.worker.on_result("discord", "forbidden")
    await app.router.handle_text(ALICE, HERE, "/help")
    assert [s[0] for s in seen] == ["result", "observe"]
    text = metrics.render().decode()
    assert 'tokbot_notifications_total{outcome="forbidden",platform="discord"} 1.0' in text


def test_each_app_has_its_own_registry():
    first, second = Metrics(), Metrics()  # the global registry would raise "Duplicated timeseries"
    first.observe("console", "ask", "ok", 0.1)
    assert "tokbot_questions_total{" in first.render().decode()
    assert "tokbot_questions_total{" not in second.render().decode()


async def test_healthz_ok(app):
    obs = Observability(
        app, instrument(app), adapters=lambda: {"telegram": True, "discord": True}, worker=lambda: True
    )
    port = await obs.start("127.0.0.1", 0)
    try:
        status, content_type, text = await get(port, "/healthz")
    finally:
        await obs.stop()
    assert status == 200 and content_type.startswith("application/json")
    assert json.loads(text) == {
        "status": "ok",
        "db": True,
        "adapters": {"telegram": True, "discord": True},
        "worker": True,
        "outbox_pending": 0,
        "outbox_dead": 0,
        "subscriptions": 0,
    }


async def test_healthz_degraded_when_an_adapter_is_down(app):
    obs = Observability(app, instrument(app), adapters=lambda: {"telegram": True, "discord": False})
    port = await obs.start("127.0.0.1", 0)
    try:
        status, _, text = await get(port, "/healthz")
        _, _, metrics = await get(port, "/metrics")
    finally:
        await obs.stop()
    assert status == 503 and json.loads(text)["status"] == "degraded"
    assert 'tokbot_adapter_up{platform="discord"} 0.0' in metrics


async def test_healthz_degraded_when_the_database_is_unreachable(app):
    obs = Observability(app, instrument(app), worker=lambda: True)
    port = await obs.start("127.0.0.1", 0)
    try:
        await app.storage.close()
        status, _, text = await get(port, "/healthz")
        _, _, metrics = await get(port, "/metrics")
    finally:
        await obs.stop()
        await app.storage.open()  # the fixture closes it again
    body = json.loads(text)
    assert status == 503 and body["status"] == "degraded" and body["db"] is False
    assert body["outbox_pending"] is None
    assert "tokbot_db_up 0.0" in metrics


async def test_healthz_degraded_when_the_worker_died(app):
    health = await Observability(app, instrument(app), worker=lambda: False).check()
    assert not health.ok and health.as_json()["worker"] is False


async def test_an_odd_request_gets_a_calm_answer_and_a_silent_client_is_let_go(app, monkeypatch):
    """The server reads a request line and a bounded run of headers: other paths are 404, other
    methods 405, and a connection that sends nothing is closed after its timeout."""
    import bot.observability as observability

    monkeypatch.setattr(observability, "_REQUEST_TIMEOUT_S", 0.05)
    obs = Observability(app, instrument(app))
    port = await obs.start("127.0.0.1", 0)
    try:
        for request, status in (
            (b"GET /nope HTTP/1.1\r\nHost: x\r\n\r\n", b"404"),
            (b"POST /healthz HTTP/1.1\r\n\r\n", b"405"),
            (b"HEAD /healthz HTTP/1.1\r\n\r\n", b"200"),
        ):
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(request)
            await writer.drain()
            answer = await asyncio.wait_for(reader.read(), 30)
            assert answer.split(b" ")[1] == status, answer
            writer.close()
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        assert await asyncio.wait_for(reader.read(), 30) == b""  # closed with nothing sent
        writer.close()
    finally:
        await obs.stop()
