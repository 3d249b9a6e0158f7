"""A way out as a request of its own: the configuration it describes (its KV cache type, context,
quant, experts in RAM, layers on the GPU, cards) priced by the same `estimate` as any question.
The way out's own decode figure is priced on the row's runtime already (scripts/bench_ways_out.py
checks that the two agree); this gives what a way out doesn't carry: its prefill and time to first
token, for the plan of an answer that runs with one (core/estimator/serialize.py)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from core.catalog.loader import Catalog
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy

if TYPE_CHECKING:  # estimate.py imports the ways-out registry: only its types are needed here
    from core.estimator.estimate import EstimateRequest, Row


def as_request(
    request: EstimateRequest, row: Row, remedy: Remedy, catalog: Catalog
) -> EstimateRequest | None:
    """The request that runs `row` the way `remedy` says; None for a way out that isn't one
    configuration of this machine's kind (no way at all, more RAM, a raised macOS limit)."""
    one = replace(request, quants=(remedy.quant or row.quant,), contexts=(remedy.context or row.context,))
    kind = remedy.kind
    if kind == WayOutKind.KV_QUANT and remedy.kv_type:
        return replace(one, kv_type=remedy.kv_type)
    if kind == WayOutKind.EXPERT_OFFLOAD:
        return replace(one, offload="experts", cpu_moe_layers=remedy.cpu_moe_layers or None)
    if kind == WayOutKind.OFFLOAD:
        return replace(one, offload="layers", gpu_layers=remedy.layers_on_gpu)
    if kind == WayOutKind.MORE_CARDS and remedy.cards:
        from core.estimator.setup import build_setup  # setup.py imports the estimator: on use only

        setup = request.setup
        box = build_setup(setup.gpu, catalog, remedy.cards, setup.memory_gib, setup.os)
        return replace(one, setup=replace(box, host=setup.host))
    if kind in (WayOutKind.SHORTER_CTX, WayOutKind.LOWER_QUANT):
        return one
    return None


__all__ = ["as_request"]
