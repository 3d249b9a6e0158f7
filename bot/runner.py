"""`python -m bot run`: every chat adapter that has a token, in one asyncio loop; else the console.

With a Telegram and/or Discord token the process is a service: one loop runs the adapters, the
notification worker and the /metrics + /healthz server until SIGTERM or SIGINT, then shuts down in
the order that loses nothing:

1. adapters stop receiving (polling stops, the gateway closes); replies already being written finish;
2. the worker is told to stop and awaited (bounded; an item cut off mid-send is only leased, so it
   is sent again after the lease: delivery is at-least-once);
3. the database is closed (WAL checkpoint) once nothing can write any more;
4. the HTTP server goes last, so /healthz answers until the end.

With TOKBOT_WEB_PORT set the web pages are served beside them (bot/web), and with that alone the
process is a service too (the pages, no chat). With no token and no web port it is the local
console on the SQLite file, so `bash scripts/run.sh` shows a newcomer the whole bot with no setup.
Platform libraries are imported only for an adapter that starts (`platform_adapters`).
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from bot.adapter import Adapter, AdapterOffline, Backoff, one_line
from bot.app import App, build_app, keep_anchors_fresh
from bot.settings import Settings, SettingsError, load_settings
from core.storage.interface import StorageUnavailable

if TYPE_CHECKING:
    from bot.observability import Observability
    from bot.web.server import WebServer

__all__ = ["Adapter", "AdapterFactory", "Service", "platform_adapters", "run_bot", "serve"]

log = logging.getLogger(__name__)

AdapterFactory = Callable[[App, Settings], list[Adapter]]
GRACE_SECONDS = 15.0  # per step (3 steps can wait); deploy/ gives the process 60 s to stop


def platform_adapters(app: App, settings: Settings) -> list[Adapter]:
    """The adapters whose token is set; each platform library is imported only here, and only if used."""
    adapters: list[Adapter] = []
    if settings.telegram_token is not None:
        from bot.telegram import TelegramAdapter

        adapters.append(
            TelegramAdapter(
                app,
                settings.telegram_token.get_secret_value(),
                base_url=settings.telegram_api_url,
                base_file_url=settings.telegram_file_url,
            )
        )
    if settings.discord_token is not None:
        from bot.discord import DiscordAdapter

        adapters.append(DiscordAdapter(app, settings.discord_token.get_secret_value()))
    return adapters


class Service:
    """One run of the bot as a service: start everything, wait for the stop signal, stop in order."""

    def __init__(
        self,
        app: App,
        adapters: Sequence[Adapter],
        *,
        metrics_host: str = "127.0.0.1",
        metrics_port: int = 0,
        serve_http: bool = True,
        grace_seconds: float = GRACE_SECONDS,
        backoff: Backoff | None = None,
    ):
        self.app = app
        self.backoff = backoff or Backoff.from_settings(app.settings)
        self.adapters = list(adapters)
        self.metrics_host, self.metrics_port, self.serve_http = metrics_host, metrics_port, serve_http
        self.grace = grace_seconds
        self.stopping = asyncio.Event()  # set by a signal, by stop(), or by a failed component
        self.exit_code = 0
        # Per platform: None while start() runs, True once it returned, False after a failure or stop.
        self.up: dict[str, bool | None] = {a.platform: None for a in self.adapters}
        self.observability: Observability | None = None  # once started
        self._worker_stop = asyncio.Event()
        self._worker_task: asyncio.Task[None] | None = None
        self._refresh_task: asyncio.Task[None] | None = None
        self._start_tasks: dict[str, asyncio.Task[None]] = {}
        self.web: WebServer | None = None  # the web pages, when configured (bot/web)

    # --- lifecycle ----------------------------------------------------------------------------
    def stop(self, reason: str = "requested") -> None:
        """Begin a graceful shutdown (safe to call more than once, from a signal handler too)."""
        if self.stopping.is_set():
            log.info("already stopping (%s)", reason)
            return
        log.info("stopping: %s", reason)
        self.stopping.set()

    def _fail(self, what: str) -> None:
        # A component that dies ends the process with status 1: the supervisor (systemd, Docker)
        # restarts a clean one, which is better than a bot that silently answers on one platform only.
        self.exit_code = 1
        self.stop(f"{what} failed")

    async def run(self) -> int:
        from bot.observability import Observability, instrument

        metrics = instrument(self.app)
        observability = Observability(self.app, metrics, adapters=self.adapters_up, worker=self._worker_alive)
        self.observability = observability
        try:
            await self.app.start()
        except StorageUnavailable:
            # The operator's to fix: `bot.cli.main` says it in one sentence naming the setting, exit 2.
            await self._close_app()
            raise
        except Exception:
            log.exception("could not open the database %s", self.app.settings.database_label())
            await self._close_app()
            return 1
        try:
            if self.serve_http and self.metrics_port:
                await observability.start(self.metrics_host, self.metrics_port)
            await self._start_web()
            worker = self.app.worker.run(self._worker_stop)
            self._worker_task = asyncio.create_task(worker, name="outbox-worker")
            self._worker_task.add_done_callback(self._worker_done)
            self._refresh_task = asyncio.create_task(
                keep_anchors_fresh(self.app, self._worker_stop), name="anchor-refresh"
            )
            for adapter in self.adapters:
                self._start(adapter)
            log.info("tokbot running", extra={"platforms": [a.platform for a in self.adapters]})
            await self.stopping.wait()
        except Exception:
            log.exception("start-up failed")
            self.exit_code = 1
        finally:
            await self._shutdown()
        return self.exit_code

    async def _start_web(self) -> None:
        """The web pages beside the bots when TOKBOT_WEB_PORT is set (bot/web; imported only then)."""
        settings = self.app.settings
        port = getattr(settings, "web_port", None)
        if not self.serve_http or not port:
            return
        from bot.web.server import WebServer

        self.web = WebServer(self.app, settings.web_host, port)
        await self.web.start()

    def _start(self, adapter: Adapter) -> None:
        # A task per adapter: they connect concurrently, and an adapter whose start() blocks until
        # stop() (discord.py's Client.start style) does not hold up the others.
        task = asyncio.create_task(self._connect(adapter), name=f"adapter-{adapter.platform}")
        self._start_tasks[adapter.platform] = task

        def done(t: asyncio.Task[None]) -> None:
            if t.cancelled():
                self.up[adapter.platform] = False
            elif t.exception() is None and not self.stopping.is_set():
                self.up[adapter.platform] = True
                # Connected: from now on its notices can go out (before, a send would only fail and
                # burn one of the item's attempts). Wake the worker for any backlog.
                self.app.add_notifier(adapter.notifier)
                self.app.worker.wake()
            elif t.exception() is not None:
                self.up[adapter.platform] = False
                log.error("%s adapter failed", adapter.platform, exc_info=t.exception())
                if not self.stopping.is_set():
                    self._fail(f"{adapter.platform} adapter")

        task.add_done_callback(done)

    async def _connect(self, adapter: Adapter) -> None:
        """`adapter.start()`, tried again with back-off while the network is at fault (AdapterOffline:
        no DNS, a refused or dropped connection): a bot started before its network, or during an
        outage, comes up when the network does. One warning line per attempt, no traceback. Returns
        without starting once the service is stopping (a SIGTERM during a wait ends it at once)."""
        attempt = 0
        while not self.stopping.is_set():
            try:
                await adapter.start()
                if attempt:
                    log.info("%s connected after %d retries", adapter.platform, attempt)
                return
            except AdapterOffline as exc:
                attempt += 1
                delay = self.backoff.delay(attempt)
                log.warning(
                    "%s unreachable (%s); retry %d in %.1f s", adapter.platform, one_line(exc), attempt, delay
                )
            await self._tidy(adapter)  # a start() that failed half-way leaves clients to close
            try:
                await asyncio.wait_for(self.stopping.wait(), timeout=delay)
            except TimeoutError:
                pass

    async def _tidy(self, adapter: Adapter) -> None:
        try:
            await asyncio.wait_for(adapter.stop(), self.grace)
        except Exception as exc:  # noqa: BLE001 - the next attempt starts from scratch anyway
            log.warning("%s: tidying up after a failed start: %s", adapter.platform, one_line(exc))

    def adapters_up(self) -> dict[str, bool]:
        """Per platform for /healthz: its own `running` flag where it has one (the only way to know
        for a start() that blocks), else whether start() returned; never up once failed or stopped."""
        result = {}
        for adapter in self.adapters:
            state, own = self.up[adapter.platform], getattr(adapter, "running", None)
            up = own if isinstance(own, bool) else state is True
            result[adapter.platform] = state is not False and up
        return result

    def _worker_alive(self) -> bool:
        return self._worker_task is not None and not self._worker_task.done()

    def _worker_done(self, task: asyncio.Task[None]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("outbox worker died", exc_info=task.exception())
        if not self.stopping.is_set():
            self._fail("outbox worker")

    async def _shutdown(self) -> None:
        self.stopping.set()
        # 1. Adapters, all at once (they are independent); each bounded by the grace period.
        await asyncio.gather(*(self._stop_adapter(a) for a in self.adapters))
        pending = [t for t in self._start_tasks.values() if not t.done()]
        if pending:  # a blocking start() returns once its adapter stopped; give it a moment
            _, late = await asyncio.wait(pending, timeout=self.grace)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        # 2. The worker: it finishes the round it is in, up to the grace period, then is cancelled.
        self._worker_stop.set()
        if self._worker_task is not None:
            _, late = await asyncio.wait({self._worker_task}, timeout=self.grace)
            if late:
                log.warning(
                    "outbox worker did not stop within %.0f s; cancelled (leased items are retried)",
                    self.grace,
                )
                self._worker_task.cancel()
            await asyncio.gather(self._worker_task, return_exceptions=True)
        if self._refresh_task is not None:  # it ends on the same stop event, between its reads
            await asyncio.gather(self._refresh_task, return_exceptions=True)
        # 3. The web pages (they read and write the database too), then the database.
        if self.web is not None:
            await self.web.stop()
        await self._close_app()
        # 4. HTTP last: health stays observable during the shutdown.
        if self.observability is not None:
            await self.observability.stop()
        log.info("tokbot stopped", extra={"exit_code": self.exit_code})

    async def _stop_adapter(self, adapter: Adapter) -> None:
        try:
            await asyncio.wait_for(adapter.stop(), self.grace)
        except Exception:  # noqa: BLE001 - one adapter failing to stop must not keep the others running
            log.exception("%s adapter did not stop cleanly", adapter.platform)
        self.up[adapter.platform] = False

    async def _close_app(self) -> None:
        try:
            await self.app.close()
        except Exception:  # noqa: BLE001 - logged; the process is ending anyway
            log.exception("closing the database failed")


async def serve(
    app: App, adapters: Sequence[Adapter], *, handle_signals: bool = True, service: Service | None = None
) -> int:
    """Run `adapters` until SIGTERM/SIGINT (or `service.stop()`); returns the exit status."""
    service = service or Service(
        app, adapters, metrics_host=app.settings.metrics_host, metrics_port=app.settings.metrics_port
    )
    loop = asyncio.get_running_loop()
    installed: list[signal.Signals] = []
    if handle_signals:
        for sig in (signal.SIGTERM, signal.SIGINT):
            try:
                loop.add_signal_handler(sig, service.stop, sig.name)
                installed.append(sig)
            except (NotImplementedError, RuntimeError):  # not the main thread, or no Unix signals
                pass
    try:
        return await service.run()
    finally:
        for sig in installed:
            loop.remove_signal_handler(sig)


def _console(args: argparse.Namespace, settings: Settings, stdin: TextIO | None, out: TextIO | None) -> int:
    from bot.cli.console import run_console
    from bot.logging_setup import configure_logging

    # The terminal is the user's screen: human-readable warnings only, unless DEBUG was asked for.
    level = "DEBUG" if settings.log_level == "DEBUG" else "WARNING"
    configure_logging(settings.model_copy(update={"log_format": "text"}), level=level)
    return run_console(args, stdin, out)


def run_bot(
    args: argparse.Namespace,
    *,
    adapters: AdapterFactory | None = None,
    stdin: TextIO | None = None,
    out: TextIO | None = None,
) -> int:
    """The `run` command. `adapters` replaces the token-based choice (tests pass fakes)."""
    overrides = {"db_path": Path(args.db)} if getattr(args, "db", None) else {}
    try:
        settings = load_settings(**overrides)
    except SettingsError as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
    no_token = settings.telegram_token is None and settings.discord_token is None
    if adapters is None and no_token and not settings.web_port:
        return _console(args, settings, stdin, out)
    from bot.logging_setup import configure_logging

    configure_logging(settings)
    factory = adapters or platform_adapters
    return asyncio.run(_serve_settings(settings, factory))


async def _serve_settings(settings: Settings, factory: AdapterFactory) -> int:
    app = build_app(settings)
    try:
        chosen = factory(app, settings)
    except ImportError as exc:  # an adapter package missing from this install
        log.error("cannot load a platform adapter: %s", exc)
        return 1
    return await serve(app, chosen)
