"""Does it fit, and when it doesn't, what is the best way out (with its own figures).

Ways out, each priced with the same memory and speed model as a plain row:
- quantize the KV cache (q8_0, then q4_0): least quality lost, needs flash attention;
- MoE expert offload (`--n-cpu-moe N`): attention and shared weights stay on the GPU;
- partial offload (`-ngl N`): N layers on the GPU, the rest stream from system RAM;
- a lower quant that fits;
- more cards of the same kind.
Unified-memory systems have no "system RAM" to offload to: there the answer is a lower quant or,
on macOS, raising the GPU wired-memory limit.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.quant import Quant
from core.estimator import speed
from core.estimator.memory import (
    GIB,
    Usable,
    compute_buffer_bytes,
    constants,
    discrete_per_card_gib,
    kv_cache_bytes,
    kv_read_bytes,
)
from core.estimator.weights import WeightBreakdown, weight_breakdown

if TYPE_CHECKING:
    from core.estimator.estimate import EstimateRequest

MAX_CARDS = 16


def verdict(total: float, usable: float, catalog: Catalog) -> str:
    """smooth / tight / no_fit for `total` bytes against `usable` bytes."""
    if total <= usable * constants(catalog).smooth_fraction:
        return "smooth"
    if total <= usable:
        return "tight"
    return "no_fit"


@dataclass(frozen=True, slots=True)
class Remedy:
    kind: str  # kv_quant | expert_offload | offload | lower_quant | more_cards | mac_wired_limit | none
    decode_mid: float | None  # tok/s with this remedy (None when it can't run at all)
    decode_low: float | None = None
    decode_high: float | None = None
    total_gib: float | None = None
    kv_type: str = ""
    quant: str = ""
    layers_on_gpu: int = 0
    layers_total: int = 0
    cpu_moe_layers: int = 0
    cards: int = 0
    host_gib: float = 0.0  # system RAM the offloaded part needs
    alternatives: tuple[Remedy, ...] = ()


@dataclass(frozen=True, slots=True)
class LayerPlan:
    layers_on_gpu: int
    gpu_bytes: float  # weights + KV on the GPU(s)
    host_bytes: float  # weights + KV in system RAM


def _fixed_gpu_bytes(request: EstimateRequest, ctx: int, catalog: Catalog) -> float:
    fa = constants(catalog).flash_attention
    return compute_buffer_bytes(request.model, ctx, catalog, fa) * request.setup.count


def layer_plan(
    request: EstimateRequest,
    usable: Usable,
    weights: WeightBreakdown,
    ctx: int,
    catalog: Catalog,
    kv_type: str | None = None,
) -> LayerPlan:
    """How many repeating layers (weights + their KV) fit next to the compute buffer."""
    model = request.model
    kv = kv_cache_bytes(model, ctx, kv_type or request.kv_type, catalog)
    kv_per_layer = kv / model.layers
    budget = usable.total_gib * GIB - _fixed_gpu_bytes(request, ctx, catalog)
    used = 0.0
    n = 0
    for layer in weights.layer_bytes:
        cost = layer + kv_per_layer
        if used + cost > budget:
            break
        used += cost
        n += 1
    total_layers = weights.total_bytes - weights.token_embd_bytes - weights.output_bytes
    host = (total_layers - sum(weights.layer_bytes[:n])) + (model.layers - n) * kv_per_layer
    host += weights.output_bytes if n < model.layers else 0.0
    return LayerPlan(n, used, host)


def _host_room(request: EstimateRequest, catalog: Catalog) -> float:
    reserve = float(catalog.tables["estimator"]["host"]["os_reserve_gib"])
    return (request.setup.host.ram_gib - reserve) * GIB


def _decode(
    request: EstimateRequest,
    backend: str,
    quant_id: str,
    gpu_bytes: float,
    host_bytes: float,
    catalog: Catalog,
    count: int | None = None,
) -> tuple[float, float, float]:
    cal = speed.calibration(catalog)
    setup, model = request.setup, request.model
    seconds = speed.token_seconds(
        setup.gpu, backend, model.layers, gpu_bytes, host_bytes, model.is_moe, quant_id,
        cal, count or setup.count, "layer", setup.host.bandwidth_gbs,
    )  # fmt: skip
    band = speed.band_for(setup.gpu, backend, cal)
    low, high = band.low, band.high
    if host_bytes:
        # Offloaded runs vary more (CPU, RAM timings, PCIe): widen the band.
        low, high = low * 0.85, high * 1.1
    mid = 1.0 / seconds
    return round(mid * low, 1), round(mid, 1), round(mid * high, 1)


def _total(
    request: EstimateRequest,
    weights: WeightBreakdown,
    ctx: int,
    kv_type: str,
    catalog: Catalog,
    count: int | None = None,
) -> float:
    fa = constants(catalog).flash_attention
    cards = count or request.setup.count
    return (
        weights.gpu_bytes_full_offload
        + kv_cache_bytes(request.model, ctx, kv_type, catalog)
        + compute_buffer_bytes(request.model, ctx, catalog, fa) * cards
    )


def _active_kv(request: EstimateRequest, depth: int, kv_type: str, catalog: Catalog) -> float:
    return kv_read_bytes(request.model, depth, kv_type, catalog)


def _fits(total: float, usable: float, smooth_fraction: float) -> bool:
    """verdict(total, usable) != "no_fit", with the constants already looked up."""
    return total <= usable * smooth_fraction or total <= usable


def find_remedy(
    request: EstimateRequest,
    usable: Usable,
    backend: str,
    quant_id: str,
    weights: WeightBreakdown,
    ctx: int,
    depth: int,
    catalog: Catalog,
    plan: LayerPlan | None = None,
) -> Remedy:
    """`plan`: this row's `layer_plan` when the caller already has it (the estimator does)."""
    setup, model = request.setup, request.model
    usable_bytes = usable.total_gib * GIB
    options: list[Remedy] = []
    # Every way out below prices the same few totals; they are summed here once, in `_total`'s order
    # (weights + KV + buffer x cards), so each figure is the same float `_total` would give.
    const = constants(catalog)
    smooth = const.smooth_fraction
    buffer = compute_buffer_bytes(model, ctx, catalog, const.flash_attention)
    kv_bytes = kv_cache_bytes(model, ctx, request.kv_type, catalog)
    total_here = weights.gpu_bytes_full_offload + kv_bytes + buffer * setup.count
    active_kv = _active_kv(request, depth, request.kv_type, catalog)

    # 1. Quantized KV cache.
    if request.kv_type in ("f16", "bf16"):
        for kv_type in ("q8_0", "q4_0"):
            total = (
                weights.gpu_bytes_full_offload
                + kv_cache_bytes(model, ctx, kv_type, catalog)
                + buffer * setup.count
            )
            if _fits(total, usable_bytes, smooth):
                gpu_bytes = weights.active_bytes_per_token + _active_kv(request, depth, kv_type, catalog)
                lo, mid, hi = _decode(request, backend, quant_id, gpu_bytes, 0.0, catalog)
                options.append(Remedy("kv_quant", mid, lo, hi, round(total / GIB, 2), kv_type=kv_type))
                break

    if setup.gpu.unified_memory:
        if setup.gpu.vendor == "Apple":
            total = total_here
            if total <= setup.memory_gib * GIB * 0.9:
                gpu_bytes = weights.active_bytes_per_token + active_kv
                lo, mid, hi = _decode(request, backend, quant_id, gpu_bytes, 0.0, catalog)
                options.append(Remedy("mac_wired_limit", mid, lo, hi, round(total / GIB, 2)))
    else:
        host_room = _host_room(request, catalog)
        # 2. MoE expert offload: move the routed experts of k layers to system RAM.
        if model.is_moe and weights.expert_bytes:
            moe_layers = model.layers - (model.dense_layers or 0)
            per_layer = weights.expert_bytes / max(moe_layers, 1)
            total = total_here
            k = math.ceil(max(0.0, total - usable_bytes) / per_layer) if per_layer else moe_layers + 1
            if k <= moe_layers and k * per_layer <= host_room:
                frac = (model.experts_active or 1) / (model.experts or 1)
                host_read = k * per_layer * frac
                gpu_read = weights.active_bytes_per_token - host_read + active_kv
                lo, mid, hi = _decode(request, backend, quant_id, gpu_read, host_read, catalog)
                options.append(
                    Remedy(
                        "expert_offload",
                        mid,
                        lo,
                        hi,
                        round((total - k * per_layer) / GIB, 2),
                        cpu_moe_layers=k,
                        layers_total=moe_layers,
                        host_gib=round(k * per_layer / GIB, 1),
                    )
                )
        # 3. Partial offload of whole layers.
        if plan is None:
            plan = layer_plan(request, usable, weights, ctx, catalog)
        # All layers "fitting" here means only the output head or buffers overflow: not an offload.
        if 0 < plan.layers_on_gpu < model.layers and 0 < plan.host_bytes <= host_room:
            frac_gpu = plan.layers_on_gpu / model.layers
            active_layers = weights.active_bytes_per_token - weights.output_bytes
            kv_read = active_kv
            gpu_read = active_layers * frac_gpu + kv_read * frac_gpu
            host_read = active_layers * (1 - frac_gpu) + kv_read * (1 - frac_gpu) + weights.output_bytes
            lo, mid, hi = _decode(request, backend, quant_id, gpu_read, host_read, catalog)
            options.append(
                Remedy(
                    "offload",
                    mid,
                    lo,
                    hi,
                    round(plan.gpu_bytes / GIB, 2),
                    layers_on_gpu=plan.layers_on_gpu,
                    layers_total=model.layers,
                    host_gib=round(plan.host_bytes / GIB, 1),
                )
            )

    # 4. A lower quant of the same format that fits.
    # _fits() inlined: this loop walks up to a dozen quants for every no-fit row.
    smooth_bytes = usable_bytes * smooth
    for q, w in _lower_weights(model, quant_id, catalog):
        total = w.gpu_bytes_full_offload + kv_bytes + buffer * setup.count
        if total <= smooth_bytes or total <= usable_bytes:
            gpu_bytes = w.active_bytes_per_token + active_kv
            lo, mid, hi = _decode(request, backend, q.id, gpu_bytes, 0.0, catalog)
            options.append(Remedy("lower_quant", mid, lo, hi, round(total / GIB, 2), quant=q.id))
            break

    # 5. More discrete cards of the same kind (a unified-memory system can't add any).
    if not setup.gpu.unified_memory:
        cards = _cards_that_fit(request, weights.gpu_bytes_full_offload + kv_bytes, buffer, catalog)
        if cards:
            total = weights.gpu_bytes_full_offload + kv_bytes + buffer * cards
            gpu_bytes = weights.active_bytes_per_token + active_kv
            lo, mid, hi = _decode(request, backend, quant_id, gpu_bytes, 0.0, catalog, cards)
            options.append(Remedy("more_cards", mid, lo, hi, round(total / GIB, 2), cards=cards))

    if not options:
        return Remedy("none", None)
    if len(options) == 1:
        return options[0]  # already the best, with no alternatives
    best = _best(options, catalog)
    return Remedy(*_OWN_FIELDS(best), tuple(o for o in options if o is not best))


def _cards_that_fit(request: EstimateRequest, fixed: float, buffer: float, catalog: Catalog) -> int:
    """The fewest discrete cards above the setup's count (up to MAX_CARDS) that fit `fixed` bytes
    (weights + KV) plus one compute buffer per card; 0 when even MAX_CARDS don't."""
    setup = request.setup
    const = constants(catalog)
    for cards in range(setup.count + 1, MAX_CARDS + 1):
        per_card = discrete_per_card_gib(setup.memory_gib, cards, setup.os, const)
        if _fits(fixed + buffer * cards, per_card * cards * GIB, const.smooth_fraction):
            return cards
    return 0


def _fields(remedy: Remedy) -> dict:
    return {name: getattr(remedy, name) for name in Remedy.__slots__ if name != "alternatives"}


# Every Remedy field but the last, `alternatives`, in declaration order: a remedy with other
# alternatives is `Remedy(*_OWN_FIELDS(best), alternatives)` (one C call instead of a dict of 13).
_NAMES = tuple(f.name for f in dataclasses.fields(Remedy))
assert _NAMES[-1] == "alternatives"
_OWN_FIELDS = operator.attrgetter(*_NAMES[:-1])


# A KV-cache quantization loses little quality, so it wins whenever it is at most this much slower
# than the fastest other way out.
_PREFERENCE = {
    "kv_quant": 1.0,
    "mac_wired_limit": 1.0,
    "expert_offload": 0.9,
    "lower_quant": 0.8,
    "offload": 0.8,
    "more_cards": 0.5,
}


def _preference(option: Remedy, catalog: Catalog) -> float:
    if option.kind == "lower_quant":
        # A 2-bit quant runs fast but answers noticeably worse: it must be much faster to win.
        quality = catalog.quants[option.quant].quality
        return 0.9 if quality >= 66 else 0.45 if quality >= 45 else 0.2
    return _PREFERENCE.get(option.kind, 0.5)


def _best(options: list[Remedy], catalog: Catalog) -> Remedy:
    for kind in ("kv_quant", "mac_wired_limit"):
        for o in options:
            if o.kind == kind:
                return o
    return max(options, key=lambda o: (o.decode_mid or 0.0) * _preference(o, catalog))


@cache
def _lower_quants(quant_id: str, catalog: Catalog) -> tuple[Quant, ...]:
    """Ladder quants of the same format below this one, best first (the same for every row)."""
    current = catalog.quants[quant_id]
    lower = (
        q
        for q in catalog.quants.values()
        if q.format == current.format and q.quality < current.quality and _is_ladder_quant(q.id, catalog)
    )
    return tuple(sorted(lower, key=lambda q: -q.quality))


_Lower = tuple[tuple[Quant, WeightBreakdown], ...]
_LOWER: dict[tuple[int, str, int], tuple[_Lower, Model, Catalog]] = {}


def _lower_weights(model: Model, quant_id: str, catalog: Catalog) -> _Lower:
    """`_lower_quants` with each one's weights: every no-fit row of a quant walks this same list.
    Kept per identity (see `weight_breakdown`); the entry keeps the model and catalog alive."""
    key = (id(model), quant_id, id(catalog))
    hit = _LOWER.get(key)
    if hit is not None and hit[1] is model and hit[2] is catalog:
        return hit[0]
    pairs = tuple((q, weight_breakdown(model, q, catalog)) for q in _lower_quants(quant_id, catalog))
    if len(_LOWER) >= 65536:
        _LOWER.clear()
    _LOWER[key] = (pairs, model, catalog)
    return pairs


def _is_ladder_quant(quant_id: str, catalog: Catalog) -> bool:
    return quant_id in _ladder_quants(catalog)


@cache
def _ladder_quants(catalog: Catalog) -> frozenset[str]:
    ladder = catalog.tables["estimator"]["ladder"]
    return frozenset(ladder["remedy"]) | frozenset(ladder["serving"]) | frozenset(ladder["mlx"])
