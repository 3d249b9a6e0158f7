"""An Ollama tag typed without the word "ollama" ("deepseek-r1:671b", "qwen3:32b"): only Ollama
names models so, so the question is about Ollama and its file. A bare "int4" beside it is the tag's
GGUF (Q4_K_M), not a GPTQ checkpoint for vLLM (before: "单卡RTX 4090 + CPU部署deepseek-r1:671b(int4)"
was priced as vLLM GPTQ-INT4 on one 4090, "no way on this setup"). A framework named stays.

Written before the change: 1 of 5 held on the code before it (the one naming vLLM)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CAT = default_catalog()


@pytest.mark.parametrize(
    ("question", "tag", "quant"),
    [
        ("单卡RTX 4090 + CPU部署deepseek-r1:671b(int4),测试token值为4.1", "deepseek-r1:671b", "Q4_K_M"),
        ("3090 qwen3:32b speed?", "qwen3:32b", "Q4_K_M"),
        ("4090 跑 qwen2.5:72b-instruct-q4_K_M 多快", "qwen2.5:72b-instruct-q4_k_m", "Q4_K_M"),
        ("qwen3:30b-a3b on a 4060 ti 16gb, int4", "qwen3:30b-a3b", "Q4_K_M"),
    ],
)
def test_a_typed_tag_is_an_ollama_question(question: str, tag: str, quant: str) -> None:
    query = answer(question, CAT).query
    assert (query.framework, query.ollama_tag, query.quants) == ("ollama", tag, (quant,))


def test_a_framework_named_stays() -> None:
    query = answer("vllm on a 4090 with qwen3:32b awq", CAT).query
    assert query.framework == "vllm"


@pytest.mark.parametrize("question", ["4090 ollama deepseek r1", "ollama qwen3 235b on a 3060 12gb"])
def test_ollama_with_a_moe_too_big_for_the_ram_says_the_ram_it_needs(question: str) -> None:
    # Ollama runs a MoE this size with layers in RAM (no experts-in-RAM placement): the box needs
    # that much RAM, said with the speed it then reaches, not "no way on this setup".
    text = answer(question, CAT).text
    assert "free system RAM" in text and "no way on this setup" not in text, text
