"""The KV cache type list against the catalog tables that price and spell those types."""

from __future__ import annotations

import pytest

from core.catalog.kv_cache import KV_CACHE_TYPES, QUANTIZED_KV_CACHE_TYPES, is_kv_cache_type
from core.catalog.loader import default_catalog
from core.understanding.vocab import kv_spellings

CATALOG = default_catalog()


def test_every_type_has_bytes_per_value() -> None:
    assert set(KV_CACHE_TYPES) <= set(CATALOG.tables["estimator"]["kv_types"])


def test_unpriced_llama_cpp_types_map_onto_priced_types() -> None:
    priced_as = CATALOG.tables["submit"]["kv_priced_as"]
    assert set(priced_as.values()) <= set(KV_CACHE_TYPES)
    assert not set(priced_as) & set(KV_CACHE_TYPES)  # a priced type is priced as itself


def test_every_spelling_table_names_priced_types_only() -> None:
    spellings = kv_spellings(CATALOG)
    assert set(spellings.exact.values()) <= set(KV_CACHE_TYPES)
    assert not set(spellings.exact) & set(spellings.priced_as)


@pytest.mark.parametrize(
    ("typed", "named", "stored", "priced"),
    [
        ("q8", "q8_0", "q8_0", "q8_0"),
        ("Q8_0", "q8_0", "q8_0", "q8_0"),
        ("fp16", "f16", "f16", "f16"),
        ("bf16", "f16", "f16", "f16"),
        ("4bit", "q4_0", "q4_0", "q4_0"),
        ("q5_1", None, "q5_1", "q4_0"),  # a real llama.cpp type: kept as measured, priced as q4_0
        ("iq4-nl", None, "iq4_nl", "q4_0"),
        ("f32", None, "f32", "f16"),
        ("q3", None, None, "f16"),
    ],
)
def test_one_spelling_table_for_questions_estimates_and_forms(
    typed: str, named: str | None, stored: str | None, priced: str
) -> None:
    spellings = kv_spellings(CATALOG)
    assert spellings.named(typed) == named
    assert spellings.canonical(typed) == stored
    assert spellings.priced(typed) == priced


def test_quantized_types_follow_full_precision() -> None:
    assert KV_CACHE_TYPES == ("f16", *QUANTIZED_KV_CACHE_TYPES)
    assert is_kv_cache_type("q8_0") and not is_kv_cache_type("fp8")
