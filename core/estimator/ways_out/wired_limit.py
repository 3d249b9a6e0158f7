"""Apple: raise the GPU wired-memory limit (`sudo sysctl iogpu.wired_limit_mb=N`; macOS wires 2/3-3/4
of memory to the GPU by default), at this quant or, failing that, the best lower one that fits under
the raised limit (proposed as that lower quant, its command raising the limit first)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from core.catalog.pricing_sections import RemedyRules
from core.estimator.memory import GIB
from core.estimator.memory_fit import NoFitRow, decode_range
from core.estimator.token_bytes import bytes_per_token
from core.estimator.ways_out.base import Facts, Placed, WayOut, remedy_rules, swapped
from core.estimator.ways_out.cases import CardCase
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.ladder import lower_weights
from core.estimator.ways_out.remedy import Remedy


@dataclass(frozen=True, slots=True)
class MacWiredLimit(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.MAC_WIRED_LIMIT
    facts: ClassVar[Facts] = Facts(tier=1.0, has_command=True, on_card=True)

    def applies(self, case: CardCase) -> bool:
        setup = case.row.request.setup
        return setup.gpu.unified_memory and setup.gpu.vendor == "Apple"

    def propose(self, case: CardCase) -> Remedy | None:
        row = case.row
        setup = row.request.setup
        rules = remedy_rules(row.catalog)
        ceiling = rules.mac_wired_cap_gib(setup.memory_gib) * GIB
        if row.total <= ceiling:
            lo, mid, hi = decode_range(row, row.full_read)
            return Remedy(self.kind, mid, lo, hi, round(row.total / GIB, 2), wired_limit_mb=_wired_mb(row))
        buffers = row.buffer * setup.count
        for q, w in lower_weights(row.request.model, row.quant_id, row.catalog):
            total = w.gpu_bytes_full_offload + row.kv_bytes + buffers
            if total <= ceiling:
                reads = bytes_per_token(w.active_bytes_per_token, row.active_kv)
                lo, mid, hi = decode_range(row, reads, quant_id=q.id)
                # Named as the quant it is (the reply says "IQ2_XXS -> ~N tok/s"), with the limit;
                # a lower quant that fits under macOS's default share needs no limit raised (a value
                # below the default would lower it: gpt-oss-120b 4-bit on a 128 GB Mac).
                raise_to = _wired_mb(row, total) if total > row.usable_bytes else 0
                return Remedy(
                    WayOutKind.LOWER_QUANT,
                    mid,
                    lo,
                    hi,
                    round(total / GIB, 2),
                    quant=q.id,
                    wired_limit_mb=raise_to,
                    quality_warning=q.bpw < rules.low_bit_bpw,
                )
        return None

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        return swapped(remedy, at)


def _wired_mb(row: NoFitRow, total: float | None = None) -> int:
    """The `iogpu.wired_limit_mb` value for a no-fit row (`wired_mb`)."""
    need = (row.total if total is None else total) / GIB
    return wired_mb(need, row.usable_bytes / GIB, row.request.setup.memory_gib, remedy_rules(row.catalog))


def wired_mb(need_gib: float, usable_gib: float, memory_gib: float, rules: RemedyRules) -> int:
    """The `iogpu.wired_limit_mb` value: what the run needs plus headroom, in whole GiB, capped at
    the share of memory the OS can spare, and never below macOS's default share (a smaller value
    would lower the limit, not raise it)."""
    need = math.ceil(need_gib + rules.mac_wired_headroom_gib)
    cap_gib = rules.mac_wired_cap_gib(memory_gib)
    return int(max(min(need, math.floor(cap_gib)), math.ceil(usable_gib)) * 1024)


def tight_wired_mb(
    total_gib: float, usable_gib: float, memory_gib: float, rules: RemedyRules, smooth_fraction: float
) -> int:
    """A run that fits tight under macOS's default GPU share (DeepSeek-R1 Q4_K_M, 379 of 384 GiB on a
    512 GB M3 Ultra) loads, but with no room for the compute graph's growth or another app: the
    limit raised first to what makes it smooth (its need over the smooth share, plus headroom), when
    that raises it; 0 when it would not."""
    mb = wired_mb(total_gib / smooth_fraction, usable_gib, memory_gib, rules)
    return mb if mb > math.ceil(usable_gib) * 1024 else 0
