"""The best way out of a row that doesn't fit, with the others as its alternatives: every way out of
the registry that applies is priced with the same memory and speed model as a plain row (the same
split across cards too, so a way out's figure is the figure the table would show for that setup)."""

from __future__ import annotations

import dataclasses

from core.estimator.memory_fit import ForcedOffload, LayerPlan, host_room, layer_plan, no_fit_row
from core.estimator.pricing import Pricing
from core.estimator.ways_out.cases import CardCase, CpuCase, HostSide
from core.estimator.ways_out.ranking import chosen
from core.estimator.ways_out.registry import WAYS_OUT
from core.estimator.ways_out.remedy import Remedy
from core.estimator.weights import WeightBreakdown


def find_remedy(
    pricing: Pricing,
    quant_id: str,
    weights: WeightBreakdown,
    ctx: int,
    depth: int,
    plan: LayerPlan | None = None,
) -> Remedy:
    """The best way out of a row on card(s) that doesn't fit (ranked, the others as alternatives).

    `plan`: this row's `layer_plan` when the caller already has it (the estimator does); each way out
    runs on the row's own `pricing.runtime` (its split too), so it is priced the way the table prices it."""
    row = no_fit_row(pricing, quant_id, weights, ctx, depth)
    request, catalog = pricing.request, pricing.catalog
    host = None
    fw = catalog.frameworks.get(pricing.runtime.framework)
    # Unified memory has no system RAM apart from the GPU's to offload to; vLLM / SGLang (gpu_only)
    # hold the whole model on the cards, so no way out of theirs leaves layers or experts in RAM.
    if not request.setup.gpu.unified_memory and not (fw is not None and fw.gpu_only):
        if plan is None:
            plan = layer_plan(request, pricing.usable, weights, ctx, catalog)
        host = HostSide(host_room(request, catalog), plan)
    case = CardCase(row, host)
    options = [o for w in WAYS_OUT if w.applies(case) and (o := w.propose(case)) is not None]
    return chosen(options, catalog)


def cpu_remedy(
    pricing: Pricing, quant_id: str, weights: WeightBreakdown, ctx: int, forced: ForcedOffload
) -> Remedy:
    """The ways out of a CPU-only row that doesn't fit in RAM, each priced as the table prices that
    run (`forced_offload` again): a quantized KV cache, a shorter context, a lower quant, or more
    RAM (the size the run needs, at the speed it then reaches). No card to offload to or add."""
    # Each way out is a CPU-only run of its own: no cards to split over.
    layered = dataclasses.replace(pricing, runtime=dataclasses.replace(pricing.runtime, split="layer"))
    case = CpuCase(layered, quant_id, weights, ctx, forced)
    options = [o for w in WAYS_OUT if w.applies_cpu(case) and (o := w.propose_cpu(case)) is not None]
    return chosen(options, pricing.catalog)
