"""Does it fit, and when it doesn't, what is the best way out (with its own figures).

Ways out, each priced with the same memory and speed model as a plain row (the same split across
cards too, so a way out's figure is the figure the table would show for that setup), ranked the way
people pick them, quality first:
- quantize the KV cache (q8_0, then q4_0): least quality lost, needs flash attention;
- on macOS, raise the GPU wired-memory limit (`sudo sysctl iogpu.wired_limit_mb=N`);
- a shorter context at the same quant;
- MoE expert offload (`--n-cpu-moe N`): attention and shared weights stay on the GPU;
- partial offload (`-ngl N`): N layers on the GPU, the rest stream from system RAM;
- a lower quant of 3 bits or more that fits;
- more cards of the same kind (with the count);
- a 1-2-bit quant, last and flagged `quality_warning`: never the answer when anything else works.
An offload slower than `[remedy] min_usable_tps` (catalogs/estimator.toml) drops below the quants.
Unified-memory systems have no "system RAM" to offload to: there the answer is a lower quant or,
on macOS, raising the wired limit.
"""

from __future__ import annotations

import dataclasses
import math
import operator
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from core.catalog import cpu as cpu_spec
from core.catalog.kv_cache import FULL_PRECISION_KV, QUANTIZED_KV_CACHE_TYPES, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.pricing_sections import Band, RemedyRules
from core.catalog.quant import Quant
from core.catalog.sections import sections
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
from core.estimator.pricing import Pricing
from core.estimator.token_bytes import (
    TokenBytes,
    bytes_per_token,
    decode_bytes,
    expert_offload_bytes,
    layer_offload_bytes,
)
from core.estimator.weights import WeightBreakdown, weight_breakdown

if TYPE_CHECKING:
    from core.estimator.estimate import EstimateRequest

MAX_CARDS = 16


@dataclass(frozen=True, slots=True)
class Remedy:
    kind: str  # kv_quant | mac_wired_limit | shorter_ctx | expert_offload | offload | lower_quant
    # | more_cards | none | host_short (an offload the system RAM is too small for)
    # | more_ram (CPU only: the system RAM, `host_gib`, the run needs)
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
    host_gib: float = 0.0  # system RAM the offloaded part needs
    context: int = 0  # shorter_ctx: the longest ladder context that fits
    wired_limit_mb: int = 0  # mac_wired_limit: the value for `sudo sysctl iogpu.wired_limit_mb=`
    quality_warning: bool = False  # a 1-2-bit quant: answers noticeably worse, say so plainly
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
    kv_type: KvCacheType | None = None,
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
    reserve = sections(catalog).estimator.host.os_reserve_gib
    return (request.setup.host.ram_gib - reserve) * GIB


def _fits(total: float, usable: float, smooth_fraction: float) -> bool:
    """The verdict is not "no_fit", with the constants already looked up."""
    return total <= usable * smooth_fraction or total <= usable


class _NoFitRow(NamedTuple):
    """One row that doesn't fit, with the figures every way out is priced from, looked up once.

    A NamedTuple rather than a frozen dataclass: one is built for every no-fit row of every grid,
    and a frozen dataclass pays a setattr per field.

    The totals are summed in one order everywhere (weights + KV + buffer x cards), so a way out's
    figure is the same float whichever of them computes it.
    """

    request: EstimateRequest
    rt: speed.Runtime  # the card(s), backend, framework and split the table's row runs on: the way outs too
    quant_id: str
    weights: WeightBreakdown
    ctx: int
    depth: int
    catalog: Catalog
    usable_bytes: float
    smooth_fraction: float
    buffer: float  # compute buffer of one card
    kv_bytes: float  # KV cache at `ctx`, the request's cache type
    total: float  # what the row needs as asked
    active_kv: float  # KV one token reads at `depth`
    full_read: float  # bytes one token reads with everything on the GPU(s)
    band: Band  # the decode band for this card and backend, the same for every way out
    cpu_band: bool = False  # `band` is the CPU fit's own (a CPU-only run on a named CPU): not widened


def _no_fit_row(pricing: Pricing, quant_id: str, weights: WeightBreakdown, ctx: int, depth: int) -> _NoFitRow:
    request, catalog, rt = pricing.request, pricing.catalog, pricing.runtime
    model = request.model
    const = constants(catalog)
    buffer = compute_buffer_bytes(model, ctx, catalog, const.flash_attention)
    kv_bytes = kv_cache_bytes(model, ctx, request.kv_type, catalog)
    active_kv = kv_read_bytes(model, depth, request.kv_type, catalog)
    cpu = cpu_band(request, catalog, "decode")
    # Positional: this runs for every no-fit row, and keywords cost a third more here.
    total = weights.gpu_bytes_full_offload + kv_bytes + buffer * request.setup.count
    full_read = bytes_per_token(weights.active_bytes_per_token, active_kv)
    band = cpu or speed.band_for(request.setup.gpu, rt.backend, rt.cal)
    usable_bytes = pricing.usable.total_gib * GIB
    return _NoFitRow(
        request,
        rt,
        quant_id,
        weights,
        ctx,
        depth,
        catalog,
        usable_bytes,
        const.smooth_fraction,
        buffer,
        kv_bytes,
        total,
        active_kv,
        full_read,
        band,
        cpu is not None,
    )


def cpu_band(request: EstimateRequest, catalog: Catalog, phase: str) -> Band | None:
    """A CPU-only run on a named CPU carries the CPU fit's range (cpus.toml [efficiency.band], the
    leave-one-CPU-out spread), not the GPU tiers' (whose "unseen" tier is Vulkan's and SYCL's spread);
    None for any other run."""
    if request.offload != "cpu" or not request.setup.host.cpu:
        return None
    return sections(catalog).cpus.efficiency.band.get(phase)


def _decode(
    row: _NoFitRow,
    gpu_bytes: float,
    host_bytes: float = 0.0,
    quant_id: str | None = None,
    count: int | None = None,
    host_scale: float = 1.0,
) -> tuple[float, float, float]:
    """(low, mid, high) tok/s for a way out whose token reads `gpu_bytes` from the card(s) and
    `host_bytes` from system RAM (a `TokenBytes` spread: `_decode(row, *reads)`), layer split."""
    setup, model = row.request.setup, row.request.model
    rt = row.rt if not count else dataclasses.replace(row.rt, count=count)
    host_bandwidth = setup.host.bandwidth_gbs * host_scale
    seconds = speed.token_seconds(
        rt, model.layers, gpu_bytes, host_bytes, model.is_moe, quant_id or row.quant_id, host_bandwidth
    )
    band = row.band
    low, high = band.low, band.high
    if host_bytes and not row.cpu_band:
        # Offloaded runs vary more (CPU, RAM timings, PCIe): widen the band.
        low, high = low * 0.85, high * 1.1
    mid = 1.0 / seconds
    return round(mid * low, 1), round(mid, 1), round(mid * high, 1)


def _kv_quant(row: _NoFitRow) -> Remedy | None:
    """1. A quantized KV cache, the first of q8_0 / q4_0 that fits: least quality lost."""
    if row.request.kv_type != FULL_PRECISION_KV:
        return None
    weights, model, cards = row.weights, row.request.model, row.request.setup.count
    for kv_type in QUANTIZED_KV_CACHE_TYPES:
        total = (
            weights.gpu_bytes_full_offload
            + kv_cache_bytes(model, row.ctx, kv_type, row.catalog)
            + row.buffer * cards
        )
        if _fits(total, row.usable_bytes, row.smooth_fraction):
            lo, mid, hi = _decode(row, decode_bytes(model, weights, row.depth, kv_type, row.catalog))
            return Remedy("kv_quant", mid, lo, hi, round(total / GIB, 2), kv_type=kv_type)
    return None


def _mac_wired_limit(row: _NoFitRow) -> Remedy | None:
    """Apple: raise the GPU wired-memory limit (macOS wires 2/3-3/4 of memory to the GPU by default),
    at this quant or, failing that, the best lower one that fits under the raised limit."""
    setup = row.request.setup
    if setup.gpu.vendor != "Apple":
        return None
    rules = _rules(row.catalog)
    ceiling = setup.memory_gib * GIB * rules.mac_wired_max_fraction
    if row.total <= ceiling:
        lo, mid, hi = _decode(row, row.full_read)
        total_gib = round(row.total / GIB, 2)
        return Remedy("mac_wired_limit", mid, lo, hi, total_gib, wired_limit_mb=_wired_mb(row))
    buffers = row.buffer * setup.count
    for q, w in _lower_weights(row.request.model, row.quant_id, row.catalog):
        total = w.gpu_bytes_full_offload + row.kv_bytes + buffers
        if total <= ceiling:
            reads = bytes_per_token(w.active_bytes_per_token, row.active_kv)
            lo, mid, hi = _decode(row, reads, quant_id=q.id)
            # A lower quant that needs the limit raised: named as the quant it is (the reply says
            # "IQ2_XXS -> ~N tok/s"), its command raising the limit first.
            return Remedy(
                "lower_quant",
                mid,
                lo,
                hi,
                round(total / GIB, 2),
                quant=q.id,
                wired_limit_mb=_wired_mb(row, total),
                quality_warning=q.bpw < rules.low_bit_bpw,
            )
    return None


@cache
def _ladder_contexts(catalog: Catalog) -> tuple[int, ...]:
    return tuple(sorted(sections(catalog).estimator.ladder.contexts, reverse=True))


def _wired_mb(row: _NoFitRow, total: float | None = None) -> int:
    """The `iogpu.wired_limit_mb` value: what the run needs plus headroom, in whole GiB, capped at
    the share of memory the OS can spare."""
    setup, rules = row.request.setup, _rules(row.catalog)
    need_gib = (row.total if total is None else total) / GIB + rules.mac_wired_headroom_gib
    cap_gib = setup.memory_gib * rules.mac_wired_max_fraction
    return int(min(math.ceil(need_gib), math.floor(cap_gib)) * 1024)


def _shorter_ctx(row: _NoFitRow) -> Remedy | None:
    """The longest context of the ladder below the asked one that fits at this quant and cache."""
    request, catalog = row.request, row.catalog
    model, weights, cards = request.model, row.weights, request.setup.count
    if weights.gpu_bytes_full_offload + row.buffer * cards > row.usable_bytes:
        return None  # the weights alone overflow: no context is short enough (most no-fit rows)
    fa = constants(catalog).flash_attention
    for ctx in _ladder_contexts(catalog):
        if ctx >= row.ctx:
            continue
        total = (
            weights.gpu_bytes_full_offload
            + kv_cache_bytes(model, ctx, request.kv_type, catalog)
            + compute_buffer_bytes(model, ctx, catalog, fa) * cards
        )
        if _fits(total, row.usable_bytes, row.smooth_fraction):
            depth = min(row.depth, ctx)
            lo, mid, hi = _decode(row, decode_bytes(model, weights, depth, request.kv_type, catalog))
            return Remedy("shorter_ctx", mid, lo, hi, round(total / GIB, 2), context=ctx)
    return None


def _expert_offload(row: _NoFitRow, host_room: float) -> Remedy | None:
    """2. MoE expert offload: the routed experts of the fewest layers that make room, in system RAM."""
    model, weights = row.request.model, row.weights
    if not (model.is_moe and weights.expert_bytes):
        return None
    moe_layers = model.layers - (model.dense_layers or 0)
    per_layer = weights.expert_bytes / max(moe_layers, 1)
    k = math.ceil(max(0.0, row.total - row.usable_bytes) / per_layer) if per_layer else moe_layers + 1
    if k > moe_layers or k * per_layer > host_room:
        return None
    share_read = (model.experts_active or 1) / (model.experts or 1)
    reads = expert_offload_bytes(weights, row.active_kv, k * per_layer * share_read)
    lo, mid, hi = _decode(row, *reads, host_scale=_host_rules(row.catalog).experts)
    return Remedy(
        "expert_offload",
        mid,
        lo,
        hi,
        round((row.total - k * per_layer) / GIB, 2),
        cpu_moe_layers=k,
        layers_total=moe_layers,
        host_gib=round(k * per_layer / GIB, 1),
    )


def _layer_offload(row: _NoFitRow, plan: LayerPlan, host_room: float) -> Remedy | None:
    """3. Partial offload of whole layers (`-ngl N`)."""
    model = row.request.model
    # All layers "fitting" here means only the output head or buffers overflow: not an offload.
    if not (0 < plan.layers_on_gpu < model.layers and 0 < plan.host_bytes <= host_room):
        return None
    reads = layer_offload_bytes(row.weights, row.active_kv, plan.layers_on_gpu / model.layers)
    lo, mid, hi = _decode(row, *reads, host_scale=_host_rules(row.catalog).layers)
    return Remedy(
        "offload",
        mid,
        lo,
        hi,
        round(plan.gpu_bytes / GIB, 2),
        layers_on_gpu=plan.layers_on_gpu,
        layers_total=model.layers,
        host_gib=round(plan.host_bytes / GIB, 1),
    )


def _lower_quant(row: _NoFitRow) -> Remedy | None:
    """4. The best lower quant of the same format that fits (none for a release quantized natively in
    a GGUF type, gpt-oss MXFP4: its own format is the only one published)."""
    native = row.catalog.quants.get(row.request.model.native_quant or "")
    if native is not None and native.format == "gguf":
        return None
    # _fits() inlined: this loop walks up to a dozen quants for every no-fit row.
    usable_bytes, kv_bytes = row.usable_bytes, row.kv_bytes
    smooth_bytes = usable_bytes * row.smooth_fraction
    buffers = row.buffer * row.request.setup.count
    for q, w in _lower_weights(row.request.model, row.quant_id, row.catalog):
        total = w.gpu_bytes_full_offload + kv_bytes + buffers
        if total <= smooth_bytes or total <= usable_bytes:
            lo, mid, hi = _decode(
                row, bytes_per_token(w.active_bytes_per_token, row.active_kv), quant_id=q.id
            )
            low_bit = q.bpw < _rules(row.catalog).low_bit_bpw
            return Remedy(
                "lower_quant", mid, lo, hi, round(total / GIB, 2), quant=q.id, quality_warning=low_bit
            )
    return None


def _more_cards(row: _NoFitRow) -> Remedy | None:
    """5. More discrete cards of the same kind."""
    weights_and_kv = row.weights.gpu_bytes_full_offload + row.kv_bytes
    cards = _cards_that_fit(row.request, weights_and_kv, row.buffer, row.catalog)
    if not cards:
        return None
    total = weights_and_kv + row.buffer * cards
    lo, mid, hi = _decode(row, row.full_read, count=cards)
    return Remedy("more_cards", mid, lo, hi, round(total / GIB, 2), cards=cards)


class _HostRules(NamedTuple):
    """[host] in catalogs/estimator.toml: how the host side of an offloaded run is priced."""

    experts: float  # multiplier on the host bandwidth the speed model reaches, MoE expert offload
    layers: float  # the same for whole layers (-ngl N)
    cpu: float  # the same with no GPU layers at all
    pcie_gbs: float  # what a prefill ubatch streams the RAM-resident weights to the GPU at
    cpu_prefill_gflops: float  # a CPU-only prefill's matrix rate
    offload_ubatch: int  # tokens per ubatch an offloaded prefill streams the RAM weights for
    kt_chunk: int  # KTransformers' layerwise prefill: tokens per pass over the CPU-held experts
    kt_hybrid_max: int  # ... and the prompt length up to which the CPU computes the experts instead


@cache
def _host_rules(catalog: Catalog) -> _HostRules:
    # Flattened once: the offload pricing reads these for every offloaded row.
    host = sections(catalog).estimator.host
    scale, kt = host.offload_scale, host.ktransformers
    return _HostRules(
        scale.experts,
        scale.layers,
        scale.cpu,
        host.pcie_gbs,
        host.cpu_prefill_gflops,
        host.offload_ubatch,
        kt.prefill_chunk,
        kt.hybrid_max_tokens,
    )


class ForcedOffload(NamedTuple):
    """A row run the way the user said (`EstimateRequest.offload`): what sits where and its speed."""

    status: Literal["smooth", "tight", "no_fit"]  # no_fit: the GPU part or the RAM part does not fit
    plan: Remedy  # the setup with its figures (kind expert_offload | offload | cpu)
    gpu_bytes: float  # weights + KV + buffers on the GPU(s)
    weights_gpu: float
    kv_gpu: float
    prefill_seconds: float
    host_bytes: float = 0.0  # weights + KV (+ buffer, CPU only) in system RAM


def cpu_remedy(
    pricing: Pricing, quant_id: str, weights: WeightBreakdown, ctx: int, forced: ForcedOffload
) -> Remedy:
    """The ways out of a CPU-only row that doesn't fit in RAM, each priced as the table prices that
    run (`forced_offload` again): a quantized KV cache, a shorter context, a lower quant, or more
    RAM (the size the run needs, at the speed it then reaches). No card to offload to or add."""
    options: list[Remedy] = []
    request, catalog = pricing.request, pricing.catalog
    # Each way out is a CPU-only run of its own: no cards to split over.
    layered = dataclasses.replace(pricing, runtime=dataclasses.replace(pricing.runtime, split="layer"))

    def runs(req: EstimateRequest, q: str, w: WeightBreakdown, c: int) -> ForcedOffload | None:
        depth = c if req.depth is None else min(req.depth, c)
        case = layered if req is request else dataclasses.replace(layered, request=req)
        f = forced_offload(case, q, w, c, depth)
        return f if f.status != "no_fit" else None

    if request.kv_type == FULL_PRECISION_KV:
        for kv_type in QUANTIZED_KV_CACHE_TYPES:
            f = runs(dataclasses.replace(request, kv_type=kv_type), quant_id, weights, ctx)
            if f is not None:
                options.append(_cpu_option("kv_quant", f, kv_type=kv_type))
                break
    for c in (c for c in _ladder_contexts(catalog) if c < ctx):
        f = runs(request, quant_id, weights, c)
        if f is not None:
            options.append(_cpu_option("shorter_ctx", f, context=c))
            break
    native = catalog.quants.get(request.model.native_quant or "")
    if native is None or native.format != "gguf":
        for q, w in _lower_weights(request.model, quant_id, catalog):
            f = runs(request, q.id, w, ctx)
            if f is not None:
                low_bit = q.bpw < _rules(catalog).low_bit_bpw
                options.append(_cpu_option("lower_quant", f, quant=q.id, quality_warning=low_bit))
                break
    reserve = sections(catalog).estimator.host.os_reserve_gib
    need = math.ceil(forced.host_bytes / GIB + reserve)  # what the box must have, the OS's share too
    options.append(dataclasses.replace(_cpu_option("more_ram", forced), host_gib=float(need)))
    return _chosen(options, catalog)


def _cpu_option(
    kind: str,
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


def forced_offload(
    pricing: Pricing, quant_id: str, weights: WeightBreakdown, ctx: int, depth: int
) -> ForcedOffload:
    """Price the row with the offload the request names; decode reads each part at its memory's
    bandwidth (token_bytes), prefill streams the RAM-resident weights to the GPU once per ubatch
    (llama.cpp offloads large-batch matmuls) or, CPU only, runs at the CPU's matrix rate."""
    row = _no_fit_row(pricing, quant_id, weights, ctx, depth)
    request, usable, catalog = pricing.request, pricing.usable, pricing.catalog
    model, rules = request.model, _host_rules(catalog)
    mode = request.offload
    moe_layers = model.layers - (model.dense_layers or 0)
    if mode == "experts" and model.is_moe and weights.expert_bytes:
        asked = request.cpu_moe_layers
        k = moe_layers if asked is None or asked < 0 else min(asked, moe_layers)
        host_w = weights.expert_bytes / max(moe_layers, 1) * k
        share_read = (model.experts_active or 1) / (model.experts or 1)
        reads = expert_offload_bytes(weights, row.active_kv, host_w * share_read)
        weights_gpu, kv_gpu, host = weights.gpu_bytes_full_offload - host_w, row.kv_bytes, host_w
        scale, kind = rules.experts, "expert_offload"
        extra = {"cpu_moe_layers": k, "layers_total": moe_layers}
    elif mode == "cpu":
        reads = TokenBytes(0.0, row.full_read)
        # Everything sits in RAM, the compute buffer too (the CPU backend allocates it there).
        weights_gpu, kv_gpu, host = 0.0, 0.0, weights.total_bytes + row.kv_bytes + row.buffer
        scale, kind, extra = rules.cpu * _cpu_decode_scale(row), "cpu", {"layers_total": model.layers}
    else:
        n = request.gpu_layers
        if n is None:
            n = layer_plan(request, usable, weights, ctx, catalog).layers_on_gpu
        n = max(0, min(n, model.layers))
        share = n / model.layers
        reads = layer_offload_bytes(weights, row.active_kv, share)
        weights_gpu = float(sum(weights.layer_bytes[:n])) + (
            weights.output_bytes if n == model.layers else 0.0
        )
        kv_gpu = row.kv_bytes * share
        host = weights.total_bytes - weights.token_embd_bytes - weights_gpu + row.kv_bytes - kv_gpu
        scale, kind, extra = rules.layers, "offload", {"layers_on_gpu": n, "layers_total": model.layers}
    buffers = row.buffer * request.setup.count if weights_gpu or kv_gpu else 0.0
    gpu_total = weights_gpu + kv_gpu + buffers
    host_room = _host_room(request, catalog)
    status = _forced_status(gpu_total, host, row, host_room, check_gpu=mode != "cpu")
    if host > host_room:
        # The box has too little RAM for what this run keeps there: said as that, with the speed it
        # would reach with enough, never offered as a way out that runs.
        kind = "host_short"
    lo, mid, hi = _decode(row, *reads, host_scale=scale)
    plan = Remedy(
        kind,
        mid,
        lo,
        hi,
        round(gpu_total / GIB, 2),
        host_gib=round(host / GIB, 1),
        cpu_moe_layers=extra.get("cpu_moe_layers", 0),
        layers_on_gpu=extra.get("layers_on_gpu", 0),
        layers_total=extra["layers_total"],
    )
    prefill = _forced_prefill(row, mode, host - (row.kv_bytes - kv_gpu), rules)
    return ForcedOffload(status, plan, gpu_total, weights_gpu, kv_gpu, prefill, host)


def _forced_status(
    gpu_total: float, host: float, row: _NoFitRow, host_room: float, check_gpu: bool = True
) -> Literal["smooth", "tight", "no_fit"]:
    if (check_gpu and gpu_total > row.usable_bytes) or host > host_room:
        return "no_fit"
    if not check_gpu:
        return "smooth" if host <= host_room * row.smooth_fraction else "tight"
    return "smooth" if gpu_total <= row.usable_bytes * row.smooth_fraction else "tight"


def _forced_prefill(row: _NoFitRow, mode: str, host_weights: float, rules: _HostRules) -> float:
    request = row.request
    model, prompt = request.model, request.prompt
    if mode == "cpu":
        return _cpu_prefill_seconds(row, prompt, rules)
    gpu_seconds = speed.prefill_seconds(row.rt, model, row.quant_id, prompt, row.depth)
    if row.rt.framework == "ktransformers" and mode == "experts":
        return gpu_seconds + _kt_expert_prefill(row, prompt, max(host_weights, 0.0), rules)
    ubatches = math.ceil(prompt / rules.offload_ubatch)
    return gpu_seconds + ubatches * max(host_weights, 0.0) / (rules.pcie_gbs * 1e9)


def _kt_expert_prefill(row: _NoFitRow, prompt: int, host_weights: float, rules: _HostRules) -> float:
    """Seconds KTransformers adds for the CPU-held experts: a long prompt streams them to the GPU
    once per chunk (layerwise prefill, bound by PCIe); a short one has the CPU compute the experts
    each token routes to (hybrid prefill, bound by the CPU's matrix rate)."""
    if prompt > rules.kt_hybrid_max:
        return math.ceil(prompt / rules.kt_chunk) * host_weights / (rules.pcie_gbs * 1e9)
    model = row.request.model
    bytes_per_weight = row.catalog.quants[row.quant_id].bpw / 8
    routed = host_weights * (model.experts_active or 1) / (model.experts or 1) / bytes_per_weight
    return 2.0 * routed * prompt / (_cpu_gflops(row, rules) * 1e9)


def _cpu_prefill_seconds(row: _NoFitRow, prompt: int, rules: _HostRules) -> float:
    """A CPU-only prefill: the matmuls over the active weights at the CPU's matrix rate; on a named
    CPU attention at depth too, at the fitted share of that rate CPU attention kernels reach
    (cpus.toml [efficiency.prefill] attention: llama.cpp's CPU pp falls ~5x from d0 to d24K)."""
    model = row.request.model
    rate = _cpu_gflops(row, rules) * 1e9
    if _named_cpu(row) is None:
        return 2.0 * model.active_params_b * 1e9 * prompt / rate
    linear, attention = speed.prefill_flops_split(model, prompt, row.depth)
    shares = sections(row.catalog).cpus.efficiency.prefill
    return linear / rate + attention / (rate * shares.get("attention", 1.0))


def _named_cpu(row: _NoFitRow) -> cpu_spec.Cpu | None:
    return row.catalog.cpus.get(row.request.setup.host.cpu) if row.request.setup.host.cpu else None


def _cpu_gflops(row: _NoFitRow, rules: _HostRules) -> float:
    """The CPU's matrix rate: the named CPU's (cpus.toml, its SIMD class's fitted share of its vector
    peak), else the one [host] cpu_prefill_gflops every unnamed CPU gets."""
    cpu = _named_cpu(row)
    if cpu is None:
        return rules.cpu_prefill_gflops
    s = sections(row.catalog)
    shares, gain = s.cpus.efficiency.prefill, s.hosts.numa.extra_socket_gain
    return cpu_spec.prefill_gflops(cpu, row.request.setup.host.sockets, shares, gain)


def _cpu_decode_scale(row: _NoFitRow) -> float:
    """A CPU-only decode on a named CPU reaches the fitted share of its segment and memory kind
    (cpus.toml [efficiency.decode]); 1.0 (today's figure) when no CPU is named."""
    cpu = _named_cpu(row)
    if cpu is None:
        return 1.0
    scales = sections(row.catalog).cpus.efficiency.decode
    return cpu_spec.decode_scale(cpu, row.request.setup.host.ram_type, scales)


def find_remedy(
    pricing: Pricing,
    quant_id: str,
    weights: WeightBreakdown,
    ctx: int,
    depth: int,
    plan: LayerPlan | None = None,
) -> Remedy:
    """The best way out of a row that doesn't fit, with the others as its alternatives (ranked).

    `plan`: this row's `layer_plan` when the caller already has it (the estimator does); each way out
    runs on the row's own `pricing.runtime` (its split too), so it is priced the way the table prices it."""
    row = _no_fit_row(pricing, quant_id, weights, ctx, depth)
    request, usable, catalog = pricing.request, pricing.usable, pricing.catalog
    options = [_kv_quant(row)]
    if request.setup.gpu.unified_memory:
        # No system RAM apart from the GPU's to offload to, and no card to add.
        options += (_mac_wired_limit(row), _shorter_ctx(row), _lower_quant(row))
    else:
        host_room = _host_room(request, catalog)
        if plan is None:
            plan = layer_plan(request, usable, weights, ctx, catalog)
        options += (_shorter_ctx(row), _expert_offload(row, host_room), _layer_offload(row, plan, host_room))
        options += (_lower_quant(row), _more_cards(row))
    return _chosen([o for o in options if o is not None], catalog)


def _chosen(options: list[Remedy], catalog: Catalog) -> Remedy:
    if not options:
        return Remedy("none", None)
    if len(options) == 1:
        return options[0]  # already the best, with no alternatives
    best, *rest = _ranked(options, catalog)
    others = tuple(rest)
    # mypy can't count the fields a star-args tuple fills, so it sees `alternatives` given twice.
    return Remedy(*_OWN_FIELDS(best), alternatives=others)  # type: ignore[misc]


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


# Every Remedy field but the last, `alternatives`, in declaration order: a remedy with other
# alternatives is `Remedy(*_OWN_FIELDS(best), alternatives)` (one C call instead of a dict of 13).
_NAMES = tuple(f.name for f in dataclasses.fields(Remedy))
assert _NAMES[-1] == "alternatives"
_OWN_FIELDS = operator.attrgetter(*_NAMES[:-1])


# Ways out that run wholly on the card(s): a calibration of the card's speed moves them as it moves
# the table; an offload also reads system RAM, which a card's anchors say nothing about.
ON_CARD_KINDS = frozenset({"kv_quant", "mac_wired_limit", "shorter_ctx", "lower_quant", "more_cards"})


def scaled_remedy(remedy: Remedy, factor_for: Callable[[str], float]) -> Remedy:
    """The way out (and its alternatives) with each on-card figure times `factor_for(its quant)`
    ("" = the row's own quant), rounded as the table rounds."""

    def one(r: Remedy) -> Remedy:
        if r.kind not in ON_CARD_KINDS or r.decode_mid is None:
            return r
        f = factor_for(r.quant)
        return dataclasses.replace(
            r,
            decode_mid=round(r.decode_mid * f, 1),
            decode_low=None if r.decode_low is None else round(r.decode_low * f, 1),
            decode_high=None if r.decode_high is None else round(r.decode_high * f, 1),
        )

    return dataclasses.replace(one(remedy), alternatives=tuple(one(a) for a in remedy.alternatives))


@cache
def _rules(catalog: Catalog) -> RemedyRules:
    """[remedy] in catalogs/estimator.toml (kept per catalog: every way out reads it)."""
    return sections(catalog).estimator.remedy


# What people pick first, quality first: the order of the module docstring. A way out that changes
# nothing the user cares about (a q8_0 cache) beats any speed; more cards cost money; a 1-2-bit quant
# answers worse, so it only comes after everything else.
_TIER = {
    "kv_quant": 0.0,
    "mac_wired_limit": 1.0,
    "shorter_ctx": 2.0,
    "expert_offload": 3.0,
    "offload": 4.0,
    "lower_quant": 5.0,
    "more_cards": 6.0,
    "more_ram": 6.0,  # CPU only: buying RAM, like buying cards, after every way out on this box
}
_LOW_BIT_TIER = 7.0
_SLOW_OFFLOAD_TIER = 5.5  # after a >= 3-bit quant that fits, before buying cards


def _tier(option: Remedy, rules: RemedyRules) -> float:
    if option.quality_warning:
        return _LOW_BIT_TIER
    tier = _TIER.get(option.kind, _LOW_BIT_TIER)
    if option.kind == "lower_quant" and option.wired_limit_mb:
        tier = 5.2  # a lower quant that also needs the limit raised: after one that doesn't
    if option.kind in ("expert_offload", "offload") and (option.decode_mid or 0.0) < rules.min_usable_tps:
        tier = _SLOW_OFFLOAD_TIER
    return tier


def _ranked(options: list[Remedy], catalog: Catalog) -> list[Remedy]:
    """Best first: by tier, then (1-2-bit quants) the better quant, then the faster option."""
    rules = _rules(catalog)

    def key(o: Remedy) -> tuple[float, int, float]:
        quality = catalog.quants[o.quant].quality if o.quality_warning and o.quant in catalog.quants else 0
        return (_tier(o, rules), -quality, -(o.decode_mid or 0.0))

    return sorted(options, key=key)


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
    ladder = sections(catalog).estimator.ladder
    return frozenset(ladder.remedy) | frozenset(ladder.serving) | frozenset(ladder.mlx)
