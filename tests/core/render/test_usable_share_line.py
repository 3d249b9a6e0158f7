"""The "Usable" line of a vLLM / SGLang reply says the share of each card the engine takes (the
figure its command launches with), not the whole card less the driver: 8x H100 under vLLM's 0.92
hold 589 of 640 GiB, not 636. One line, English and Chinese; llama.cpp keeps the plain line."""

from __future__ import annotations

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CAT = default_catalog()


def _line(question: str, start: str) -> str:
    text = answer(question, CAT).text
    lines = [line for line in text.splitlines() if line.startswith(start)]
    assert len(lines) == 1, text
    return lines[0]


def test_vllm_line_says_its_share_en() -> None:
    line = _line("8x H100 deepseek r1 vllm", "vLLM may use")
    assert "0.92 of each card" in line and "588.8 of 640 GiB" in line, line


def test_vllm_line_says_its_share_zh() -> None:
    line = _line("8张 H100 用 vllm 跑 deepseek r1", "vLLM 可用")
    assert "0.92" in line and "588.8 / 640 GiB" in line, line


def test_sglang_line_says_its_share() -> None:
    line = _line("8x A100 80GB deepseek r1 sglang", "SGLang may use")
    assert "0.88 of each card" in line and "563.2 of 640 GiB" in line, line


def test_asked_share_is_the_one_said() -> None:
    line = _line("2x H100 llama 3.1 70b vllm --gpu-memory-utilization 0.7", "vLLM may use")
    assert "0.7 of each card" in line and "112.0 of 160 GiB" in line, line


def test_llama_cpp_keeps_the_plain_line() -> None:
    text = answer("4090 qwen3 32b q4", CAT).text
    assert "Usable" in text and "may use" not in text, text
