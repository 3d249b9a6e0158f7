"""Weights of block-per-layer hybrids (Model.layer_pattern, Nemotron-H) tensor by tensor.

Figures checked: the BF16 checkpoint (31,577,940,288 parameters x 2 bytes) and llama-bench's "size"
of published GGUFs of NVIDIA-Nemotron-3-Nano-30B-A3B: Q4_K_M 22.82 GiB (CPU run, build 5f04dc7ac)
and 22.96 GiB (Vulkan run), Q5_K_M 24.40 GiB, unsloth IQ4_XS 18,161,059,584 bytes (imatrix quants;
the per-tensor rules follow llama-quantize without one).
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from core.catalog.loader import default_catalog
from core.estimator.memory import kv_cache_bytes, kv_shape
from core.estimator.weights import weight_breakdown

CATALOG = default_catalog()
NANO = CATALOG.models["nemotron-3-nano-30b-a3b"]
GIB = 2**30


def _wb(quant: str, model=NANO):  # type: ignore[no-untyped-def]
    return weight_breakdown(model, CATALOG.quants[quant], CATALOG)


def test_bf16_is_the_checkpoint_and_no_width_is_derived() -> None:
    wb = _wb("BF16")
    assert wb.params == 31_577_940_288 and wb.derived == ()
    # every 2-D tensor BF16; norms, conv1d, dt/A/D, router at F32 (35 MB)
    assert wb.total_bytes == pytest.approx(31_577_940_288 * 2, rel=0.001)
    assert wb.total_bytes < 64e9  # not the 139 GB of 52 attention + MoE layers


def test_q4_k_m_matches_llama_bench() -> None:
    # hidden 2688 and expert width 1856 are not multiples of 256: Q4_K falls back to Q5_0
    wb = _wb("Q4_K_M")
    assert wb.total_bytes / GIB == pytest.approx(22.82, rel=0.01)
    assert dict(wb.bytes_by_type)["Q5_0"] > dict(wb.bytes_by_type).get("Q4_K", 0)
    assert _wb("Q5_K_M").total_bytes / GIB == pytest.approx(24.40, rel=0.01)
    assert _wb("IQ4_XS").total_bytes == pytest.approx(18_161_059_584, rel=0.015)


def test_decode_reads_the_active_share() -> None:
    wb = _wb("Q4_K_M")
    # 6 of 128 experts + the rest: about a tenth of the file, not all of it
    assert 0.08 < wb.active_bytes_per_token / wb.total_bytes < 0.13
    assert sum(1 for b in wb.layer_expert_bytes if b) == NANO.layer_pattern.count("E")
    # Mamba layers hold no experts; attention layers are the smallest
    mamba = [b for b, c in zip(wb.layer_bytes, NANO.layer_pattern, strict=True) if c == "M"]
    attention = [b for b, c in zip(wb.layer_bytes, NANO.layer_pattern, strict=True) if c == "*"]
    assert max(attention) < min(mamba)


def test_kv_grows_in_the_six_attention_layers_only() -> None:
    shape = kv_shape(NANO)
    assert shape.full_values_per_token == 6 * 2 * 2 * 128  # 6 KiB per token at f16
    assert shape.state_bytes / 2**20 == pytest.approx(47.6, abs=0.1)
    at_128k = kv_cache_bytes(NANO, 131072, "f16", CATALOG)
    assert at_128k / GIB == pytest.approx(0.75 + 47.6 / 1024, rel=0.01)
    # two sequences: twice the Mamba state, the same per-token cache
    two = kv_cache_bytes(NANO, 131072, "f16", CATALOG, n_seq=2)
    assert two - at_128k == pytest.approx(shape.state_bytes)


def test_a_dense_mlp_pattern_needs_its_width() -> None:
    dense = replace(NANO, id="nemotron-h-dense-test", layer_pattern="M-M*" * 13, intermediate_size=None)
    with pytest.raises(ValueError, match="intermediate_size"):
        _wb("Q8_0", dense)
    sized = replace(dense, intermediate_size=21504, experts=None, experts_active=None, shared_experts=None)
    wb = _wb("Q8_0", sized)
    assert wb.expert_bytes == 0 and wb.params < NANO.params_b * 1e9


# ---------------------------------------------------------------- Granite 4.0-H: mixer + FFN per layer

GRANITE = CATALOG.models["granite-4.0-h-small"]


def test_granite_bf16_is_every_layer_mixer_plus_moe() -> None:
    """layer_ffn adds the FFN after each mixer: the BF16 tensor list is the config's count (the
    reader's 32,207,337,984) with no width derived; experts are 3-D routed tensors in all 40 layers."""
    wb = weight_breakdown(GRANITE, CATALOG.quants["BF16"], CATALOG)
    assert wb.derived == ()
    assert abs(wb.params - 32_207_337_984) <= 40 * 72  # router biases are not stored: none here
    assert len(wb.layer_bytes) == 40 and all(b > 0 for b in wb.layer_expert_bytes)
    # an attention layer and a Mamba layer both carry the same MoE
    assert wb.layer_expert_bytes[5] == wb.layer_expert_bytes[0]


def test_granite_kv_only_in_its_four_attention_layers() -> None:
    shape = kv_shape(GRANITE)
    assert shape.full_values_per_token == 4 * 2 * 8 * 128
    # Mamba-2 state: 36 layers x ((4-1) x (8192 + 256) + 8192 x 128) x 4 bytes
    assert shape.state_bytes == pytest.approx(36 * (3 * 8448 + 8192 * 128) * 4)


def test_granite_dense_hybrid_has_no_expert_tensors() -> None:
    micro = CATALOG.models["granite-4.0-h-micro"]
    wb = weight_breakdown(micro, CATALOG.quants["BF16"], CATALOG)
    assert wb.expert_bytes == 0 and wb.derived == ()
    assert abs(wb.params / 3.19e9 - 1) < 0.002  # llama-bench: 3.19 B
