"""A Mac named by its product alone ("mac studio", "my macbook pro", "mac mini 512gb" that no Mac
mini comes in): the chip and memory decide everything, so the card is read as that product with no
chip and the reply asks which, naming the chips it ships with and their memory. Before, no card was
read: the product's words fell into the model name ("macbook pro llama 3.1 8b" looked up
"pro llama 3.1 8b" on the Hub) or the reply was a card-less memory table.

Written before the fix, in phrasings not used elsewhere; on the old code 2 of 9 held (the two whose
memory is said further on as RAM); all 9 after it."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("question", "product", "model"),
    [
        ("mac studio qwen3 235b?", "mac studio", "qwen3-235b-a22b"),
        ("macbook pro llama 3.1 8b tok/s", "macbook pro", "llama-3.1-8b"),
        ("我的mac studio能跑qwen3 235b吗", "mac studio", "qwen3-235b-a22b"),
        ("imac gemma 3 4b speed", "imac", "gemma-3-4b"),
        ("will my macbook air handle qwen3 8b", "macbook air", "qwen3-8b"),
        ("mac mini 512gb deepseek r1", "mac mini", "deepseek-r1"),
        ("what can i run on my mac mini", "mac mini", None),
    ],
)
def test_a_product_alone_is_read_without_a_chip(
    question: str, product: str, model: str | None, catalog: Catalog
) -> None:
    parsed = parse_question(question, catalog)
    assert parsed.gpu is not None
    assert parsed.gpu.best_id is None and not parsed.gpu.confident
    assert parsed.gpu.product == product
    assert parsed.gpu.candidates and all(catalog.gpus[c].vendor == "Apple" for c, _ in parsed.gpu.candidates)
    if model is None:
        assert parsed.model is None or parsed.model.best_id is None
    else:
        assert parsed.model is not None and parsed.model.best_id == model


@pytest.mark.parametrize(
    ("question", "chip", "memory"),
    [
        ("mac studio, 192 gb of ram, deepseek v3", "apple-m2-ultra", 192),
        ("running llama 3.3 70b on a mac mini that has 64gb ram", "apple-m4-pro", 64),
    ],
)
def test_its_memory_said_further_on_still_names_the_chip(
    question: str, chip: str, memory: int, catalog: Catalog
) -> None:
    parsed = parse_question(question, catalog)
    assert parsed.gpu is not None
    assert (parsed.gpu.best_id, parsed.gpu.memory_gib) == (chip, memory)
    assert parsed.host_ram_gib is None
