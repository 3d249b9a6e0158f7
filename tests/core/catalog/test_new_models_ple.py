"""Models people name that the catalog got wrong or lacked: Kimi-K2-Thinking was an alias of
Kimi-K2-Instruct (answered with K2's FP8 / AWQ weights instead of its own native INT4 release), and
the Gemma "E" models (Gemma 4 E2B / E4B) with Per-Layer Embeddings were refused ("isn't in my
catalog") or read as gemma-4-26B-A4B. Each new entry resolves to its own row in several phrasings
(Chinese too), "e4b" never lands silently on a sibling, the per-layer embedding table is counted in
the weights (as the GGUF holds it, beside the token embedding in host memory) and left out of what a
decoded token reads, and the weights land within 3 % of the published GGUF files."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.estimator.memory import kv_shape
from core.estimator.weights import gguf_meta_bytes, weight_breakdown
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_model


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("Kimi-K2-Thinking", "kimi-k2-thinking"),
        ("kimi k2 thinking", "kimi-k2-thinking"),
        ("moonshotai/Kimi-K2-Thinking", "kimi-k2-thinking"),
        ("kimi-k2-instruct", "kimi-k2"),  # the sibling keeps its name
        ("gemma 4 e4b", "gemma-4-e4b"),
        ("gemma-4-e4b-it", "gemma-4-e4b"),
        ("google/gemma-4-E4B-it", "gemma-4-e4b"),
        ("gemma4:e4b", "gemma-4-e4b"),
        ("gemma4 e2b", "gemma-4-e2b"),
        ("gemma 4 e2b", "gemma-4-e2b"),
        ("gemma-4-E2B", "gemma-4-e2b"),
        ("gemma 4 26b a4b", "gemma-4-26b-a4b"),  # the MoE keeps its name
    ],
)
def test_new_models_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_model(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id, res.confident)


@pytest.mark.parametrize(
    ("question", "gpu", "model"),
    [
        ("gemma 4 e4b on 4060", "rtx-4060", "gemma-4-e4b"),
        ("4060 能跑 gemma 4 e4b 吗", "rtx-4060", "gemma-4-e4b"),
        ("3060 12gb gemma4 e2b q8", "rtx-3060-12g", "gemma-4-e2b"),
        ("kimi k2 thinking on 8x H100", "h100-sxm", "kimi-k2-thinking"),
        ("8x h200 跑 Kimi-K2-Thinking 多少速度", "h200-sxm", "kimi-k2-thinking"),
    ],
)
def test_questions_name_the_new_models(catalog: Catalog, question: str, gpu: str, model: str) -> None:
    parsed = parse_question(question, catalog)
    (card,) = parsed.cards
    assert card.res.best_id == gpu, card
    assert parsed.model is not None and parsed.model.best_id == model, parsed.model


@pytest.mark.parametrize("typed", ["gemma 4 e4b", "gemma4 e4b", "gemma 4 e2b", "gemma-4-e4b-it"])
def test_e_models_never_land_on_a_sibling(catalog: Catalog, typed: str) -> None:
    res = resolve_model(typed, catalog)
    assert res.best_id not in ("gemma-4-26b-a4b", "gemma-4-31b", "gemma-3-4b", "gemma-3-12b"), res


def test_kimi_thinking_is_its_own_int4_release(catalog: Catalog) -> None:
    k2 = catalog.models["kimi-k2"]
    assert all("thinking" not in a.lower() for a in k2.aliases)
    m = catalog.models["kimi-k2-thinking"]
    assert m.native_quant == "INT4" and m.max_context == 262144
    assert (m.layers, m.hidden, m.experts, m.experts_active, m.kv_lora_rank) == (61, 7168, 384, 8, 512)
    assert m.gguf_repo == "unsloth/Kimi-K2-Thinking-GGUF"
    # the native release: routed experts INT4 (group 32), the rest BF16 -- the ~594 GB class of
    # Kimi-K2.5, which ships the same text decoder the same way
    wb = weight_breakdown(m, catalog.quants["HF-BF16"], catalog)
    assert 560e9 < wb.total_bytes < 620e9, wb.total_bytes / 1e9


def test_gemma4_e_shapes(catalog: Catalog) -> None:
    e4b, e2b = catalog.models["gemma-4-e4b"], catalog.models["gemma-4-e2b"]
    assert (e4b.layers, e4b.hidden, e4b.per_layer_input_size, e4b.kv_shared_layers) == (42, 2560, 256, 18)
    assert (e2b.layers, e2b.hidden, e2b.per_layer_input_size, e2b.kv_shared_layers) == (35, 1536, 256, 20)
    # total counts with the per-layer table (E4B ~7.5B raw / ~4B effective, E2B ~4.6B / ~2B)
    assert 7.3 < e4b.params_b < 7.8 and 4.4 < e2b.params_b < 4.8


def test_per_layer_table_is_host_memory_and_not_read_per_token(catalog: Catalog) -> None:
    m = catalog.models["gemma-4-e4b"]
    wb = weight_breakdown(m, catalog.quants["Q8_0"], catalog)
    table = 262144 * 42 * 256  # vocab x layers x hidden_size_per_layer_input
    assert wb.per_layer_embd_bytes == pytest.approx(table * 34 / 32, rel=0.01)
    assert wb.host_bytes_full_offload >= wb.per_layer_embd_bytes + wb.token_embd_bytes
    # a token reads one row of it per layer: the table's bytes are no part of the decode read (the
    # tied head, the token embedding's GPU copy, is: a dense model reads everything else)
    assert wb.active_bytes_per_token == wb.total_bytes - wb.per_layer_embd_bytes


def test_kv_shared_layers_cache_nothing(catalog: Catalog) -> None:
    m = catalog.models["gemma-4-e4b"]
    shape = kv_shape(m)
    # 24 of 42 layers hold a cache: 4 full (2 KV heads x 512) and 20 sliding (2 x 256), K and V
    assert shape.full_values_per_token == 4 * 2 * 2 * 512
    assert shape.swa_values_per_token == 20 * 2 * 2 * 256


def _computed_file(catalog: Catalog, model_id: str, quant: str) -> float:
    m = catalog.models[model_id]
    wb = weight_breakdown(m, catalog.quants[quant], catalog)
    tensors = wb.computed_total_bytes if wb.published is not None else wb.total_bytes
    return tensors + gguf_meta_bytes(m.vocab)


@pytest.mark.parametrize(
    ("model_id", "quant", "published"),
    [
        # S4MPL3BI4S/gemma4-coding-agent commit 4a882af: gemma-4-E4B-it.Q4_K_M.gguf, 5,335,274,944 B
        ("gemma-4-e4b", "Q4_K_M", 5_335_274_944),
        # unsloth Gemma 4 QAT docs table: E4B original BF16 15.1 GB, E2B 9.31 GB
        ("gemma-4-e4b", "BF16", 15.1e9),
        ("gemma-4-e2b", "BF16", 9.31e9),
        # dahus/gemma-4-e2b-it-*-GGUF cards: Q4_K_M 3.43 GB, Q8_0 4.97 GB (printed in GB there)
        ("gemma-4-e2b", "Q4_K_M", 3.43e9),
        ("gemma-4-e2b", "Q8_0", 4.97e9),
    ],
)
def test_weights_match_the_published_gguf(
    catalog: Catalog, model_id: str, quant: str, published: float
) -> None:
    computed = _computed_file(catalog, model_id, quant)
    assert abs(computed - published) / published < 0.03, (model_id, quant, computed / 1e9)


# Gemma 3n E2B / E4B are not in the catalog: no llama.cpp GGUF size was found to check the weights
# against (ollama's gemma3n tags keep the per-layer table unquantized) and its AltUp / LAuReL tensors
# are not modelled. Until they are, a name of theirs is asked back or looked up, never answered as
# Gemma 3 or Gemma 4.
@pytest.mark.parametrize(
    "typed",
    [
        "gemma3n e4b",
        "gemma3n:e4b",
        "gemma 3n",
        "gemma3n e2b 手机",
        "gemma-3n-e2b",
        "google/gemma-3n-E2B-it",
    ],
)
def test_gemma_3n_is_never_answered_as_another_model(catalog: Catalog, typed: str) -> None:
    parsed = parse_question(typed, catalog)
    m = parsed.model
    assert m is None or m.best_id is None or not m.confident or m.best_id.startswith("gemma-3n"), m


# Held out: phrasings written after the fix, run once as they stood.
@pytest.mark.parametrize(
    ("question", "gpu", "model"),
    [
        ("gemma-4-E2B-it on a 3090", "rtx-3090", "gemma-4-e2b"),
        ("5090 跑 gemma4:e4b 多快", "rtx-5090", "gemma-4-e4b"),
        ("google/gemma-4-E4B on rtx 4090 with 128k context", "rtx-4090", "gemma-4-e4b"),
        ("a 4070 and gemma 4 E4B", "rtx-4070", "gemma-4-e4b"),
        ("k2 thinking 8x h100", "h100-sxm", "kimi-k2-thinking"),
    ],
)
def test_held_out_questions(catalog: Catalog, question: str, gpu: str, model: str) -> None:
    parsed = parse_question(question, catalog)
    (card,) = parsed.cards
    assert card.res.best_id == gpu, card
    assert parsed.model is not None and parsed.model.best_id == model, parsed.model
