"""`python -m bot models sync`: entries written from config folders into a models.toml."""

from __future__ import annotations

import asyncio
import json
import shutil
import threading
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bot.cli.main import main
from bot.cli.models import proposed_id, read_config_dir
from core.catalog.loader import CATALOG_DIR
from tests.fakes.hf_hub import FakeHub

FIXTURES = Path(__file__).parents[2] / "core" / "catalog" / "hf_configs"


@pytest.fixture
def catalog(tmp_path: Path) -> Path:
    for name in ("gpus.toml", "quants.toml", "frameworks.toml"):
        shutil.copy(CATALOG_DIR / name, tmp_path / name)
    text = (CATALOG_DIR / "models.toml").read_text(encoding="utf-8")
    head, _, rest = text.partition("\n[[model]]\n")
    first = "[[model]]\n" + rest.split("\n[[model]]\n")[0].rstrip("\n")
    (tmp_path / "models.toml").write_text(head.rstrip("\n") + "\n\n" + first + "\n", encoding="utf-8")
    return tmp_path / "models.toml"


def _models(path: Path) -> dict[str, dict[str, Any]]:
    return {m["id"]: m for m in tomllib.loads(path.read_text(encoding="utf-8"))["model"]}


def test_sync_appends_a_new_entry_with_its_source(catalog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = FIXTURES / "Qwen__Qwen3-Coder-30B-A3B-Instruct"
    assert main(["models", "sync", str(folder), "--catalog", str(catalog)]) == 0
    models = _models(catalog)
    entry = models["qwen3-coder-30b-a3b"]
    assert entry["hf_repo"] == "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    assert entry["experts"] == 128 and entry["params_b"] == 30.53
    assert "https://huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct" in entry["source"]
    assert "github:ztxz16/fastllm@f8f04c33ab" in entry["source"]
    assert "llama-2-7b" in models  # the entry that was there is kept
    assert "new entry qwen3-coder-30b-a3b" in capsys.readouterr().out


def test_sync_updates_in_place_and_keeps_the_metadata(catalog: Path) -> None:
    folder = FIXTURES / "Qwen__Qwen3-Coder-30B-A3B-Instruct"
    main(["models", "sync", str(folder), "--catalog", str(catalog)])
    text = catalog.read_text(encoding="utf-8").replace(
        '"Qwen/Qwen3-Coder-30B-A3B-Instruct",\n]', '"qwen3 coder 30b",\n]'
    )
    text = text.replace("layers = 48", "layers = 47")
    catalog.write_text(text, encoding="utf-8")
    assert main(["models", "sync", str(folder), "--catalog", str(catalog)]) == 0
    entry = _models(catalog)["qwen3-coder-30b-a3b"]
    assert entry["layers"] == 48  # architecture from the config
    assert entry["aliases"] == ["qwen3 coder 30b"]  # names as people wrote them
    assert entry["source"].count("huggingface.co/Qwen/Qwen3-Coder-30B-A3B-Instruct") == 1


def test_sync_names_an_unsupported_config_and_writes_nothing(
    catalog: Path, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    before = catalog.read_text(encoding="utf-8")
    # Gemma 4 31B is read; an E4B-like config (per-layer inputs) is refused with its reason.
    folder = tmp_path / "google__gemma-4-E4B-it"
    shutil.copytree(FIXTURES / "google__gemma-4-31B-it", folder)
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    config["text_config"]["hidden_size_per_layer_input"] = 256
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    assert main(["models", "sync", str(folder), "--catalog", str(catalog)]) == 1
    assert "per-layer inputs" in capsys.readouterr().out
    assert catalog.read_text(encoding="utf-8") == before


def test_dry_run_writes_nothing(catalog: Path) -> None:
    before = catalog.read_text(encoding="utf-8")
    folder = FIXTURES / "google__gemma-3-270m-it"
    assert main(["models", "sync", str(folder), "--catalog", str(catalog), "--dry-run"]) == 0
    assert catalog.read_text(encoding="utf-8") == before


def test_source_folder_and_ids() -> None:
    found = read_config_dir(FIXTURES / "deepseek-ai__DeepSeek-V3.1")
    assert found.repo == "deepseek-ai/DeepSeek-V3.1"
    assert "github:gogongxt/python@ec99626978 scripts/models/deepseek_v3.1.md" in found.source
    assert proposed_id("Qwen/Qwen3-VL-8B-Instruct") == "qwen3-vl-8b"
    assert proposed_id("google/gemma-3-270m-it") == "gemma-3-270m"


@pytest.fixture
def threaded_hub(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeHub]:
    """The fake Hub on its own loop in a thread: `models add` runs its own asyncio.run()."""
    hub = FakeHub()
    config = (FIXTURES / "google__gemma-3-270m-it" / "config.json").read_bytes()
    hub.add_repo("google/gemma-3-270m-it", {"config.json": config, "model.safetensors": 536_223_056})
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    asyncio.run_coroutine_threadsafe(hub.start(), loop).result(10)
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    yield hub
    asyncio.run_coroutine_threadsafe(hub.stop(), loop).result(10)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(5)


def test_add_reads_the_repo_from_the_hub(
    threaded_hub: FakeHub, catalog: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "hf-cache"))
    url = "https://huggingface.co/google/gemma-3-270m-it"
    assert main(["models", "add", url, "--catalog", str(catalog)]) == 0
    entry = _models(catalog)["gemma-3-270m"]
    assert entry["attention"] == "swa_hybrid" and entry["global_layers"] == 3
    assert entry["release"] == "2025-07"  # the fake repo's createdAt
    assert threaded_hub.repos["google/gemma-3-270m-it"].sha in entry["source"]


def test_add_says_why_not(threaded_hub: FakeHub, catalog: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "add", "nobody/nothing", "--catalog", str(catalog)]) == 1
    assert "not_found" in capsys.readouterr().out
    assert main(["models", "add", "qwen3 coder", "--catalog", str(catalog)]) == 2
