"""The quant catalog: exact ggml type sizes, recipes that name real types, sane bpw, unique aliases."""

from __future__ import annotations

import re

import pytest

from core.catalog.loader import default_catalog
from core.estimator.weights import resolved_recipe

CAT = default_catalog()

# ggml's block structs (ggml/src/ggml-common.h) and type traits: (block size, bytes per block).
GGML_SIZES = {
    "F32": (1, 4), "F16": (1, 2), "BF16": (1, 2),
    "Q4_0": (32, 18), "Q4_1": (32, 20), "Q5_0": (32, 22), "Q5_1": (32, 24), "Q8_0": (32, 34),
    "Q2_K": (256, 84), "Q3_K": (256, 110), "Q4_K": (256, 144), "Q5_K": (256, 176),
    "Q6_K": (256, 210), "Q8_K": (256, 292),
    "IQ1_S": (256, 50), "IQ1_M": (256, 56), "IQ2_XXS": (256, 66), "IQ2_XS": (256, 74),
    "IQ2_S": (256, 82), "IQ3_XXS": (256, 98), "IQ3_S": (256, 110), "IQ4_NL": (32, 18),
    "IQ4_XS": (256, 136), "TQ1_0": (256, 54), "TQ2_0": (256, 66), "MXFP4": (32, 17),
    "NVFP4": (64, 36), "Q1_0": (128, 18), "Q2_0": (64, 18),
}  # fmt: skip


@pytest.mark.parametrize("type_id", sorted(GGML_SIZES))
def test_ggml_type_sizes(type_id: str) -> None:
    t = CAT.ggml_types[type_id]
    assert (t.block_size, t.block_bytes) == GGML_SIZES[type_id]
    assert t.kind == "ggml"


def test_k_quant_bits_per_weight() -> None:
    assert CAT.ggml_types["Q4_K"].bits_per_weight == 4.5
    assert CAT.ggml_types["Q6_K"].bits_per_weight == 6.5625
    assert CAT.ggml_types["Q8_0"].bits_per_weight == 8.5


def test_fallbacks_name_existing_32_block_types() -> None:
    for t in CAT.ggml_types.values():
        if t.fallback:
            assert CAT.ggml_types[t.fallback].block_size == 32, t.id


@pytest.mark.parametrize("quant_id", sorted(CAT.quants))
def test_recipe_refers_to_existing_types(quant_id: str) -> None:
    quant = CAT.quants[quant_id]
    if quant.extends:
        assert quant.extends in CAT.quants
    recipe, rules = resolved_recipe(quant, CAT)
    assert "default" in recipe, "every quant needs a default storage type"
    for cls, type_id in recipe.items():
        assert type_id in CAT.ggml_types, f"{quant_id}: {cls} -> {type_id}"
    for rule in rules:
        assert rule.type in CAT.ggml_types
        assert all(t in CAT.ggml_types for t in rule.from_types)
        for cond in rule.when:
            assert re.fullmatch(r"(gqa|experts|layers|hidden|native_mxfp4|tied)(==|!=|>=|<=|>|<)-?\d+", cond)
        assert rule.layers in {"all", "more_bits", "first_8th", "first_16th", "middle"} or re.fullmatch(
            r"first:\d+", rule.layers
        )
    if quant.format == "gguf":
        assert all(CAT.ggml_types[t].kind == "ggml" for t in recipe.values())


@pytest.mark.parametrize("quant_id", sorted(CAT.quants))
def test_bpw_plausible(quant_id: str) -> None:
    q = CAT.quants[quant_id]
    assert 1.0 <= q.bpw <= 16.5 or q.id == "F32"
    assert 0 <= q.quality <= 100


def _norm(alias: str) -> str:
    return "".join(ch for ch in alias.lower() if ch not in "-_ .")


def test_aliases_unique_across_quants() -> None:
    owner: dict[str, str] = {}
    for quant in CAT.quants.values():
        for alias in {_norm(a) for a in (quant.id, *quant.aliases)}:
            assert owner.setdefault(alias, quant.id) == quant.id, (
                f"alias {alias!r} used by {owner[alias]} and {quant.id}"
            )


def test_documented_alias_choices() -> None:
    by_alias = {_norm(a): q.id for q in CAT.quants.values() for a in (q.id, *q.aliases)}
    assert by_alias["q4"] == "Q4_K_M"
    assert by_alias["4bit"] == "Q4_K_M"
    assert by_alias["q4km"] == "Q4_K_M"
    assert by_alias["int4"] == "GPTQ-INT4"
    assert by_alias["awq"] == "AWQ"
    assert by_alias["fp8"] == "FP8"
    assert by_alias["158bit"] == "UD-IQ1_S"
    assert by_alias["mxfp4"] == "MXFP4"


def test_compute_capability_gates() -> None:
    assert CAT.quants["FP8"].min_compute_capability == 8.9
    assert CAT.quants["AWQ"].min_compute_capability == 7.5


def test_formats_present() -> None:
    formats = {q.format for q in CAT.quants.values()}
    assert formats == {"gguf", "serving", "mlx"}
