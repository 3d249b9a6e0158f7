"""A Mac named by its product and memory, no chip ("512gb mac studio", "mac mini 64gb"): the newest
chip that product ships with at that memory ([gpu.mac_products] in catalogs/understanding.toml), the
other chips sold at that size beside it as "also". Before, no card was read at all and the reply was a
memory table asking for the card.

Written before the fix in phrasings not seen elsewhere; first run against the fix: see the closing
note of the session that added them."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("question", "chip", "memory"),
    [
        ("512gb mac studio deepseek r1", "apple-m3-ultra", 512),
        ("mac studio 256gb qwen3 235b", "apple-m3-ultra", 256),
        ("mac mini 64gb qwen3 32b", "apple-m4-pro", 64),
        ("Mac Mini with 32GB, can it run gemma 3 27b?", "apple-m4", 32),
        ("macbook pro 128gb llama 3.3 70b", "apple-m5-max-40c", 128),
        ("macbook air 16gb llama 3.1 8b how fast", "apple-m4", 16),
        ("mac studio 192gb deepseek v3 q2", "apple-m2-ultra", 192),
        ("我的 mac studio 512G 跑 deepseek r1 多快", "apple-m3-ultra", 512),
        ("Mac Studio (512 GB unified memory) kimi k2", "apple-m3-ultra", 512),
        ("mac mini 48g 能跑 qwen3 30b a3b 吗", "apple-m4-pro", 48),
        ("a 96gb mac studio for gpt-oss-120b", "apple-m3-ultra", 96),
        # the size said as its RAM: a Mac's RAM is the chip's memory, no host beside a card
        ("mac studio 512gb ram kimi k2", "apple-m3-ultra", 512),
        ("mac mini with 64gb ram, llama 3.3 70b?", "apple-m4-pro", 64),
    ],
)
def test_mac_product_and_memory_is_a_chip(question: str, chip: str, memory: int, catalog: Catalog) -> None:
    parsed = parse_question(question, catalog)
    assert parsed.gpu is not None
    assert (parsed.gpu.best_id, parsed.gpu.memory_gib) == (chip, memory)
    assert parsed.host_ram_gib is None


def test_every_listed_chip_is_a_catalogued_apple_chip(catalog: Catalog) -> None:
    from core.understanding.name_index import index_for

    for product, ids in index_for(catalog).vocab.mac_products.items():
        for gid in ids:
            assert gid in catalog.gpus and catalog.gpus[gid].vendor == "Apple", (product, gid)


@pytest.mark.parametrize(
    ("question", "chip"),
    [
        ("mac studio m2 ultra 192gb deepseek v3", "apple-m2-ultra"),
        ("macbook pro m1 max 64gb llama 70b", "apple-m1-max"),
        ("mac mini m4 pro 64g 跑 llama 3.3 70b", "apple-m4-pro"),
    ],
)
def test_a_chip_named_stays_that_chip(question: str, chip: str, catalog: Catalog) -> None:
    parsed = parse_question(question, catalog)
    assert parsed.gpu is not None
    assert parsed.gpu.best_id == chip


def test_other_chips_at_that_size_are_named_beside(catalog: Catalog) -> None:
    parsed = parse_question("mac studio 64gb llama 3.3 70b", catalog)
    assert parsed.gpu is not None
    assert parsed.gpu.best_id == "apple-m4-max-40c"
    assert "apple-m2-ultra" in parsed.gpu.also


def test_a_size_no_such_mac_comes_in_reads_no_chip(catalog: Catalog) -> None:
    # No Mac mini was ever sold with 512 GB: no chip is made up for it.
    parsed = parse_question("mac mini 512gb deepseek r1", catalog)
    assert parsed.gpu is None or parsed.gpu.best_id is None
