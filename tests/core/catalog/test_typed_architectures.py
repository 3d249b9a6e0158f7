"""Issue 22's readers: each architecture read from its config.json fixture (see each SOURCE.txt for
where the keys come from and the published count) against the published safetensors parameter
total, within 0.5 %; KV per token where the architecture makes it differ from plain GQA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.catalog.from_config import ConfigError, read_config
from core.catalog.loader import default_catalog
from core.estimator.memory import kv_shape

FIXTURES = Path(__file__).parent / "hub_configs"


def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / name / "config.json").read_text(encoding="utf-8"))
    return loaded


# fixture -> (published safetensors total, published active count or None for a dense model)
PUBLISHED = {
    "HuggingFaceTB__SmolLM3-3B": (3_075_098_624, None),
    "tiiuae__Falcon3-10B-Instruct": (10_305_653_760, None),
    "allenai__OLMo-2-1124-13B-Instruct": (13_716_198_400, None),
    "openbmb__MiniCPM4-8B": (8_185_253_888, None),
    "LGAI-EXAONE__EXAONE-4.0-32B": (32_003_216_384, None),
    "allenai__OLMoE-1B-7B-0924": (6_919_161_856, 1_280_000_000),  # card: "1B active" (1.3B with embeddings)
    "microsoft__Phi-3.5-MoE-instruct": (41_873_153_344, 6_600_000_000),  # card: "6.6B active"
    "internlm__internlm2_5-7b-chat": (7_737_708_544, None),
    "THUDM__glm-4-9b-chat-hf": (9_399_951_360, None),
    # Meta's "109B / 400B total, 17B active" count the vision tower (the reading's total does too)
    "meta-llama__Llama-4-Scout-17B-16E": (109_000_000_000, 17_000_000_000),
    "meta-llama__Llama-4-Maverick-17B-128E-Instruct": (400_000_000_000, 17_000_000_000),
}


@pytest.mark.parametrize("name", list(PUBLISHED))
def test_parameters_match_the_published_count(name: str) -> None:
    total, active = PUBLISHED[name]
    reading = read_config(_fixture(name))
    off = reading.params.total / total - 1
    print(f"\n{name}: {reading.params.total:,} vs {total:,} ({off * 100:+.3f} %)")
    assert abs(off) <= 0.005
    if active is not None:
        assert reading.params.active == pytest.approx(active, rel=0.05)


def test_exaone4_three_sliding_layers_to_one_global() -> None:
    m = read_config(_fixture("LGAI-EXAONE__EXAONE-4.0-32B")).model
    assert (m.attention, m.sliding_window, m.global_layers) == ("swa_hybrid", 4096, 16)
    shape = kv_shape(m)
    assert shape.full_values_per_token == 16 * 2 * 8 * 128 and shape.swa_values_per_token == 48 * 2 * 8 * 128


def test_exaone4_pattern_without_layer_types() -> None:
    cfg = {k: v for k, v in _fixture("LGAI-EXAONE__EXAONE-4.0-32B").items() if k != "layer_types"}
    m = read_config(cfg).model
    assert (m.attention, m.global_layers) == ("swa_hybrid", 16)
    every = read_config(dict(cfg, sliding_window=None, sliding_window_pattern=None)).model
    assert every.attention == "full"  # the 1.2B: every layer global


def test_olmoe_and_phimoe_are_moe_with_full_attention() -> None:
    olmoe = read_config(_fixture("allenai__OLMoE-1B-7B-0924")).model
    assert (olmoe.experts, olmoe.experts_active, olmoe.moe_intermediate_size) == (64, 8, 1024)
    phimoe = read_config(_fixture("microsoft__Phi-3.5-MoE-instruct")).model
    assert (phimoe.experts, phimoe.experts_active, phimoe.kv_heads) == (16, 2, 8)
    assert kv_shape(phimoe).full_values_per_token == 32 * 2 * 8 * 128


def test_minicpm_reads_as_llama_and_minicpm3_says_why_not() -> None:
    m = read_config(_fixture("openbmb__MiniCPM4-8B")).model
    assert (m.layers, m.kv_heads, m.head_dim, m.tied_embeddings) == (32, 2, 128, False)
    with pytest.raises(ConfigError, match="minicpm3"):
        read_config(dict(_fixture("openbmb__MiniCPM4-8B"), model_type="minicpm3"))


def test_internlm2_with_biases_is_refused() -> None:
    with pytest.raises(ConfigError, match="bias"):
        read_config(dict(_fixture("internlm__internlm2_5-7b-chat"), bias=True))


def test_smollm3_nope_layers_change_no_count() -> None:
    cfg = _fixture("HuggingFaceTB__SmolLM3-3B")
    assert read_config(cfg).params == read_config(dict(cfg, no_rope_layers=None)).params


# ---------------------------------------------------------------- Llama 4

SCOUT, MAVERICK = "meta-llama__Llama-4-Scout-17B-16E", "meta-llama__Llama-4-Maverick-17B-128E-Instruct"
LLAMA4_VISION = 871_932_416  # ViT (34 blocks), pixel-shuffle adapter, projector: stored, not in params_b


@pytest.mark.parametrize(("name", "entry"), [(SCOUT, "llama-4-scout"), (MAVERICK, "llama-4-maverick")])
def test_llama4_matches_the_catalog_entry(name: str, entry: str) -> None:
    reading = read_config(_fixture(name))
    m, known = reading.model, default_catalog().models[entry]
    # The catalog's params_b is the text decoder alone; the vision tower is counted apart.
    assert (m.params_b, m.active_params_b) == (known.params_b, known.active_params_b)
    assert reading.params.vision == LLAMA4_VISION
    shape = ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab", "intermediate_size")
    moe = ("experts", "experts_active", "shared_experts", "moe_intermediate_size", "moe_layer_step")
    swa = ("attention", "sliding_window", "global_layers")
    for key in shape + moe + swa:
        if key == "intermediate_size" and m.moe_layer_step == 1:
            # Scout has no dense layer: the catalog's 8192 (maxtext) and the config's
            # intermediate_size_mlp 16384 size nothing.
            continue
        assert getattr(m, key) == getattr(known, key), key


def test_llama4_decoder_counts() -> None:
    scout = read_config(_fixture(SCOUT)).params
    maverick = read_config(_fixture(MAVERICK)).params
    assert (scout.decoder, scout.active) == (107_769_861_120, 17_172_894_720)
    assert (maverick.decoder, maverick.active) == (400_711_848_960, 17_184_691_200)


def test_llama4_chunked_layers_cache_one_chunk_the_nope_layers_everything() -> None:
    for name in (SCOUT, MAVERICK):  # Scout lists no_rope_layers; Maverick's come from the default interval 4
        m = read_config(_fixture(name)).model
        shape = kv_shape(m)
        assert (m.attention, m.sliding_window, m.global_layers) == ("swa_hybrid", 8192, 12)
        assert shape.full_values_per_token == 12 * 2 * 8 * 128
        assert shape.swa_values_per_token == 36 * 2 * 8 * 128


def test_llama4_without_chunking_is_full_attention() -> None:
    cfg = _fixture(SCOUT)
    text = dict(cfg["text_config"], attention_chunk_size=None)
    m = read_config(dict(cfg, text_config=text)).model
    assert m.attention == "full"
    assert read_config(dict(cfg, text_config=text)).params.decoder == read_config(cfg).params.decoder


def test_llama4_text_only_checkpoint_reads_without_the_tower() -> None:
    cfg = _fixture(SCOUT)
    text = dict(cfg["text_config"], tie_word_embeddings=False)  # a Llama4ForCausalLM config.json
    reading = read_config(text)
    assert reading.params.decoder == read_config(cfg).params.decoder and not reading.params.vision


def test_llama4_moe_layers_off_the_step_are_refused() -> None:
    cfg = _fixture(MAVERICK)
    text = dict(cfg["text_config"], moe_layers=[0, 5, 9])
    with pytest.raises(ConfigError, match="moe_layers"):
        read_config(dict(cfg, text_config=text))
    listed = dict(cfg["text_config"], moe_layers=list(range(1, 48, 2)))
    assert read_config(dict(cfg, text_config=listed)).params == read_config(cfg).params
