"""Serving the pages with uvicorn: `python -m bot web` on its own, or beside the chat adapters.

Alone (`run_web`), the app's lifespan opens the database, keeps the anchors fresh and closes it;
SIGTERM / SIGINT stop it gracefully (exit status 0). Beside the adapters (`WebServer`, started
by the runner when TOKBOT_WEB_PORT is set), it serves the runner's `App` and leaves signals to the
runner, which stops it with everything else.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import socket
import sys
from collections.abc import Iterator
from typing import Any

import uvicorn

from bot.app import App, build_app
from bot.settings import Settings, SettingsError, load_settings
from bot.web.app import WebLimits, create_app

log = logging.getLogger(__name__)
DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8080


def _config(asgi: Any, host: str, port: int) -> uvicorn.Config:
    # log_config=None: the bot's own logging (bot/logging_setup.py) formats uvicorn's lines too.
    return uvicorn.Config(asgi, host=host, port=port, log_config=None, access_log=False, server_header=False)


class _Embedded(uvicorn.Server):
    """uvicorn without its signal handlers: the runner's loop owns SIGTERM / SIGINT."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield


class WebServer:
    """The pages beside the chat adapters, on the runner's loop and `App`."""

    def __init__(self, app: App, host: str, port: int, *, limits: WebLimits | None = None):
        asgi = create_app(app, public_url=app.settings.public_url, limits=limits)
        self.server = _Embedded(_config(asgi, host, port))
        self.host, self.port = host, port
        self._task: asyncio.Task[None] | None = None

    async def start(self, sock: socket.socket | None = None) -> None:
        sockets = [sock] if sock is not None else None
        self._task = asyncio.create_task(self.server.serve(sockets=sockets), name="web")
        while not self.server.started:  # bound, or failed (then the task is done)
            if self._task.done():
                self._task.result()  # raises the bind error
                raise RuntimeError("the web server stopped while starting")
            await asyncio.sleep(0.02)
        log.info("web pages on http://%s:%s/", self.host, self.port)

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    async def stop(self) -> None:
        if self._task is None:
            return
        self.server.should_exit = True
        await asyncio.gather(self._task, return_exceptions=True)
        self._task = None


def run_web(args: argparse.Namespace) -> int:
    """`python -m bot web [--host H] [--port P] [--db FILE]`."""
    from bot.logging_setup import configure_logging

    overrides: dict[str, Any] = {"db_path": args.db} if getattr(args, "db", None) else {}
    try:
        settings: Settings = load_settings(**overrides)
    except SettingsError as exc:
        print(f"tokbot: configuration problem:\n{exc}", file=sys.stderr)
        return 2
    configure_logging(settings)
    host = args.host or settings.web_host
    port = args.port if args.port is not None else (settings.web_port or DEFAULT_PORT)
    app = build_app(settings)
    asgi = create_app(app, own_lifecycle=True, public_url=settings.public_url)
    server = _Embedded(_config(asgi, host, port))
    return asyncio.run(_serve_alone(server, host, port))


async def _serve_alone(server: uvicorn.Server, host: str, port: int) -> int:
    """uvicorn until SIGTERM / SIGINT, then a graceful stop and exit status 0 (uvicorn's own handlers
    would re-raise the signal after stopping, which a supervisor reads as a crash)."""
    import signal

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, lambda: setattr(server, "should_exit", True))
    log.info("web pages on http://%s:%s/", host, port)
    await server.serve()
    return 0 if server.started else 1
