"""Bytes one decoded token reads: the quantity decode speed and its physical ceiling divide by.

Decode is memory-bound: each new token streams the weights it uses once (a MoE's routed experts
pro rata, `WeightBreakdown.active_bytes_per_token`) and reads the KV cache up to its depth. Every
caller (the grid, each way out, the plausibility ceilings, the calibration fit) goes through
`bytes_per_token`, so they all price the same bytes. With CPU offload the same bytes are split
between GPU memory and system RAM (`TokenBytes`); the speed model prices each part at its own
bandwidth.
"""

from __future__ import annotations

from typing import NamedTuple

from core.catalog.kv_cache import KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.estimator.memory import kv_read_bytes
from core.estimator.weights import WeightBreakdown


class TokenBytes(NamedTuple):
    """What one decoded token reads, by where the bytes live (a NamedTuple: the ways out build one
    per priced option, and a frozen dataclass costs a setattr per field)."""

    gpu: float  # weights + KV read from GPU memory
    host: float = 0.0  # weights + KV read from system RAM (CPU offload)


def bytes_per_token(active_weight_bytes: float, kv_read: float) -> float:
    """The weights a token uses plus the cache it attends over; summed in this order everywhere so
    every caller gets the very same float."""
    return active_weight_bytes + kv_read


def decode_bytes(
    model: Model, weights: WeightBreakdown, depth: int, kv_type: KvCacheType, catalog: Catalog
) -> float:
    """Bytes one token reads with everything on the GPU(s), `depth` tokens already in the cache."""
    return bytes_per_token(weights.active_bytes_per_token, kv_read_bytes(model, depth, kv_type, catalog))


def expert_offload_bytes(weights: WeightBreakdown, kv_read: float, host_expert_bytes: float) -> TokenBytes:
    """`--n-cpu-moe`: the routed experts read from system RAM leave the GPU's share; attention,
    shared weights and the whole cache stay on the GPU."""
    return TokenBytes(
        bytes_per_token(weights.active_bytes_per_token - host_expert_bytes, kv_read), host_expert_bytes
    )


def layer_offload_bytes(weights: WeightBreakdown, kv_read: float, gpu_share: float) -> TokenBytes:
    """`-ngl N`: a `gpu_share` of the repeating layers (weights and their cache) is read on the GPU,
    the rest and the output head from system RAM (llama.cpp keeps the head on the CPU then)."""
    layers = weights.active_bytes_per_token - weights.output_bytes
    return TokenBytes(
        bytes_per_token(layers * gpu_share, kv_read * gpu_share),
        bytes_per_token(layers * (1 - gpu_share), kv_read * (1 - gpu_share)) + weights.output_bytes,
    )
