"""Does it fit: the memory arithmetic a row that doesn't fit is priced from, and the offload the user
asked for priced as asked (`forced_offload`).

- `layer_plan`: how many repeating layers (weights + their KV) fit on the card(s);
- `NoFitRow` / `no_fit_row`: one no-fit row's figures, looked up once for every way out;
- `decode_range`: the (low, mid, high) tok/s of a setup whose token reads part from the card(s) and
  part from system RAM, on the row's own runtime and band;
- `forced_offload`: `--offload experts | layers | cpu` as asked, with what sits where and its speed.

The ways out themselves (a quantized KV cache, a shorter context, an offload, a lower quant, more
cards, ...) are one class each in `core.estimator.ways_out`, ranked there.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal, NamedTuple

from core.catalog import cpu as cpu_spec
from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.pricing_sections import Band
from core.catalog.sections import sections
from core.estimator import multi_gpu, speed
from core.estimator.band import band_for
from core.estimator.expert_split import first_layers_holding, moe_layer_count, moe_layers_within
from core.estimator.layer_packing import card_usable, layer_fits, layer_status, worse
from core.estimator.memory import (
    GIB,
    Usable,
    compute_buffer_bytes,
    constants,
    engine_of,
    kv_cache_bytes,
    kv_read_bytes,
    serving_share,
)
from core.estimator.pricing import Pricing
from core.estimator.token_bytes import TokenBytes, bytes_per_token, expert_offload_bytes, layer_offload_bytes
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy
from core.estimator.weights import WeightBreakdown

if TYPE_CHECKING:
    from core.estimator.estimate import EstimateRequest


@dataclass(frozen=True, slots=True)
class LayerPlan:
    layers_on_gpu: int
    gpu_bytes: float  # weights + KV on the GPU(s)
    host_bytes: float  # weights + KV in system RAM


def offload_ubatch(request: EstimateRequest, ctx: int, usable_bytes: float, catalog: Catalog) -> int:
    """The -ub of a run with weights in RAM: the user's; else the larger one its command sets
    (estimator.toml [host] offload_ubatch: each ubatch copies the RAM-held weights to the GPU once, so
    4x the tokens per copy), where its larger compute buffer costs at most `offload_ubatch_share` of
    the card(s): on an 8 GB card next to a 235B MoE that room holds the attention weights instead."""
    if request.ubatch:
        return request.ubatch
    host, const = sections(catalog).estimator.host, constants(catalog)
    fa, count = const.flash_attention, request.setup.count
    big = compute_buffer_bytes(request.model, ctx, catalog, fa, host.offload_ubatch)
    extra = (big - compute_buffer_bytes(request.model, ctx, catalog, fa)) * count
    return host.offload_ubatch if extra <= host.offload_ubatch_share * usable_bytes else const.ubatch


def _fixed_gpu_bytes(request: EstimateRequest, usable: Usable, ctx: int, catalog: Catalog) -> float:
    fa = constants(catalog).flash_attention
    ub = offload_ubatch(request, ctx, usable.total_gib * GIB, catalog)
    return compute_buffer_bytes(request.model, ctx, catalog, fa, ub) * request.setup.count


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
    budget = usable.total_gib * GIB - _fixed_gpu_bytes(request, usable, ctx, catalog)
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


def host_room(request: EstimateRequest, catalog: Catalog) -> float:
    reserve = sections(catalog).estimator.host.os_reserve_gib
    return (request.setup.host.ram_gib - reserve) * GIB


def fits(total: float, usable: float, smooth_fraction: float) -> bool:
    """The verdict is not "no_fit", with the constants already looked up."""
    return total <= usable * smooth_fraction or total <= usable


class NoFitRow(NamedTuple):
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
    # compute buffer of one card when weights sit in RAM: its command's larger -ub (offload_ubatch)
    offload_buffer: float = 0.0
    offload_ub: int = 512  # that -ub (offload_ubatch), the one its prefill is priced with
    # A llama.cpp-family layer split: whole layers per card (layer_packing), so a way out must pack
    # them as well as fit their sum. `layer_split`: the engine splits by layers on several cards (a
    # way out adding cards packs too); `card_usable`: each of the row's cards' usable bytes, () on one.
    layer_split: bool = False
    card_usable: tuple[float, ...] = ()


def no_fit_row(pricing: Pricing, quant_id: str, weights: WeightBreakdown, ctx: int, depth: int) -> NoFitRow:
    request, catalog, rt = pricing.request, pricing.catalog, pricing.runtime
    model = request.model
    const = constants(catalog)
    # The on-GPU ways out (a quantized cache, a shorter context, a lower quant) run the default ubatch;
    # offloaded placements size their buffer with offload_ubatch (`offload_buffer`).
    buffer = compute_buffer_bytes(model, ctx, catalog, const.flash_attention, request.ubatch or 0)
    kv_bytes = kv_cache_bytes(model, ctx, request.kv_type, catalog)
    active_kv = kv_read_bytes(model, depth, request.kv_type, catalog)
    cpu = cpu_band(request, catalog, "decode")
    # Positional: this runs for every no-fit row, and keywords cost a third more here.
    total = weights.gpu_bytes_full_offload + kv_bytes + buffer * request.setup.count
    full_read = bytes_per_token(weights.active_bytes_per_token, active_kv)
    band = cpu or band_for(
        request.setup.gpu,
        rt.backend,
        rt.cal,
        framework=rt.framework,
        moe=model.is_moe,
        count=request.setup.count,
    )
    usable_bytes = _engine_room(pricing, buffer)
    offload_ub = offload_ubatch(request, ctx, usable_bytes, catalog)
    split, card_bytes = _split_cards(pricing, usable_bytes)
    return NoFitRow(
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
        compute_buffer_bytes(model, ctx, catalog, const.flash_attention, offload_ub),
        offload_ub,
        split,
        card_bytes,
    )


def _split_cards(pricing: Pricing, usable_bytes: float) -> tuple[bool, tuple[float, ...]]:
    """(`whole_layers`, each card's usable bytes when several cards split so) of a no-fit row; every
    no-fit row of one estimate shares its pricing and room, so the last answer is kept."""
    last = _SPLIT_CARDS.get("last")
    if last is not None and last[0] is pricing and last[1] == usable_bytes:
        return last[2]
    split, count = whole_layers(pricing), pricing.request.setup.count
    found = (split, split_usable(pricing.request, usable_bytes, count) if split and count > 1 else ())
    _SPLIT_CARDS["last"] = (pricing, usable_bytes, found)
    return found


_SPLIT_CARDS: dict[str, tuple[Pricing, float, tuple[bool, tuple[float, ...]]]] = {}


def whole_layers(pricing: Pricing) -> bool:
    """Whether the row's engine places whole layers per card: the llama.cpp family (llama.cpp,
    ik_llama.cpp, Ollama, LM Studio) on a layer split, its default on several cards
    (split_modes.toml); on one card, whether more of them would be split so."""
    fw = pricing.catalog.frameworks.get(pricing.runtime.framework)
    if fw is None or fw.engine != "llama.cpp":
        return False
    if pricing.request.setup.count > 1:
        return pricing.runtime.split == "layer"
    return pricing.request.split_mode in (None, "layer")


def split_usable(request: EstimateRequest, usable_bytes: float, cards: int) -> tuple[float, ...]:
    """Each card's usable bytes in llama.cpp's order: mixed cards' own memory each, else equal shares."""
    mix = request.setup.mix
    return card_usable(tuple(memory for _, memory in mix) if len(mix) == cards else (), usable_bytes, cards)


def packs(
    row: NoFitRow,
    weights: WeightBreakdown,
    kv_bytes: float,
    buffer: float,
    n_cpu_moe: int = 0,
    usable: tuple[float, ...] | None = None,
) -> bool:
    """Whether a layer split holds these weights (the routed experts of the first `n_cpu_moe` layers
    in RAM) and KV whole layers per card, `buffer` on every card: what a way out checks beside the
    pooled sum (`fits`). True on one card or an engine that splits each layer over the cards.
    `usable`: the cards' usable bytes where a way out changes them (more cards), else the row's."""
    cards = row.card_usable if usable is None else usable
    if not cards:
        return True
    return layer_fits(weights, kv_bytes, cards, buffer, n_cpu_moe)


def packs_at(row: NoFitRow, weights: WeightBreakdown, ctx: int) -> bool:
    """`packs` at another context (a shorter-context or smaller-file way out), the KV cache and the
    default-ubatch buffer priced there as `ladder.on_card_bytes` prices them."""
    if not row.card_usable:
        return True
    request, catalog = row.request, row.catalog
    kv = kv_cache_bytes(request.model, ctx, request.kv_type, catalog)
    buffer = compute_buffer_bytes(request.model, ctx, catalog, constants(catalog).flash_attention)
    return packs(row, weights, kv, buffer)


def _engine_room(pricing: Pricing, buffer: float) -> float:
    """The bytes a way out may fill with weights + KV + `buffer` per card: what the row's verdict was
    judged against (estimate.py `_fixed`), so a way out never fits what the row's engine can't load.
    vLLM / SGLang take their share of each card (`--gpu-memory-utilization 0.92`: 8x H100 hold 589 of
    640 GiB, not DeepSeek-R1 FP8's 627), and vLLM keeps activations + CUDA graphs (+ NCCL across
    cards) besides; the ways out add a llama.cpp compute buffer per card, counted against that."""
    request, catalog = pricing.request, pricing.catalog
    usable = pricing.usable.total_gib * GIB
    engine = engine_of(pricing.runtime.framework, catalog)
    room = engine_card_room(engine, request, request.setup.count, buffer, catalog)
    return usable if room is None else min(usable, room * request.setup.count)


def engine_card_room(
    engine: str, request: EstimateRequest, cards: int, buffer: float, catalog: Catalog
) -> float | None:
    """Bytes of each of `cards` cards a vLLM / SGLang way out may fill with its share of weights + KV
    + `buffer` (`_engine_room`'s rule, per card, at any count: more cards are judged as the row was);
    None for an engine that fills what the card has free (llama.cpp and the rest)."""
    share = serving_share(engine, request.gpu_memory_utilization, catalog)
    if share is None:
        return None
    setup = request.setup
    room = setup.memory_gib * share * GIB
    if engine != "vllm":
        return room
    const, rules = constants(catalog), sections(catalog).estimator.vllm
    per_card = const.vllm_activation_gib[0] + const.vllm_cuda_graph_gib
    if cards > 1:
        pcie = setup.gpu.segment in rules.pcie_segments
        per_card += rules.nccl_pcie_per_gpu_gib if pcie else rules.nccl_per_gpu_gib
    return room - max(per_card * GIB - buffer, 0.0)


def cpu_band(request: EstimateRequest, catalog: Catalog, phase: str) -> Band | None:
    """A CPU-only run on a named CPU carries the CPU fit's range (cpus.toml [efficiency.band], the
    leave-one-CPU-out spread), not the GPU tiers' (whose "unseen" tier is Vulkan's and SYCL's spread);
    None for any other run."""
    if request.offload != "cpu" or not request.setup.host.cpu:
        return None
    return sections(catalog).cpus.efficiency.band.get(phase)


def decode_range(
    row: NoFitRow,
    gpu_bytes: float,
    host_bytes: float = 0.0,
    quant_id: str | None = None,
    count: int | None = None,
    host_scale: float = 1.0,
) -> tuple[float, float, float]:
    """(low, mid, high) tok/s for a way out whose token reads `gpu_bytes` from the card(s) and
    `host_bytes` from system RAM (a `TokenBytes` spread: `decode_range(row, *reads)`), layer split."""
    setup, model = row.request.setup, row.request.model
    rt = row.rt if not count else _on_cards(row, count)
    host_bandwidth = setup.host.bandwidth_gbs * host_scale * numa_scale(row)
    seconds = speed.token_seconds(
        rt, model.layers, gpu_bytes, host_bytes, model.is_moe, quant_id or row.quant_id, host_bandwidth
    )
    band = row.band
    low, high = band.low, band.high
    if host_bytes and not row.cpu_band:
        # Offloaded runs vary more (CPU, RAM timings, PCIe): the offloaded rows' own spread, never
        # narrower than the card's band widened (estimator.toml [host] offload_band_*).
        host = sections(row.catalog).estimator.host
        low, high = min(low * 0.85, host.offload_band_low), max(high * 1.1, host.offload_band_high)
    mid = 1.0 / seconds
    # Capped at the card's bandwidth roofline only when every byte comes from the card: the host's
    # RAM speed is often assumed (a preset), and measured CPU / offload runs top a guessed roofline.
    peak = speed.peak_tps(rt, gpu_bytes) if not host_bytes else float("inf")
    return round(mid * low, 1), round(mid, 1), round(min(mid * high, max(peak, mid)), 1)


def _on_cards(row: NoFitRow, count: int) -> speed.Runtime:
    """The row's runtime on `count` cards of its kind: split and link as a request for that many
    cards gets them (vLLM splits 2+ cards by tensor; several SXM cards reduce over NVLink)."""
    rt, request = row.rt, row.request
    fw = row.catalog.frameworks.get(rt.framework)
    engine = fw.engine if fw else rt.framework
    asked, kv_quantized = (request.split_mode, request.link), request.kv_type != FULL_PRECISION_KV
    table = sections(row.catalog).split_modes
    split, link = multi_gpu.layout(rt.framework, engine, asked, kv_quantized, rt.gpu, count, table)
    return dataclasses.replace(rt, count=count, split=split, link=link)


class HostRules(NamedTuple):
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
def host_rules(catalog: Catalog) -> HostRules:
    # Flattened once: the offload pricing reads these for every offloaded row.
    host = sections(catalog).estimator.host
    scale, kt = host.offload_scale, host.ktransformers
    return HostRules(
        scale.experts,
        scale.layers,
        scale.cpu,
        host.pcie_gbs,
        host.cpu_prefill_gflops,
        host.offload_ubatch,
        kt.prefill_chunk,
        kt.hybrid_max_tokens,
    )


def pcie_gbs(row: NoFitRow, rules: HostRules) -> float:
    """GB/s the card's link streams RAM-held weights at (speed.toml [offload]): the card's own
    figure, its family's, else the one [host] pcie_gbs."""
    links, gpu = sections(row.catalog).speed.offload, row.rt.gpu
    return links.pcie_gbs_card.get(gpu.id) or links.pcie_gbs.get(gpu.arch_family) or rules.pcie_gbs


def numa_scale(row: NoFitRow) -> float:
    """What is left of the host bandwidth (hosts.toml [numa] counts a second socket at
    extra_socket_gain) for a runtime that doesn't keep reads on the local socket: one socket's."""
    sockets = row.request.setup.host.sockets or 1
    if sockets <= 1 or row.rt.framework in sections(row.catalog).speed.offload.numa_aware:
        return 1.0
    gain = sections(row.catalog).hosts.numa.extra_socket_gain
    return 1.0 / (1.0 + gain * (sockets - 1))


class ForcedOffload(NamedTuple):
    """A row run the way the user said (`EstimateRequest.offload`): what sits where and its speed."""

    status: Literal["smooth", "tight", "no_fit"]  # no_fit: the GPU part or the RAM part does not fit
    plan: Remedy  # the setup with its figures (kind expert_offload | offload | cpu)
    gpu_bytes: float  # weights + KV + buffers on the GPU(s)
    weights_gpu: float
    kv_gpu: float
    prefill_seconds: float  # the prompt on top of `prefill_depth` cached tokens (TTFT from 0 by default)
    host_bytes: float = 0.0  # weights + KV (+ buffer, CPU only) in system RAM
    deep_prefill_seconds: float = 0.0  # the same prompt on top of the row's decode depth (a full context)


def forced_offload(
    pricing: Pricing,
    quant_id: str,
    weights: WeightBreakdown,
    ctx: int,
    depth: int,
    prefill_depth: int | None = None,
) -> ForcedOffload:
    """Price the row with the offload the request names; decode reads each part at its memory's
    bandwidth (token_bytes), prefill streams the RAM-resident weights to the GPU once per ubatch
    (llama.cpp offloads large-batch matmuls) or, CPU only, runs at the CPU's matrix rate. Decode is
    priced at `depth`; the prompt at `prefill_depth` (None: `depth` too), and once more at `depth`
    (`deep_prefill_seconds`: the same prompt sent when the context is already that deep)."""
    row = no_fit_row(pricing, quant_id, weights, ctx, depth)
    request, usable, catalog = pricing.request, pricing.usable, pricing.catalog
    model, rules = request.model, host_rules(catalog)
    mode = request.offload
    moe_layers = moe_layer_count(weights.layer_expert_bytes)
    if mode == "experts" and model.is_moe and weights.expert_bytes:
        asked = request.cpu_moe_layers
        # A pasted `--n-cpu-moe N` counts the first N layers, dense ones too: k of them have experts.
        k = moe_layers if asked is None or asked < 0 else moe_layers_within(weights.layer_expert_bytes, asked)
        host_w = weights.expert_bytes / max(moe_layers, 1) * k
        share_read = (model.experts_active or 1) / (model.experts or 1)
        reads = expert_offload_bytes(weights, row.active_kv, host_w * share_read)
        weights_gpu, kv_gpu, host = weights.gpu_bytes_full_offload - host_w, row.kv_bytes, host_w
        scale, kind = rules.experts, WayOutKind.EXPERT_OFFLOAD
        extra = {"cpu_moe_layers": k, "layers_total": moe_layers}
    elif mode == "cpu":
        reads = TokenBytes(0.0, row.full_read)
        # Everything sits in RAM, the compute buffer too (the CPU backend allocates it there).
        weights_gpu, kv_gpu, host = 0.0, 0.0, weights.total_bytes + row.kv_bytes + row.buffer
        scale, kind, extra = (
            rules.cpu * _cpu_decode_scale(row),
            WayOutKind.CPU,
            {"layers_total": model.layers},
        )
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
        scale, kind, extra = (
            rules.layers,
            WayOutKind.OFFLOAD,
            {"layers_on_gpu": n, "layers_total": model.layers},
        )
    buffers = row.offload_buffer * request.setup.count if weights_gpu or kv_gpu else 0.0
    gpu_total = weights_gpu + kv_gpu + buffers
    room = host_room(request, catalog)
    status = _forced_status(gpu_total, host, row, room, check_gpu=mode != "cpu")
    if kind == WayOutKind.EXPERT_OFFLOAD:
        status = _experts_split(status, row, extra["cpu_moe_layers"])
    if host > room:
        # The box has too little RAM for what this run keeps there: said as that, with the speed it
        # would reach with enough, never offered as a way out that runs.
        kind = WayOutKind.HOST_SHORT
    lo, mid, hi = decode_range(row, *reads, host_scale=scale)
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
    host_weights = host - (row.kv_bytes - kv_gpu)
    p_depth = depth if prefill_depth is None else prefill_depth
    prefill = _forced_prefill(row, mode, host_weights, rules, p_depth)
    deep = prefill if p_depth == depth else _forced_prefill(row, mode, host_weights, rules, depth)
    return ForcedOffload(status, plan, gpu_total, weights_gpu, kv_gpu, prefill, host, deep)


def _experts_split(
    status: Literal["smooth", "tight", "no_fit"], row: NoFitRow, moe_layers: int
) -> Literal["smooth", "tight", "no_fit"]:
    """Experts in RAM on several cards: the layers left go whole to each card (layer_packing), as the
    command's -ts splits them, each card with its offload-sized buffer."""
    if not row.card_usable or status == "no_fit":
        return status
    weights = row.weights
    first = first_layers_holding(weights.layer_expert_bytes, moe_layers)
    split = layer_status(
        weights, row.kv_bytes, row.card_usable, row.offload_buffer, row.smooth_fraction, first
    )
    return worse(status, split)


def _forced_status(
    gpu_total: float, host: float, row: NoFitRow, room: float, check_gpu: bool = True
) -> Literal["smooth", "tight", "no_fit"]:
    if (check_gpu and gpu_total > row.usable_bytes) or host > room:
        return "no_fit"
    if not check_gpu:
        return "smooth" if host <= room * row.smooth_fraction else "tight"
    return "smooth" if gpu_total <= row.usable_bytes * row.smooth_fraction else "tight"


def _forced_prefill(row: NoFitRow, mode: str, host_weights: float, rules: HostRules, depth: int) -> float:
    """Seconds to prefill the request's prompt on top of `depth` cached tokens, offloaded as asked."""
    request = row.request
    model, prompt = request.model, request.prompt
    if mode == "cpu":
        return _cpu_prefill_seconds(row, prompt, rules, depth)
    ub = row.offload_ub
    gpu_seconds = speed.prefill_seconds(row.rt, model, row.quant_id, prompt, depth, ub)
    if row.rt.framework == "ktransformers" and mode == "experts":
        return gpu_seconds + _kt_expert_prefill(row, prompt, max(host_weights, 0.0), rules)
    ubatches = math.ceil(prompt / ub)
    return gpu_seconds + ubatches * max(host_weights, 0.0) / (pcie_gbs(row, rules) * 1e9)


def _kt_expert_prefill(row: NoFitRow, prompt: int, host_weights: float, rules: HostRules) -> float:
    """Seconds KTransformers adds for the CPU-held experts: a long prompt streams them to the GPU
    once per chunk (layerwise prefill, bound by PCIe); a short one has the CPU compute the experts
    each token routes to (hybrid prefill, bound by the CPU's matrix rate)."""
    if prompt > rules.kt_hybrid_max:
        return math.ceil(prompt / rules.kt_chunk) * host_weights / (pcie_gbs(row, rules) * 1e9)
    model = row.request.model
    bytes_per_weight = row.catalog.quants[row.quant_id].bpw / 8
    routed = host_weights * (model.experts_active or 1) / (model.experts or 1) / bytes_per_weight
    return 2.0 * routed * prompt / (_cpu_gflops(row, rules) * 1e9)


def _cpu_prefill_seconds(row: NoFitRow, prompt: int, rules: HostRules, depth: int) -> float:
    """A CPU-only prefill of `prompt` tokens on top of `depth` cached ones: the matmuls over the
    active weights at the CPU's matrix rate, and attention (QK^T and AV over the average depth the
    prompt sees, as on a GPU) at the fitted share of that rate llama.cpp's CPU attention reaches
    (cpus.toml [efficiency.prefill] attention; the tiled FA kernel and the non-FA GEMM path run it
    at a few tenths of the weight matmuls' rate). Named CPU or not: an unnamed CPU's prompt at depth
    costs attention too."""
    model = row.request.model
    rate = _cpu_gflops(row, rules) * 1e9
    linear, attention = speed.prefill_flops_split(model, prompt, depth)
    shares = sections(row.catalog).cpus.efficiency.prefill
    return linear / rate + attention / (rate * shares.get("attention", 1.0))


def _named_cpu(row: NoFitRow) -> cpu_spec.Cpu | None:
    return row.catalog.cpus.get(row.request.setup.host.cpu) if row.request.setup.host.cpu else None


def _cpu_gflops(row: NoFitRow, rules: HostRules) -> float:
    """The CPU's matrix rate: the named CPU's (cpus.toml, its SIMD class's fitted share of its vector
    peak), else the one [host] cpu_prefill_gflops every unnamed CPU gets."""
    s = sections(row.catalog)
    shares = s.cpus.efficiency.prefill
    # A CPU engine's own kernels: ik_llama.cpp's repacked int8 / bf16 GEMMs prefill 1.8-3.6x faster
    # than mainline's on the same box (cpus.toml [efficiency.prefill] "engine/<framework>").
    engine = float(shares.get(f"engine/{row.rt.framework}", 1.0))
    cpu = _named_cpu(row)
    if cpu is None:
        return rules.cpu_prefill_gflops * engine
    gain = s.hosts.numa.extra_socket_gain
    return cpu_spec.prefill_gflops(cpu, row.request.setup.host.sockets, shares, gain) * engine


def _cpu_decode_scale(row: NoFitRow) -> float:
    """A CPU-only decode on a named CPU reaches the fitted share of its segment and memory kind
    (cpus.toml [efficiency.decode]); 1.0 (today's figure) when no CPU is named."""
    cpu = _named_cpu(row)
    if cpu is None:
        return 1.0
    scales = sections(row.catalog).cpus.efficiency.decode
    return cpu_spec.decode_scale(cpu, row.request.setup.host.ram_type, scales)
