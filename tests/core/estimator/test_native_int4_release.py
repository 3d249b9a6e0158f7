"""Kimi-K2.5 ships its routed experts natively INT4 (compressed-tensors W4A16, group 32) and the rest
BF16, like Kimi-K2-Thinking: the released checkpoint is ~594 GB, not the 1.9 TB a BF16 K2 would be,
and that checkpoint is what `vllm serve moonshotai/Kimi-K2.5` loads."""

from __future__ import annotations

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.estimator.weights import weight_breakdown

CATALOG = default_catalog()


def test_the_released_checkpoint_is_priced_with_its_int4_experts() -> None:
    for model_id in ("kimi-k2.5", "kimi-k2-thinking"):
        w = weight_breakdown(CATALOG.models[model_id], CATALOG.quants["HF-BF16"], CATALOG)
        assert 580e9 < w.total_bytes < 610e9, (model_id, w.total_bytes)


def test_eight_h200_serve_the_release_as_it_ships() -> None:
    text = answer("kimi k2.5 8x h200", CATALOG).text
    assert "$ vllm serve moonshotai/Kimi-K2.5 " in text and "--tensor-parallel-size 8" in text
