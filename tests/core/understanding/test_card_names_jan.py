"""Questions naming the cards added in the January pass (V620, MI355X / MI350X, B300, 890M / 880M),
in the chat's phrasings (English and Chinese), parse to the card,
its count and the model."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "gpu_id", "count"),
    [
        ("v620 跑 qwen3 14b", "radeon-pro-v620", 1),
        ("MI355X 部署 deepseek r1 需要几张", "mi355x", 1),
        ("mi350x x8 deepseek r1", "mi350x", 8),
        ("a800 80g qwen2.5 72b", "a800-80g-sxm4", 1),
        ("b300 x8 deepseek v3", "b300", 8),
        ("890m 核显 qwen3 8b", "radeon-890m", 1),
    ],
)
def test_new_cards_are_read(text: str, gpu_id: str, count: int) -> None:
    parsed = parse_question(text, CATALOG)
    assert len(parsed.cards) == 1, parsed.cards
    (card,) = parsed.cards
    assert (card.res.best_id, card.count) == (gpu_id, count), card
    assert parsed.model is not None, text


# Written after the catalog work and run once unchanged (see the count below).
@pytest.mark.parametrize(
    ("text", "gpu_id", "count"),
    [
        ("Radeon Pro V620 32GB qwen3 32b q4 能跑吗", "radeon-pro-v620", 1),
        ("8张 MI355X 跑 deepseek v3 671b 多快", "mi355x", 8),
        ("HGX B300 8卡 qwen3 235b a22b", "b300", 8),
        ("ryzen ai 9 hx 370 igpu running qwen3 8b q4_k_m", "radeon-890m", 1),
        ("radeon 880m 32g llama 3.1 8b tokens/s?", "radeon-880m", 1),
        ("two mi350x gpus for llama 3.3 70b", "mi350x", 2),
    ],
)
def test_held_out_phrasings(text: str, gpu_id: str, count: int) -> None:
    test_new_cards_are_read(text, gpu_id, count)
