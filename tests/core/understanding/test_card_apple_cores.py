"""Apple chips named with a core count ("M3 Ultra 80-core", "M2 Max 38核"): the chip, and its
GPU-core variant where the catalog has one; the count is never read as the model."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "gpu_id", "model_id"),
    [
        ("M3 Ultra 80-core qwen3 235b", "apple-m3-ultra", "qwen3-235b-a22b"),
        ("M4 Max 40-core llama 3 70b", "apple-m4-max-40c", "llama-3-70b"),
        ("M2 Max 38核 qwen3 32b", "apple-m2-max", "qwen3-32b"),
        ("M4 Pro 20-core GPU qwen3 14b", "apple-m4-pro", "qwen3-14b"),
        ("M3 Ultra 60 core gpu deepseek r1", "apple-m3-ultra-60c", "deepseek-r1"),
        ("m4 max 32核gpu 跑 qwen3 30b", "apple-m4-max-32c", "qwen3-30b-a3b"),
        ("M2 Max 30-core qwen3 8b", "apple-m2-max-30c", "qwen3-8b"),
        ("M3 Max 30 核 GPU gemma 3 27b", "apple-m3-max-30c", "gemma-3-27b"),
        ("M1 Max 32-core GPU 64G qwen3 32b", "apple-m1-max", "qwen3-32b"),
    ],
)
def test_apple_core_count(text: str, gpu_id: str, model_id: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is not None and parsed.gpu.best_id == gpu_id
    assert parsed.model is not None and parsed.model.best_id == model_id
