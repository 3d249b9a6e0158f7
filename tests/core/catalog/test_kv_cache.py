"""The KV cache type list against the catalog tables that price and spell those types."""

from __future__ import annotations

from core.catalog.kv_cache import KV_CACHE_TYPES, QUANTIZED_KV_CACHE_TYPES, is_kv_cache_type
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def test_every_type_has_bytes_per_value() -> None:
    assert set(KV_CACHE_TYPES) <= set(CATALOG.tables["estimator"]["kv_types"])


def test_llama_cpp_spellings_map_onto_priced_types() -> None:
    assert set(CATALOG.tables["submit"]["kv_types"].values()) <= set(KV_CACHE_TYPES)


def test_quantized_types_follow_full_precision() -> None:
    assert KV_CACHE_TYPES == ("f16", *QUANTIZED_KV_CACHE_TYPES)
    assert is_kv_cache_type("q8_0") and not is_kv_cache_type("fp8")
