"""The GTX 16 series as people type it (catalogued this session from the Wikipedia-derived spec
table): phrasings written without looking at the aliases."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "gpu_id"),
    [
        ("gtx1660 super 跑 qwen3 4b 多少 token", "gtx-1660-super"),
        ("GTX 1660 Ti laptop? no, desktop 1660 ti with llama 3.2 3b", "gtx-1660-ti"),
        ("my 1660s can it run qwen2.5 7b", "gtx-1660-super"),
        ("1650 super 4g qwen3 1.7b", "gtx-1650-super"),
        ("老显卡 GTX1660 6G 能跑 qwen3 8b 吗", "gtx-1660"),
    ],
)
def test_gtx16_cards_are_read(text: str, gpu_id: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is not None and parsed.gpu.best_id == gpu_id, parsed.gpu
