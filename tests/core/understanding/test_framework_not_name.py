"""A framework's word ("exllamav2", "tabbyapi", "exllamav3") is never part of the typed model name
the Hub rule checks the reading against (core/understanding/hub_rule.py): glued into it, the reading
lacked a "word" of the name and a catalog model was answered as "isn't in my catalog"."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.hub_rule import model_need, typed_model_name
from core.understanding.parse import parse_question


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("question", "model"),
    [
        ("exllamav2 gemma 3 27b on 3090", "gemma-3-27b"),
        ("exl2 qwen3 32b 4090", "qwen3-32b"),
        ("exllamav3 llama 3.3 70b 2x3090", "llama-3.3-70b"),
        ("tabbyapi qwen3 14b on a 3090", "qwen3-14b"),
        ("用 exllamav3 在 4090 上跑 qwen3 14b", "qwen3-14b"),
    ],
)
def test_the_framework_word_is_no_part_of_the_name(catalog: Catalog, question: str, model: str) -> None:
    parsed = parse_question(question, catalog)
    res, need = model_need(question, parsed.model, catalog)
    assert need is None and res is not None and res.best_id == model, (res, need)
    name = typed_model_name(question, catalog).lower()
    assert not any(w in name for w in ("exllama", "exl2", "exl3", "tabby")), name


def test_an_unknown_model_beside_a_framework_is_still_looked_up(catalog: Catalog) -> None:
    question = "exllamav2 zorblax-9000-13b on 3090"
    _res, need = model_need(question, parse_question(question, catalog).model, catalog)
    assert need is not None and need.name == "zorblax-9000-13b", need
