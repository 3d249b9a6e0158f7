"""bot/hub against a fake Hub on 127.0.0.1, found through HF_ENDPOINT alone (as a mirror would be)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from bot.hub.hf_source import HuggingFaceSource
from core.catalog.model_source import ModelSourceError
from tests.fakes.hf_hub import FakeHub, serving

FIXTURES = Path(__file__).parents[2] / "core" / "catalog" / "hf_configs"
CODER = "Qwen/Qwen3-Coder-30B-A3B-Instruct"
CODER_CONFIG = (FIXTURES / "Qwen__Qwen3-Coder-30B-A3B-Instruct" / "config.json").read_bytes()
SHARDS = {f"model-{i:05d}-of-00016.safetensors": 3_816_515_328 for i in range(1, 17)}


@pytest.fixture
async def hub(monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[FakeHub]:
    fake = FakeHub()
    fake.add_repo(
        CODER,
        {"config.json": CODER_CONFIG, **SHARDS, "README.md": b"# card"},
        downloads=900_000,
        safetensors_total=30_532_122_624,
    )
    gguf: dict[str, bytes | int] = {"config.json": CODER_CONFIG, "a.gguf": 10}
    fake.add_repo("unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF", gguf, downloads=50)
    async with serving(fake, monkeypatch):
        yield fake


@pytest.fixture
def source(tmp_path: Path) -> HuggingFaceSource:
    # 60 s: a hang guard, not a speed test (the shipped 5 s is for people; a busy machine may pass it).
    return HuggingFaceSource(budget_s=60.0, cache_dir=tmp_path / "hf-cache")


async def test_unknown_model_is_read_from_its_config(hub: FakeHub, source: HuggingFaceSource) -> None:
    found = await source.lookup(CODER)
    m = found.model
    assert (m.layers, m.experts, m.experts_active, m.moe_intermediate_size) == (48, 128, 8, 768)
    assert m.name == "Qwen3-Coder-30B-A3B-Instruct" and m.hf_repo == CODER and m.release == "2025-07"
    assert found.provenance.endpoint == hub.endpoint
    assert found.provenance.revision == hub.repos[CODER.lower()].sha
    assert found.provenance.config_url.endswith("/config.json")
    assert found.provenance.published_params == 30_532_122_624
    assert abs(found.params.total / 30_532_122_624 - 1) < 0.005
    sizes = {f.path: f.size for f in found.files}
    assert sizes["model-00001-of-00016.safetensors"] == 3_816_515_328
    assert not found.cached

    asked = len(hub.requests)
    again = await source.lookup(CODER)
    assert again.cached and again.model == m
    assert hub.count_repo(CODER) == 1 and len(hub.requests) == asked  # answered without the Hub


async def test_one_lookup_in_flight_per_name(hub: FakeHub, source: HuggingFaceSource) -> None:
    hub.delay = 0.2
    results = await asyncio.gather(*(source.lookup(CODER) for _ in range(4)))
    assert {r.model.id for r in results} == {CODER.lower()}
    assert hub.count_repo(CODER) == 1


async def test_search_ranks_by_downloads(hub: FakeHub, source: HuggingFaceSource) -> None:
    hits = await source.search("qwen3-coder-30b", limit=5)
    assert [h.repo for h in hits] == [CODER, "unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF"]
    assert hub.requests[-1].query.get("sort") == "downloads"


@pytest.mark.parametrize(
    ("status", "kind"), [(429, "rate_limited"), (500, "server_error"), (503, "server_error")]
)
async def test_http_failures_are_named(
    hub: FakeHub, source: HuggingFaceSource, status: int, kind: str
) -> None:
    hub.fail_repo(CODER, status)
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup(CODER)
    assert raised.value.kind == kind
    assert (await source.lookup(CODER)).model.layers == 48  # nothing half-read was cached


async def test_gated_repo_needs_a_token(
    hub: FakeHub, source: HuggingFaceSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    hub.add_repo("meta-llama/Gated-8B", {"config.json": CODER_CONFIG, **SHARDS}, gated=True)
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup("meta-llama/Gated-8B")
    assert raised.value.kind == "gated"
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    assert (await source.lookup("meta-llama/Gated-8B")).model.layers == 48


async def test_missing_repo_and_missing_config(hub: FakeHub, source: HuggingFaceSource) -> None:
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup("nobody/nothing-7B")
    assert raised.value.kind == "not_found"
    hub.add_repo("org/no-config", {"model.safetensors": 10})
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup("org/no-config")
    assert raised.value.kind == "not_found" and "config.json" in raised.value.detail


async def test_repo_without_weights(hub: FakeHub, source: HuggingFaceSource) -> None:
    hub.add_repo("org/only-config", {"config.json": CODER_CONFIG})
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup("org/only-config")
    assert raised.value.kind == "no_weights"


async def test_truncated_config_is_malformed_and_not_cached(hub: FakeHub, source: HuggingFaceSource) -> None:
    hub.add_repo("org/truncated", {"config.json": CODER_CONFIG[:200], **SHARDS})
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup("org/truncated")
    assert raised.value.kind == "malformed"
    assert source.cached("org/truncated") is None


async def test_unsupported_architecture_names_the_model_type(hub: FakeHub, source: HuggingFaceSource) -> None:
    # Gemma 4 E4B's per-layer inputs (hidden_size_per_layer_input) are refused with their reason.
    config = json.loads((FIXTURES / "google__gemma-4-31B-it" / "config.json").read_bytes())
    config["text_config"]["hidden_size_per_layer_input"] = 256
    e4b_like = json.dumps(config).encode()
    hub.add_repo("google/gemma-4-E4B-it", {"config.json": e4b_like, **SHARDS})
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup("google/gemma-4-E4B-it")
    assert raised.value.kind == "unsupported" and "gemma4" in raised.value.detail
    assert "per-layer inputs" in raised.value.detail


async def test_time_budget(hub: FakeHub, tmp_path: Path) -> None:
    """A Hub that hasn't answered by the budget: the look-up gives up instead of waiting for it.
    (Every answer takes at least 2 s, ten times the budget, however fast or slow the machine.)"""
    hub.delay = 2.0
    source = HuggingFaceSource(budget_s=0.2, cache_dir=tmp_path)
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup(CODER)
    assert raised.value.kind == "timeout" and "0.2 s" in raised.value.detail
    assert hub.requests and hub.answered == 0  # it asked, and gave up before any answer came


async def test_hub_down_uses_the_cached_entry(hub: FakeHub, tmp_path: Path) -> None:
    source = HuggingFaceSource(fresh_s=0.0, cache_dir=tmp_path)  # every look-up asks the Hub again
    first = await source.lookup(CODER)
    hub.fail_repo(CODER, 503)
    stale = await source.lookup(CODER)
    assert stale.stale and stale.model == first.model


async def test_unreachable_hub(monkeypatch: pytest.MonkeyPatch, source: HuggingFaceSource) -> None:
    hub = FakeHub()
    await hub.start()
    endpoint = hub.endpoint
    await hub.stop()  # nothing listens there any more
    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup(CODER)
    assert raised.value.kind == "unreachable"


async def test_offline_mode_answers_from_the_cache_only(
    hub: FakeHub, source: HuggingFaceSource, monkeypatch: pytest.MonkeyPatch
) -> None:
    await source.lookup(CODER)
    asked = hub.count("model_info")  # the repo and its quant listing
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    assert (await source.lookup(CODER)).cached
    with pytest.raises(ModelSourceError) as raised:
        await source.lookup("org/never-seen")
    assert raised.value.kind == "offline"
    assert hub.count("model_info") == asked
