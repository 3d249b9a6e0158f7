"""Held-out phrasings for the February cards (W7800 32/48 GB, W7700, A800 PCIe 80/40 GB, H800 PCIe,
Jetson Orin NX 16/8 GB): written before the rows were added and not used while writing them, so
they check that the aliases generalise beyond the phrasings in test_gpus_feb.py."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("question", "gpu_id", "count", "model_id"),
    [
        ("Radeon PRO W7800 跑 Qwen3-14B 多少 token", "radeon-pro-w7800", 1, "qwen3-14b"),
        ("amd w7800 32gb gemma 3 27b", "radeon-pro-w7800", 1, "gemma-3-27b"),
        ("w7800 48gb llama 3.3 70b", "radeon-pro-w7800-48g", 1, "llama-3.3-70b"),
        ("radeon pro w7700 16g qwen2.5 14b", "radeon-pro-w7700", 1, "qwen2.5-14b"),
        ("my w7700, can it run qwen3 14b?", "radeon-pro-w7700", 1, "qwen3-14b"),
        ("A800-PCIE-80GB qwen3-32b tokens/s", "a800-80g-pcie", 1, "qwen3-32b"),
        ("两张A800 PCIe 40G 跑 qwen2.5 72b", "a800-40g-pcie", 2, "qwen2.5-72b"),
        ("H800 80G PCIe llama 3.1 70b", "h800-pcie", 1, "llama-3.1-70b"),
        ("h800 pcie 80gb 跑 qwen3-30b-a3b", "h800-pcie", 1, "qwen3-30b-a3b"),
        ("jetson orin nx 16g qwen2.5 7b", "jetson-orin-nx-16g", 1, "qwen2.5-7b"),
        ("Orin NX 8GB 能跑 llama 3.2 3b 吗", "jetson-orin-nx-8g", 1, "llama-3.2-3b"),
        ("orin nx gemma 3 4b", "jetson-orin-nx-16g", 1, "gemma-3-4b"),
    ],
)
def test_heldout_phrasings_get_a_full_answer(
    catalog: Catalog, question: str, gpu_id: str, count: int, model_id: str
) -> None:
    from core.ask.answer import answer

    reply = answer(question, catalog).as_dict()
    query = reply["query"]
    assert reply["status"] == "answer", (question, reply["status"])
    got = (query["gpu"]["id"], query["gpu"]["count"], query["model"]["id"])
    assert got == (gpu_id, count, model_id), (question, got)
