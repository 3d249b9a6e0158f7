"""What a way out is priced from: a no-fit row on card(s) (`CardCase`) or a CPU-only row that doesn't
fit in RAM (`CpuCase`), each built once per row and handed to every way out in the registry."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

from core.catalog.kv_cache import KvCacheType
from core.estimator.memory import GIB
from core.estimator.memory_fit import ForcedOffload, LayerPlan, NoFitRow, forced_offload
from core.estimator.pricing import Pricing
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy
from core.estimator.weights import WeightBreakdown

if TYPE_CHECKING:
    from core.estimator.estimate import EstimateRequest


class HostSide(NamedTuple):
    """A box with system RAM apart from the card(s): what an offload may put there."""

    room: float  # bytes of system RAM free for the offloaded part (the OS's share kept)
    plan: LayerPlan  # the row's layer split (how many repeating layers fit on the card(s))


class CardCase(NamedTuple):
    """A no-fit row on card(s). A NamedTuple: one is built for every no-fit row of every grid."""

    row: NoFitRow
    host: HostSide | None  # None on unified memory: no RAM apart from the GPU's to offload to


@dataclass(frozen=True, slots=True)
class CpuCase:
    """A CPU-only row that doesn't fit in RAM; each of its ways out is a CPU-only run of its own."""

    pricing: Pricing  # the row's pricing on a layer split (no cards to split over)
    quant_id: str
    weights: WeightBreakdown
    ctx: int
    forced: ForcedOffload  # the row as asked

    @property
    def request(self) -> EstimateRequest:
        return self.pricing.request

    def runs(
        self, request: EstimateRequest, quant_id: str, weights: WeightBreakdown, ctx: int
    ) -> ForcedOffload | None:
        """The CPU-only run of this setup priced as the table prices it; None when it doesn't fit."""
        depth = ctx if request.depth is None else min(request.depth, ctx)
        pricing = (
            self.pricing
            if request is self.pricing.request
            else dataclasses.replace(self.pricing, request=request)
        )
        f = forced_offload(pricing, quant_id, weights, ctx, depth)
        return f if f.status != "no_fit" else None


def cpu_option(
    kind: WayOutKind,
    forced: ForcedOffload,
    kv_type: KvCacheType | Literal[""] = "",
    context: int = 0,
    quant: str = "",
    quality_warning: bool = False,
) -> Remedy:
    """A CPU-only way out with the figures of its own run: total = the RAM it needs."""
    plan = forced.plan
    return Remedy(
        kind,
        plan.decode_mid,
        plan.decode_low,
        plan.decode_high,
        round(forced.host_bytes / GIB, 2),
        kv_type=kv_type,
        quant=quant,
        host_gib=round(forced.host_bytes / GIB, 1),
        context=context,
        quality_warning=quality_warning,
    )
