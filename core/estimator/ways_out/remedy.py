"""A way out with its own figures: what the estimate keeps in `Row.remedy` and every view reads."""

from __future__ import annotations

import dataclasses
import operator
from dataclasses import dataclass
from typing import Literal

from core.catalog.kv_cache import KvCacheType
from core.estimator.ways_out.kind import WayOutKind


@dataclass(frozen=True, slots=True)
class Remedy:
    kind: WayOutKind
    decode_mid: float | None  # tok/s with this remedy (None when it can't run at all)
    decode_low: float | None = None
    decode_high: float | None = None
    total_gib: float | None = None
    kv_type: KvCacheType | Literal[""] = ""  # kv_quant: the cache type that makes it fit
    quant: str = ""
    layers_on_gpu: int = 0
    layers_total: int = 0
    cpu_moe_layers: int = 0
    cards: int = 0
    host_gib: float = 0.0  # system RAM the offloaded part needs (more_ram: the RAM the box must have)
    context: int = 0  # shorter_ctx: the longest ladder context that fits
    wired_limit_mb: int = 0  # mac_wired_limit: the value for `sudo sysctl iogpu.wired_limit_mb=`
    quality_warning: bool = False  # a 1-2-bit quant: answers noticeably worse, say so plainly
    # kv_quant under vLLM / SGLang: the engine's FP8 cache flag, said instead of llama.cpp's q8_0
    kv_flag: str = ""
    alternatives: tuple[Remedy, ...] = ()


# Every Remedy field but the last, `alternatives`, in declaration order: a remedy with other
# alternatives is `Remedy(*_OWN_FIELDS(best), alternatives)` (one C call instead of a dict of 13).
_NAMES = tuple(f.name for f in dataclasses.fields(Remedy))
assert _NAMES[-1] == "alternatives"
_OWN_FIELDS = operator.attrgetter(*_NAMES[:-1])


def with_alternatives(best: Remedy, others: tuple[Remedy, ...]) -> Remedy:
    """`best` with `others` as its alternatives (ranked)."""
    # mypy can't count the fields a star-args tuple fills, so it sees `alternatives` given twice.
    return Remedy(*_OWN_FIELDS(best), alternatives=others)  # type: ignore[misc]
