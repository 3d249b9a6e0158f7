"""The model source in the running bot: switched on by the deployment, models kept in the database and
loaded at start, and `python -m bot ask --json` resolving through the Hub like chat does."""

from __future__ import annotations

import asyncio
import io
import json
import threading
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.app import build_app
from bot.cli.ask import run_ask
from bot.cli.main import build_parser
from bot.hub.hf_source import HuggingFaceSource
from bot.hub.select import model_source_from_env
from bot.settings import Settings
from core.commands.model_lookup import to_payload
from core.commands.types import Where
from core.storage.memory import MemoryStorage
from core.storage.records import Actor
from tests.core.understanding.test_hub_rule import VL32, _add_repos
from tests.fakes.hf_hub import FakeHub

AT = datetime(2026, 12, 1, tzinfo=UTC)


def test_the_hub_setting_decides_and_unset_follows_hf_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    from bot.hub.select import model_source_for
    from bot.settings import load_settings

    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert model_source_for(None) is None and model_source_for(False) is None
    assert isinstance(model_source_for(True), HuggingFaceSource)
    monkeypatch.setenv("HF_ENDPOINT", "https://hf-mirror.com")
    assert isinstance(model_source_for(None), HuggingFaceSource) and model_source_for(False) is None
    assert load_settings(hub="1").hub is True and load_settings(hub="off").hub is False
    assert load_settings(hub=" ").hub is None


def test_the_hub_is_on_only_when_the_deployment_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TOKBOT_HUB", raising=False)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    assert model_source_from_env() is None  # tests, CI: never the network
    monkeypatch.setenv("HF_ENDPOINT", "https://hf-mirror.com")
    assert isinstance(model_source_from_env(), HuggingFaceSource)
    monkeypatch.setenv("TOKBOT_HUB", "off")
    assert model_source_from_env() is None
    monkeypatch.delenv("HF_ENDPOINT")
    monkeypatch.setenv("TOKBOT_HUB", "1")
    assert isinstance(model_source_from_env(), HuggingFaceSource)


@pytest.fixture
def threaded_hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[FakeHub]:
    """The fake Hub on a loop of its own (the CLI runs its own event loop)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    hub = FakeHub()
    _add_repos(hub)
    asyncio.run_coroutine_threadsafe(hub.start(), loop).result(10)
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    monkeypatch.delenv("TOKBOT_HUB", raising=False)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield hub
    asyncio.run_coroutine_threadsafe(hub.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def test_ask_json_resolves_through_the_hub(
    threaded_hub: FakeHub, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOKBOT_DB_PATH", raising=False)
    monkeypatch.delenv("TOKBOT_DATABASE_URL", raising=False)
    out = io.StringIO()
    code = run_ask(build_parser().parse_args(["ask", "4090 qwen2.5-vl-32b", "--json"]), out)
    data = json.loads(out.getvalue())
    assert code == 0 and data["status"] == "answer", data["reply"]
    assert data["model"] == {"name": "Qwen2.5-VL-32B-Instruct", "repo": VL32}
    assert data["reply"].startswith("Qwen2.5-VL-32B-Instruct · Hugging Face")


async def test_models_read_earlier_are_loaded_at_start(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from core.catalog.from_config import read_config
    from core.catalog.model_source import Provenance, SourcedModel
    from tests.core.understanding.test_hub_rule import _vl32_config

    monkeypatch.delenv("TOKBOT_HUB", raising=False)
    monkeypatch.delenv("HF_ENDPOINT", raising=False)
    reading = read_config(json.loads(_vl32_config()), model_id="qwen/qwen2.5-vl-32b-instruct", repo=VL32)
    prov = Provenance(VL32, "abc", "2026-12-01T00:00:00+00:00", "https://huggingface.co", "u")
    storage = MemoryStorage()
    await storage.open()
    await storage.cache_model(
        "qwen/qwen2.5-vl-32b-instruct", to_payload(SourcedModel(reading.model, reading.params, prov)), AT
    )
    app = build_app(Settings(_env_file=None, db_path=tmp_path / "t.db"), storage=storage)  # type: ignore[call-arg]
    assert app.bot.model_source is None
    await app.start()
    try:
        assert "qwen/qwen2.5-vl-32b-instruct" in app.bot.catalog.models
        [response] = await app.router.handle_text(
            Actor("console", "u", "U"), Where("u", True), "4090 Qwen/Qwen2.5-VL-32B-Instruct"
        )
        assert response.text.startswith("Qwen2.5-VL-32B-Instruct · Hugging Face"), response.text
    finally:
        await app.close()
