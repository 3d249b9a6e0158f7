"""A family named alone ("qwen3.5") on a card is asked back, never answered as one member: the
candidates are the members that fit that machine (its cards, and a MoE's experts in the host RAM),
the most popular first; a member that cannot run there comes after them."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


def _first(question: str, catalog: Catalog) -> list[str]:
    m = parse_question(question, catalog).model
    assert m is not None and not m.confident, m  # asked back, not answered
    return [mid for mid, _score in m.candidates[:3]]


@pytest.mark.parametrize(
    "question",
    ["qwen3.5 on a 3060 12gb + 32gb ram", "3060 12G 加 32G 内存跑 qwen3.5 多快", "qwen3.5 on a 3060"],
)
def test_the_moe_member_that_offloads_comes_first(catalog: Catalog, question: str) -> None:
    first = _first(question, catalog)
    assert first[0] == "qwen3.5-35b-a3b", first
    assert not {"qwen3.5-397b-a17b", "qwen3.5-122b-a10b"} & set(first), first


@pytest.mark.parametrize("question", ["MLX 跑 qwen3.5 在 M3 Max 64G 上速度", "qwen3.5 on an M3 Max 64GB"])
def test_a_member_past_the_unified_memory_is_not_offered_first(catalog: Catalog, question: str) -> None:
    first = _first(question, catalog)
    assert first[:2] == ["qwen3.5-35b-a3b", "qwen3.5-27b"] and "qwen3.5-397b-a17b" not in first, first


def test_many_cards_keep_the_big_members(catalog: Catalog) -> None:
    first = _first("deepseek on 8x h100", catalog)
    assert first[0] in ("deepseek-r1", "deepseek-v3", "deepseek-v3.2", "deepseek-v3.1"), first
