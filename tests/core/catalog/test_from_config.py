"""config.json -> catalog Model, per architecture family, on real configs (fixtures copied from
../shared/reference/hf_configs with their SOURCE.txt) and a few hand-typed classic ones.

The parameter count is checked against the published safetensors totals (the SOURCE.txt of each
fixture says where the figure comes from); the catalog entries of these repos must equal what the
config says (`models sync` keeps them so).
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from core.catalog.architectures.nemotron_h import read_nemotron_h
from core.catalog.from_config import ConfigError, _placeholder, merge_into, read_config
from core.catalog.loader import CATALOG_DIR, load_catalog

FIXTURES = Path(__file__).parent / "hf_configs"
SHARED = CATALOG_DIR.parent.parent / "shared" / "reference" / "hf_configs"
CATALOG = load_catalog()

# Published totals (safetensors metadata or a weight scan, see each SOURCE.txt). FP8 checkpoints
# also store one f32 scale per 128x128 block (~0.006 %), which the count leaves out.
PUBLISHED = {
    "Qwen__Qwen3-Coder-30B-A3B-Instruct": 30_532_122_624,
    "Qwen__Qwen3-4B-Instruct-2507": 4_022_795_776,
    "Qwen__Qwen3-30B-A3B-Instruct-2507": 30_532_122_624,
    "Qwen__Qwen3-Next-80B-A3B-Instruct": 81_324_862_720,
    "Qwen__Qwen3-VL-8B-Instruct": 8_767_123_696,
    "Qwen__Qwen3-VL-30B-A3B-Instruct": 31_070_754_032,
    "Qwen__Qwen2.5-VL-7B-Instruct": 8_292_166_656,
    "Qwen__Qwen3.5-27B": 27_781_427_952,
    "Qwen__Qwen3.5-35B-A3B": 35_951_822_704,
    "Qwen__Qwen3.6-35B-A3B": 35_951_822_704,
    "google__gemma-3-270m-it": 268_111_528,  # LFS size / 2, includes the header: approximate
    "deepseek-ai__DeepSeek-V3.1": 684_531_386_000,
    "deepseek-ai__DeepSeek-V3.2": 685_396_921_376,
    "moonshotai__Kimi-K2-Instruct": 1_026_470_731_056,
    "zai-org__GLM-5.1": 753_864_139_008,
    "MiniMaxAI__MiniMax-M2.7": 228_703_644_928,
    "google__gemma-4-31B-it": 31_273_088_876,  # tensor sum in the SOURCE report: exact
    "ByteDance-Seed__Seed-OSS-36B-Instruct": 36_151_104_512,  # safetensors index, quoted in SOURCE
    # llama-bench's "80.39 B" (GGUF tensor elements, 2 decimals): +-0.005B is 0.006 %
    "tencent__Hunyuan-A13B-Instruct": 80_390_000_000,
    "internlm__internlm3-8b-instruct": 8_804_241_408,  # index total_size / 4 (float32 shards)
    # printed counts (2 decimals, +-0.005B) and Hub / model-card figures, see each SOURCE.txt
    "THUDM__GLM-Z1-32B-0414": 32_570_000_000,  # llama.cpp print_info "32.57 B"
    "ibm-granite__granite-4.0-h-micro": 3_190_000_000,  # llama-bench "3.19 B"
    "ibm-granite__granite-4.0-h-small": 32_200_000_000,  # the Hub's "32.2B"
    "baidu__ERNIE-4.5-21B-A3B-PT": 21_800_000_000,  # the Hub's "21.8B"
    "baidu__ERNIE-4.5-0.3B-PT": 360_000_000,  # the Hub's "0.36B"
    "baidu__ERNIE-4.5-300B-A47B-PT": 300_000_000_000,  # model card "300B" (rounded)
}
# Model cards that give the text decoder alone (the vision tower quoted apart, "~550M"):
# google/gemma-4-26B-A4B-it "25.2B total / 3.8B active" (rounded to 0.1B).
PUBLISHED_DECODER = {"google__gemma-4-26B-A4B": (25_200_000_000, 3_800_000_000)}
GOAL = 0.005  # derived vs published, relative


def _load(folder: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    return loaded


def _repo(folder: Path) -> str:
    return folder.name.replace("__", "/")


FIXTURE_DIRS = sorted(p for p in FIXTURES.iterdir() if p.is_dir())


@pytest.mark.parametrize("folder", [p for p in FIXTURE_DIRS if p.name in PUBLISHED], ids=lambda p: p.name)
def test_parameter_count_matches_published_total(folder: Path) -> None:
    reading = read_config(_load(folder), repo=_repo(folder))
    published = PUBLISHED[folder.name]
    assert abs(reading.params.total / published - 1) <= GOAL, (
        f"{folder.name}: derived {reading.params.total:,} vs published {published:,}"
    )


@pytest.mark.parametrize("name", sorted(PUBLISHED_DECODER))
def test_decoder_count_matches_the_model_card(name: str) -> None:
    reading = read_config(_fixture(name))
    total, active = PUBLISHED_DECODER[name]
    assert abs(reading.params.decoder / total - 1) <= GOAL
    # 3.8B is rounded to 0.05B either way: 1.3 % of 3.8B
    assert abs(reading.params.active / active - 1) <= 0.05 / 3.8


def _shared_dirs() -> list[Path]:
    return sorted(p for p in SHARED.iterdir() if p.is_dir()) if SHARED.exists() else []


@pytest.mark.skipif(not SHARED.exists(), reason=f"shared reference not available at {SHARED}")
@pytest.mark.parametrize("folder", _shared_dirs(), ids=lambda p: p.name)
def test_every_shared_config_reads_or_is_named_unsupported(folder: Path) -> None:
    config = _load(folder)
    try:
        reading = read_config(config, repo=_repo(folder))
    except ConfigError as exc:
        assert config["model_type"] in str(exc), f"{folder.name}: error does not name the model_type: {exc}"
        assert "not supported" in str(exc)
        return
    published = PUBLISHED.get(folder.name)
    if published:
        assert abs(reading.params.total / published - 1) <= GOAL


def _fixture(name: str) -> dict[str, Any]:
    return _load(FIXTURES / name)


# ---------------------------------------------------------------- per family


def test_qwen3_moe_coder() -> None:
    m = read_config(
        _fixture("Qwen__Qwen3-Coder-30B-A3B-Instruct"), repo="Qwen/Qwen3-Coder-30B-A3B-Instruct"
    ).model
    assert (m.layers, m.hidden, m.heads, m.kv_heads, m.head_dim) == (48, 2048, 32, 4, 128)
    assert (m.experts, m.experts_active, m.moe_intermediate_size, m.shared_experts) == (128, 8, 768, None)
    assert m.max_context == 262144 and m.attention == "full" and not m.tied_embeddings
    assert m.params_b == 30.53 and m.active_params_b == pytest.approx(3.35, abs=0.01)
    assert m.hf_repo == "Qwen/Qwen3-Coder-30B-A3B-Instruct"


def test_qwen3_dense_ties_embeddings() -> None:
    m = read_config(_fixture("Qwen__Qwen3-4B-Instruct-2507")).model
    assert m.tied_embeddings and m.intermediate_size == 9728 and m.experts is None
    assert m.active_params_b == m.params_b


def test_gemma3_sliding_window_pattern() -> None:
    reading = read_config(_fixture("google__gemma-3-270m-it"))
    m = reading.model
    assert m.attention == "swa_hybrid" and m.sliding_window == 512 and m.global_layers == 3
    assert m.tied_embeddings  # absent from the config: transformers' Gemma default
    assert (m.heads, m.kv_heads, m.head_dim, m.vocab) == (4, 1, 256, 262144)


def test_gpt_oss_alternating_window_and_native_mxfp4() -> None:
    m = read_config(_fixture("openai__gpt-oss-20b")).model
    assert m.attention == "swa_hybrid" and m.sliding_window == 128 and m.global_layers == 12
    assert (m.experts, m.experts_active, m.moe_intermediate_size) == (32, 4, 2880)
    assert m.attn_bias and m.native_quant == "MXFP4"
    assert m.params_b == pytest.approx(20.91, abs=0.01)


def test_deepseek_v3_mla_and_mtp() -> None:
    reading = read_config(_fixture("deepseek-ai__DeepSeek-V3.1"))
    m = reading.model
    assert m.attention == "mla" and (m.kv_lora_rank, m.q_lora_rank, m.qk_rope_dim) == (512, 1536, 64)
    assert (m.qk_nope_dim, m.v_head_dim, m.head_dim, m.kv_heads) == (128, 128, 192, 128)
    assert (m.dense_layers, m.shared_experts, m.experts) == (3, 1, 256)
    assert m.native_quant == "FP8" and m.mtp_layers == 1
    assert m.params_b == pytest.approx(671.03, abs=0.01)
    assert reading.params.mtp > 13e9  # the NextN layer plus its own embedding and head copies


def test_deepseek_v32_sparse_attention_indexer() -> None:
    m = read_config(_fixture("deepseek-ai__DeepSeek-V3.2")).model
    assert (m.dsa_index_heads, m.dsa_index_head_dim, m.dsa_index_topk) == (64, 128, 2048)
    assert m.params_b == pytest.approx(671.88, abs=0.01)


def test_glm5_mla_with_indexer() -> None:
    m = read_config(_fixture("zai-org__GLM-5.1")).model
    assert m.attention == "mla" and (m.qk_nope_dim, m.qk_rope_dim, m.v_head_dim) == (192, 64, 256)
    assert m.dsa_index_heads == 32 and m.dense_layers == 3


def test_qwen3_next_linear_hybrid() -> None:
    reading = read_config(_fixture("Qwen__Qwen3-Next-80B-A3B-Instruct"))
    m = reading.model
    assert m.attention == "linear_hybrid" and m.linear_kind == "gated_deltanet" and m.global_layers == 12
    assert m.linear_state_mib == pytest.approx(75.375)
    assert m.attn_output_gate and m.shared_experts == 1 and m.mtp_layers == 1
    assert reading.params.mtp > 1.5e9


def test_qwen35_wrapper_reads_text_config_and_counts_vision() -> None:
    reading = read_config(_fixture("Qwen__Qwen3.5-35B-A3B"))
    m = reading.model
    assert (m.layers, m.hidden, m.vocab, m.global_layers) == (40, 2048, 248320, 10)
    assert m.linear_state_mib == pytest.approx(62.8125)
    assert reading.params.vision is not None and 0.4e9 < reading.params.vision < 0.5e9


def test_vision_language_text_model_and_tower() -> None:
    vl = read_config(_fixture("Qwen__Qwen3-VL-8B-Instruct"))
    assert (vl.model.layers, vl.model.hidden, vl.model.intermediate_size) == (36, 4096, 12288)
    assert not vl.model.tied_embeddings  # top-level tie_word_embeddings of the wrapper
    qwen25 = read_config(_fixture("Qwen__Qwen2.5-VL-7B-Instruct"))
    assert qwen25.model.attn_bias and qwen25.model.vocab == 152064
    assert qwen25.params.vision == pytest.approx(0.677e9, rel=0.01)


def test_kimi_k25_int4_and_uncounted_vision() -> None:
    reading = read_config(_fixture("moonshotai__Kimi-K2.5"))
    assert reading.model.native_quant == "INT4"
    assert reading.params.vision is None  # MoonViT's layout is not known here: not counted, not guessed
    assert reading.model.params_b == pytest.approx(1026.41, abs=0.01)


def test_minimax_m2_mtp_modules_are_not_shipped() -> None:
    reading = read_config(_fixture("MiniMaxAI__MiniMax-M2.7"))
    assert reading.params.mtp == 0 and reading.model.mtp_layers == 0
    assert reading.model.moe_intermediate_size == 1536 and reading.model.experts == 256


def test_gemma4_dense_global_layers_have_their_own_kv_shape() -> None:
    from core.estimator.memory import kv_shape

    reading = read_config(_fixture("google__gemma-4-31B-it"))
    m = reading.model
    assert (m.attention, m.sliding_window, m.global_layers) == ("swa_hybrid", 1024, 10)
    assert (m.kv_heads, m.head_dim, m.global_kv_heads, m.global_head_dim) == (16, 256, 4, 512)
    assert m.experts is None and m.tied_embeddings
    assert reading.params.decoder == 30_697_345_340 and reading.params.vision == 575_743_536
    shape = kv_shape(m)
    # 10 global layers x K,V x 4 heads x 512; 50 sliding layers x K,V x 16 x 256
    assert shape.full_values_per_token == 10 * 2 * 4 * 512
    assert shape.swa_values_per_token == 50 * 2 * 16 * 256 and shape.window == 1024


def test_gemma4_moe_dense_mlp_beside_the_experts_is_a_shared_expert() -> None:
    m = read_config(_fixture("google__gemma-4-26B-A4B")).model
    assert (m.experts, m.experts_active, m.moe_intermediate_size) == (128, 8, 704)
    assert m.shared_experts == 3 and m.intermediate_size == 2112  # 2112 = 3 x 704
    assert (m.global_layers, m.global_kv_heads, m.global_head_dim) == (5, 2, 512)


def test_gemma4_per_layer_inputs_are_refused() -> None:
    config = _fixture("google__gemma-4-31B-it")
    config["text_config"]["hidden_size_per_layer_input"] = 256  # the E2B / E4B sizes
    with pytest.raises(ConfigError, match="hidden_size_per_layer_input"):
        read_config(config)


def test_nemotron_h_mamba2_state_and_attention_only_kv() -> None:
    from core.estimator.memory import kv_shape

    fields = read_nemotron_h(_fixture("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"), "nemotron_h")
    m = _placeholder(fields.fields, "nemotron-3-nano", "", "")
    assert (m.attention, m.linear_kind, m.layers, m.global_layers) == ("linear_hybrid", "mamba2", 52, 6)
    assert (m.experts, m.experts_active, m.ffn_kind) == (128, 6, "plain")
    # 23 Mamba-2 layers x f32 ((4 - 1) x (4096 + 2 x 8 x 128) conv + 64 x 64 x 128 ssm)
    assert m.linear_state_mib == pytest.approx(23 * (3 * 6144 + 4096 * 128) * 4 / 2**20)
    shape = kv_shape(m)
    assert shape.full_values_per_token == 6 * 2 * 2 * 128 and shape.swa_values_per_token == 0
    # NVIDIA: "3.2B active (3.6B with embeddings)"; the count keeps the embeddings in
    assert fields.active == pytest.approx(3.6e9, rel=0.02)
    assert abs(fields.total / 31.6e9 - 1) <= GOAL  # NVIDIA: "31.6B total"


def test_nemotron_h_is_read_with_its_layer_pattern() -> None:
    reading = read_config(_fixture("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16"))
    m = reading.model
    assert m.layer_pattern == "MEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEM*EMEMEMEM*EMEMEMEME"
    assert (m.layer_pattern.count("M"), m.layer_pattern.count("E"), m.global_layers) == (23, 23, 6)
    # llama-bench prints "31.58 B" params for the GGUF of this checkpoint
    assert reading.params.total == 31_577_940_288 and (m.params_b, m.active_params_b) == (31.58, 3.58)
    assert m.is_moe and m.shared_experts == 2 and m.moe_intermediate_size == 1856  # shared = 2 x 1856


def test_nemotron_h_without_attention_layers_has_no_kv_growth() -> None:
    # A Mamba-only pattern (an M/- Nemotron-H) keeps only its recurrent state.
    from core.estimator.memory import kv_shape

    config = _fixture("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    config.update(num_hidden_layers=4, hybrid_override_pattern="M-M-")
    m = read_config(config).model
    shape = kv_shape(m)
    assert shape.full_values_per_token == 0 and shape.state_bytes > 0


def test_nemotron_h_latent_moe_is_read() -> None:
    # Nemotron 3 Super's LatentMoE: the experts shrink to the latent width, plus the two projections.
    config = _fixture("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    plain = read_nemotron_h(config, "nemotron_h")
    latent = read_nemotron_h({**config, "moe_latent_size": 1024}, "nemotron_h")
    h, n, width, moe_layers = 2688, 128, 1856, 23
    assert latent.fields["moe_latent_size"] == 1024 and plain.fields["moe_latent_size"] is None
    shrink = n * 2 * (h - 1024) * width - 2 * h * 1024
    assert plain.total - latent.total == moe_layers * shrink


def test_nemotron_h_pattern_must_match_the_layer_count() -> None:
    config = _fixture("nvidia__NVIDIA-Nemotron-3-Nano-30B-A3B-BF16")
    config["num_hidden_layers"] = 50
    with pytest.raises(ConfigError, match="hybrid_override_pattern"):
        read_nemotron_h(config, "nemotron_h")


# Classic families, typed from their Hugging Face configs; the catalog rows were sourced elsewhere.
CLASSIC: dict[str, dict[str, Any]] = {
    "llama-3.1-8b": {
        "model_type": "llama",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 128256,
        "max_position_embeddings": 131072,
        "rope_scaling": {"factor": 8.0, "original_max_position_embeddings": 8192, "rope_type": "llama3"},
        "tie_word_embeddings": False,
    },
    "mistral-7b-v0.3": {
        "model_type": "mistral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "vocab_size": 32768,
        "max_position_embeddings": 32768,
        "sliding_window": None,
    },
    "mixtral-8x7b": {
        "model_type": "mixtral",
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
        "max_position_embeddings": 32768,
    },
    "gemma-2-9b": {
        "model_type": "gemma2",
        "hidden_size": 3584,
        "intermediate_size": 14336,
        "num_hidden_layers": 42,
        "num_attention_heads": 16,
        "num_key_value_heads": 8,
        "head_dim": 256,
        "vocab_size": 256000,
        "max_position_embeddings": 8192,
        "sliding_window": 4096,
    },
    "phi-3-mini-4k": {
        "model_type": "phi3",
        "hidden_size": 3072,
        "intermediate_size": 8192,
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 32,
        "vocab_size": 32064,
        "max_position_embeddings": 4096,
        "sliding_window": 2047,
        "tie_word_embeddings": False,
    },
    "qwen2.5-7b": {
        "model_type": "qwen2",
        "hidden_size": 3584,
        "intermediate_size": 18944,
        "num_hidden_layers": 28,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "vocab_size": 152064,
        "max_position_embeddings": 32768,
        "use_sliding_window": False,
        "tie_word_embeddings": False,
    },
}
SHAPE_FIELDS = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "vocab",
    "max_context",
    "intermediate_size",
    "experts",
    "experts_active",
    "tied_embeddings",
    "attention",
    "sliding_window",
    "global_layers",
    "attn_bias",
)


@pytest.mark.parametrize("model_id", sorted(CLASSIC))
def test_classic_families_agree_with_the_catalog(model_id: str) -> None:
    reading = read_config(CLASSIC[model_id])
    entry = CATALOG.models[model_id]
    for name in SHAPE_FIELDS:
        assert getattr(reading.model, name) == getattr(entry, name), f"{model_id}: {name}"
    assert reading.model.params_b == pytest.approx(entry.params_b, rel=0.01)


# ---------------------------------------------------------------- the catalog follows the configs


@pytest.mark.parametrize("folder", FIXTURE_DIRS, ids=lambda p: p.name)
def test_catalog_entry_equals_its_config(folder: Path) -> None:
    repo = _repo(folder)
    entries = [m for m in CATALOG.models.values() if m.hf_repo == repo]
    try:
        derived = read_config(_load(folder), repo=repo).model
    except ConfigError:
        pytest.skip(f"{repo}: not readable (named unsupported)")
    assert entries, f"{repo}: no catalog entry (run python -m bot models sync)"
    entry = entries[0]
    synced = merge_into(entry, derived)
    assert replace(synced, source=entry.source) == entry, (
        f"{entry.id}: catalog differs from {repo} config.json"
    )


# ---------------------------------------------------------------- errors name what is wrong


def test_unknown_model_type_is_named() -> None:
    with pytest.raises(ConfigError, match="unknown model_type 'frobnicator'"):
        read_config({"model_type": "frobnicator", "hidden_size": 8})


def test_missing_model_type() -> None:
    with pytest.raises(ConfigError, match="model_type"):
        read_config({"hidden_size": 8})


def test_missing_field_is_named() -> None:
    config = dict(CLASSIC["llama-3.1-8b"])
    del config["num_hidden_layers"]
    with pytest.raises(ConfigError, match="llama: config.json has no 'num_hidden_layers'"):
        read_config(config)


def test_wrong_type_is_named() -> None:
    config = dict(CLASSIC["llama-3.1-8b"], hidden_size="4096")
    with pytest.raises(ConfigError, match="'hidden_size' is '4096'"):
        read_config(config)


def test_missing_expert_count_is_named() -> None:
    config = _fixture("Qwen__Qwen3-Coder-30B-A3B-Instruct")
    del config["num_experts"]
    with pytest.raises(ConfigError, match="num_experts"):
        read_config(config)


def test_unsupported_family_is_named_not_approximated() -> None:
    with pytest.raises(ConfigError, match="deci: not supported"):
        read_config({"model_type": "deci", "hidden_size": 8192, "block_configs": [{}]})


# ---------------------------------------------------------------- published GGUF files check the weights

GGUF_SIZES = SHARED.parent / "gguf_sizes.csv"


@pytest.mark.skipif(not GGUF_SIZES.exists(), reason=f"shared reference not available at {GGUF_SIZES}")
@pytest.mark.parametrize("quant", ["BF16", "Q8_0"])
def test_synced_weights_match_published_gguf_files(quant: str) -> None:
    """bartowski's Qwen3-30B-A3B-Thinking-2507 files (listed under qwen3-30b-a3b, same shapes) against
    the 2507 entry written from its config: unquantized and Q8_0 files leave no room for a wrong shape."""
    import csv

    from core.estimator.weights import weight_breakdown

    with GGUF_SIZES.open(newline="", encoding="utf-8") as fh:
        rows = [
            r
            for r in csv.DictReader(fh)
            if r["repo"] == "bartowski/Qwen_Qwen3-30B-A3B-Thinking-2507-GGUF" and r["quant"] == quant
        ]
    if not rows:
        pytest.skip(f"no {quant} row in {GGUF_SIZES.name}")
    model = CATALOG.models["qwen3-30b-a3b-2507"]
    estimate = weight_breakdown(model, CATALOG.quants[quant], CATALOG).file_bytes / 2**30
    assert abs(estimate / float(rows[0]["size_gib"]) - 1) <= GOAL


@pytest.mark.parametrize("model_id", ["gemma-4-26b-a4b", "gemma-4-31b"])
def test_gemma4_weight_tensors_use_the_global_layer_shapes(model_id: str) -> None:
    """The per-tensor weights sum to the config's count (global layers: 512-wide heads, fewer KV
    heads). Within 0.5 %: the schema has no attention_k_eq_v, so the 31B's global layers keep a
    v_proj the checkpoint does not have (+0.35 %)."""
    from core.estimator.weights import weight_breakdown

    entry = CATALOG.models[model_id]
    folder = {"gemma-4-26b-a4b": "google__gemma-4-26B-A4B", "gemma-4-31b": "google__gemma-4-31B-it"}[model_id]
    decoder = read_config(_fixture(folder)).params.decoder
    params = weight_breakdown(entry, CATALOG.quants["BF16"], CATALOG).params
    assert abs(params / decoder - 1) <= GOAL


# ---------------------------------------------------------------- the Hub's published total is checked


def test_params_check_is_quiet_within_two_percent_and_names_a_bigger_gap() -> None:
    from core.catalog.from_config import params_check

    assert params_check(30_532_122_624, 30_532_122_624) is None
    assert params_check(30_532_122_624, None) is None
    assert params_check(101, 100) is None  # 1 %
    note = params_check(1_026_470_731_056, 170_738_182_128)  # Kimi K2.5: INT4-packed elements
    assert note is not None and note.code == "hub.params_mismatch"
    assert "1026.47B" in note.text("en") and "170.74B" in note.text("en") and "+501.2%" in note.text("en")
    assert "参数核对" in note.text("zh")


@pytest.mark.parametrize(("published", "named"), [(25_000_000_000, True), (31_273_088_876, False)])
def test_hub_reply_names_a_published_count_that_disagrees(published: int, named: bool) -> None:
    """A Hub-read Gemma 4 31B whose safetensors total (as the Hub reported it) is 25B: the reply's
    header says the config gives 31.27B; with the right total it says nothing."""
    from core.ask.answer import answer
    from core.catalog.model_source import Provenance, SourcedModel
    from core.commands.model_lookup import HubModels, with_provenance

    reading = read_config(
        _fixture("google__gemma-4-31B-it"), model_id="gemma-4-31b", repo="google/gemma-4-31B-it"
    )
    prov = Provenance("google/gemma-4-31B-it", "abc", "2026-04-03T00:00:00+00:00", "e", "u", published)
    hub = HubModels()
    hub.add(SourcedModel(reading.model, reading.params, prov))
    catalog = hub.apply(CATALOG)
    reply = with_provenance(answer("rtx 4090 running gemma 4 31b, speed?", catalog), hub, catalog)
    assert reply.status == "answer"
    assert ("config.json gives 31.27B" in reply.text) is named


# ---------------------------------------------------------------- Hunyuan, Seed-OSS


def test_hunyuan_a13b_per_layer_lists_shared_mlp_and_qk_norm() -> None:
    from core.estimator.memory import kv_shape

    reading = read_config(_fixture("tencent__Hunyuan-A13B-Instruct"))
    m = reading.model
    assert (m.experts, m.experts_active, m.moe_intermediate_size, m.shared_experts) == (64, 8, 3072, 1)
    assert m.tied_embeddings and not m.attn_bias and m.dense_layers is None
    # llama-bench: 80.39 B; the model card: 13B active
    assert reading.params.decoder == 80_393_183_232
    assert reading.params.active == pytest.approx(13e9, rel=0.03)
    # 32 layers x K,V x 8 heads x 128: 128 KiB per token at f16
    assert kv_shape(m).full_values_per_token * 2 == 128 * 1024


def test_hunyuan_transformers_type_reads_like_the_remote_code_one() -> None:
    config = _fixture("tencent__Hunyuan-A13B-Instruct")
    native = dict(config, model_type="hunyuan_v1_moe", moe_topk=8, num_shared_expert=1)
    assert read_config(native).params == read_config(config).params


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"moe_topk": [8] * 31 + [2]}, "moe_topk"),
        ({"use_cla": True}, "use_cla"),
        ({"num_experts": 1}, "not a MoE"),
    ],
)
def test_hunyuan_what_the_schema_cannot_say_is_refused(change: dict[str, Any], named: str) -> None:
    config = dict(_fixture("tencent__Hunyuan-A13B-Instruct"), **change)
    with pytest.raises(ConfigError, match=named):
        read_config(config)


def test_seed_oss_qkv_bias_without_o_bias() -> None:
    from core.estimator.memory import kv_shape

    reading = read_config(_fixture("ByteDance-Seed__Seed-OSS-36B-Instruct"))
    m = reading.model
    assert m.attn_bias and not m.tied_embeddings and (m.heads, m.kv_heads, m.head_dim) == (80, 8, 128)
    assert reading.params.decoder == 36_151_104_512  # the safetensors index, to the parameter
    assert kv_shape(m).full_values_per_token == 64 * 2 * 8 * 128
    with_o_bias = read_config(
        dict(_fixture("ByteDance-Seed__Seed-OSS-36B-Instruct"), attention_out_bias=True)
    )
    assert with_o_bias.params.decoder - reading.params.decoder == 64 * 5120


@pytest.mark.parametrize("model_id", ["hunyuan-a13b", "seed-oss-36b", "internlm3-8b"])
def test_new_entries_weights_sum_to_the_config_count(model_id: str) -> None:
    """The BF16 tensor list the estimator builds from the entry is the checkpoint (q/k norms aside)."""
    from core.estimator.weights import weight_breakdown

    folder = {
        "hunyuan-a13b": "tencent__Hunyuan-A13B-Instruct",
        "seed-oss-36b": "ByteDance-Seed__Seed-OSS-36B-Instruct",
        "internlm3-8b": "internlm__internlm3-8b-instruct",
    }[model_id]
    params = weight_breakdown(CATALOG.models[model_id], CATALOG.quants["BF16"], CATALOG).params
    assert abs(params / read_config(_fixture(folder)).params.decoder - 1) <= 0.0005


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("how fast is hunyuan a13b on two 3090s", "Hunyuan-A13B-Instruct"),
        ("用 4090 跑 Seed-OSS-36B-Instruct 能到多少 token/s", "Seed-OSS-36B-Instruct"),
        ("3060 12g internlm3 8b q4 多快", "internlm3-8b-instruct"),
    ],
)
def test_asks_name_the_new_models(question: str, name: str) -> None:
    from core.ask.answer import answer

    reply = answer(question, CATALOG)
    assert reply.status == "answer"
    assert name in reply.text.splitlines()[0]


@pytest.mark.parametrize("question", ["4090 hunyuan-7b-instruct speed", "seed-oss-36b-base-woSyn on a 4090"])
def test_neighbours_of_the_new_models_are_not_swapped_in(question: str) -> None:
    from core.ask.answer import answer

    reply = answer(question, CATALOG)
    assert "Hunyuan-A13B-Instruct" not in reply.text and "Seed-OSS-36B-Instruct" not in reply.text


def test_internlm3_llama_layout_and_its_bias_switch_is_refused() -> None:
    from core.estimator.memory import kv_shape

    reading = read_config(_fixture("internlm__internlm3-8b-instruct"))
    m = reading.model
    assert (m.layers, m.kv_heads, m.intermediate_size, m.attn_bias, m.tied_embeddings) == (
        48,
        2,
        10240,
        False,
        False,
    )
    assert kv_shape(m).full_values_per_token == 48 * 2 * 2 * 128  # 48 KiB per token at f16
    with pytest.raises(ConfigError, match="internlm3: bias"):
        read_config(dict(_fixture("internlm__internlm3-8b-instruct"), bias=True))
