"""Issue 22's readers: each architecture read from its config.json fixture (see each SOURCE.txt for
where the keys come from and the published count) against the published safetensors parameter
total, within 0.5 %; KV per token where the architecture makes it differ from plain GQA."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.catalog.from_config import ConfigError, read_config
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
