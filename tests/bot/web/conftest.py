"""Fixtures for the web page tests: the bot's App on an in-memory store (the published anchors
seeded as at start), served by Starlette's TestClient for the plain tests; the browser tests serve
it with uvicorn on 127.0.0.1 (tests/bot/web/test_web_browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from bot.app import App, build_app
from bot.settings import load_settings
from bot.web.app import WebLimits, create_app
from core.storage.memory import MemoryStorage


def make_app(tmp: Path, **settings: object) -> App:
    return build_app(load_settings(db_path=tmp / "unused.db", **settings), storage=MemoryStorage())


@pytest.fixture(scope="module")
def web_app(tmp_path_factory: pytest.TempPathFactory) -> App:
    return make_app(tmp_path_factory.mktemp("web"))


@pytest.fixture(scope="module")
def client(web_app: App) -> Iterator[TestClient]:
    # A high vote limit: the rate-limit test builds its own app with a low one.
    web = create_app(web_app, own_lifecycle=True, limits=WebLimits(votes=1000))
    with TestClient(web, base_url="http://testserver") as c:
        yield c
