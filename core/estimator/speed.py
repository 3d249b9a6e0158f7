"""Speed model: decode is memory-bound, prefill is compute-bound, both calibrated on measurements.

decode time per token = layers x fixed cost per layer (kernel launches, syncs)
                      + bytes read per token / (bandwidth x efficiency)
where bytes = active weights + the KV cache read at the current depth.
prefill time = (matmul FLOPs + attention FLOPs at depth / attention share) / (matrix TFLOPS x eff)
             + ubatches x layers x fixed cost per layer and ubatch
             + K/V cache bytes attention streams at depth / (bandwidth x fitted query tile).

Each efficiency is a backend's base times one factor per `TERMS` key that applies (architecture
family, backend x family, quant kind, backend x quant kind, MoE overall and per backend, HBM (ggml
kernels) or the framework on HBM (vLLM, MLX...), the framework and the framework on MoE, full-rate
tensor listings); `efficiency_keys` says which apply,
and scripts/fit_calibration.py fits them on all three measurement files with a ridge toward the
parent, so a key the data never saw is 1 and a card the data never saw is priced from its specs.
Tensor parallel (vLLM, SGLang, ExLlama on several cards) adds an all-reduce cost per layer and keeps
a share of each card's bandwidth, both fitted on the multi-card rows. The (low, high) band is the
spread of cross-validated residuals per tier (`band_for`). Concurrent
users: `core/estimator/concurrency.py`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.pricing_sections import BackendChoice, Band, PhaseFit
from core.catalog.sections import sections
from core.estimator import multi_gpu
from core.estimator.memory import kv_shape  # memory imports nothing from here: no cycle

# The terms whose product is an efficiency (decode: share of peak bandwidth; prefill: share of the
# matrix TFLOPS), after the backend's base. scripts/fit_calibration.py fits one factor per key of each
# term; a key the fit never saw is 1 (its parent: the backend's base, the overall MoE factor,
# llama.cpp for a framework).
TERMS = (
    "arch",
    "backend_arch",
    "quant_kind",
    "backend_quant_kind",
    "moe",
    "moe_backend",
    "hbm",
    "framework",
    "framework_moe",
    "full_rate_tensor",
    "framework_hbm",
)
# Frameworks that run llama.cpp's own kernels: priced as llama.cpp itself. Ollama is not here: it
# runs some models (gpt-oss, Qwen3 MoE, gemma3) on its own engine and measures apart.
LLAMA_CPP_KERNELS = frozenset({"llama.cpp", "lmstudio"})
# Frameworks on ggml's kernels (their own engines included): the "hbm" factor is theirs. ggml's
# decode kernels reach ~55 % of an HBM card's bandwidth (fitted 0.575 on llama.cpp rows); vLLM /
# SGLang (cuBLAS, Marlin, CUTLASS), ExLlama and MLX read HBM closer to its peak (vLLM's dense FP16
# 70B on 2x A100 ran at 1.4x the ggml-priced figure), so each has its own HBM factor from 1.
GGML_KERNELS = LLAMA_CPP_KERNELS | {"ollama", "ik_llama.cpp", "ktransformers"}


def efficiency_keys(
    backend: str, arch: str, kind: str, moe: bool, hbm: bool, framework: str, full_rate: bool = False
) -> tuple[tuple[str, str], ...]:
    """(term, key) pairs that apply to one setup, in `TERMS` order; the fit uses the same function,
    so the estimate looks up exactly what was fitted."""
    fw = "" if framework in LLAMA_CPP_KERNELS else framework
    keys = (
        ("arch", arch),
        ("backend_arch", f"{backend}/{arch}"),
        ("quant_kind", kind),
        ("backend_quant_kind", f"{backend}/{kind}"),
        ("moe", "moe" if moe else ""),
        ("moe_backend", backend if moe else ""),
        ("hbm", "hbm" if hbm and framework in GGML_KERNELS else ""),
        ("framework", fw),
        ("framework_moe", fw if moe else ""),
        ("full_rate_tensor", "full_rate" if full_rate else ""),
        ("framework_hbm", framework if hbm and framework not in GGML_KERNELS else ""),
    )
    return tuple(k for k in keys if k[1])


@dataclass(frozen=True, slots=True)
class PhaseCalibration:
    eff: dict[str, float]  # backend -> base efficiency
    us_per_layer: dict[str, float]  # backend -> fixed cost per layer (per token, or per ubatch)
    factors: dict[str, dict[str, float]]  # term -> key -> multiplier
    # Prefill: attention's share of a matmul's efficiency per backend (QK^T and AV at depth run
    # slower than the weight matmuls, far slower without flash attention on older kernels).
    attention: dict[str, float]
    # Prefill: query rows that share one pass over the K/V cache per backend (the flash-attention
    # tile); fewer rows, more cache traffic at depth (`attention_kv_bytes`). Absent: no such term.
    kv_tile: dict[str, float] = field(default_factory=dict)
    # Prefill: attention's share per "backend/arch" on top of the backend's: one backend runs a
    # different flash-attention path per card family (Vulkan: coopmat2 on NVIDIA, coopmat1 or scalar
    # shaders on AMD / Intel; SYCL's on Xe), so the cost at depth is the pair's, not the backend's
    # (B70 SYCL and Vulkan fall 2-4x more from pp512 to pp2048 @ d16384 than the FLOPs say, where
    # MI50 ROCm and P100 CUDA follow them). Absent: 1.
    attention_arch: dict[str, float] = field(default_factory=dict)

    def efficiency(self, backend: str, keys: tuple[tuple[str, str], ...]) -> float:
        eff = self.eff.get(backend) or self.eff.get("cuda", 0.5)
        for term, key in keys:
            eff *= self.factors.get(term, {}).get(key, 1.0)
        return eff

    def fixed_us(self, backend: str) -> float:
        return self.us_per_layer.get(backend) or self.us_per_layer.get("cuda", 30.0)

    def attention_share(self, backend: str, arch: str = "") -> float:
        share = self.attention.get(backend) or self.attention.get("cuda", 1.0)
        return share * self.attention_arch.get(f"{backend}/{arch}", 1.0)

    def kv_tile_rows(self, backend: str) -> float:
        return self.kv_tile.get(backend) or self.kv_tile.get("cuda", 0.0)


@dataclass(frozen=True, slots=True)
class Calibration:
    decode: PhaseCalibration
    prefill: PhaseCalibration
    seen_decode_cards: frozenset[str]  # card ids with decode measurements in the fit
    seen_prefill_cards: frozenset[str]
    seen_decode: frozenset[str]  # "backend/arch_family" pairs the fit had data for
    seen_prefill: frozenset[str]
    seen_decode_frameworks: frozenset[str]  # non-llama.cpp frameworks the fit had data for
    seen_prefill_frameworks: frozenset[str]
    decode_band: dict[str, Band]  # "card" / "seen" / "unseen" / "framework" / "framework_unseen"
    prefill_band: dict[str, Band]
    host_eff: float  # fraction of host RAM bandwidth reached by CPU-offloaded layers
    tp_us_per_layer: float  # all-reduce cost per layer per token with tensor parallel
    tp_eff: float  # bandwidth efficiency kept per card under tensor parallel
    layer_split_us: float  # per-token cost of handing activations to the next card (layer split)
    split_costs: multi_gpu.SplitCosts  # links, row split and llama.cpp-family TP (multi_gpu.py)
    fp32_fallback_ratio: float  # matrix TFLOPS ~ ratio x bandwidth (GB/s) when the card lists none
    tensor_over_fp32: dict[str, float]  # arch family -> FP16 matrix rate / FP32 rate (catalog medians)
    backend_choice: BackendChoice
    concurrency: dict[str, Any]


@dataclass(frozen=True, slots=True)
class Runtime:
    """What runs the tokens of one priced setup: the card(s), the llama.cpp backend, the framework,
    how the cards share the model and the calibration that prices it. Built once per estimate (or
    concurrency cell) and passed to every row and way out, instead of six loose arguments each."""

    gpu: Gpu
    backend: str
    cal: Calibration
    framework: str = "llama.cpp"
    count: int = 1
    split: str = "layer"  # "layer" | "row" | "tensor" (multi_gpu.SPLITS)
    link: str = ""  # what the cards' reductions cross (multi_gpu.link_of); "" for one card


def _phase(fit: PhaseFit) -> PhaseCalibration:
    backends = fit.backend
    return PhaseCalibration(
        eff={b: v.eff for b, v in backends.items()},
        us_per_layer={b: v.us_per_layer for b, v in backends.items()},
        factors={t: dict(getattr(fit, t)) for t in TERMS},
        attention={b: v.attention for b, v in backends.items()},
        kv_tile={b: v.kv_tile for b, v in backends.items() if v.kv_tile is not None},
        attention_arch=dict(fit.attention_arch),
    )


def _with_priors(phase: PhaseCalibration, catalog: Catalog, which: str) -> PhaseCalibration:
    """The fitted factors plus the catalog's priors of frameworks the fit has no rows for
    (catalogs/frameworks.toml `decode_prior` / `prefill_prior`); a fitted factor wins."""
    factors = {t: dict(keys) for t, keys in phase.factors.items()}
    for fw in catalog.frameworks.values():
        for term, value in (fw.decode_prior if which == "decode" else fw.prefill_prior).items():
            if term in factors:
                factors[term].setdefault(fw.id, value)
    return replace(phase, factors=factors)


def _tensor_ratios(catalog: Catalog, skip: frozenset[str]) -> dict[str, float]:
    """Median FP16-matrix / FP32 rate per architecture family over the cards that list both: a card
    listing only FP32 (DGX Spark's GB10) still has tensor cores, and its prefill runs on them."""
    ratios: dict[str, list[float]] = {}
    for gpu in catalog.gpus.values():
        if gpu.fp16_tflops and gpu.fp32_tflops and gpu.arch_family not in skip:
            rate = gpu.fp16_tflops / 2 if gpu.fp16_fp32acc_half_rate else gpu.fp16_tflops
            ratios.setdefault(gpu.arch_family, []).append(rate / gpu.fp32_tflops)
    return {arch: sorted(v)[len(v) // 2] for arch, v in ratios.items()}


def _fitted(fitted: float | None, hand_set: float) -> float:
    return hand_set if fitted is None else fitted


@cache
def calibration(catalog: Catalog) -> Calibration:
    # Fitted values (calibration.toml, written by scripts/fit_calibration.py) over hand-set ones
    # (speed.toml): the fit writes the tensor-parallel terms, the layer-split hand-off stays hand-set.
    s = sections(catalog)
    hand, fit = s.speed, s.fit
    seen, bands, multi = fit.seen, fit.band, fit.multi_gpu
    return Calibration(
        decode=_with_priors(_phase(fit.decode), catalog, "decode"),
        prefill=_with_priors(_phase(fit.prefill), catalog, "prefill"),
        seen_decode_cards=frozenset(seen.decode_cards),
        seen_prefill_cards=frozenset(seen.prefill_cards),
        seen_decode=frozenset(seen.decode),
        seen_prefill=frozenset(seen.prefill),
        seen_decode_frameworks=frozenset(seen.decode_frameworks),
        seen_prefill_frameworks=frozenset(seen.prefill_frameworks),
        decode_band=dict(bands.get("decode", {})),
        prefill_band=dict(bands.get("prefill", {})),
        host_eff=hand.offload.host_eff,
        tp_us_per_layer=_fitted(multi.tp_us_per_layer, hand.multi_gpu.tp_us_per_layer),
        tp_eff=_fitted(multi.tp_eff, hand.multi_gpu.tp_eff),
        layer_split_us=_fitted(multi.layer_split_us, hand.multi_gpu.layer_split_us),
        split_costs=multi_gpu.SplitCosts(
            link_sync={**hand.multi_gpu.link_sync, **s.split_fit.link_sync},
            link_gbs=dict(hand.multi_gpu.link_gbs),
            row_syncs=hand.multi_gpu.row_syncs,
            sync_factor=dict(s.split_fit.sync_factor),
            prefill_eff=dict(s.split_fit.prefill_eff),
        ),
        fp32_fallback_ratio=hand.matrix.tflops_per_gbs_fallback,
        tensor_over_fp32=_tensor_ratios(catalog, frozenset(hand.matrix.no_tensor_families)),
        backend_choice=hand.backend_choice,
        concurrency=dict(fit.concurrency),
    )


def choose_backend(gpu: Gpu, os_name: str, catalog: Catalog, asked: str | None = None) -> str:
    """The llama.cpp backend people use on this card and OS (CUDA, ROCm, Metal, Vulkan, SYCL), or the
    one the user named (`asked`, already checked against the card by frameworks.check_backend)."""
    if asked:
        return asked
    choice = calibration(catalog).backend_choice
    if gpu.id in choice.gpu:
        return choice.gpu[gpu.id]
    vendor = choice.vendor[gpu.vendor]
    if isinstance(vendor, str):
        return vendor
    return str(vendor.get(os_name.split("_")[0], vendor["default"]))


@cache
def quant_kind(quant_id: str) -> str:
    """Group quants whose dequantization costs alike (the decode efficiency differs by kind)."""
    q = quant_id.upper()
    if q in ("F16", "BF16", "FP16", "F32"):
        return "f16"
    if q.startswith("IQ") or q.startswith("TQ"):
        return "iq"
    if q in ("Q8_0", "FP8", "INT8", "GPTQ-INT8", "BNB-INT8") or q.startswith("Q8"):
        return "q8"
    if q.startswith("MXFP4"):
        return "mxfp4"
    if q in ("Q4_0", "Q4_1", "Q5_0", "Q5_1"):
        return "legacy"
    return "kquant"


# --- decode --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SpeedRange:
    low: float
    mid: float
    high: float


# decode_efficiency per (card, backend, quant, MoE, framework, calibration), keyed on identities
# (hashing a Gpu hashes all its fields); the entry keeps the card and calibration alive so their ids
# stay theirs.
_EFFICIENCY: dict[tuple[int, str, str, bool, str, int], tuple[float, Gpu, Calibration]] = {}


def decode_efficiency(
    gpu: Gpu, backend: str, quant_id: str, moe: bool, cal: Calibration, framework: str = "llama.cpp"
) -> float:
    key = (id(gpu), backend, quant_id, moe, framework, id(cal))
    hit = _EFFICIENCY.get(key)
    if hit is not None and hit[1] is gpu and hit[2] is cal:
        return hit[0]
    keys = efficiency_keys(
        backend, gpu.arch_family, quant_kind(quant_id), moe, is_hbm(gpu), framework, is_full_rate_gddr(gpu)
    )
    eff = min(cal.decode.efficiency(backend, keys), 0.95)
    if len(_EFFICIENCY) >= 65536:
        _EFFICIENCY.clear()
    _EFFICIENCY[key] = (eff, gpu, cal)
    return eff


def is_hbm(gpu: Gpu) -> bool:
    return gpu.memory_type.upper().startswith("HBM")


def is_full_rate_gddr(gpu: Gpu) -> bool:
    """An NVIDIA GDDR card listing FP16 with FP32 accumulate at the full tensor rate (RTX 6000 Ada,
    A40, RTX PRO 6000): llama.cpp's prefill reaches about what the GeForce sibling does, so the
    listed rate, twice the GeForce one, needs its own factor."""
    return (
        gpu.vendor == "NVIDIA"
        and bool(gpu.fp16_tflops)
        and not gpu.fp16_fp32acc_half_rate
        and not is_hbm(gpu)
    )


def token_seconds(
    rt: Runtime,
    layers: int,
    gpu_bytes: float,
    host_bytes: float,
    moe: bool,
    quant_id: str,
    host_bandwidth_gbs: float = 0.0,
) -> float:
    """Mid estimate of the seconds one token takes on `rt`, reading `gpu_bytes` from the card(s) and
    `host_bytes` from system RAM (`token_bytes`). The per-token figures stay plain numbers: the
    estimator prices a token per row and per way out, and building an inputs object per call cost as
    much as the arithmetic (the `Runtime` is built once per estimate)."""
    gpu, backend, cal, count, split = rt.gpu, rt.backend, rt.cal, rt.count, rt.split
    eff = decode_efficiency(gpu, backend, quant_id, moe, cal, rt.framework)
    fixed = layers * cal.decode.fixed_us(backend) * 1e-6
    bandwidth = gpu.bandwidth_gbs * 1e9 * eff
    if count > 1 and split != "layer":
        # Every card reads its slice at once: bandwidth adds, minus the reductions per layer, whose
        # cost depends on the link and the split (multi_gpu.py).
        seconds = gpu_bytes / (bandwidth * count * cal.tp_eff)
        sync = multi_gpu.sync_us_per_layer(cal.tp_us_per_layer, cal.split_costs, split, rt.link, rt.framework)
        fixed += layers * sync * 1e-6
    else:
        # Layer split: cards take turns, so the time is the same bytes over one card's bandwidth.
        seconds = gpu_bytes / bandwidth
        if count > 1:
            fixed += (count - 1) * cal.layer_split_us * 1e-6
    if host_bytes:
        seconds += host_bytes / (max(host_bandwidth_gbs, 1.0) * 1e9 * cal.host_eff)
    return fixed + seconds


def peak_tps(
    rt: Runtime, gpu_bytes: float, host_bytes: float = 0.0, host_bandwidth_gbs: float = 0.0
) -> float:
    """The bandwidth roofline: tokens per second if every byte a token reads came at the memory's
    full listed rate (no kernel or sync cost). No measured decode beats it, so a band's high end is
    capped there (audit: 2x 3090 with a 28 GB Q8_0 shown up to 35 tok/s, 936 GB/s / 28 GB = 33)."""
    gpu = rt.gpu
    if rt.count > 1 and rt.split == "layer" and rt.framework not in GGML_KERNELS:
        # A serving engine's stages over several machines may in fact run tensor parallel (two DGX
        # Sparks under vLLM measured above one card's roofline): no cap where the split is a guess.
        return float("inf")
    cards = rt.count if rt.count > 1 and rt.split != "layer" else 1
    seconds = gpu_bytes / (gpu.bandwidth_gbs * 1e9 * cards) if gpu.bandwidth_gbs else 0.0
    if host_bytes:
        seconds += host_bytes / (max(host_bandwidth_gbs, 1.0) * 1e9)
    return 1.0 / seconds if seconds > 0 else float("inf")


# --- prefill -------------------------------------------------------------------------------------


def matrix_tflops(gpu: Gpu, cal: Calibration) -> float:
    """Dense FP16 matrix throughput a prefill can use: the listed tensor rate; for a card that lists
    only FP32, FP32 x its family's tensor/FP32 ratio (families without usable FP16 matrix units,
    speed.toml `no_tensor_families`, stay at FP32); a bandwidth-based guess when none is listed."""
    if gpu.fp16_tflops:
        rate = gpu.fp16_tflops
        # GeForce tensor cores run FP16 with FP32 accumulate at half the listed rate.
        return rate / 2 if gpu.fp16_fp32acc_half_rate else rate
    fp32 = getattr(gpu, "fp32_tflops", None)
    if fp32:
        return float(fp32) * cal.tensor_over_fp32.get(gpu.arch_family, 1.0)
    return gpu.bandwidth_gbs * cal.fp32_fallback_ratio


def attention_flops_per_token(model: Model, depth: float) -> float:
    """QK^T and AV FLOPs for one new token attending to `depth` cached tokens (growing layers)."""
    shape = kv_shape(model)
    q_dim = model.heads * model.head_dim
    # Gemma 4's global layers attend with their own, wider heads (global_head_dim 512 vs 256).
    global_q_dim = model.heads * (model.global_head_dim or model.head_dim)
    if model.attention == "mla":
        full_layers = model.layers
        q_dim = model.heads * ((model.kv_lora_rank or 512) + (model.qk_rope_dim or 64))
    elif shape.swa_values_per_token:
        full_layers = model.global_layers or 0
    elif model.attention == "linear_hybrid":
        full_layers = model.global_layers or 0
    else:
        full_layers = model.layers
    flops = 4.0 * (q_dim if model.attention == "mla" else global_q_dim) * depth * full_layers
    if shape.swa_values_per_token:
        local = model.layers - (model.global_layers or 0)
        flops += 4.0 * q_dim * min(depth, shape.window) * local
    return flops


def attention_kv_bytes(model: Model, prompt: int, depth: float) -> float:
    """K/V cache bytes (F16) a prefill streams through attention, for one query row per pass: each
    query tile reads the whole cache it attends to once, and one K/V head serves its GQA group (MLA:
    every head reads the one latent). Divided by the backend's fitted tile (`kv_tile`) this is the
    memory side of attention at depth: measured pp2048 @ d32768 falls to 0.10x of pp512 for
    Llama-2-7B (MHA, 16 GiB of cache at 32K) on MI50 and Strix Halo ROCm, where the FLOPs alone say
    0.44x, while GQA models (Qwen3-30B-A3B, 8 query heads per K/V head) follow the FLOPs."""
    shape = kv_shape(model)
    avg = depth + prompt / 2.0
    values = shape.full_values_per_token * avg
    if shape.swa_values_per_token:
        values += shape.swa_values_per_token * min(avg, shape.window)
    group = model.heads if model.attention == "mla" else model.heads / max(model.kv_heads, 1)
    return values * 2.0 * prompt / max(group, 1.0)


def prefill_flops(model: Model, prompt: int, depth: int) -> float:
    """FLOPs to process a prompt of `prompt` tokens on top of `depth` cached ones: the matmuls over
    the active parameters plus attention at the average depth the prompt sees."""
    linear, attention = prefill_flops_split(model, prompt, depth)
    return linear + attention


def prefill_flops_split(model: Model, prompt: int, depth: int) -> tuple[float, float]:
    """(matmul FLOPs over the active parameters, attention FLOPs at the average depth)."""
    linear = 2.0 * model.active_params_b * 1e9 * prompt
    return linear, attention_flops_per_token(model, depth + prompt / 2.0) * prompt


def prefill_seconds(
    rt: Runtime, model: Model, quant_id: str, prompt: int, depth: int, ubatch: int = 512
) -> float:
    """Seconds to prefill `prompt` tokens on top of `depth` cached ones on `rt`."""
    gpu, backend, cal, count, split = rt.gpu, rt.backend, rt.cal, rt.count, rt.split
    flops_per_s, pp_us_per_layer = _prefill_rate(rt, quant_id, model.is_moe)
    fixed = math.ceil(prompt / ubatch) * model.layers * pp_us_per_layer * 1e-6
    linear, attention = prefill_flops_split(model, prompt, depth)
    share = cal.prefill.attention_share(backend, gpu.arch_family)
    seconds = (linear + attention / share) / flops_per_s + fixed
    tile = cal.prefill.kv_tile_rows(backend)
    if tile:
        cards = count if split != "layer" else 1
        seconds += attention_kv_bytes(model, prompt, depth) / (tile * gpu.bandwidth_gbs * 1e9 * cards)
    if count > 1:
        seconds += multi_gpu.prefill_reduction_seconds(model, prompt, count, split, rt.link, cal.split_costs)
    return seconds


_PREFILL_RATES: dict[
    tuple[int, str, str, bool, int, str, str, int], tuple[tuple[float, float], Gpu, Calibration]
] = {}


def _prefill_rate(rt: Runtime, quant_id: str, moe: bool) -> tuple[float, float]:
    """(FLOP/s a prefill reaches, fixed microseconds per layer and ubatch): the same for every row of
    a grid with this quant, so kept per identity like `decode_efficiency`."""
    gpu, backend, cal, count, split, framework = rt.gpu, rt.backend, rt.cal, rt.count, rt.split, rt.framework
    key = (id(gpu), backend, quant_id, moe, count, split, framework, id(cal))
    hit = _PREFILL_RATES.get(key)
    if hit is not None and hit[1] is gpu and hit[2] is cal:
        return hit[0]
    keys = efficiency_keys(
        backend, gpu.arch_family, quant_kind(quant_id), moe, is_hbm(gpu), framework, is_full_rate_gddr(gpu)
    )
    flops_per_s = matrix_tflops(gpu, cal) * 1e12 * cal.prefill.efficiency(backend, keys)
    if count > 1 and split != "layer":
        flops_per_s *= count * cal.split_costs.prefill_eff.get(framework, cal.tp_eff)
    rate = (flops_per_s, cal.prefill.fixed_us(backend))
    if len(_PREFILL_RATES) >= 65536:
        _PREFILL_RATES.clear()
    _PREFILL_RATES[key] = (rate, gpu, cal)
    return rate
