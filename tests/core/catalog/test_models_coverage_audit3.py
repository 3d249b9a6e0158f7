"""Model coverage audit 3: names people type in 2025-2026 local-LLM chats ("4090 devstral small 2",
"magistral small 2509", "kimi k2 0905", "granite 4.0 h tiny"...). Each resolves to its own row the way
`bot ask` reads it (the question's model reading, then the Hub rule), the silent swaps the audit found
("devstral small 2" answered as Devstral-Small-2505, "magistral small" as Mistral-Small-3.1, "minimax
m2.1" as MiniMax-M2, "kimi k2 0905" as Kimi-K2-Instruct, "granite 4.0 h tiny" as granite-4.0-h-small)
stay fixed, the older rows keep their names, and the new rows' weights land on the published GGUF
files. The swaps models.toml could not fix (the reading dropped "mini", or read "olmo 2 32b" as
Qwen3-32B and "internvl3" as InternLM3) were strict xfails until audit 4 fixed the reading."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.estimator.weights import gguf_meta_bytes, weight_breakdown
from core.understanding.hub_rule import model_need
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_model


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


def _asked(name: str, catalog: Catalog) -> str | None:
    """The model `bot ask "4090 <name>"` answers for: None when it asks back or looks the name up."""
    question = f"4090 {name}"
    parsed = parse_question(question, catalog)
    if parsed.model is None:
        return None
    res, _need = model_need(question, parsed.model, catalog)
    return res.best_id if res is not None and res.confident else None


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("devstral small 2507", "devstral-small-2507"),
        ("devstral small 1.1", "devstral-small-2507"),
        ("devstral small 2", "devstral-small-2-24b"),
        ("Devstral-Small-2-24B-Instruct-2512", "devstral-small-2-24b"),
        ("magistral small 2509", "magistral-small-2509"),
        ("magistral small", "magistral-small-2509"),
        ("magistral small 2507", "magistral-small-2507"),
        ("Magistral-Small-2506", "magistral-small-2506"),
        ("magistral:24b", "magistral-small-2506"),
        ("minimax m2.1", "minimax-m2.1"),
        ("MiniMax-M2.5", "minimax-m2.5"),
        ("kimi k2 0905", "kimi-k2-0905"),
        ("deepseek r1 0528 qwen3 8b", "deepseek-r1-0528-qwen3-8b"),
        ("r1 0528 8b", "deepseek-r1-0528-qwen3-8b"),
        ("phi-4 reasoning", "phi-4-reasoning"),
        ("phi-4 reasoning plus", "phi-4-reasoning-plus"),
        ("granite 4.0 h tiny", "granite-4.0-h-tiny"),
        ("granite4:tiny-h", "granite-4.0-h-tiny"),
        ("nemotron nano 9b v2", "nemotron-nano-9b-v2"),
        ("nemotron nano 2", "nemotron-nano-9b-v2"),
        ("glm-4.5v", "glm-4.5v"),
        ("qwen3-vl 235b", "qwen3-vl-235b-a22b"),
        ("qwen3 vl 235b thinking", "qwen3-vl-235b-a22b"),
        # the rows that were there keep their names
        ("mistral small 3.1", "mistral-small-3.1-24b"),
        ("mistral small 3.2", "mistral-small-3.2-24b"),
        ("devstral small", "devstral-small-2505"),
        ("devstral 2", "devstral-2-123b"),
        ("minimax m2", "minimax-m2"),
        ("minimax m2.7", "minimax-m2.7"),
        ("kimi k2", "kimi-k2"),
        ("kimi k2 thinking", "kimi-k2-thinking"),
        ("qwen3 8b", "qwen3-8b"),
        ("phi 4", "phi-4"),
        ("phi4-mini:3.8b", "phi-4-mini"),
        ("granite 4.0 h small", "granite-4.0-h-small"),
        ("granite 4.0 h micro", "granite-4.0-h-micro"),
        ("nemotron nano", "nemotron-3-nano-30b-a3b"),
        ("nemotron 3 nano", "nemotron-3-nano-30b-a3b"),
        ("glm 4.5 air", "glm-4.5-air"),
        ("qwen3 235b", "qwen3-235b-a22b"),
        # "mini" after a model word is the name's, not the Mac's (parse_patterns.name_words_kept)
        ("phi-4 mini", "phi-4-mini"),
        ("phi-4-mini-reasoning", "phi-4-mini-reasoning"),
    ],
)
def test_typed_names_resolve_as_bot_ask_reads_them(catalog: Catalog, typed: str, expected: str) -> None:
    assert _asked(typed, catalog) == expected, typed


@pytest.mark.parametrize(
    ("typed", "not_this"),
    [
        ("devstral small 2", "devstral-small-2505"),
        ("magistral small", "mistral-small-3.1-24b"),
        ("Magistral-Small-2506", "mistral-small-3.1-24b"),
        ("minimax m2.1", "minimax-m2"),
        ("minimax m2.5", "minimax-m2"),
        ("kimi k2 0905", "kimi-k2"),
        ("phi-4-mini-reasoning", "phi-4-mini"),
        ("granite 4.0 h tiny", "granite-4.0-h-small"),
        # the names below have no row: asked back or looked up, never another model
        ("magistral medium", "magistral-small-2509"),
        ("nemotron nano 12b v2", "nemotron-nano-9b-v2"),
        ("glm 4.6v", "glm-4.5v"),
        # a family the catalog lacks beside a version is no catalog model of that size, and "internvl"
        # (InternVL) is no InternLM a letter off (hub_rule._lacking, _variant_glued)
        ("olmo 2 32b", "qwen3-32b"),
        ("internvl3", "internlm3-8b"),
    ],
)
def test_no_silent_swap(catalog: Catalog, typed: str, not_this: str) -> None:
    assert _asked(typed, catalog) != not_this, typed


@pytest.mark.parametrize(
    "typed",
    [
        # the issue-22 families are looked up on the Hub, not catalog rows (tests/core/catalog/hub_configs)
        "olmo 2 13b",
        "smollm3 3b",
        "exaone 4.0 32b",
        "falcon h1",
        "magistral medium",
        "nemotron nano 12b v2",
        "glm 4.6v",
        "hunyuan mt 7b",
        "qwen2.5 vl 72b",
    ],
)
def test_names_without_a_row_are_not_answered(catalog: Catalog, typed: str) -> None:
    assert _asked(typed, catalog) is None, typed


@pytest.mark.parametrize(
    ("size", "expected"),
    [
        ("24b", "mistral-small-3.1-24b"),
        ("13b", "llama-2-13b"),
        ("235b", "qwen3-235b-a22b"),
        ("3b", "llama-3.2-3b"),
    ],
)
def test_bare_sizes_keep_the_established_row(catalog: Catalog, size: str, expected: str) -> None:
    res = resolve_model(size, catalog)
    assert res.best_id == expected and res.confident, (size, res)


# Published GGUF files (bytes): the weights of the rows that share a text decoder land on them.
@pytest.mark.parametrize(
    ("model_id", "quant", "published"),
    [
        # unsloth/Devstral-Small-2507-GGUF Devstral-Small-2507-Q4_K_M.gguf (code find_string id 58875229216)
        ("devstral-small-2507", "Q4_K_M", 14_333_918_432),
        # unsloth/Devstral-Small-2-24B-Instruct-2512-GGUF ...-Q4_K_M.gguf (code find_string id 63230504529)
        ("devstral-small-2-24b", "Q4_K_M", 14_334_446_752),
        # Magistral-Small-2509-Q4_K_M.gguf "is 13670 MiB" (code find_string id 62467176823)
        ("magistral-small-2509", "Q4_K_M", 13670 * 2**20),
        # ibm-granite/granite-4.0-h-tiny-GGUF granite-4.0-h-tiny-Q4_K_M.gguf (code find_string id 70926628251)
        ("granite-4.0-h-tiny", "Q4_K_M", 4_230_976_352),
    ],
)
def test_weights_match_the_published_gguf(
    catalog: Catalog, model_id: str, quant: str, published: float
) -> None:
    m = catalog.models[model_id]
    wb = weight_breakdown(m, catalog.quants[quant], catalog)
    tensors = wb.computed_total_bytes if wb.published is not None else wb.total_bytes
    computed = tensors + gguf_meta_bytes(m.vocab)
    assert abs(computed - published) / published < 0.01, (model_id, quant, computed / 1e9)


_SHAPE = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "vocab",
    "intermediate_size",
    "experts",
    "experts_active",
    "moe_intermediate_size",
    "params_b",
    "active_params_b",
)


@pytest.mark.parametrize(
    ("model_id", "same_as"),
    [
        ("devstral-small-2507", "devstral-small-2505"),
        ("devstral-small-2-24b", "mistral-small-3.2-24b"),
        ("magistral-small-2509", "mistral-small-3.2-24b"),
        ("magistral-small-2507", "mistral-small-3.1-24b"),
        ("magistral-small-2506", "mistral-small-3.1-24b"),
        ("minimax-m2.1", "minimax-m2"),
        ("minimax-m2.5", "minimax-m2"),
        ("kimi-k2-0905", "kimi-k2"),
        ("deepseek-r1-0528-qwen3-8b", "qwen3-8b"),
        ("phi-4-reasoning", "phi-4"),
        ("phi-4-reasoning-plus", "phi-4"),
        ("phi-4-mini-reasoning", "phi-4-mini"),
    ],
)
def test_same_architecture_rows_share_the_shapes(catalog: Catalog, model_id: str, same_as: str) -> None:
    m, base = catalog.models[model_id], catalog.models[same_as]
    assert [getattr(m, f) for f in _SHAPE] == [getattr(base, f) for f in _SHAPE]
    assert m.hf_repo != base.hf_repo  # its own release, fetched from its own repo


@pytest.mark.parametrize(
    ("model_id", "context"),
    [
        ("devstral-small-2-24b", 262144),
        ("kimi-k2-0905", 262144),
        ("kimi-k2", 131072),
        ("phi-4-reasoning", 32768),
        ("phi-4", 16384),
        ("deepseek-r1-0528-qwen3-8b", 131072),
    ],
)
def test_context_of_the_release(catalog: Catalog, model_id: str, context: int) -> None:
    assert catalog.models[model_id].max_context == context


def test_hybrids_cache_kv_in_their_attention_layers_only(catalog: Catalog) -> None:
    tiny = catalog.models["granite-4.0-h-tiny"]
    assert tiny.layer_pattern.count("*") == 4 and tiny.experts == 64 and tiny.experts_active == 6
    nano = catalog.models["nemotron-nano-9b-v2"]
    assert len(nano.layer_pattern) == 56 and nano.layer_pattern.count("*") == 4
    assert nano.layer_pattern.count("M") == 27 and nano.layer_pattern.count("-") == 25


def test_glm_4_7_serves_its_own_repo() -> None:
    """GLM-4.7's hf_repo pointed at GLM-4.5: its vLLM command and listed checkpoints were GLM-4.5's."""
    from core.ask.answer import answer

    for question in ("8x h100 glm 4.7 vllm", "glm-4.7 on 8 h200 with vllm"):
        command = next(x for x in answer(question, default_catalog()).text.split("\n") if x.startswith("$ "))
        assert "zai-org/GLM-4.7" in command and "GLM-4.5" not in command
