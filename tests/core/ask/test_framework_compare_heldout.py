"""Held-out phrasings for ExLlama's own ladder and the framework comparison (written after the fix,
run once as written: see the report of the change)."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("question", "family"),
    [
        ("tabbyapi gemma 3 12b on a 4060 ti 16gb", "EXL2"),
        ("exl3 跑 qwen3 30b a3b 4090 多快", "EXL3"),
    ],
)
def test_exllama_table_is_its_own(question: str, family: str) -> None:
    text = answer(question, CATALOG).text
    quants = re.findall(r"^([A-Z][A-Z0-9_.-]*\d[A-Z0-9_.-]*)\s+\d+\.\d\s", text, re.MULTILINE)
    assert quants and all(q.startswith(family + "-") for q in quants), text
    assert "$ python main.py" in text and ".gguf" not in text, text


@pytest.mark.parametrize(
    ("question", "names"),
    [
        ("sglang or vllm for llama 3.1 8b on an a100, which is better", ("SGLang", "vLLM")),
        ("5090 上跑 gemma 3 27b 用 llama.cpp 还是 exllamav3 更快", ("llama.cpp", "ExLlamaV3")),
    ],
)
def test_frameworks_compared_line_by_line(question: str, names: tuple[str, ...]) -> None:
    reply = answer(question, CATALOG)
    lines = reply.text.splitlines()
    for name in names:
        assert any(line.startswith(name) and "tok/s" in line for line in lines), reply.text
    commands = [line for line in lines if line.startswith("$ ")]
    assert len(commands) == 1, reply.text
    assert reply.query is not None and reply.plan is not None
    assert reply.plan["command"] == commands[0][2:], reply.text
