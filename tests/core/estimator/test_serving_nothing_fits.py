"""A serving engine whose every row needs other hardware (weights plus its graph reserve inside its
memory share) is not the plan when llama.cpp's GGUF ladder runs on the same machine: the table, the
header and the `$` command are llama.cpp's, under one line saying why not the engine. When llama.cpp
can't run it either, the engine's own verdict and way out stand."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("question", "gguf"),
    [
        ("A100 40GB llama 3 70b", "IQ4_XS"),
        ("2080 ti qwen3 14b awq vllm", "Q4_K_M"),  # AWQ asked: the GGUF of the same width
        ("A100 40G 跑 llama3 70b 多少 token", "IQ4_XS"),
    ],
)
def test_llama_cpp_runs_what_the_engine_cannot_fit(question: str, gguf: str) -> None:
    text = answer(question, CATALOG).text
    assert "· llama.cpp" in text.split("\n")[0] + text.split("\n")[1]
    command = next(line for line in text.split("\n") if line.startswith("$ "))
    assert command.startswith("$ llama-server") and f"-{gguf}.gguf" in command, command


def test_the_line_says_why_not_the_engine_when_it_was_asked() -> None:
    text = answer("2080 ti qwen3 14b awq vllm", CATALOG).text
    assert "vLLM can't fit any of its weights on the GeForce RTX 2080 Ti" in text


def test_an_engine_that_fits_keeps_its_plan() -> None:
    text = answer("8x h100 deepseek r1", CATALOG).text
    assert "$ vllm serve" in text and "--tensor-parallel-size 8" in text


def test_nothing_runs_anywhere_keeps_the_engines_verdict() -> None:
    # 1.3 TB of BF16 on one card with no RAM said: neither vLLM nor llama.cpp runs it here.
    text = answer("h100 deepseek r1 bf16 vllm", CATALOG).text
    assert "llama-server" not in text
