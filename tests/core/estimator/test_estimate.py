"""The estimator end to end on representative setups: shapes, monotonicity, ways out."""

from __future__ import annotations

import pytest

from core.ask.estimate_request import QueryError, run_query
from core.catalog.loader import default_catalog
from core.estimator.plan import plan_for

CAT = default_catalog()


def est(**kw):
    return run_query(kw, CAT)


def test_seed_question_grid():
    e = est(gpu="V100 32G", model="gemma 3 27b")
    assert e.request.setup.gpu.id == "tesla-v100-32g-pcie"
    assert e.request.model.id == "gemma-3-27b"
    assert e.request.setup.os == "linux"  # a datacenter card runs headless by default
    quants = {r.quant for r in e.rows}
    assert {"Q6_K", "Q5_K_M", "Q4_K_M", "IQ4_XS", "IQ3_XXS"} <= quants
    assert {4096, 131072} <= {r.context for r in e.rows}
    for q in quants:
        rows = sorted((r for r in e.rows if r.quant == q), key=lambda r: r.context)
        totals = [r.total_gib for r in rows]
        assert totals == sorted(totals)
        speeds = [r.decode_tps.mid for r in rows if r.decode_tps]
        assert speeds == sorted(speeds, reverse=True)
    for r in e.rows:
        assert r.status in ("smooth", "tight", "no_fit")
        if r.decode_tps:
            assert 0 < r.decode_tps.low < r.decode_tps.mid < r.decode_tps.high
            assert plan_for(e, r, CAT).command.startswith("llama-server")
        else:
            assert r.remedy is not None


def test_decode_never_beats_the_bandwidth_roofline():
    e = est(gpu="4090", model="llama 3.1 8b", quant=["Q4_K_M"], ctx=[4096])
    row = e.rows[0]
    roofline = 1008e9 / (row.weights_gib * 1024**3)
    assert row.decode_tps.high < roofline


def test_70b_on_one_24gb_card_offers_ways_out():
    e = est(gpu="RTX 4090", model="llama 3.3 70b", quant=["Q4_K_M"], ctx=[8192])
    row = e.rows[0]
    assert row.status == "no_fit"
    kinds = {row.remedy.kind} | {a.kind for a in row.remedy.alternatives}
    assert {"offload", "more_cards"} <= kinds
    cards = next(a for a in (row.remedy, *row.remedy.alternatives) if a.kind == "more_cards")
    assert cards.cards == 2


def test_two_cards_fit_what_one_does_not():
    one = est(gpu="3090", model="llama 3.3 70b", quant=["Q4_K_M"], ctx=[8192]).rows[0]
    pair = est(gpu="3090", count=2, model="llama 3.3 70b", quant=["Q4_K_M"], ctx=[8192])
    two = pair.rows[0]
    assert one.status == "no_fit" and two.status != "no_fit"
    command = plan_for(pair, two, CAT).command
    assert "-ts 1,1" in command or "-sm" in command


def test_moe_expert_offload_is_offered():
    row = est(gpu="4090", model="qwen3 235b a22b", quant=["Q4_K_M"], ctx=[32768], ram=256).rows[0]
    kinds = {row.remedy.kind} | {a.kind for a in row.remedy.alternatives}
    assert "expert_offload" in kinds


def test_unified_memory_mac():
    e = est(gpu="M2 Ultra", memory=192, model="llama 3.3 70b", quant=["Q4_K_M"], ctx=[8192])
    assert e.request.setup.os == "macos" and e.rows[0].status != "no_fit"


def test_quantized_kv_cache_shrinks_total():
    f16 = est(gpu="4090", model="qwen3 32b", quant=["Q4_K_M"], ctx=[32768]).rows[0]
    q8 = est(gpu="4090", model="qwen3 32b", quant=["Q4_K_M"], ctx=[32768], kv_type="q8_0").rows[0]
    assert q8.kv_gib == pytest.approx(f16.kv_gib * 34 / 64, rel=0.01)


def test_vllm_rows_use_serving_formats():
    e = est(gpu="A100 80G", model="qwen2.5 32b", framework="vllm")
    assert {r.quant for r in e.rows} & {"AWQ", "FP8", "HF-BF16"}


def test_context_beyond_native_is_flagged():
    e = est(gpu="A100 80G", model="llama 3 8b", quant=["Q4_K_M"], ctx=[8192, 16384])
    assert [r.beyond_native for r in e.rows] == [False, True]


@pytest.mark.parametrize(
    ("raw", "needle"),
    [
        ({"gpu": "RTX 9999", "model": "llama 3 8b"}, "unknown GPU"),
        ({"gpu": "4090", "model": "zzzz qqq"}, "unknown model"),
        ({"gpu": "4090", "model": "llama 3 8b", "quant": ["Q9_Z"]}, "unknown quantization"),
        ({"gpu": "4090", "model": "llama 3 8b", "ctx": ["lots"]}, "context"),
        ({"gpu": "4090", "model": "llama 3 8b", "kv_type": "q3"}, "KV cache type"),
        ({"gpu": "4090", "model": "llama 3 8b", "count": 0}, "count"),
        ({"gpu": "4090"}, "model"),
    ],
)
def test_bad_requests_give_clear_errors(raw, needle):
    with pytest.raises(QueryError, match=needle):
        run_query(raw, CAT)


def test_ktransformers_prices_the_experts_in_ram() -> None:
    """Named as the framework, KTransformers is an expert-offload run (every routed expert on the
    CPU) priced from both memories; its grid is the native-precision checkpoints, then the GGUF
    experts its classic --gguf_path recipe runs (catalogs/frameworks.toml ladder)."""
    from core.estimator.estimate import EstimateRequest, estimate
    from core.estimator.setup import HostSpec, build_setup

    cat = default_catalog()
    setup = build_setup(cat.gpus["rtx-4090"], cat, host_spec=HostSpec(1024, "DDR5-4800", 8))
    est = estimate(
        EstimateRequest(setup, cat.models["deepseek-r1"], (), (4096,), framework="ktransformers"), cat
    )
    assert est.framework == "ktransformers"
    assert [r.quant for r in est.rows] == ["FP8", "HF-BF16", "Q4_K_M", "UD-Q2_K_XL"]
    fp8 = est.rows[0]
    assert fp8.status != "no_fit" and fp8.remedy is not None and fp8.remedy.kind == "expert_offload"
    assert fp8.decode_tps is not None and 2 < fp8.decode_tps.mid < 30


def test_ktransformers_prefill_is_cpu_bound_short_and_layerwise_long() -> None:
    """A short prompt has the CPU compute the experts (hybrid prefill: slow per token); a long one
    streams them to the GPU once per 32K chunk (layerwise: many times faster per token), as the
    KTransformers docs describe and its published runs show (~130 tok/s at 2K, 1000+ at 8K+)."""
    from core.estimator.estimate import EstimateRequest, estimate
    from core.estimator.setup import HostSpec, build_setup

    cat = default_catalog()
    setup = build_setup(cat.gpus["rtx-5090"], cat, host_spec=HostSpec(768, "DDR5-4800", 12))
    model = cat.models["minimax-m2"]

    def prefill(prompt: int) -> float:
        req = EstimateRequest(setup, model, ("FP8",), (40960,), prompt=prompt, framework="ktransformers")
        row = estimate(req, cat).rows[0]
        assert row.prefill_tps is not None
        return row.prefill_tps.mid

    short, long = prefill(2048), prefill(32768)
    assert 50 < short < 400 and long > 3 * short


def test_ttft_is_the_prompt_from_an_empty_context_and_the_full_context_is_said_apart() -> None:
    """Issue 23: a row's prefill and time to first token are the prompt prefilled from 0 (the average
    rate over 0..prompt), not the rate at the row's full depth; the same prompt sent into the full
    context is its own, slower figure."""
    grid = est(gpu="rtx-4090", model="qwen3-8b", quant=["Q4_K_M"], ctx=[4096, 32768])
    empty = est(gpu="rtx-4090", model="qwen3-8b", quant=["Q4_K_M"], ctx=[32768], depth=0)
    deep = est(gpu="rtx-4090", model="qwen3-8b", quant=["Q4_K_M"], ctx=[32768], depth=32768)
    short, full = grid.rows
    assert full.ttft_s == empty.rows[0].ttft_s == short.ttft_s  # the prompt's cost doesn't grow with ctx
    assert full.deep_ttft_s == deep.rows[0].ttft_s and full.deep_ttft_s > full.ttft_s
    assert full.deep_prefill_tps is not None and full.prefill_tps is not None
    assert full.deep_prefill_tps.mid < full.prefill_tps.mid
    assert empty.rows[0].deep_prefill_tps is None  # a depth the question named: one figure, at it
