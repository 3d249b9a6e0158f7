"""Speed model: decode is memory-bound, prefill is compute-bound, both calibrated on measurements.

decode time per token = layers x fixed cost per layer (kernel launches, syncs)
                      + bytes read per token / (bandwidth x efficiency)
where bytes = active weights + the KV cache read at the current depth. Efficiency is the product of
a per-backend base, a per-architecture-family factor and a per-quant-kind factor; all come from
`catalogs/calibration.toml`, written by `scripts/fit_calibration.py` from real measurements. A card
the data never saw still gets its backend's and family's values (shrunk toward the backend's), so
the model generalizes from specs. The (low, high) band is the spread of cross-validated residuals,
wider when the family had no measurement.

prefill time per token = (2 x active params + attention FLOPs at that depth) / (matrix TFLOPS x eff).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache
from typing import Any

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.estimator.memory import kv_shape  # memory imports nothing from here: no cycle


@dataclass(frozen=True, slots=True)
class Band:
    low: float  # multiplier on mid for the low end (< 1)
    high: float  # multiplier for the high end (> 1)


@dataclass(frozen=True, slots=True)
class BackendParams:
    bw_eff: float  # fraction of peak bandwidth reached streaming weights
    us_per_layer: float  # fixed cost per layer per token, microseconds
    pp_eff: float  # fraction of the matrix TFLOPS reached in prefill
    pp_us_per_layer: float  # fixed cost per layer per ubatch in prefill


@dataclass(frozen=True, slots=True)
class Calibration:
    backends: dict[str, BackendParams]
    arch_decode: dict[str, float]  # arch_family -> multiplier on bw_eff
    arch_prefill: dict[str, float]  # arch_family -> multiplier on pp_eff
    quant_kind: dict[str, float]  # quant kind -> multiplier on bw_eff
    quant_kind_prefill: dict[str, float]
    moe_decode: float  # multiplier on bw_eff for MoE models (routing, small expert matmuls)
    hbm_decode: float  # multiplier on bw_eff for HBM cards (peak far above what kernels reach)
    seen_decode_cards: frozenset[str]  # card ids with decode measurements in the fit
    seen_prefill_cards: frozenset[str]
    seen_decode: frozenset[str]  # "backend/arch_family" pairs the fit had data for
    seen_prefill: frozenset[str]
    decode_band: dict[str, Band]  # "seen" / "unseen"
    prefill_band: dict[str, Band]
    host_eff: float  # fraction of host RAM bandwidth reached by CPU-offloaded layers
    tp_us_per_layer: float  # all-reduce cost per layer per token with tensor parallel
    tp_eff: float  # bandwidth efficiency kept per card under tensor parallel
    layer_split_us: float  # per-token cost of handing activations to the next card (layer split)
    fp32_fallback_ratio: float  # matrix TFLOPS ~ ratio x bandwidth (GB/s) when the card lists none
    backend_choice: dict[str, Any]


def _band(raw: dict[str, Any]) -> Band:
    return Band(float(raw["low"]), float(raw["high"]))


@cache
def calibration(catalog: Catalog) -> Calibration:
    # Fitted values (calibration.toml, written by scripts/fit_calibration.py) over hand-set ones.
    t = {**catalog.tables["speed"], **catalog.tables["calibration"]}
    backends = {
        name: BackendParams(
            bw_eff=float(v["bw_eff"]),
            us_per_layer=float(v["us_per_layer"]),
            pp_eff=float(v["pp_eff"]),
            pp_us_per_layer=float(v.get("pp_us_per_layer", 0.0)),
        )
        for name, v in t["backend"].items()
    }
    return Calibration(
        backends=backends,
        arch_decode={k: float(v) for k, v in t.get("arch_decode", {}).items()},
        arch_prefill={k: float(v) for k, v in t.get("arch_prefill", {}).items()},
        quant_kind={k: float(v) for k, v in t.get("quant_kind", {}).items()},
        quant_kind_prefill={k: float(v) for k, v in t.get("quant_kind_prefill", {}).items()},
        moe_decode=float(t["moe"]["decode"]),
        hbm_decode=float(t.get("hbm", {}).get("decode", 1.0)),
        seen_decode_cards=frozenset(t["seen"].get("decode_cards", ())),
        seen_prefill_cards=frozenset(t["seen"].get("prefill_cards", ())),
        seen_decode=frozenset(t["seen"]["decode"]),
        seen_prefill=frozenset(t["seen"]["prefill"]),
        decode_band={k: _band(v) for k, v in t["band"]["decode"].items()},
        prefill_band={k: _band(v) for k, v in t["band"]["prefill"].items()},
        host_eff=float(t["offload"]["host_eff"]),
        tp_us_per_layer=float(t["multi_gpu"]["tp_us_per_layer"]),
        tp_eff=float(t["multi_gpu"]["tp_eff"]),
        layer_split_us=float(t["multi_gpu"]["layer_split_us"]),
        fp32_fallback_ratio=float(t["prefill"]["tflops_per_gbs_fallback"]),
        backend_choice=t["backend_choice"],
    )


def choose_backend(gpu: Gpu, os_name: str, catalog: Catalog) -> str:
    """The llama.cpp backend people use on this card and OS (CUDA, ROCm, Metal, Vulkan, SYCL)."""
    choice = calibration(catalog).backend_choice
    by_gpu = choice.get("gpu", {})
    if gpu.id in by_gpu:
        return str(by_gpu[gpu.id])
    vendor = choice["vendor"][gpu.vendor]
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


def backend_params(backend: str, cal: Calibration) -> BackendParams:
    """A backend the fit never saw (none today) is priced like CUDA rather than failing."""
    return cal.backends.get(backend) or cal.backends["cuda"]


# decode_efficiency per (card, backend, quant, MoE, calibration), keyed on identities (hashing a Gpu
# hashes all its fields); the entry keeps the card and calibration alive so their ids stay theirs.
_EFFICIENCY: dict[tuple[int, str, str, bool, int], tuple[float, Gpu, Calibration]] = {}


def decode_efficiency(gpu: Gpu, backend: str, quant_id: str, moe: bool, cal: Calibration) -> float:
    key = (id(gpu), backend, quant_id, moe, id(cal))
    hit = _EFFICIENCY.get(key)
    if hit is not None and hit[1] is gpu and hit[2] is cal:
        return hit[0]
    eff = _decode_efficiency(gpu, backend, quant_id, moe, cal)
    if len(_EFFICIENCY) >= 65536:
        _EFFICIENCY.clear()
    _EFFICIENCY[key] = (eff, gpu, cal)
    return eff


def _decode_efficiency(gpu: Gpu, backend: str, quant_id: str, moe: bool, cal: Calibration) -> float:
    params = backend_params(backend, cal)
    eff = params.bw_eff * cal.arch_decode.get(gpu.arch_family, 1.0)
    eff *= cal.quant_kind.get(quant_kind(quant_id), 1.0)
    if moe:
        eff *= cal.moe_decode
    if is_hbm(gpu):
        eff *= cal.hbm_decode
    return min(eff, 0.95)


def is_hbm(gpu: Gpu) -> bool:
    return gpu.memory_type.upper().startswith("HBM")


def token_seconds(
    gpu: Gpu,
    backend: str,
    layers: int,
    gpu_bytes: float,
    host_bytes: float,
    moe: bool,
    quant_id: str,
    cal: Calibration,
    count: int = 1,
    split: str = "layer",
    host_bandwidth_gbs: float = 0.0,
) -> float:
    """Mid estimate of the seconds one token takes, reading `gpu_bytes` from the card(s) and
    `host_bytes` from system RAM (`token_bytes`). Plain numbers, not an object: the estimator prices
    a token per row and per way out, and building an inputs object cost as much as the arithmetic."""
    params = backend_params(backend, cal)
    eff = decode_efficiency(gpu, backend, quant_id, moe, cal)
    fixed = layers * params.us_per_layer * 1e-6
    bandwidth = gpu.bandwidth_gbs * 1e9 * eff
    if count > 1 and split == "tensor":
        # Every card reads its slice at once: bandwidth adds, minus the all-reduce per layer.
        seconds = gpu_bytes / (bandwidth * count * cal.tp_eff)
        fixed += layers * cal.tp_us_per_layer * 1e-6
    else:
        # Layer split: cards take turns, so the time is the same bytes over one card's bandwidth.
        seconds = gpu_bytes / bandwidth
        if count > 1:
            fixed += (count - 1) * cal.layer_split_us * 1e-6
    if host_bytes:
        seconds += host_bytes / (max(host_bandwidth_gbs, 1.0) * 1e9 * cal.host_eff)
    return fixed + seconds


def band_for(gpu: Gpu, backend: str, cal: Calibration, phase: str = "decode") -> Band:
    """The spread of cross-validated residuals for cards like this one: a measured card ("card"),
    an unmeasured card of a measured family ("seen"), or a family the data never saw ("unseen")."""
    seen = cal.seen_decode if phase == "decode" else cal.seen_prefill
    cards = cal.seen_decode_cards if phase == "decode" else cal.seen_prefill_cards
    bands = cal.decode_band if phase == "decode" else cal.prefill_band
    if gpu.id in cards and "card" in bands:
        return bands["card"]
    return bands["seen"] if f"{backend}/{gpu.arch_family}" in seen else bands["unseen"]


# --- prefill -------------------------------------------------------------------------------------


def matrix_tflops(gpu: Gpu, cal: Calibration) -> float:
    """Dense FP16 matrix throughput a prefill can use; a bandwidth-based guess when none is listed."""
    if gpu.fp16_tflops:
        rate = gpu.fp16_tflops
        # GeForce tensor cores run FP16 with FP32 accumulate at half the listed rate.
        return rate / 2 if gpu.fp16_fp32acc_half_rate else rate
    fp32 = getattr(gpu, "fp32_tflops", None)
    if fp32:
        return float(fp32)
    return gpu.bandwidth_gbs * cal.fp32_fallback_ratio


def attention_flops_per_token(model: Model, depth: float) -> float:
    """QK^T and AV FLOPs for one new token attending to `depth` cached tokens (growing layers)."""
    shape = kv_shape(model)
    q_dim = model.heads * model.head_dim
    if model.attention == "mla":
        full_layers = model.layers
        q_dim = model.heads * ((model.kv_lora_rank or 512) + (model.qk_rope_dim or 64))
    elif shape.swa_values_per_token:
        full_layers = model.global_layers or 0
    elif model.attention == "linear_hybrid":
        full_layers = model.global_layers or 0
    else:
        full_layers = model.layers
    flops = 4.0 * q_dim * depth * full_layers
    if shape.swa_values_per_token:
        local = model.layers - (model.global_layers or 0)
        flops += 4.0 * q_dim * min(depth, shape.window) * local
    return flops


def prefill_seconds(
    gpu: Gpu,
    backend: str,
    model: Model,
    quant_id: str,
    prompt: int,
    depth: int,
    cal: Calibration,
    count: int = 1,
    split: str = "layer",
) -> float:
    flops_per_s, pp_us_per_layer = _prefill_rate(gpu, backend, quant_id, cal, count, split)
    linear = 2.0 * model.active_params_b * 1e9 * prompt
    attention = attention_flops_per_token(model, depth + prompt / 2.0) * prompt
    ubatches = math.ceil(prompt / 512)
    fixed = ubatches * model.layers * pp_us_per_layer * 1e-6
    return (linear + attention) / flops_per_s + fixed


_PREFILL_RATES: dict[tuple[int, str, str, int, str, int], tuple[tuple[float, float], Gpu, Calibration]] = {}


def _prefill_rate(
    gpu: Gpu, backend: str, quant_id: str, cal: Calibration, count: int, split: str
) -> tuple[float, float]:
    """(FLOP/s a prefill reaches, fixed microseconds per layer and ubatch): the same for every row of
    a grid with this quant, so kept per identity like `decode_efficiency`."""
    key = (id(gpu), backend, quant_id, count, split, id(cal))
    hit = _PREFILL_RATES.get(key)
    if hit is not None and hit[1] is gpu and hit[2] is cal:
        return hit[0]
    params = backend_params(backend, cal)
    eff = params.pp_eff * cal.arch_prefill.get(gpu.arch_family, 1.0)
    eff *= cal.quant_kind_prefill.get(quant_kind(quant_id), 1.0)
    flops_per_s = matrix_tflops(gpu, cal) * 1e12 * eff
    if count > 1 and split == "tensor":
        flops_per_s *= count * cal.tp_eff
    rate = (flops_per_s, params.pp_us_per_layer)
    if len(_PREFILL_RATES) >= 65536:
        _PREFILL_RATES.clear()
    _PREFILL_RATES[key] = (rate, gpu, cal)
    return rate
