"""`python -m bot run`: console without tokens; with adapters a service that stops cleanly on a signal."""

from __future__ import annotations

import asyncio
import io
import json
import logging
import os
import signal
import subprocess
import sys
from argparse import Namespace
from pathlib import Path

import pytest

from bot.adapter import Adapter
from bot.app import App, build_app
from bot.runner import Service, platform_adapters, run_bot, serve
from bot.settings import load_settings
from core.commands.context import utcnow
from core.storage.records import Actor, Measurement, NewSubmission, Subscription
from tests.fakes.notifier import RecordingNotifier

ROOT = Path(__file__).resolve().parents[2]
ALICE = Actor("telegram", "111", "alice")
MOD = Actor("console", "bob", "bob")


@pytest.fixture(autouse=True)
def clean_env(tmp_path, monkeypatch):
    # The repo's own .env (if any) and the developer's environment must not leak in.
    for name in list(os.environ):
        if name.startswith("TOKBOT_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)
    # run_bot configures the root logger for the process; later tests must get it back as it was.
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    root.handlers[:] = handlers
    root.setLevel(level)


def FakeNotifier() -> RecordingNotifier:  # noqa: N802 - reads like the class it stands for
    return RecordingNotifier("fake")


class FakeAdapter:
    """Shaped like TelegramAdapter / DiscordAdapter; records what the runner does with it."""

    def __init__(self, events: list[str], platform: str = "fake", fail: bool = False, block: bool = False):
        self.platform = platform
        self.notifier = FakeNotifier()
        self.events = events
        self.fail, self.block = fail, block
        self.started = asyncio.Event()
        self._stopped = asyncio.Event()

    async def start(self) -> None:
        self.events.append(f"{self.platform}.start")
        if self.fail:
            raise RuntimeError("401 Unauthorized")
        if self.block:  # Client.start style: runs until stop(), so it says itself whether it is up
            self.running = True
        self.started.set()
        if self.block:
            await self._stopped.wait()

    async def stop(self) -> None:
        self.events.append(f"{self.platform}.stop")
        self._stopped.set()
        if self.block:
            self.running = False


def recording_app(tmp_path: Path, events: list[str], **overrides: object) -> App:
    settings = load_settings(db_path=tmp_path / "bot.db", metrics_port=0, **overrides)
    app = build_app(settings)
    worker_run, storage_close = app.worker.run, app.storage.close

    async def run(stop: asyncio.Event) -> None:
        events.append("worker.start")
        await worker_run(stop)
        events.append("worker.stop")

    async def close() -> None:
        events.append("db.close")
        await storage_close()

    app.worker.run = run  # type: ignore[method-assign]
    app.storage.close = close  # type: ignore[method-assign]
    return app


def test_fake_adapter_satisfies_the_protocol():
    assert isinstance(FakeAdapter([]), Adapter)


def test_no_token_runs_the_console(tmp_path):
    out = io.StringIO()
    args = Namespace(user="alice", db=str(tmp_path / "c.db"))
    assert run_bot(args, stdin=io.StringIO("4090 qwen3 32b q4 32k\n/help\n"), out=out) == 0
    text = out.getvalue()
    assert "GeForce RTX 4090" in text and "Q4_K_M" in text and "/subscribe" in text
    assert (tmp_path / "c.db").exists()


def test_python_m_bot_run_without_tokens_is_the_console_and_imports_no_platform_library(tmp_path):
    code = (
        "import sys; from bot.cli.main import main; rc = main(['run', '--db', sys.argv[1]]);"
        "print('MODULES', 'discord' in sys.modules, 'telegram' in sys.modules); sys.exit(rc)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKBOT_")} | {"PYTHONPATH": str(ROOT)}
    proc = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "s.db")],
        input="4090 llama 3 8b\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    assert "GeForce RTX 4090" in proc.stdout
    assert "MODULES False False" in proc.stdout


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
async def test_signal_stops_adapter_then_worker_then_database(tmp_path, sig):
    events: list[str] = []
    app = recording_app(tmp_path, events)
    adapter = FakeAdapter(events)
    task = asyncio.create_task(serve(app, [adapter]))
    await asyncio.wait_for(adapter.started.wait(), 30)
    await asyncio.sleep(0)  # start() returns right after `started`; its done callback runs next
    assert app.notifiers["fake"] is adapter.notifier, "the adapter's notifier is registered once it started"
    os.kill(os.getpid(), sig)
    assert await asyncio.wait_for(task, 30) == 0
    assert events == ["worker.start", "fake.start", "fake.stop", "worker.stop", "db.close"]


async def test_both_platforms_run_in_one_loop_and_a_blocking_start_is_fine(tmp_path):
    events: list[str] = []
    app = recording_app(tmp_path, events)
    telegram, discord = FakeAdapter(events, "telegram"), FakeAdapter(events, "discord", block=True)
    service = Service(app, [telegram, discord])
    task = asyncio.create_task(serve(app, [telegram, discord], service=service, handle_signals=False))
    await asyncio.wait_for(asyncio.gather(telegram.started.wait(), discord.started.wait()), 30)
    await asyncio.sleep(0)
    assert service.up == {"telegram": True, "discord": None}, "discord's start() is still running"
    assert service.adapters_up() == {"telegram": True, "discord": True}
    health = await service.observability.check()
    assert health.ok and health.worker is True and health.db is True
    service.stop()
    assert await asyncio.wait_for(task, 30) == 0
    assert events.index("worker.stop") > max(events.index("telegram.stop"), events.index("discord.stop"))
    assert events[-1] == "db.close"
    assert service.adapters_up() == {"telegram": False, "discord": False}


async def test_an_adapter_reporting_itself_down_makes_health_degraded(tmp_path):
    app = recording_app(tmp_path, [])
    adapter = FakeAdapter([], "discord")
    service = Service(app, [adapter])
    task = asyncio.create_task(serve(app, [adapter], service=service, handle_signals=False))
    await asyncio.wait_for(adapter.started.wait(), 30)
    await asyncio.sleep(0)
    assert (await service.observability.check()).ok
    adapter.running = False  # e.g. the gateway connection died after start() returned
    health = await service.observability.check()
    assert not health.ok and health.adapters == {"discord": False}
    service.stop()
    assert await asyncio.wait_for(task, 30) == 0


async def test_worker_delivers_through_the_adapters_notifier_and_counts_it(tmp_path):
    events: list[str] = []
    app = recording_app(tmp_path, events)
    adapter = FakeAdapter(events)
    service = Service(app, [adapter])
    task = asyncio.create_task(serve(app, [adapter], service=service, handle_signals=False))
    await asyncio.wait_for(adapter.started.wait(), 30)
    now = utcnow()
    await app.storage.subscribe(
        Subscription(
            platform="fake", user_id="u1", chat_id="c1", gpu_id=None, model_id=None, lang="en", created_at=now
        )
    )
    measured = Measurement(
        gpu_id="v100-32g", model_id="gemma-3-27b", quant="Q4_K_M", decode_tps=20.5, context=8192
    )
    submitted = await app.storage.add_submission(
        NewSubmission(measurement=measured, submitter=ALICE, created_at=now, chat_id="a1")
    )
    await app.storage.approve(submitted.id, MOD, now)
    app.worker.wake()
    for _ in range(1500):  # up to 30 s: a hang guard, done as soon as the notice is out
        if adapter.notifier.sent:
            break
        await asyncio.sleep(0.02)
    assert [chat for chat, _ in adapter.notifier.sent] == ["c1"]
    metrics = service.observability.metrics.render().decode()
    assert 'tokbot_notifications_total{outcome="sent",platform="fake"} 1.0' in metrics
    service.stop()
    assert await asyncio.wait_for(task, 30) == 0


async def test_an_adapter_that_cannot_start_ends_the_run_with_status_1(tmp_path):
    events: list[str] = []
    app = recording_app(tmp_path, events)
    good, bad = FakeAdapter(events, "telegram", block=True), FakeAdapter(events, "discord", fail=True)
    rc = await asyncio.wait_for(serve(app, [good, bad], handle_signals=False), 30)
    assert rc == 1
    assert "telegram.stop" in events and "discord.stop" in events, "every adapter stops, even a failed one"
    assert events[-1] == "db.close"


async def test_metrics_server_runs_with_the_service_and_stops_last(tmp_path):
    from aiohttp import ClientSession

    events: list[str] = []
    app = recording_app(tmp_path, events)
    adapter = FakeAdapter(events, "telegram")
    # Port 0 means "disabled" in settings, so the service binds nothing; bind a free port here instead.
    service = Service(app, [adapter], metrics_host="127.0.0.1", metrics_port=0)
    task = asyncio.create_task(serve(app, [adapter], service=service, handle_signals=False))
    await asyncio.wait_for(adapter.started.wait(), 30)
    port = await service.observability.start("127.0.0.1", 0)
    async with ClientSession() as http:
        async with http.get(f"http://127.0.0.1:{port}/healthz") as resp:
            body = json.loads(await resp.text())
    assert resp.status == 200 and body["adapters"] == {"telegram": True} and body["status"] == "ok"
    service.stop()
    assert await asyncio.wait_for(task, 30) == 0
    assert service.observability._server is None


def test_settings_error_exits_2_with_the_variable_named_and_no_traceback(tmp_path):
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKBOT_")} | {
        "PYTHONPATH": str(ROOT),
        "TOKBOT_TELEGRAM_TOKEN": "not-a-token-secret",
        "TOKBOT_METRICS_PORT": "99999",
    }
    proc = subprocess.run(
        [sys.executable, "-m", "bot", "run"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=env,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert proc.returncode == 2
    assert "TOKBOT_TELEGRAM_TOKEN" in proc.stderr and "TOKBOT_METRICS_PORT" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "not-a-token-secret" not in proc.stderr, "a malformed token is still a secret"


TELEGRAM_TOKEN = "123456789:AAF" + "x" * 32
DISCORD_TOKEN = "M" * 24 + ".Gabcde." + "y" * 27


def _real_adapter_or_skip(module: str, name: str) -> None:
    # Both adapters ship now: a missing one is a failure, not a skip.
    getattr(__import__(module, fromlist=[name]), name)


@pytest.mark.parametrize(
    ("field", "token", "module", "name"),
    [
        ("discord_token", DISCORD_TOKEN, "bot.discord", "DiscordAdapter"),
        ("telegram_token", TELEGRAM_TOKEN, "bot.telegram", "TelegramAdapter"),
    ],
)
def test_platform_adapters_follow_the_tokens_and_fit_the_protocol(tmp_path, field, token, module, name):
    _real_adapter_or_skip(module, name)
    settings = load_settings(db_path=tmp_path / "p.db", **{field: token})
    adapters = platform_adapters(build_app(settings), settings)
    assert [type(a).__name__ for a in adapters] == [name]
    assert isinstance(adapters[0], Adapter) and adapters[0].notifier.platform == adapters[0].platform


def test_no_token_no_adapter(tmp_path):
    settings = load_settings(db_path=tmp_path / "n.db")
    assert platform_adapters(build_app(settings), settings) == []


def test_run_with_a_token_and_an_unusable_database_says_so_and_exits_2(tmp_path: Path) -> None:
    """The operator gets one sentence naming TOKBOT_DB_PATH, not a traceback, also when a platform
    adapter is configured (the path that used to log a traceback and exit 1)."""
    bad = tmp_path / "not-a-db.db"
    bad.write_bytes(b"garbage" * 2000)
    env = dict(os.environ, TOKBOT_TELEGRAM_TOKEN="123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0",
               TOKBOT_TELEGRAM_API_URL="http://127.0.0.1:9/bot", TOKBOT_DB_PATH=str(bad),
               TOKBOT_METRICS_PORT="0")  # fmt: skip
    env.pop("TOKBOT_DATABASE_URL", None)
    done = subprocess.run([sys.executable, "-m", "bot", "run"], env=env, capture_output=True, text=True,
                          timeout=60)  # fmt: skip
    assert done.returncode == 2
    assert "TOKBOT_DB_PATH" in done.stderr and "Traceback" not in done.stderr
