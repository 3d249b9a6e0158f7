"""The line that says why a named framework can't run a quant reads as a sentence: the framework
named once, no internal format ids ("it loads: serving"), in English and in Chinese."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CAT = default_catalog()
INTERNAL = ("(it loads:", "serving)", "gguf)", "mlx)", "支持格式:")


def _refusal(question: str, marker: str) -> str:
    text = answer(question, CAT).text
    return next((t for t in text.splitlines() if marker in t), text)


@pytest.mark.parametrize(
    ("question", "name"),
    [
        ("a100 gemma-3-27b q4_k_m transformers", "Hugging Face transformers"),
        ("4090 qwen3 8b q4_k_m sglang", "SGLang"),
        ("4090 qwen3 8b awq llama.cpp", "llama.cpp"),
    ],
)
def test_refusal_line_names_the_framework_once(question: str, name: str) -> None:
    line = _refusal(question, "loads ")
    head = line.split(" Use ")[0]
    assert head.count(name) == 1, line
    assert not any(word in line for word in INTERNAL), line


def test_refusal_line_in_chinese() -> None:
    line = _refusal("a100 用 transformers 跑 gemma-3-27b q4_k_m", "只加载")
    assert "只加载" in line and "GGUF" in line, line
    assert line.split("改用")[0].count("transformers") == 1, line
    assert not any(word in line for word in INTERNAL), line
