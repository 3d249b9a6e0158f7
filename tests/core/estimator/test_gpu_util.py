"""`--gpu-memory-utilization 0.7` pasted in a question is priced (issue 21): vLLM / SGLang fill that
share of each card, and the launch command carries it."""

from __future__ import annotations

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.memory import serving_share

CATALOG = default_catalog()


def _usable_and_command(question: str) -> tuple[set[float], str]:
    reply = answer(question, CATALOG)
    assert reply.status == "answer" and reply.query is not None
    rows = estimate_for(reply.query, CATALOG).rows
    command = next(line for line in reply.text.splitlines() if line.startswith("$ "))
    return {row.usable_gib for row in rows}, command


@pytest.mark.parametrize(
    ("question", "flag"),
    [
        ("4090 vllm qwen2.5 7b --gpu-memory-utilization {share}", "--gpu-memory-utilization"),
        ("2张 4090 vllm 跑 qwen3 32b awq，参数 --gpu-memory-utilization {share}", "--gpu-memory-utilization"),
        ("4090 sglang qwen2.5 7b --mem-fraction-static {share}", "--mem-fraction-static"),
    ],
)
def test_the_share_asked_sets_usable_memory_and_the_command(question: str, flag: str) -> None:
    low, low_cmd = _usable_and_command(question.format(share="0.7"))
    high, high_cmd = _usable_and_command(question.format(share="0.95"))
    assert max(low) < min(high)
    assert f"{flag} 0.7" in low_cmd
    assert f"{flag} 0.95" in high_cmd


def test_without_a_share_vllm_keeps_its_default() -> None:
    usable, command = _usable_and_command("4090 vllm qwen2.5 7b")
    default = serving_share("vllm", None, CATALOG)
    assert default is not None and f"--gpu-memory-utilization {default:g}" in command
    assert usable == {round(24 * default, 2)}


def test_the_share_is_only_for_serving_engines() -> None:
    assert serving_share("llama.cpp", 0.7, CATALOG) is None
    # SGLang unasked: its command's own --mem-fraction-static (frameworks.toml), as vLLM's default.
    assert serving_share("sglang", None, CATALOG) == CATALOG.frameworks["sglang"].gpu_memory_utilization
    assert serving_share("sglang", 0.7, CATALOG) == 0.7
