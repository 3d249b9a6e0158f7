"""ERNIE 4.5, GLM-4-0414 and Granite 4.0-H read from their config.json fixtures (see each
SOURCE.txt): layer layout, KV per token, what is refused, and the chat resolving their names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from core.catalog.from_config import ConfigError, read_config
from core.catalog.loader import load_catalog
from core.estimator.memory import kv_shape

FIXTURES = Path(__file__).parent / "hf_configs"
CATALOG = load_catalog()


def _fixture(name: str) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((FIXTURES / name / "config.json").read_text(encoding="utf-8"))
    return loaded


# ---------------------------------------------------------------- ERNIE 4.5


def test_ernie_21b_first_layer_dense_then_64_experts_with_two_shared() -> None:
    reading = read_config(_fixture("baidu__ERNIE-4.5-21B-A3B-PT"))
    m = reading.model
    assert (m.experts, m.experts_active, m.shared_experts, m.dense_layers) == (64, 6, 2, 1)
    assert (m.moe_intermediate_size, m.intermediate_size, m.tied_embeddings) == (1536, 12288, True)
    assert reading.params.active == pytest.approx(3.35e9, rel=0.01)  # card: "3B activated"
    assert kv_shape(m).full_values_per_token == 28 * 2 * 4 * 128


def test_ernie_300b_three_dense_layers_no_shared_expert() -> None:
    reading = read_config(_fixture("baidu__ERNIE-4.5-300B-A47B-PT"))
    m = reading.model
    assert (m.dense_layers, m.shared_experts, m.experts_active, m.tied_embeddings) == (3, None, 8, False)
    assert reading.params.active == pytest.approx(47e9, rel=0.03)  # card: "47B activated"
    assert kv_shape(m).full_values_per_token == 54 * 2 * 8 * 128


def test_ernie_dense_reads_as_llama() -> None:
    m = read_config(_fixture("baidu__ERNIE-4.5-0.3B-PT")).model
    assert not m.is_moe and (m.layers, m.kv_heads, m.head_dim, m.intermediate_size) == (18, 2, 128, 3072)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"moe_layer_end_index": 20}, "moe_layer_end_index"),
        ({"moe_layer_interval": 2}, "moe_layer_interval"),
        ({"use_bias": True}, "use_bias"),
        ({"moe_num_experts": [64, 64]}, "moe_num_experts"),
    ],
)
def test_ernie_layouts_the_schema_cannot_say_are_refused(change: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        read_config(dict(_fixture("baidu__ERNIE-4.5-21B-A3B-PT"), **change))


# ---------------------------------------------------------------- GLM-4-0414


def test_glm4_0414_bias_sandwich_norms_and_two_kv_heads() -> None:
    reading = read_config(_fixture("THUDM__GLM-Z1-32B-0414"))
    m = reading.model
    assert m.attn_bias and not m.tied_embeddings
    # llama.cpp's log: 1952.00 MiB of f16 KV for 32768 tokens
    assert kv_shape(m).full_values_per_token * 2 * 32768 == 1952 * 2**20
    no_bias = read_config(dict(_fixture("THUDM__GLM-Z1-32B-0414"), attention_bias=False))
    assert reading.params.decoder - no_bias.params.decoder == 61 * (48 + 2 + 2) * 128
    # the two sandwich norms per layer are counted (61 x 2 x 6144 more than a llama layout)
    assert reading.params.decoder == 32_566_487_552


# ---------------------------------------------------------------- Granite 4.0-H


def test_granite_h_small_pattern_and_ffn_per_layer() -> None:
    m = read_config(_fixture("ibm-granite__granite-4.0-h-small")).model
    assert m.layer_pattern.count("*") == 4 and m.layer_pattern.count("M") == 36
    assert m.layer_ffn == "E" * 40
    assert (m.experts, m.experts_active, m.moe_intermediate_size, m.shared_experts) == (72, 10, 768, 2)
    assert (m.linear_value_heads, m.linear_value_head_dim, m.linear_key_head_dim) == (128, 64, 128)


def test_granite_without_mamba_layers_is_a_plain_transformer() -> None:
    config = dict(_fixture("ibm-granite__granite-4.0-h-micro"), layer_types=["attention"] * 40)
    m = read_config(config).model
    assert m.attention == "full" and not m.layer_pattern and not m.layer_ffn
    assert m.intermediate_size == 8192 and kv_shape(m).full_values_per_token == 40 * 2 * 8 * 64


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"layer_types": ["mamba"] * 39}, "layer_types"),
        ({"layer_types": ["mamba"] * 39 + ["conv"]}, "layer_types"),
        ({"shared_intermediate_size": 1000}, "shared_intermediate_size"),
        ({"mamba_n_heads": 96}, "mamba_expand"),
    ],
)
def test_granite_inconsistent_configs_are_refused(change: dict[str, Any], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        read_config(dict(_fixture("ibm-granite__granite-4.0-h-small"), **change))


# ---------------------------------------------------------------- the chat names the model asked for


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("how fast is ernie 4.5 21b on a single 4090", "ERNIE-4.5-21B-A3B-PT"),
        ("文心4.5 21b 用 3090 跑多快", "ERNIE-4.5-21B-A3B-PT"),
        ("ernie 4.5 300b on 8x h100", "ERNIE-4.5-300B-A47B-PT"),
        ("glm-4-32b q4 on a 4090", "GLM-4-32B-0414"),
        ("两张3090跑 glm4 32b 0414", "GLM-4-32B-0414"),
        ("glm z1 32b speed on a 4090", "GLM-Z1-32B-0414"),
        ("granite 4 h small 4090 tokens per second", "granite-4.0-h-small"),
        ("3060 granite 4.0 h micro", "granite-4.0-h-micro"),
    ],
)
def test_asks_name_the_new_models(question: str, name: str) -> None:
    from core.ask.answer import answer

    reply = answer(question, CATALOG)
    assert reply.status == "answer"
    assert name in reply.text.splitlines()[0]


@pytest.mark.parametrize(
    ("question", "not_this"),
    [
        ("glm-4.5 on a 4090", "GLM-4-32B-0414"),
        ("glm-4-9b-0414 on a 3060", "GLM-4-32B-0414"),
        ("ernie 4.5 vl 28b on a 4090", "ERNIE-4.5-21B-A3B-PT"),
        ("granite-4.0-h-tiny on a 3060", "granite-4.0-h-small"),
    ],
)
def test_neighbours_are_not_swapped_in(question: str, not_this: str) -> None:
    from core.ask.answer import answer

    assert not_this not in answer(question, CATALOG).text
