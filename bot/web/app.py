"""The Starlette application: routes, headers, and the state every handler reads (one `App`).

`create_app(app)` serves the bot's `App` (its catalog, storage, anchors): the same object the chat
adapters use when the runner starts the web beside them, or one of its own under `python -m bot web`
(`own_lifecycle`: the web opens the database, keeps the anchors fresh, and closes it).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from starlette.applications import Starlette
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from bot.app import App, keep_anchors_fresh
from bot.web import pages
from bot.web.security import RateLimit

STATIC = Path(__file__).resolve().parent / "static"

# Inline SVG charts carry their own style attributes; nothing else on the pages is inline.
CSP = (
    "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'; "
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"
)
HEADERS = (
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
)


@dataclass(frozen=True, slots=True)
class WebLimits:
    votes: int = 20  # 👍 / 👎 POSTs per client address per window
    votes_window_s: float = 600.0


@dataclass
class WebState:
    app: App
    public_url: str | None = None
    limits: WebLimits = field(default_factory=WebLimits)
    votes: RateLimit = field(init=False)
    charts: pages.ChartCache = field(default_factory=pages.ChartCache)
    # /accuracy's drawings per language: (anchor set, its three SVGs), bot/web/accuracy.py.
    accuracy: dict[str, tuple[int, tuple[str, str, str]]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.votes = RateLimit(self.limits.votes, self.limits.votes_window_s)


class Headers:
    """Security headers on every response, and `Server-Timing: app;dur=MS` (the time from the request
    to the response's first byte: what scripts/bench_web.py reads)."""

    def __init__(self, app: ASGIApp):
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                ms = (time.perf_counter() - started) * 1000
                extra = [*HEADERS, (b"server-timing", f"app;dur={ms:.2f}".encode())]
                message = {**message, "headers": [*message.get("headers", []), *extra]}
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _lifespan(own: bool) -> Any:
    @asynccontextmanager
    async def lifespan(starlette: Starlette) -> AsyncIterator[None]:
        state: WebState = starlette.state.web
        if not own:
            yield
            return
        await state.app.start()
        stop = asyncio.Event()
        refresh = asyncio.create_task(keep_anchors_fresh(state.app, stop), name="web-anchor-refresh")
        try:
            yield
        finally:
            stop.set()
            await asyncio.gather(refresh, return_exceptions=True)
            await state.app.close()

    return lifespan


def create_app(
    app: App,
    *,
    own_lifecycle: bool = False,
    public_url: str | None = None,
    limits: WebLimits | None = None,
) -> Starlette:
    routes = [
        Route("/", pages.index),
        Route("/ask", pages.ask),
        Route("/feedback", pages.feedback, methods=["POST"]),
        Route("/chart.svg", pages.chart),
        Route("/anchors", pages.anchors),
        Route("/anchors.csv", pages.anchors_csv),
        Route("/anchors.json", pages.anchors_json),
        Route("/accuracy", pages.accuracy),
        Route("/healthz", pages.healthz),
        Mount("/static", app=StaticFiles(directory=str(STATIC)), name="static"),
    ]
    web = Starlette(routes=routes, lifespan=_lifespan(own_lifecycle))
    web.state.web = WebState(app, public_url=public_url, limits=limits or WebLimits())
    web.add_middleware(Headers)
    return web
