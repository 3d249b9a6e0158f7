"""ik_llama.cpp's own quant types (sizes from its block structs, who can load them) and the EXL2/EXL3
families with a free bits-per-weight."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.catalog.quant import QuantTable, TypeTable, bpw_text, free_bpw_mentions, free_bpw_quant, member_id
from core.estimator.weights import weight_breakdown

CAT = default_catalog()

# github:ikawrakow/ik_llama.cpp@8337e4c ggml/src/ggml-common.h + ggml.c type_traits: bytes per 256 weights
# (per 32 for the IQ1 repacks), as ggml's static_asserts compute them.
IK_SIZES = {
    "IQ2_K": (256, 2 + 2 + 8 + 64), "IQ2_KS": (256, 2 + 4 + 64), "IQ2_KL": (256, 2 + 4 + 64 + 16),
    "IQ3_K": (256, 2 + 4 + 8 + 64 + 32), "IQ3_KS": (256, 2 + 4 + 64 + 32), "IQ4_K": (256, 2 + 2 + 128 + 12),
    "IQ4_KS": (256, 8 + 128), "IQ4_KSS": (256, 128), "IQ5_K": (256, 2 + 2 + 128 + 32 + 12),
    "IQ5_KS": (256, 8 + 128 + 32), "IQ6_K": (256, 2 + 2 + 128 + 64 + 16), "IQ2_KT": (256, 64 + 4),
    "IQ3_KT": (256, 64 + 32 + 4), "IQ4_KT": (256, 128), "IQ1_S_R4": (32, 24 // 4), "IQ1_M_R4": (32, 28 // 4),
    # a row-interleaved repack stores the same bytes per weight as its base type
    "IQ2_K_R4": (256, 76), "IQ3_K_R4": (256, 110), "IQ4_K_R4": (256, 144), "IQ5_K_R4": (256, 176),
    "Q2_K_R4": (256, 84), "Q3_K_R4": (256, 110), "Q4_K_R4": (256, 144), "Q6_K_R4": (256, 210),
}  # fmt: skip


@pytest.mark.parametrize("type_id", sorted(IK_SIZES))
def test_ik_type_sizes(type_id: str) -> None:
    t = CAT.ggml_types[type_id]
    assert (t.block_size, t.block_bytes) == IK_SIZES[type_id]
    assert "ik_llama.cpp" in t.source and "8337e4c" in t.source


def test_named_bits_per_weight() -> None:
    assert CAT.ggml_types["IQ2_K_R4"].bits_per_weight == 2.375
    assert CAT.ggml_types["IQ3_K"].bits_per_weight == 3.4375
    assert CAT.ggml_types["IQ4_KS"].bits_per_weight == 4.25
    assert CAT.ggml_types["IQ5_K"].bits_per_weight == 5.5
    assert CAT.ggml_types["Q2_K_R4"].bits_per_weight == CAT.ggml_types["Q2_K"].bits_per_weight


def test_ik_quants_are_loaded_by_ik_only() -> None:
    for qid in ("IQ2_K_R4", "IQ3_K", "IQ5_K", "Q2_K_R4", "IQ4_KS", "IQ1_S_R4"):
        q = CAT.quants[qid]
        assert q.format == "gguf" and q.loaders == ("ik_llama.cpp",), qid
    # mainline quants stay loadable everywhere
    assert CAT.quants["Q4_K_M"].loaders == () and CAT.quants["Q2_K"].loaders == ()


def test_ubergarm_q2_k_r4_mix_matches_the_stated_file_size() -> None:
    """The DeepSeek layout (routed gate/up Q2_K_R4, down Q3_K_R4, the rest Q8_0) against the 238.69 GiB
    llama-bench printed for ubergarm's DeepSeek-R1 Q2_K_R4 (ik_llama.cpp discussion 258)."""
    gib = weight_breakdown(CAT.models["deepseek-r1"], CAT.quants["Q2_K_R4"], CAT).total_gib
    assert abs(gib / 238.69 - 1) < 0.02
    # the named IQ2_K_R4 mix is smaller (IQ2_K is 2.375 bpw against Q2_K's 2.625)
    assert weight_breakdown(CAT.models["deepseek-r1"], CAT.quants["IQ2_K_R4"], CAT).total_gib < gib


@pytest.mark.parametrize(
    ("text", "family", "bpw"),
    [
        ("EXL2-4.25bpw", "EXL2", 4.25),
        ("exl2 4.25bpw qwen2.5 72b on 2x3090", "EXL2", 4.25),
        ("EXL2 3.0 bpw", "EXL2", 3.0),
        ("EXL3-3.0bpw", "EXL3", 3.0),
        ("4.65bpw exl2", "EXL2", 4.65),
        ("exl3_2.5bpw", "EXL3", 2.5),
        ("exl2 4.0", "EXL2", 4.0),
        ("turboderp 的 exl3 3bpw 模型", "EXL3", 3.0),
        ("qwen2.5 72b 4.65bpw", "", 4.65),
    ],
)
def test_bpw_mentions(text: str, family: str, bpw: float) -> None:
    (found,) = free_bpw_mentions(text)
    assert (found.family, found.bpw) == (family, bpw)


@pytest.mark.parametrize("text", ["exl2 qwen2.5 72b", "exl2 1.5b", "llama 70b exl2 8b", "q4_k_m 4090"])
def test_no_bpw_is_no_mention(text: str) -> None:
    assert free_bpw_mentions(text) == ()


def test_members_are_made_on_demand_and_stay_unlisted() -> None:
    assert isinstance(CAT.quants, QuantTable) and isinstance(CAT.ggml_types, TypeTable)
    q = CAT.quants["EXL2-4.25"]
    assert (q.id, q.family, q.bpw, q.format, q.loaders) == (
        "EXL2-4.25",
        "EXL2",
        4.25,
        "serving",
        ("exllamav2",),
    )
    assert q is CAT.quants.get("EXL2-4.25") and "EXL2-4.25" in CAT.quants
    assert CAT.quants["EXL3-3"].id == "EXL3-3.0" and CAT.quants["exl3-3.0"] is CAT.quants["EXL3-3.0"]
    assert "EXL2-9.5" not in CAT.quants and CAT.quants.get("EXL2-1.0") is None  # EXL2 takes 2-8 bpw
    assert "EXL3-1.0" in CAT.quants  # EXL3 goes down to 1 bpw
    assert not any(k.startswith("EXL2-") for k in CAT.quants)  # iterating lists the catalog's own only
    assert CAT.ggml_types["BPW_4.25"].bits_per_weight == 4.25
    with pytest.raises(KeyError):
        CAT.quants["EXL4-4.0"]


def test_a_member_is_priced_at_its_bpw() -> None:
    model = CAT.models["qwen2.5-72b"]
    low = weight_breakdown(model, CAT.quants["EXL2-4.0"], CAT).total_gib
    high = weight_breakdown(model, CAT.quants["EXL2-5.0"], CAT).total_gib
    linear = model.params_b * 1e9 / 2**30 / 8  # GiB per bit of every weight
    assert 0.85 * linear < high - low < 1.0 * linear  # embeddings and head keep their own precision
    assert CAT.quants["EXL2-5.0"].quality > CAT.quants["EXL2-2.5"].quality


def test_free_bpw_quant_and_ids() -> None:
    assert free_bpw_quant("exl2 4.65bpw", CAT.quants) == "EXL2-4.65"
    assert free_bpw_quant("4.65bpw", CAT.quants) is None  # no family said
    assert free_bpw_quant("4.65bpw", CAT.quants, "EXL3") == "EXL3-4.65"
    assert free_bpw_quant("exl2 9.0bpw", CAT.quants) is None  # out of range
    assert (bpw_text(4), bpw_text(4.25), bpw_text(4.650)) == ("4.0", "4.25", "4.65")
    assert member_id("exl3", 3) == "EXL3-3.0"


def test_ubergarm_mixes_match_their_cards() -> None:
    """Qwen3-235B-A22B mix-IQ3_K: 106.830 GiB on ubergarm's card; DeepSeek-V3-0324 IQ2_K_R4: ~17.33 GiB of
    non-expert weights for the GPU (the card), the routed experts in RAM."""
    mix = weight_breakdown(CAT.models["qwen3-235b-a22b"], CAT.quants["MIX-IQ3_K"], CAT)
    assert abs(mix.total_gib / 106.830 - 1) < 0.01
    plain = weight_breakdown(CAT.models["qwen3-235b-a22b"], CAT.quants["IQ3_K"], CAT)
    assert plain.total_gib < mix.total_gib  # the plain type prices every tensor at 3.44 bpw
    v3 = weight_breakdown(CAT.models["deepseek-v3"], CAT.quants["IQ2_K_R4"], CAT)
    assert abs((v3.total_bytes - v3.expert_bytes) / 2**30 / 17.33 - 1) < 0.03
    assert CAT.quants["MIX-IQ3_K"].loaders == ("ik_llama.cpp",)
