"""The KV cache types the estimator prices: one name list for every module that checks or offers one.

How many bytes each type stores per cached value is data (`catalogs/estimator.toml`, `[kv_types]`);
how the types are spelt is data too (`KvSpellings` below). The catalog tests check the tables
against this list.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal, TypeGuard, get_args

KvCacheType = Literal["f16", "q8_0", "q4_0"]

# Best quality first: full precision, then the quantized caches a way out tries in this order.
KV_CACHE_TYPES: Final[tuple[KvCacheType, ...]] = get_args(KvCacheType)
FULL_PRECISION_KV: Final[KvCacheType] = KV_CACHE_TYPES[0]
QUANTIZED_KV_CACHE_TYPES: Final[tuple[KvCacheType, ...]] = KV_CACHE_TYPES[1:]


def is_kv_cache_type(value: object) -> TypeGuard[KvCacheType]:
    """True for a name the estimator prices; narrows a checked string to `KvCacheType`."""
    return value in KV_CACHE_TYPES


@dataclass(frozen=True, slots=True)
class KvSpellings:
    """How people and tools spell a KV cache type: the one table every reader goes through (a
    question, `estimate --kv-type`, a `/submit` form, a stored measurement).

    `exact`: spellings of the priced types ("q8" -> q8_0, "bf16" -> f16: same bytes per value),
    catalogs/understanding.toml `[kv.types]`. `priced_as`: real llama.cpp cache types the estimator
    doesn't price, and the priced type nearest them (q5_1 -> q4_0), catalogs/submit.toml
    `[kv_priced_as]`: a measurement keeps its own type and is compared with that estimate; a question
    that names one is not silently read as another.
    """

    exact: Mapping[str, KvCacheType]
    priced_as: Mapping[str, KvCacheType]

    def named(self, word: str) -> KvCacheType | None:
        """The priced type a spelling names, or None."""
        key = word.strip().lower()
        if is_kv_cache_type(key):
            return key
        return self.exact.get(key) or self.exact.get(key.replace("-", "_"))

    def canonical(self, word: str) -> str | None:
        """The name to store for a measured cache type: the priced type's own name, or the unpriced
        type's llama.cpp name; None when it names no cache type."""
        named = self.named(word)
        if named is not None:
            return named
        key = word.strip().lower().replace("-", "_")
        return key if key in self.priced_as else None

    def priced(self, name: str | None) -> KvCacheType:
        """The type a stored or typed name is priced as (full precision when it names none)."""
        if name is None:
            return FULL_PRECISION_KV
        named = self.named(name)
        if named is not None:
            return named
        return self.priced_as.get(name.strip().lower().replace("-", "_"), FULL_PRECISION_KV)

    def choices(self) -> tuple[str, ...]:
        """The names to offer in a message: the priced types, then the others a form accepts."""
        return (*KV_CACHE_TYPES, *sorted(self.priced_as))
