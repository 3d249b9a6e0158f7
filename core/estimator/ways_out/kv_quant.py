"""A quantized KV cache, the first of q8_0 / q4_0 that fits: the least quality lost (it needs flash
attention, which every command that uses it turns on)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import ClassVar

from core.catalog.framework import Framework
from core.catalog.kv_cache import FULL_PRECISION_KV, QUANTIZED_KV_CACHE_TYPES, KvCacheType
from core.estimator.frameworks.kv_flag import serving_kv_flag
from core.estimator.memory import GIB, kv_cache_bytes
from core.estimator.memory_fit import decode_range, fits, packs
from core.estimator.token_bytes import decode_bytes
from core.estimator.ways_out.base import Facts, Placed, WayOut
from core.estimator.ways_out.cases import CardCase, CpuCase, cpu_option
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy

# vLLM / SGLang quantize the KV cache to FP8 only (vLLM --kv-cache-dtype fp8 / fp8_e4m3 / fp8_e5m2,
# docs.vllm.ai quantization/quantized_kvcache; SGLang --kv-cache-dtype fp8_e5m2 / fp8_e4m3,
# docs.sglang.io advanced_features/server_arguments and quantized_kv_cache, FP4 only on Blackwell):
# one byte a value, priced as q8_0. There is no 4-bit cache to offer them (llama.cpp's q4_0).
_SERVING_KV: tuple[KvCacheType, ...] = ("q8_0",)


def _cache_types(fw: Framework | None) -> tuple[KvCacheType, ...]:
    """The quantized caches a way out may try under this framework, least loss first."""
    if fw is not None and fw.engine in ("vllm", "sglang"):
        return _SERVING_KV
    return QUANTIZED_KV_CACHE_TYPES


@dataclass(frozen=True, slots=True)
class KvQuant(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.KV_QUANT
    facts: ClassVar[Facts] = Facts(tier=0.0, runs_here=True, has_command=True, on_card=True)

    def applies(self, case: CardCase) -> bool:
        return case.row.request.kv_type == FULL_PRECISION_KV

    def propose(self, case: CardCase) -> Remedy | None:
        row = case.row
        weights, model, cards = row.weights, row.request.model, row.request.setup.count
        fw = row.catalog.frameworks.get(row.rt.framework)
        for kv_type in _cache_types(fw):
            kv = kv_cache_bytes(model, row.ctx, kv_type, row.catalog)
            total = weights.gpu_bytes_full_offload + kv + row.buffer * cards
            # A smaller cache shrinks every layer a little: whole layers per card must still pack.
            if fits(total, row.usable_bytes, row.smooth_fraction) and packs(row, weights, kv, row.buffer):
                lo, mid, hi = decode_range(row, decode_bytes(model, weights, row.depth, kv_type, row.catalog))
                flag = serving_kv_flag(fw)  # the words name the engine's cache, not llama.cpp's
                return Remedy(self.kind, mid, lo, hi, round(total / GIB, 2), kv_type=kv_type, kv_flag=flag)
        return None

    def applies_cpu(self, case: CpuCase) -> bool:
        return case.request.kv_type == FULL_PRECISION_KV

    def propose_cpu(self, case: CpuCase) -> Remedy | None:
        for kv_type in QUANTIZED_KV_CACHE_TYPES:
            request = dataclasses.replace(case.request, kv_type=kv_type)
            f = case.runs(request, case.quant_id, case.weights, case.ctx)
            if f is not None:
                return cpu_option(self.kind, f, kv_type=kv_type)
        return None

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        return at._replace(kv_type=remedy.kv_type or at.kv_type, fits=True)
