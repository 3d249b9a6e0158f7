"""Physical ceilings a measurement cannot beat: decode by memory bandwidth over the bytes read per
token, prefill by peak matrix FLOPS over 2 x active parameters per token."""

from __future__ import annotations

from core.catalog.gpu import Gpu
from core.catalog.kv_cache import KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.community.submit_limits import limits
from core.estimator.token_bytes import decode_bytes
from core.estimator.weights import weight_breakdown


def quant_bytes_per_token(
    model: Model, quant_id: str, depth: int, kv_type: KvCacheType, catalog: Catalog
) -> float:
    """Bytes one decoded token must read (the estimator's own count), for this quant by its id."""
    return decode_bytes(
        model, weight_breakdown(model, catalog.quants[quant_id], catalog), depth, kv_type, catalog
    )


def decode_ceiling(
    gpu: Gpu,
    count: int,
    model: Model,
    quant_id: str,
    depth: int,
    kv_type: KvCacheType,
    engine: str,
    catalog: Catalog,
) -> float:
    """The fastest decode physics allows (tok/s): peak bandwidth over bytes per token, efficiency 1.

    Layer split (llama.cpp, Ollama) reads the layers one card after the other, so one card's
    bandwidth bounds it however many cards there are; tensor-parallel engines read every card's
    slice at once and the bandwidth adds.
    """
    bandwidth = gpu.bandwidth_gbs * 1e9
    if count > 1 and engine in limits(catalog).tp_engines:
        bandwidth *= count
    return bandwidth / quant_bytes_per_token(model, quant_id, depth, kv_type, catalog)


def peak_tflops(gpu: Gpu) -> float | None:
    """The highest matrix rate the card lists (FP16 with FP16 accumulate, INT8 for MMQ kernels)."""
    rates = [r for r in (gpu.fp16_tflops, gpu.int8_tops, gpu.fp32_tflops) if r]
    return max(rates) if rates else None


def prefill_ceiling(gpu: Gpu, count: int, model: Model) -> float | None:
    """The fastest prefill physics allows (tok/s): peak FLOPS over 2 x active params per token.

    Every card counts: llama.cpp pipelines prompt batches across a layer split and tensor parallel
    splits the matmuls, so both can use all cards' compute. None when the card lists no rate.
    """
    peak = peak_tflops(gpu)
    if peak is None or model.active_params_b <= 0:
        return None
    return peak * 1e12 * count / (2.0 * model.active_params_b * 1e9)
