"""Offloads to system RAM, for a box with RAM apart from the card(s): MoE expert offload
(`--n-cpu-moe N`: attention and shared weights stay on the GPU) and partial offload of whole layers
(`-ngl N`: N layers on the GPU, the rest stream from system RAM). Either drops below the quants when
slower than `[remedy] min_usable_tps` (catalogs/estimator.toml)."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

from core.catalog.pricing_sections import RemedyRules
from core.estimator.expert_split import first_layers_holding, moe_layer_count
from core.estimator.memory import GIB
from core.estimator.memory_fit import NoFitRow, decode_range, host_rules, packs
from core.estimator.token_bytes import expert_offload_bytes, layer_offload_bytes
from core.estimator.ways_out.base import Facts, Placed, WayOut, offload_tier
from core.estimator.ways_out.cases import CardCase
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy


def _packs(row: NoFitRow, k: int) -> bool:
    """Whether the layers left on several cards, with the experts of `k` MoE layers in RAM, go whole
    to the cards, each with its (offload-sized) buffer (layer_packing: the command's -ts is the split
    that does); one card always does when the pooled count fits."""
    first = first_layers_holding(row.weights.layer_expert_bytes, k)
    return packs(row, row.weights, row.kv_bytes, row.offload_buffer, first)


def _fewest_that_pack(row: NoFitRow, k: int, moe_layers: int) -> int:
    """The fewest MoE layers' experts in RAM, from `k` (the pooled count) on, whose split packs
    (`_packs`; more in RAM never packs worse); moe_layers + 1 when none does. Galloping then halving:
    a few checks, not one per layer, on a 5-card split that falls several layers short."""
    if k > moe_layers or _packs(row, k):
        return k
    low, step = k, 1  # low never packs; the answer is in (low, high]
    high = moe_layers + 1
    while low + step < high and not _packs(row, low + step):
        low, step = low + step, step * 2
    high = min(high, low + step)
    while high - low > 1:
        mid = (low + high) // 2
        if _packs(row, mid):
            high = mid
        else:
            low = mid
    return high


@dataclass(frozen=True, slots=True)
class ExpertOffload(WayOut):
    """The routed experts of the fewest layers that make room, in system RAM."""

    kind: ClassVar[WayOutKind] = WayOutKind.EXPERT_OFFLOAD
    facts: ClassVar[Facts] = Facts(tier=3.0, runs_here=True, has_command=True, in_ram=True)

    def applies(self, case: CardCase) -> bool:
        row = case.row
        fw = row.catalog.frameworks.get(row.rt.framework)
        if fw is not None and not fw.expert_offload:
            return False  # Ollama: whole layers only (its layer offload is the way out)
        return case.host is not None and row.request.model.is_moe and bool(row.weights.expert_bytes)

    def propose(self, case: CardCase) -> Remedy | None:
        row, host = case.row, case.host
        if host is None:
            return None
        model, weights = row.request.model, row.weights
        moe_layers = moe_layer_count(weights.layer_expert_bytes)
        per_layer = weights.expert_bytes / max(moe_layers, 1)
        # Offloaded, the run takes a larger -ub (memory_fit.offload_ubatch): its buffer grows with it.
        need = row.total + (row.offload_buffer - row.buffer) * row.request.setup.count
        k = math.ceil(max(0.0, need - row.usable_bytes) / per_layer) if per_layer else moe_layers + 1
        k = _fewest_that_pack(row, k, moe_layers)  # whole layers per card: the pooled k can fall short
        if k > moe_layers:
            return None
        share_read = (model.experts_active or 1) / (model.experts or 1)
        reads = expert_offload_bytes(weights, row.active_kv, k * per_layer * share_read)
        lo, mid, hi = decode_range(row, *reads, host_scale=host_rules(row.catalog).experts)
        # The experts would run from RAM, but the box has too little of it (Kimi K2 on 24 GB + 96 GB):
        # said as the RAM it needs and the speed with it, never proposed as a way out that runs.
        kind = self.kind if k * per_layer <= host.room else WayOutKind.HOST_SHORT
        return Remedy(
            kind,
            mid,
            lo,
            hi,
            round((need - k * per_layer) / GIB, 2),
            cpu_moe_layers=k,
            layers_total=moe_layers,
            host_gib=round(k * per_layer / GIB, 1),
        )

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        return at._replace(n_cpu_moe=remedy.cpu_moe_layers, fits=True)

    def tier(self, remedy: Remedy, rules: RemedyRules) -> float:
        return offload_tier(self.facts, remedy, rules)


@dataclass(frozen=True, slots=True)
class LayerOffload(WayOut):
    """Whole layers in system RAM: as many on the card(s) as fit next to the compute buffer."""

    kind: ClassVar[WayOutKind] = WayOutKind.OFFLOAD
    facts: ClassVar[Facts] = Facts(tier=4.0, runs_here=True, has_command=True, in_ram=True)

    def applies(self, case: CardCase) -> bool:
        return case.host is not None

    def propose(self, case: CardCase) -> Remedy | None:
        row, host = case.row, case.host
        if host is None:
            return None
        model, plan = row.request.model, host.plan
        # All layers "fitting" here means only the output head or buffers overflow: not an offload.
        if not (0 < plan.layers_on_gpu < model.layers and 0 < plan.host_bytes):
            return None
        kind = self.kind if plan.host_bytes <= host.room else _short_of_ram(row)
        if kind is None:
            return None
        reads = layer_offload_bytes(row.weights, row.active_kv, plan.layers_on_gpu / model.layers)
        lo, mid, hi = decode_range(row, *reads, host_scale=host_rules(row.catalog).layers)
        return Remedy(
            kind,
            mid,
            lo,
            hi,
            round(plan.gpu_bytes / GIB, 2),
            layers_on_gpu=plan.layers_on_gpu,
            layers_total=model.layers,
            host_gib=round(plan.host_bytes / GIB, 1),
        )

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        # `fits` stays the row's own verdict: the engine still sees a model larger than the card(s).
        return at._replace(n_gpu_layers=remedy.layers_on_gpu)

    def tier(self, remedy: Remedy, rules: RemedyRules) -> float:
        return offload_tier(self.facts, remedy, rules)


def _short_of_ram(row: NoFitRow) -> WayOutKind | None:
    """A layer offload the box has too little RAM for, said as the RAM it needs (`host_short`) where
    layers in RAM is how the engine runs a MoE that size: Ollama, which has no experts-in-RAM placement
    (DeepSeek-R1 Q4_K_M on a 4090 needs ~360 GiB of it, and people run it so at ~4 tok/s). Elsewhere
    the experts-in-RAM way out says it, and a dense model's layers in RAM crawl: no way out."""
    fw = row.catalog.frameworks.get(row.rt.framework)
    if fw is None or fw.expert_offload or not row.request.model.is_moe:
        return None
    return WayOutKind.HOST_SHORT
