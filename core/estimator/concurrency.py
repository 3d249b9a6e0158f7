"""Decode speed for N users at once (vLLM / SGLang serving, `llama-server -np N`), from the roofline.

One decode step serves every user: it reads the weights once, each user's KV cache, and does each
user's matmuls. So the step time grows with N by
    the experts the batch touches (MoE: each user routes to its own k of E experts per layer, so the
    share read is 1 - (1 - k/E)^N, not k/E),
    the KV reads (one cache per user),
    the compute: 2 x active params FLOPs per user on the matrix units at a fitted batch efficiency,
and aggregate tok/s = N / step, per-user tok/s = 1 / step. The batch efficiency is fitted on the
measured concurrent runs (scripts/fit_calibration.py -> calibration.toml [concurrency]).
"""

from __future__ import annotations

from dataclasses import dataclass

from core.catalog.gpu import Gpu
from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.estimator import speed
from core.estimator.estimate import Setup
from core.estimator.memory import kv_read_bytes
from core.estimator.weights import weight_breakdown


@dataclass(frozen=True, slots=True)
class ConcurrentSpeed:
    users: int
    aggregate_tps: float  # tokens/s summed over all users
    per_user_tps: float  # what each user sees


def expert_share_read(model: Model, users: int) -> float:
    """Share of the routed-expert bytes one step reads when `users` tokens route independently."""
    if not model.is_moe or not model.experts:
        return 1.0
    k_over_e = (model.experts_active or 1) / model.experts
    return 1.0 - (1.0 - k_over_e) ** users


def concurrent_speed(
    gpu: Gpu,
    backend: str,
    model: Model,
    quant_id: str,
    users: int,
    active_bytes: float,
    expert_bytes: float,
    kv_bytes_per_user: float,
    cal: speed.Calibration,
    framework: str = "llama.cpp",
    count: int = 1,
    split: str = "layer",
) -> ConcurrentSpeed:
    """Aggregate and per-user decode tok/s for `users` parallel streams, from the seconds of one
    decode step. `active_bytes`: weights one token reads (routed experts pro rata,
    `WeightBreakdown.active_bytes_per_token`); `expert_bytes`: all routed-expert bytes
    (`WeightBreakdown.expert_bytes`, 0 for dense); `kv_bytes_per_user` at the users' depth."""
    users = max(1, users)
    # The part every token reads whatever it routes to, plus the experts the whole batch touches.
    shared = active_bytes - expert_bytes * expert_share_read(model, 1)
    weights_read = shared + expert_bytes * expert_share_read(model, users)
    seconds = speed.token_seconds(
        gpu, backend, model.layers, weights_read + users * kv_bytes_per_user, 0.0, model.is_moe,
        quant_id, cal, count, split, framework=framework,
    )  # fmt: skip
    if users > 1:
        batch_eff = float(cal.concurrency.get("batch_eff", 0.3))
        flops = 2.0 * model.active_params_b * 1e9 * users
        seconds += flops / (speed.matrix_tflops(gpu, cal) * 1e12 * max(count, 1) * batch_eff)
    return ConcurrentSpeed(users, round(users / seconds, 1), round(1.0 / seconds, 1))


def concurrent_for(
    setup: Setup,
    model: Model,
    quant_id: str,
    users: int,
    depth: int,
    catalog: Catalog,
    framework: str = "llama.cpp",
    kv_type: KvCacheType = FULL_PRECISION_KV,
    backend: str | None = None,
) -> ConcurrentSpeed:
    """`concurrent_speed` for a setup as the chat knows it: the backend the question named (checked
    against the card) or the card's usual one, the quant's weight breakdown and each user's KV cache
    read at `depth` tokens."""
    weights = weight_breakdown(model, catalog.quants[quant_id], catalog)
    return concurrent_speed(
        setup.gpu, speed.choose_backend(setup.gpu, setup.os, catalog, backend), model, quant_id, users,
        float(weights.active_bytes_per_token), float(weights.expert_bytes),
        kv_read_bytes(model, depth, kv_type, catalog), speed.calibration(catalog), framework, setup.count,
    )  # fmt: skip
