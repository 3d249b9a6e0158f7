"""Name resolution against the shipped catalog: exact aliases, memory sizes, sizes, fuzzy typos."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.hub_rule import model_need
from core.understanding.parse import parse_question
from core.understanding.resolution import Resolution
from core.understanding.resolve import resolve_framework, resolve_gpu, resolve_model, resolve_quant

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "gpu_id", "memory"),
    [
        ("V100 32G", "tesla-v100-32g-pcie", 32.0),
        ("v100 32gb", "tesla-v100-32g-pcie", 32.0),
        ("Tesla V100", "tesla-v100-16g-pcie", None),
        ("m4 pro 64g", "apple-m4-pro", 64.0),
        ("mac mini m4 pro 64g", "apple-m4-pro", 64.0),
        ("魔改2080ti 22g", "rtx-2080-ti-22g-mod", 22.0),
        ("NVIDIA GeForce RTX 4090", "rtx-4090", None),
        ("ＲＴＸ４０９０", "rtx-4090", None),
        ("4060ti16g", "rtx-4060-ti-16g", 16.0),
        ("3080 12g", "rtx-3080-12g", 12.0),
        ("3090ti", "rtx-3090-ti", None),
        ("m2 ultra 192g", "apple-m2-ultra", 192.0),
        ("tesla p40", "tesla-p40", None),
        ("RTX A6000", "rtx-a6000", None),
    ],
)
def test_gpu(text: str, gpu_id: str, memory: float | None) -> None:
    res = resolve_gpu(text, CATALOG)
    assert res.best_id == gpu_id
    assert res.confident
    assert res.memory_gib == memory


def test_gpu_typo_is_a_suggestion() -> None:
    res = resolve_gpu("4o90", CATALOG)
    assert res.candidates and res.candidates[0][0] == "rtx-4090"


def test_unknown_gpu_gives_candidates_not_an_answer() -> None:
    res = resolve_gpu("xyzzy", CATALOG)
    assert res.best_id is None
    assert not res.confident


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("qwen3:32b", "qwen3-32b"),
        ("Qwen/Qwen3-32B", "qwen3-32b"),
        ("llama 3.3 70b", "llama-3.3-70b"),
        ("llama3 70b", "llama-3-70b"),
        ("qwen2.5-coder-32b", "qwen2.5-coder-32b"),
        ("r1", "deepseek-r1"),
        ("满血 r1", "deepseek-r1"),
        ("r1 32b", "deepseek-r1-distill-qwen-32b"),
        ("r1 70b", "deepseek-r1-distill-llama-70b"),
        ("235b a22b", "qwen3-235b-a22b"),
        # "qwen3 a3b" alone asks back now: Qwen3-30B-A3B, its 2507 release, Qwen3.6-35B-A3B, ...
        ("qwen3 30b a3b", "qwen3-30b-a3b"),
        ("gema3 27b", "gemma-3-27b"),
        ("mixtral 8x7b", "mixtral-8x7b"),
        ("bartowski/google_gemma-3-27b-it-GGUF", "gemma-3-27b"),
    ],
)
def test_model(text: str, model_id: str) -> None:
    res = resolve_model(text, CATALOG)
    assert res.best_id == model_id
    assert res.confident


def test_size_alone_ranks_by_popularity() -> None:
    res = resolve_model("27b", CATALOG)
    assert res.best_id == "gemma-3-27b"
    assert "gemma-2-27b" in res.also


def test_unknown_model() -> None:
    res = resolve_model("foo bar", CATALOG)
    assert res.best_id is None


@pytest.mark.parametrize(
    ("text", "quant_id"),
    [("q4", "Q4_K_M"), ("Q4_K_M", "Q4_K_M"), ("q4km", "Q4_K_M"), ("fp8", "FP8"), ("q8", "Q8_0")],
)
def test_quant(text: str, quant_id: str) -> None:
    assert resolve_quant(text, CATALOG).best_id == quant_id


@pytest.mark.parametrize(("text", "fw"), [("ollama", "ollama"), ("vllm", "vllm"), ("llama.cpp", "llama.cpp")])
def test_framework(text: str, fw: str) -> None:
    assert resolve_framework(text, CATALOG).best_id == fw


@pytest.mark.parametrize("text", ["", " ", "\x00\x01", "💥" * 50, "'; DROP TABLE gpus; --", "9" * 10_000])
def test_odd_input_never_raises(text: str) -> None:
    for fn in (resolve_gpu, resolve_model, resolve_quant, resolve_framework):
        assert isinstance(fn(text, CATALOG), Resolution)


@pytest.mark.parametrize(
    "question",
    ["4090 跑 qwen3_32b_int4 速度", "two 3090s running Qwen3-32B-AWQ", "qwen3-32b-gptq-int8 on an a100"],
)
def test_a_quant_glued_to_the_name_keeps_the_catalog_model(question: str) -> None:
    # "qwen-72B-int4" (QwenLM/Qwen#1067): the int4 is the weights' format, not a model the catalog lacks.
    parsed = parse_question(question, CATALOG)
    after, need = model_need(question, parsed.model, CATALOG)
    assert need is None
    assert after is not None and after.best_id == "qwen3-32b"


def test_a_version_digit_after_the_family_stays_in_the_typed_name() -> None:
    # "Qwen 3 coder next" (llama.cpp#19366) is no Qwen3-8B: the "3" no longer cuts the name in two.
    question = "Gemma 3 Omni 12b on a 4090"
    parsed = parse_question(question, CATALOG)
    _after, need = model_need(question, parsed.model, CATALOG)
    assert need is not None and need.name.lower().startswith("gemma 3 omni")


def test_the_hub_is_asked_for_the_run_with_a_model_word() -> None:
    # "token generation speed ... Qwen 3 Coder" (llama.cpp#19345): "generation" is the longest run of
    # words, but no model's name has it; the Hub is asked for the name that does.
    question = "my token generation throughput with Qwen 3 Omni is poor on a 4090"
    parsed = parse_question(question, CATALOG)
    _after, need = model_need(question, parsed.model, CATALOG)
    assert need is not None and need.name.lower() == "qwen 3 omni"


@pytest.mark.parametrize(
    "question",
    ["my rig: gtx 1060 6gb, 32gb ram, koala-13b loads but crawls", "4060 8G 64G内存 跑 alpaca-7b 会不会很慢"],
)
def test_a_card_or_ram_run_does_not_vouch_for_a_model_the_catalog_lacks(question: str) -> None:
    # "1650显卡 40G内存可以跑起来Baichuan-13B-chat吗" (Baichuan-13B#107), "fastchat-vllm ... vicuna-13B"
    # (vllm#527): the "1650" / "took 75 G" runs name no model, so the size alone no longer makes
    # the family the catalog lacks a sure Llama; the Hub is asked for the sized run instead.
    parsed = parse_question(question, CATALOG)
    after, need = model_need(question, parsed.model, CATALOG)
    assert after is None or not after.confident
    assert need is not None and any(ch.isdigit() for ch in need.name)
