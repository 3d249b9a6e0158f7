"""Metrics and health over HTTP: `GET /metrics` (Prometheus text) and `GET /healthz` (JSON).

Each App gets its own `CollectorRegistry` instead of prometheus_client's global one, so tests (and a
process that builds several apps) never collide on "Duplicated timeseries". Counters are fed by the
hooks the core already offers (`app.bot.observe` after every command, `app.worker.on_result` after
every notification); the storage gauges are read at scrape time, so they are never stale and there
is no background task to stop.

The server is asyncio's own (two GET endpoints need no web framework), so a bot process without a
web page to serve stays light.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http import HTTPStatus
from typing import TYPE_CHECKING, Any

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)

from core.commands.faults import fault_recent
from core.commands.registry import COMMANDS

if TYPE_CHECKING:
    from bot.app import App

log = logging.getLogger(__name__)

# Command latency: a cached answer is milliseconds, a chart or an export can take seconds.
_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
_DB_TIMEOUT_S = 2.0  # a health probe must answer even when the database hangs
_REQUEST_TIMEOUT_S = 5.0  # a client gets this long to send its request line and headers
_REQUEST_LIMIT = 8192  # bytes in one request line or header line
_MAX_HEADER_LINES = 100


def _command_label(command: str) -> str:
    # Unknown commands come straight from user text ("/whatever"); as a label value each would be a
    # new time series forever. Buttons are already a fixed set ("button:ask", "button:unknown").
    return command if command in COMMANDS or command.startswith("button:") else "unknown"


class Metrics:
    """The bot's Prometheus metrics, in a registry of their own."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.questions = Counter(
            "tokbot_questions",
            "Commands and questions handled",
            ["platform", "command", "status"],
            registry=r,
        )
        self.command_seconds = Histogram(
            "tokbot_command_seconds",
            "Time to answer a command",
            ["platform", "command"],
            buckets=_BUCKETS,
            registry=r,
        )
        self.submissions = Counter(
            "tokbot_submissions", "/submit invocations by outcome", ["platform", "status"], registry=r
        )
        self.notifications = Counter(
            "tokbot_notifications",
            "Notification delivery attempts by outcome",
            ["platform", "outcome"],
            registry=r,
        )
        self.outbox_pending = Gauge("tokbot_outbox_pending", "Notifications waiting to be sent", registry=r)
        self.outbox_dead = Gauge("tokbot_outbox_dead", "Notifications given up on", registry=r)
        self.subscriptions = Gauge("tokbot_subscriptions", "Active subscriptions", registry=r)
        self.db_up = Gauge("tokbot_db_up", "1 when the database answered the last scrape", registry=r)
        self.adapter_up = Gauge(
            "tokbot_adapter_up", "1 while a platform adapter is running", ["platform"], registry=r
        )

    def observe(self, platform: str, command: str, status: str, seconds: float) -> None:
        command = _command_label(command)
        self.questions.labels(platform, command, status).inc()
        self.command_seconds.labels(platform, command).observe(seconds)
        if command == "submit":
            self.submissions.labels(platform, status).inc()

    def notification(self, platform: str, outcome: str) -> None:
        self.notifications.labels(platform, outcome).inc()

    def render(self) -> bytes:
        return generate_latest(self.registry)


def instrument(app: App) -> Metrics:
    """Feed a new `Metrics` from the app's hooks; usable by any front end (runner, console).

    Hooks already set are kept and still called, so instrumenting never silences someone else.
    """
    metrics = Metrics()
    previous_observe = app.bot.observe
    previous_result = app.worker.on_result

    def observe(platform: str, command: str, status: str, seconds: float) -> None:
        metrics.observe(platform, command, status, seconds)
        if previous_observe is not None:
            previous_observe(platform, command, status, seconds)

    def on_result(platform: str, outcome: str) -> None:
        metrics.notification(platform, outcome)
        if previous_result is not None:
            previous_result(platform, outcome)

    app.bot.observe = observe
    app.worker.on_result = on_result
    return metrics


@dataclass
class Health:
    db: bool
    adapters: dict[str, bool] = field(default_factory=dict)
    worker: bool | None = None  # None: no worker runs in this process (not a fault)
    outbox_pending: int | None = None
    outbox_dead: int | None = None
    subscriptions: int | None = None

    @property
    def ok(self) -> bool:
        return self.db and all(self.adapters.values()) and self.worker is not False

    def as_json(self) -> dict[str, Any]:
        return {
            "status": "ok" if self.ok else "degraded",
            "db": self.db,
            "adapters": self.adapters,
            "worker": self.worker,
            "outbox_pending": self.outbox_pending,
            "outbox_dead": self.outbox_dead,
            "subscriptions": self.subscriptions,
        }


class Observability:
    """Health checks and the HTTP server for one App.

    `adapters` and `worker` are callables so the server always reports the runner's live view
    (an adapter that crashed after start shows up as down at the next probe).
    """

    def __init__(
        self,
        app: App,
        metrics: Metrics,
        adapters: Callable[[], Mapping[str, bool]] = dict,
        worker: Callable[[], bool | None] = lambda: None,
    ):
        self.app = app
        self.metrics = metrics
        self.adapters = adapters
        self.worker = worker
        self._server: asyncio.Server | None = None
        self.port: int | None = None

    async def check(self) -> Health:
        """Probe the database (with a timeout) and refresh the gauges from what it says."""
        storage = self.app.storage
        health = Health(db=False, adapters=dict(self.adapters()), worker=self.worker())
        try:
            stats = await asyncio.wait_for(storage.outbox_stats(), _DB_TIMEOUT_S)
            subscriptions = await asyncio.wait_for(storage.count_subscriptions(), _DB_TIMEOUT_S)
        except Exception:  # noqa: BLE001 - any failure means "not reachable"; the reason goes to the log
            log.warning("health: database check failed", exc_info=True)
        else:
            health.db = True
            health.outbox_pending, health.outbox_dead = stats.pending, stats.dead
            health.subscriptions = subscriptions
            self.metrics.outbox_pending.set(stats.pending)
            self.metrics.outbox_dead.set(stats.dead)
            self.metrics.subscriptions.set(subscriptions)
        if health.db and fault_recent(self.app.bot, self.app.bot.clock()):
            health.db = False  # a command met a database fault within the minute (core.commands.faults)
        self.metrics.db_up.set(1 if health.db else 0)
        for platform, up in health.adapters.items():
            self.metrics.adapter_up.labels(platform).set(1 if up else 0)
        return health

    async def respond(self, path: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a GET of `path`."""
        if path == "/healthz":
            health = await self.check()
            body = json.dumps(health.as_json()).encode()
            return (200 if health.ok else 503), "application/json; charset=utf-8", body
        if path == "/metrics":
            await self.check()
            return 200, CONTENT_TYPE_LATEST, self.metrics.render()
        return 404, "text/plain; charset=utf-8", b"not found\n"

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # Two read-only GET endpoints for a scraper and a probe: the request line is all we read
        # (headers are skipped, bounded), one answer per connection. asyncio's own server keeps
        # aiohttp (~14 MiB resident) out of a bot process that has no web page to serve.
        try:
            line = await asyncio.wait_for(reader.readline(), _REQUEST_TIMEOUT_S)
            for _ in range(_MAX_HEADER_LINES):
                header = await asyncio.wait_for(reader.readline(), _REQUEST_TIMEOUT_S)
                if header in (b"\r\n", b"\n", b""):
                    break
            parts = line.decode("latin-1").split()
            if len(parts) < 2 or parts[0] not in ("GET", "HEAD"):
                status, kind, body = 405, "text/plain; charset=utf-8", b"GET only\n"
            else:
                status, kind, body = await self.respond(parts[1].split("?", 1)[0])
            head = (
                f"HTTP/1.1 {status} {HTTPStatus(status).phrase}\r\nContent-Type: {kind}\r\n"
                f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
            )
            writer.write(head.encode("latin-1") + (b"" if parts[:1] == ["HEAD"] else body))
            await writer.drain()
        except (TimeoutError, ConnectionError, ValueError):
            pass  # a client that hangs up, sends an over-long line or never finishes gets nothing
        finally:
            writer.close()

    async def start(self, host: str, port: int) -> int:
        """Serve on host:port (port 0: any free port, for tests); returns the bound port."""
        server = await asyncio.start_server(self._serve, host, port, limit=_REQUEST_LIMIT)
        self._server = server
        sockets = server.sockets or ()
        self.port = sockets[0].getsockname()[1] if sockets else port
        log.info("metrics and health on http://%s:%s/metrics and /healthz", host, self.port)
        return self.port

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
            self._server = None
