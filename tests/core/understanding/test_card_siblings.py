"""A card typed without its memory ("a100", "v100", "4060 ti") is read as the catalog's default
and the reply names the other sizes sold under that name, with the words that price them: a
40 GB verdict for someone holding the 80 GB card is otherwise a silent swap."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.resolve import resolve_gpu

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "read", "sibling"),
    [
        ("a100", "a100-40g-pcie", "a100-80g-sxm4"),
        ("v100", "tesla-v100-16g-pcie", "tesla-v100-32g-pcie"),
        ("4060 ti", "rtx-4060-ti-8g", "rtx-4060-ti-16g"),
        ("mi50", "mi50-16g", "mi50-32g"),
        ("3080", "rtx-3080-10g", "rtx-3080-12g"),
    ],
)
def test_a_name_without_memory_lists_its_other_sizes(text: str, read: str, sibling: str) -> None:
    res = resolve_gpu(text, CATALOG)
    assert res.best_id == read and res.confident
    assert sibling in res.also


@pytest.mark.parametrize("text", ["a100 80g", "v100 32g", "4060 ti 16gb", "4090", "rtx 5090"])
def test_a_name_with_its_memory_or_one_size_lists_none(text: str) -> None:
    assert resolve_gpu(text, CATALOG).also == ()


def test_the_reply_says_what_to_type_for_the_other_size() -> None:
    text = answer("a100 qwen3 32b", CATALOG).text
    assert "A100 SXM4 80GB" in text and "“80g”" in text


def test_the_chinese_reply_says_it_too_on_several_cards() -> None:
    text = answer("双 v100 跑 qwen3 32b 多少 token", CATALOG).text
    assert "也有 Tesla V100 PCIe 32GB" in text and "“32g”" in text


def test_a_mac_chip_names_its_other_core_count_without_a_memory_hint() -> None:
    # A Mac's memory is chosen at purchase: "36g" would not name the 32-core chip for its owner.
    text = answer("m4 max qwen3 32b", CATALOG).text
    assert "M4 Max (14-core CPU / 32-core GPU)" in text and "“36g”" not in text


def test_a_card_with_its_memory_gets_no_such_line() -> None:
    text = answer("a100 80g qwen3 32b", CATALOG).text
    assert "also sold as" not in text and "also:" not in text.split("\n")[1]


def test_an_intents_own_reply_says_it_too() -> None:
    # The serving-capacity and cards-needed replies are not the table answer, and had no such line.
    for question in (
        "单张 A100 用 vllm 部署 qwen3-32b 能支撑多少用户",
        "single a100 vllm qwen3-32b how many users",
    ):
        second = answer(question, CATALOG).text.split("\n")[1]  # after the answer's own first line
        assert "A100 SXM4 80GB" in second and "80g" in second, second
