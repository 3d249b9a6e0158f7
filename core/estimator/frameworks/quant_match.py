"""Whether a quant is one a catalog list names, and whether a framework can read its files at all.

Catalog lists (rule quants, a framework's quants, a quant's loaders) name quants by id, alias or
family; every gate and command asks this, so the name set is built once per quant."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from core.catalog.framework import Framework
from core.catalog.quant import Quant


@lru_cache(maxsize=1024)
def _names(quant_id: str, aliases: tuple[str, ...], family: str = "") -> frozenset[str]:
    return frozenset(n.upper() for n in (quant_id, *aliases, family) if n)


def quant_in(quant: Quant, ids: Iterable[str]) -> bool:
    """Whether the quant is one of `ids` (ids or aliases); a family id ("EXL2") names its members too."""
    names = _names(quant.id, tuple(quant.aliases), quant.family)
    return any(i.upper() in names for i in ids)


def loads(fw: Framework, quant: Quant) -> bool:
    """Whether the framework can read the quant's files at all: a quant with `loaders` (ik_llama.cpp's
    own types, EXL2/EXL3) is read by those frameworks only."""
    return not quant.loaders or fw.id in quant.loaders
