"""The KV cache types the estimator prices: one name list for every module that checks or offers one.

How many bytes each type stores per cached value is data (`catalogs/estimator.toml`, `[kv_types]`);
which llama.cpp spellings map onto which of these is data too (`catalogs/submit.toml`). The
catalog tests check both tables against this list.
"""

from __future__ import annotations

from typing import Final, Literal, TypeGuard, get_args

KvCacheType = Literal["f16", "q8_0", "q4_0"]

# Best quality first: full precision, then the quantized caches a way out tries in this order.
KV_CACHE_TYPES: Final[tuple[KvCacheType, ...]] = get_args(KvCacheType)
FULL_PRECISION_KV: Final[KvCacheType] = KV_CACHE_TYPES[0]
QUANTIZED_KV_CACHE_TYPES: Final[tuple[KvCacheType, ...]] = KV_CACHE_TYPES[1:]


def is_kv_cache_type(value: object) -> TypeGuard[KvCacheType]:
    """True for a name the estimator prices; narrows a checked string to `KvCacheType`."""
    return value in KV_CACHE_TYPES
