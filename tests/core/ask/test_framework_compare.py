"""Two or more priced frameworks set against each other ("ollama or exllamav2 for X on Y", "llama.cpp
vs vLLM", "还是 … 哪个快"): one line per framework with its quant and tok/s on this setup, which is
faster and by how much, then the faster one's plan and `$` command, not one framework's table."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()
# What each framework's `$` command starts with (catalogs/frameworks.toml `command`).
LAUNCH = {
    "ollama": "ollama",
    "exllamav2": "python main.py",
    "exllamav3": "python main.py",
    "llama.cpp": "llama-server",
    "vllm": "vllm serve",
    "sglang": "python -m sglang",
}


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("$ ")]


def _no_table(text: str) -> bool:
    """No fit/speed table: its header row starts with "quant" or "ctx" and lists contexts."""
    return not re.search(r"^(?:quant|ctx)\s+(?:GiB\s+)?\d+K", text, re.MULTILINE)


@pytest.mark.parametrize(
    ("question", "frameworks"),
    [
        ("which is faster: ollama or exllamav2 for qwen3 14b on 3090", ("ollama", "exllamav2")),
        ("llama.cpp vs vllm qwen3 8b on 4090", ("llama.cpp", "vllm")),
        ("qwen3 14b 在 3090 上 ollama 还是 vllm 哪个快", ("ollama", "vllm")),
        ("4090 跑 qwen3 32b,llama.cpp 和 exllamav2 对比", ("llama.cpp", "exllamav2")),
    ],
)
def test_the_query_carries_every_framework_compared(question: str, frameworks: tuple[str, ...]) -> None:
    reply = answer(question, CATALOG)
    assert reply.query is not None
    assert reply.query.frameworks == frameworks
    # The reply's query (its follow-up buttons) is the framework whose command the reply shows.
    assert reply.query.framework in frameworks
    assert reply.plan is not None and reply.plan["framework"] == reply.query.framework


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("which is faster: ollama or exllamav2 for qwen3 14b on 3090", ("Ollama", "ExLlamaV2")),
        ("llama.cpp vs vllm qwen3 8b on 4090", ("llama.cpp", "vLLM")),
        ("qwen3 14b 在 3090 上 ollama 还是 vllm 哪个快", ("Ollama", "vLLM")),
        ("4090 跑 qwen3 32b,llama.cpp 和 exllamav2 对比", ("llama.cpp", "ExLlamaV2")),
    ],
)
def test_one_line_per_framework_then_one_command(question: str, names: tuple[str, ...]) -> None:
    reply = answer(question, CATALOG)
    text = reply.text
    assert reply.status == "answer", text
    for name in names:
        assert any(line.startswith(name) and "tok/s" in line for line in text.splitlines()), (name, text)
    assert _no_table(text), text
    assert len(_commands(text)) == 1, text
    assert len(text.splitlines()) <= 12, text


def _decode_of(text: str, name: str) -> float:
    line = next(line for line in text.splitlines() if line.startswith(name))
    m = re.search(r"(\d+(?:\.\d+)?) tok/s", line)
    assert m is not None, line
    return float(m.group(1))


@pytest.mark.parametrize(
    ("question", "a", "b"),
    [
        ("which is faster: ollama or exllamav2 for qwen3 14b on 3090", "ollama", "exllamav2"),
        ("llama.cpp vs vllm qwen3 8b on 4090", "llama.cpp", "vllm"),
    ],
)
def test_the_command_is_the_faster_ones(question: str, a: str, b: str) -> None:
    text = answer(question, CATALOG).text
    fa = _decode_of(text, CATALOG.frameworks[a].name.split(" (")[0])
    fb = _decode_of(text, CATALOG.frameworks[b].name.split(" (")[0])
    faster = a if fa >= fb else b
    assert _commands(text)[0].startswith("$ " + LAUNCH[faster]), text
    assert "faster" in text or "about the same" in text, text


def test_chinese_verdict_is_chinese() -> None:
    text = answer("qwen3 14b 在 3090 上 ollama 还是 vllm 哪个快", CATALOG).text
    assert "快" in text or "差不多" in text, text


@pytest.mark.parametrize(
    "question",
    [
        "ollama qwen3 14b on 3090",
        "exllamav3 via tabbyapi, qwen3 14b on a 4090",  # two framework words, nothing set against
    ],
)
def test_no_comparison_without_two_frameworks_compared(question: str) -> None:
    reply = answer(question, CATALOG)
    assert reply.query is not None and len(reply.query.frameworks) < 2
    assert not _no_table(reply.text), reply.text
