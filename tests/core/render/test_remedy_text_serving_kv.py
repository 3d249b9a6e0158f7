"""The KV-cache way out in the engine's own words: under vLLM / SGLang it is an FP8 cache with the
engine's flag (`--kv-cache-dtype fp8` / `fp8_e5m2`), never llama.cpp's "q8_0"; under llama.cpp it
stays "KV q8_0".

Cases were written before the fix (first-run count in the session's report)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CAT = default_catalog()


def _way_out_line(question: str, lead: str) -> str:
    text = answer(question, CAT).text
    return next((t for t in text.splitlines() if t.startswith(lead)), text)


@pytest.mark.parametrize(
    ("question", "flag"),
    [
        ("3090 qwen3 8b bnb 4bit", "--kv-cache-dtype fp8"),
        ("4090 qwen3 14b awq vllm 128k", "--kv-cache-dtype fp8"),
        ("3090 qwen3 8b sglang 128k", "--kv-cache-dtype fp8_e5m2"),
    ],
)
def test_serving_kv_way_out_names_fp8_and_the_flag(question: str, flag: str) -> None:
    line = _way_out_line(question, "If it doesn't fit")
    assert "q8_0" not in line and f"fp8 ({flag})" in line, line


def test_serving_kv_way_out_in_chinese() -> None:
    line = _way_out_line("3090 用 vllm 跑 qwen3 8b bnb 4bit", "装不下时")
    assert "q8_0" not in line and "fp8" in line, line


def test_llama_cpp_keeps_its_own_cache_type() -> None:
    line = _way_out_line("v100 qwen2.5 14b", "If it doesn't fit")
    assert "KV q8_0" in line or "KV q4_0" in line or "KV" not in line, line
    assert "--kv-cache-dtype" not in line, line
