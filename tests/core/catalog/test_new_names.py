"""Names people type for the cards, models, quants and frameworks added for the measured rows that
had no catalog entry (issue 11): each resolves to its own row, and whole questions in unseen
phrasings parse to it."""

from __future__ import annotations

import pytest

from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_framework, resolve_gpu, resolve_model, resolve_quant


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("Arc Pro B70", "arc-pro-b70"),
        ("b70 32g", "arc-pro-b70"),
        ("B60", "arc-pro-b60"),  # the new B70 does not take its sibling's name
        ("RX 6700 XT", "rx-6700-xt"),
        ("6700xt", "rx-6700-xt"),
        ("7600 XT", "rx-7600-xt"),
        ("Radeon 780M", "radeon-780m"),
        ("Iris Xe", "iris-xe-96eu"),
        ("Max 1550", "max-1550"),
        ("M1 Max 24-core GPU", "apple-m1-max-24c"),
        ("M1 Max", "apple-m1-max"),
        ("M2 Max 30-core GPU", "apple-m2-max-30c"),
        ("M2 Max 38-core GPU", "apple-m2-max"),
        ("M3 Ultra 60-core GPU", "apple-m3-ultra-60c"),
        ("M3 Ultra", "apple-m3-ultra"),
        ("Arc 140V", "arc-140v"),
        ("Core Ultra 7 258V", "arc-140v"),
    ],
)
def test_new_cards_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_gpu(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id, res.confident)


@pytest.mark.parametrize(
    ("question", "gpu", "memory", "model"),
    [
        ("780m 核显 跑 qwen3 8b", "radeon-780m", None, "qwen3-8b"),
        ("b70 32g 能跑 gpt-oss 20b 吗", "arc-pro-b70", 32.0, "gpt-oss-20b"),
        ("my iris xe laptop can run llama 3 8b?", "iris-xe-96eu", None, "llama-3-8b"),
        ("M2 Max 30-core 64GB qwen3 30b a3b speed", "apple-m2-max-30c", 64.0, "qwen3-30b-a3b"),
    ],
)
def test_unseen_questions_name_the_new_cards(
    catalog: Catalog, question: str, gpu: str, memory: float | None, model: str
) -> None:
    parsed = parse_question(question, catalog)
    (card,) = parsed.cards
    assert (card.res.best_id, card.res.memory_gib) == (gpu, memory)
    assert parsed.model is not None and parsed.model.best_id == model


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("Qwen3.5-9B", "qwen3.5-9b"),
        ("Qwen3.5-4B", "qwen3.5-4b"),
        ("qwen3 4b", "qwen3-4b"),  # the older row keeps its name
        ("Qwen3.6-27B", "qwen3.6-27b"),
        ("Qwen3.5-27B", "qwen3.5-27b"),
        ("Qwen3-VL-32B-Instruct", "qwen3-vl-32b"),
        ("CodeLlama-34B", "codellama-34b"),
        ("DeepSeek-Coder-V2-Lite-Base", "deepseek-coder-v2-lite"),
        ("Gemma-2-2B-it", "gemma-2-2b"),
        ("TinyLlama-1.1B", "tinyllama-1.1b"),
        ("Phi-2", "phi-2"),
    ],
)
def test_new_models_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_model(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id, res.confident)


@pytest.mark.parametrize(
    ("question", "model"),
    [
        ("qwen3.5 9b 在 4060 上能跑多快", "qwen3.5-9b"),
        ("codellama 34b on two 4090s, tokens per second?", "codellama-34b"),
        ("phi2 q4 on an M5 macbook", "phi-2"),
        ("gemma2 2b 在 iris xe 核显上能跑吗", "gemma-2-2b"),
        ("deepseek coder v2 lite q6 on a 3070", "deepseek-coder-v2-lite"),
    ],
)
def test_unseen_questions_name_the_new_models(catalog: Catalog, question: str, model: str) -> None:
    parsed = parse_question(question, catalog)
    assert parsed.model is not None and parsed.model.best_id == model, parsed.model


@pytest.mark.parametrize("size", ["9b", "4b", "27b", "34b"])
def test_bare_sizes_keep_their_established_rows(catalog: Catalog, size: str) -> None:
    # New variants sit below the row a bare size already named (catalogs/README.md, Aliases).
    new_rows = {"qwen3.5-9b", "qwen3.5-4b", "qwen3.6-27b", "codellama-34b"}
    assert resolve_model(size, catalog).best_id not in new_rows


def test_qwen35_122b_resolves(catalog: Catalog) -> None:
    parsed = parse_question("qwen3.5 122b a10b 在两台 strix halo 上多少 token/s", catalog)
    assert parsed.model is not None and parsed.model.best_id == "qwen3.5-122b-a10b"


@pytest.mark.parametrize(
    ("typed", "expected"),
    [
        ("NVFP4", "NVFP4"),
        ("MLX-6bit", "MLX-6BIT"),
        ("mlx 6bit", "MLX-6BIT"),
        ("GPTQ 4-bit g128", "GPTQ-INT4"),
        ("gptq-4bit-128g", "GPTQ-INT4"),
    ],
)
def test_new_quants_resolve(catalog: Catalog, typed: str, expected: str) -> None:
    res = resolve_quant(typed, catalog)
    assert res.best_id == expected and res.confident, (typed, res.best_id)


def test_new_quant_sizes_follow_their_format(catalog: Catalog) -> None:
    # NVFP4: 4-bit values + an FP8 scale per 16 = 4.5 bpw; MLX 6-bit, group 64: 6 + 32 / 64 = 6.5 bpw.
    assert catalog.ggml_types["NVFP4_G16"].bits_per_weight == pytest.approx(4.5)
    assert catalog.ggml_types["MLX_Q6_G64"].bits_per_weight == pytest.approx(6.5)


def test_nvfp4_in_a_question(catalog: Catalog) -> None:
    parsed = parse_question("llama 3.3 70b nvfp4 on a dgx spark, how fast?", catalog)
    assert list(parsed.quants) == ["NVFP4"]


@pytest.mark.parametrize("typed", ["llamafile", "GPT4All", "gpt4all"])
def test_llama_cpp_based_apps_are_the_llama_cpp_engine(catalog: Catalog, typed: str) -> None:
    res = resolve_framework(typed, catalog)
    assert res.best_id == "llama.cpp" and res.confident


def test_kobold_united_is_not_read_as_llama_cpp(catalog: Catalog) -> None:
    # KoboldAI United is not koboldcpp; no kobold name is an alias (the parser takes fuzzy matches).
    parsed = parse_question("Got 7B on 2x 8GB 3060's, using Kobold United, about 3 tokens/second", catalog)
    assert parsed.framework is None


def test_glm_47_flash_is_its_own_row(catalog: Catalog) -> None:
    assert resolve_model("GLM-4.7-Flash", catalog).best_id == "glm-4.7-flash"
    assert resolve_model("glm 4.7", catalog).best_id == "glm-4.7"  # the 355B model keeps its name
    parsed = parse_question("glm 4.7 flash q4 在 4090 上能跑多快", catalog)
    assert parsed.model is not None and parsed.model.best_id == "glm-4.7-flash"
