"""Concurrent decode from the roofline: N users share one weight read per step."""

from __future__ import annotations

from core.catalog.loader import default_catalog
from core.estimator import concurrency, speed
from core.estimator.memory import kv_read_bytes
from core.estimator.weights import weight_breakdown


def _speed(model_id: str, users: int) -> concurrency.ConcurrentSpeed:
    catalog = default_catalog()
    cal = speed.calibration(catalog)
    gpu, model = catalog.gpus["rtx-4090"], catalog.models[model_id]
    weights = weight_breakdown(model, catalog.quants["Q4_K_M"], catalog)
    kv = kv_read_bytes(model, 2048, "f16", catalog)
    reads = concurrency.StepReads(weights.active_bytes_per_token, weights.expert_bytes, kv)
    return concurrency.concurrent_speed(speed.Runtime(gpu, "cuda", cal), model, "Q4_K_M", users, reads)


def test_one_user_is_the_single_stream_speed() -> None:
    catalog = default_catalog()
    cal = speed.calibration(catalog)
    gpu, model = catalog.gpus["rtx-4090"], catalog.models["llama-3-8b"]
    weights = weight_breakdown(model, catalog.quants["Q4_K_M"], catalog)
    kv = kv_read_bytes(model, 2048, "f16", catalog)
    single = speed.token_seconds(
        speed.Runtime(gpu, "cuda", cal),
        model.layers,
        weights.active_bytes_per_token + kv,
        0.0,
        False,
        "Q4_K_M",
    )
    assert _speed("llama-3-8b", 1).per_user_tps == round(1 / single, 1)


def test_aggregate_grows_and_each_user_slows() -> None:
    one, eight, thirty_two = (_speed("llama-3-8b", n) for n in (1, 8, 32))
    assert one.aggregate_tps < eight.aggregate_tps < thirty_two.aggregate_tps
    assert one.per_user_tps > eight.per_user_tps > thirty_two.per_user_tps
    assert thirty_two.aggregate_tps < 32 * one.aggregate_tps


def test_moe_batches_touch_more_experts() -> None:
    model = default_catalog().models["qwen3-30b-a3b"]
    shares = [concurrency.expert_share_read(model, n) for n in (1, 4, 32, 512)]
    assert shares == sorted(shares) and shares[-1] <= 1.0
    assert model.experts and model.experts_active
    assert abs(shares[0] - model.experts_active / model.experts) < 1e-9
