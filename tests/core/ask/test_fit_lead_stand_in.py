"""A fit question about a serving engine the card can't run ("can vllm run on a p40?") is answered
with llama.cpp's table; its "Yes, it fits" is said as llama.cpp's, after the engine's no."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("question", "start"),
    [
        ("can vllm run on a p40? want qwen3-8b", "Not with vLLM"),
        ("mi50 16gb with vllm for qwen3-14b, does it work?", "Not with vLLM"),
        ("p40 用 vllm 能跑 qwen3 8b 吗", "vLLM 不行"),
    ],
)
def test_the_engine_asked_says_no_before_llama_cpps_yes(question: str, start: str) -> None:
    first = answer(question, CATALOG).text.split("\n")[0]
    assert first.startswith(start) and "llama.cpp" in first, first


def test_an_ordinary_fit_question_keeps_its_plain_lead() -> None:
    first = answer("4090 能跑 qwen3 14b 吗", CATALOG).text.split("\n")[0]
    assert first.startswith("能跑"), first
