"""A shorter context at the same quant and cache: the longest context of the ladder below the asked
one that fits."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.estimator.memory import GIB
from core.estimator.memory_fit import decode_range, fits, packs_at
from core.estimator.token_bytes import decode_bytes
from core.estimator.ways_out.base import Facts, Placed, WayOut, swapped
from core.estimator.ways_out.cases import CardCase, CpuCase, cpu_option
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.ladder import ladder_contexts, on_card_bytes
from core.estimator.ways_out.remedy import Remedy


@dataclass(frozen=True, slots=True)
class ShorterContext(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.SHORTER_CTX
    facts: ClassVar[Facts] = Facts(tier=2.0, has_command=True, on_card=True)

    def applies(self, case: CardCase) -> bool:
        # The weights alone overflow on most no-fit rows: then no context is short enough.
        row = case.row
        return row.weights.gpu_bytes_full_offload + row.buffer * row.request.setup.count <= row.usable_bytes

    def propose(self, case: CardCase) -> Remedy | None:
        row = case.row
        request, catalog = row.request, row.catalog
        model, weights, cards = request.model, row.weights, request.setup.count
        for ctx in ladder_contexts(catalog):
            if ctx >= row.ctx:
                continue
            total = on_card_bytes(model, weights, ctx, request.kv_type, catalog, cards)
            if fits(total, row.usable_bytes, row.smooth_fraction) and packs_at(row, weights, ctx):
                depth = min(row.depth, ctx)
                lo, mid, hi = decode_range(row, decode_bytes(model, weights, depth, request.kv_type, catalog))
                return Remedy(self.kind, mid, lo, hi, round(total / GIB, 2), context=ctx)
        return None

    def applies_cpu(self, case: CpuCase) -> bool:
        return True

    def propose_cpu(self, case: CpuCase) -> Remedy | None:
        for c in (c for c in ladder_contexts(case.pricing.catalog) if c < case.ctx):
            f = case.runs(case.request, case.quant_id, case.weights, c)
            if f is not None:
                return cpu_option(self.kind, f, context=c)
        return None

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        return swapped(remedy, at)
