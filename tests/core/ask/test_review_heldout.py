"""Held-out phrasings for this session's plan fixes, written without looking at the code and run
once: a card typed without its memory, a serving engine that fits nothing, a sibling checkpoint the
card has no kernels for, a rich quant needing a way out, a fit lead over a stand-in table, and a
framework's lower-quant way out."""

from __future__ import annotations

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def _text(question: str) -> str:
    return answer(question, CATALOG).text


def test_a_bare_v100_names_its_32gb_sibling() -> None:
    text = _text("my v100 box, qwen2.5 14b how fast")
    assert "V100 PCIe 32GB" in text and "32g" in text


def test_a_chinese_4060ti_names_its_16gb_sibling() -> None:
    assert "16GB" in _text("4060ti 跑 qwen3 14b 多少速度").split("\n")[1]


def test_a_v100_32gb_gptq_question_is_never_sent_awq() -> None:
    assert "-AWQ" not in _text("tesla v100 32gb serve qwen3 14b with vllm gptq")


def test_two_h100s_do_not_run_bf16_through_an_fp8_cache() -> None:
    command = next(line for line in _text("2x h100 80gb qwen2.5 72b").split("\n") if line.startswith("$ "))
    assert "--quantization fp8" in command or "AWQ" in command or "FP8" in command, command


def test_vllm_on_a_p100_says_no_before_llama_cpps_yes() -> None:
    first = _text("will vllm work on my p100 for llama 3 8b?").split("\n")[0]
    assert first.startswith("Not with vLLM"), first


def test_exllamav3_ways_out_stay_in_exl3() -> None:
    text = _text("exllamav3 qwen3 32b 3090")
    ways = next((line for line in text.split("\n") if line.startswith("If it")), "")
    assert "AWQ" not in ways, ways
