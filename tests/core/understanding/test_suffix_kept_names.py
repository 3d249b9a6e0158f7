"""A model-name suffix ("thinking", catalogs/understanding.toml [noise] model_suffixes) is dropped
before a typed name is matched, except where a catalog entry's own id keeps the word: then the name
with it is another model (Kimi-K2-Thinking is not Kimi-K2-Instruct), and the exact name wins. Names
whose thinking release is an alias of the instruct row (Qwen3-30B-A3B, Qwen3-4B-2507) read as before."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_model


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("unsloth/Kimi-K2-Thinking-GGUF", "kimi-k2-thinking"),  # a suffix besides it is still dropped
        ("Kimi K2 Thinking instruct", "kimi-k2-thinking"),
        ("qwen3-30b-a3b-thinking", "qwen3-30b-a3b"),  # no entry of its own: read as before
        ("qwen3 4b thinking 2507", "qwen3-4b-2507"),
        ("Kimi-K2-Instruct", "kimi-k2"),
    ],
)
def test_a_kept_suffix_names_its_own_entry(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_model(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res)


@pytest.mark.parametrize(
    ("question", "model"),
    [
        ("kimi k2 thinking 在 8张H20 上能跑多快", "kimi-k2-thinking"),
        ("8x H100 serving moonshotai/Kimi-K2-Thinking with vllm", "kimi-k2-thinking"),
        ("kimi k2 on 8x h100", "kimi-k2"),
    ],
)
def test_questions_keep_the_thinking_name(catalog: Catalog, question: str, model: str) -> None:
    parsed = parse_question(question, catalog)
    assert parsed.model is not None and parsed.model.best_id == model, parsed.model
