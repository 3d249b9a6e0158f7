"""Per-tensor weight accounting: llama.cpp's type choices, measured buffer sizes, published files."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import pytest

from core.catalog.loader import default_catalog
from core.catalog.model import Model
from core.estimator.weights import weight_breakdown

CAT = default_catalog()
MIB = 2**20
REPO_ROOT = Path(__file__).resolve().parents[3]
REFERENCE = REPO_ROOT.parent / "shared" / "reference"


def _model(**kw: object) -> Model:
    base: dict[str, object] = dict(
        id="test-model", family="Test", name="Test", aliases=(), params_b=6.74, active_params_b=6.74,
        layers=32, hidden=4096, heads=32, kv_heads=32, head_dim=128, vocab=32000, max_context=2048,
        intermediate_size=11008,
    )  # fmt: skip
    base.update(kw)
    return Model(**base)  # type: ignore[arg-type]


OPENLLAMA = _model(id="openllama-7b-v2")


def test_v100_openllama_q4_0_buffers() -> None:
    # ggml-org/ci V100 log (llama.cpp b2197): 'CUDA0 buffer size = 3577.56 MiB', CPU 70.31 MiB.
    wb = weight_breakdown(OPENLLAMA, CAT.quants["Q4_0"], CAT)
    assert wb.gpu_bytes_full_offload / MIB == pytest.approx(3577.56, abs=0.01)
    assert wb.token_embd_bytes / MIB == pytest.approx(70.31, abs=0.01)
    assert wb.host_bytes_full_offload == wb.token_embd_bytes


@pytest.mark.parametrize(("quant", "mib"), [("Q8_0", 6695.84), ("F16", 12603.02)])
def test_v100_openllama_other_quants(quant: str, mib: float) -> None:
    # llama.cpp pads each tensor in the buffer (a few KiB in all)
    wb = weight_breakdown(OPENLLAMA, CAT.quants[quant], CAT)
    assert wb.gpu_bytes_full_offload / MIB == pytest.approx(mib, abs=0.02)


def test_llama_bench_sizes_exact() -> None:
    # llama-bench 'size' column (XiongjieDai LLaMA 3 notebooks): 8B Q4_K_M 4.58 GiB, 70B Q4_K_M 39.59.
    for mid, quant, gib in [("llama-3-8b", "Q4_K_M", 4.58), ("llama-3-70b", "Q4_K_M", 39.59),
                            ("llama-3-8b", "F16", 14.96), ("llama-2-7b", "Q4_0", 3.56)]:  # fmt: skip
        wb = weight_breakdown(CAT.models[mid], CAT.quants[quant], CAT)
        assert wb.total_gib == pytest.approx(gib, abs=0.006), mid


def _types(model: Model, quant: str) -> dict[str, int]:
    return dict(weight_breakdown(model, CAT.quants[quant], CAT).bytes_by_type)


def test_q4_k_m_mix_full_attention_gqa() -> None:
    m = CAT.models["llama-3.1-8b"]
    wb = weight_breakdown(m, CAT.quants["Q4_K_M"], CAT)
    types = dict(wb.bytes_by_type)
    assert set(types) == {"Q4_K", "Q6_K", "F32"}
    # output (128256 x 4096) is Q6_K; token_embd Q4_K; more_bits layers of attn_v / ffn_down Q6_K.
    assert wb.output_bytes == 128256 * 4096 * 210 // 256
    assert wb.token_embd_bytes == 128256 * 4096 * 144 // 256
    ffn_down_q6 = 14336 * 4096 * 210 // 256
    ffn_down_q4 = 14336 * 4096 * 144 // 256
    assert wb.layer_bytes[0] - wb.layer_bytes[4] == ffn_down_q6 - ffn_down_q4 + 1024 * 4096 * 66 // 256
    assert not wb.output_tied and wb.expert_bytes == 0
    assert wb.gpu_bytes_full_offload == wb.total_bytes - wb.token_embd_bytes
    assert wb.active_bytes_per_token == wb.gpu_bytes_full_offload


def test_70b_attn_v_bump_and_row_fallback() -> None:
    # Qwen2.5-72B: 80 layers -> attn_v Q5_K; ffn_down rows of 29568 are not a multiple of 256 ->
    # Q4_K falls back to Q5_0 and Q6_K to Q8_0.
    types = _types(CAT.models["qwen2.5-72b"], "Q4_K_M")
    assert {"Q5_K", "Q5_0", "Q8_0"} <= set(types)


def test_tied_embeddings_output_is_gpu_copy() -> None:
    m = CAT.models["qwen3-0.6b"]
    assert m.tied_embeddings
    wb = weight_breakdown(m, CAT.quants["Q4_K_M"], CAT)
    assert wb.output_tied and wb.output_bytes == wb.token_embd_bytes
    assert wb.token_embd_bytes == m.vocab * m.hidden * 210 // 256  # takes the output type Q6_K
    assert wb.gpu_bytes_full_offload == wb.total_bytes  # host embd + identical GPU head


def test_swa_hybrid_same_tensors_as_full() -> None:
    g = CAT.models["gemma-3-27b"]
    assert g.attention == "swa_hybrid"
    full = dataclasses.replace(g, attention="full", sliding_window=None)
    assert weight_breakdown(g, CAT.quants["Q4_K_M"], CAT).total_bytes == (
        weight_breakdown(full, CAT.quants["Q4_K_M"], CAT).total_bytes
    )


def test_mla_deepseek_shapes() -> None:
    m = CAT.models["deepseek-v3"]
    wb = weight_breakdown(m, CAT.quants["Q8_0"], CAT)
    assert wb.params / 1e9 == pytest.approx(671, rel=0.01)
    # 3 dense layers, 58 MoE layers with routed experts; 8 of 256 experts per token.
    assert wb.layer_expert_bytes[:3] == (0, 0, 0) and all(b > 0 for b in wb.layer_expert_bytes[3:])
    assert wb.layer_bytes[0] < wb.layer_bytes[3]
    assert wb.active_bytes_per_token < 0.08 * wb.total_bytes


def test_mla_without_fields_still_works() -> None:
    m = dataclasses.replace(CAT.models["kimi-k2"], q_lora_rank=None, qk_nope_dim=None, v_head_dim=None)
    wb = weight_breakdown(m, CAT.quants["Q4_K_M"], CAT)
    assert wb.params / 1e9 == pytest.approx(m.params_b, rel=0.02)


def test_linear_hybrid_from_shapes_and_from_params() -> None:
    m = CAT.models["qwen3-next-80b-a3b"]
    wb = weight_breakdown(m, CAT.quants["BF16"], CAT)
    assert wb.params / 1e9 == pytest.approx(m.params_b, rel=0.01)
    bare = dataclasses.replace(m, id="qn-bare", linear_kind="", linear_key_heads=None)
    wb2 = weight_breakdown(bare, CAT.quants["BF16"], CAT)
    assert wb2.params / 1e9 == pytest.approx(m.params_b, rel=0.02)


def test_moe_expert_offload_numbers() -> None:
    m = CAT.models["qwen3-30b-a3b"]
    wb = weight_breakdown(m, CAT.quants["Q4_K_M"], CAT)
    assert wb.expert_bytes == sum(wb.layer_expert_bytes)
    assert 0.85 < wb.expert_bytes / wb.total_bytes < 0.97
    non_expert = wb.gpu_bytes_full_offload - wb.expert_bytes
    assert wb.active_bytes_per_token == pytest.approx(non_expert + wb.expert_bytes * 8 / 128, abs=2)


def test_gpt_oss_mxfp4() -> None:
    m = CAT.models["gpt-oss-20b"]
    ggml = weight_breakdown(m, CAT.quants["MXFP4"], CAT)  # ggml-org file: rest Q8_0
    assert ggml.total_gib == pytest.approx(11.27, rel=0.01)  # llama-bench size 11.27 GiB
    native = weight_breakdown(m, CAT.quants["HF-MXFP4"], CAT)  # as OpenAI ships: rest BF16
    assert native.total_bytes > ggml.total_bytes
    assert dict(native.bytes_by_type)["MXFP4"] == dict(ggml.bytes_by_type)["MXFP4"]
    # experts keep MXFP4 in llama.cpp quants of gpt-oss
    assert "MXFP4" in _types(m, "Q4_K_M")


def test_missing_widths_derived_from_params() -> None:
    m = dataclasses.replace(CAT.models["llama-3.1-8b"], intermediate_size=None)
    wb = weight_breakdown(m, CAT.quants["Q4_K_M"], CAT)
    exact = weight_breakdown(CAT.models["llama-3.1-8b"], CAT.quants["Q4_K_M"], CAT)
    assert wb.total_bytes == pytest.approx(exact.total_bytes, rel=0.002)
    assert wb.derived
    moe = dataclasses.replace(CAT.models["mixtral-8x7b"], moe_intermediate_size=None)
    assert weight_breakdown(moe, CAT.quants["Q4_K_M"], CAT).params / 1e9 == pytest.approx(46.7, rel=0.01)


def test_serving_formats_put_everything_on_gpu() -> None:
    m = CAT.models["qwen2.5-7b"]
    awq = weight_breakdown(m, CAT.quants["AWQ"], CAT)
    assert awq.gpu_bytes_full_offload == awq.total_bytes == awq.file_bytes
    bf16 = weight_breakdown(m, CAT.quants["HF-BF16"], CAT)
    assert bf16.total_bytes == pytest.approx(m.params_b * 2e9, rel=0.01)
    fp8 = weight_breakdown(m, CAT.quants["FP8"], CAT)
    assert awq.total_bytes < fp8.total_bytes < bf16.total_bytes


@pytest.mark.parametrize("quant_id", sorted(CAT.quants))
def test_every_quant_every_model_runs(quant_id: str) -> None:
    for m in CAT.models.values():
        wb = weight_breakdown(m, CAT.quants[quant_id], CAT)
        assert wb.total_bytes > 0 and len(wb.layer_bytes) == m.layers


def test_a_repeated_call_is_served_from_the_cache() -> None:
    """The estimator asks this tens of times per grid: a repeat returns the very same breakdown,
    not a recount (the µs per call is scripts/bench_estimate_speed.py's figure)."""
    m, q = CAT.models["deepseek-r1"], CAT.quants["Q4_K_M"]
    first = weight_breakdown(m, q, CAT)
    assert all(weight_breakdown(m, q, CAT) is first for _ in range(3))
    twin = dataclasses.replace(m)  # an equal model that is another object: computed, not a stale hit
    assert weight_breakdown(twin, q, CAT) is not first and weight_breakdown(twin, q, CAT) == first


@pytest.mark.skipif(not (REFERENCE / "gguf_sizes.csv").exists(), reason="shared reference absent")
def test_published_gguf_sizes_regression() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_weights", REPO_ROOT / "scripts" / "bench_weights.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = bench  # dataclasses in the script look their module up
    spec.loader.exec_module(bench)
    rows, _ = bench.gguf_rows(REFERENCE, CAT)
    summary = bench.summarize(rows)
    assert summary["n"] >= 400
    assert summary["median"] < 1.5
    assert summary["median"] < summary["bpw_median"]
    rows, _ = bench.calibration_rows(REFERENCE, CAT)
    assert bench.summarize(rows)["median"] < 1.5


def test_grouped_type_choice_matches_tensor_by_tensor() -> None:
    """_compute chooses one type per group of alike tensors unless a rule picks layers; summed
    tensor by tensor with the chooser instead, every catalog model x quant comes out the same."""
    from core.estimator.weights import _chooser, _compute, _nbytes, _tensors

    catalog = default_catalog()
    for model in catalog.models.values():
        for quant_id in ("Q4_K_M", "Q2_K", "IQ3_XXS", "Q6_K", "MXFP4", "AWQ"):
            quant = catalog.quants.get(quant_id)
            if quant is None:
                continue
            tensors, _ = _tensors(model)
            choose, _ = _chooser(model, quant, catalog)
            layer_bytes = [0] * model.layers
            for t in tensors:
                if t.layer >= 0:
                    layer_bytes[t.layer] += _nbytes(t, choose(t))
            assert list(_compute(model, quant, catalog).layer_bytes) == layer_bytes, (model.id, quant_id)
