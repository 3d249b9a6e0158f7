"""Held-out Apple core-count phrasings (written before the code; run at the end)."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "gpu_id", "model_id"),
    [
        ("Mac Studio M3 Ultra 80核 512G 跑 deepseek r1", "apple-m3-ultra", "deepseek-r1"),
        ("MacBook Pro M4 Max 40-core GPU 128GB qwen3 32b", "apple-m4-max-40c", "qwen3-32b"),
    ],
)
def test_heldout_apple(text: str, gpu_id: str, model_id: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is not None and parsed.gpu.best_id == gpu_id
    assert parsed.model is not None and parsed.model.best_id == model_id
