"""Held-out Apple core-count phrasings (written before the code; run at the end)."""

from __future__ import annotations

import pytest

from tests.core.understanding.test_card_apple_cores import test_apple_core_count as check_apple


@pytest.mark.parametrize(
    ("text", "gpu_id", "model_id"),
    [
        ("Mac Studio M3 Ultra 80核 512G 跑 deepseek r1", "apple-m3-ultra", "deepseek-r1"),
        ("MacBook Pro M4 Max 40-core GPU 128GB qwen3 32b", "apple-m4-max-40c", "qwen3-32b"),
    ],
)
def test_heldout_apple(text: str, gpu_id: str, model_id: str) -> None:
    check_apple(text, gpu_id, model_id)  # the train split's check, on the held-out phrasings
