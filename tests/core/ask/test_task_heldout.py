"""Held out: phrasings for the two features "best model for coding" (the question's task, read as
data, puts the code-tuned models first) and "is a quantized KV cache worth it" (one line with the
cache's size per type and the trade-off). Written before the implementation, never tuned against,
run once at the end."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("question", "title_word"),
    [
        ("need a good model for writing code on my rtx 4070 super", "coding"),
        ("4080 16g 适合编程的本地模型有哪些", "写代码"),
        ("which models are best for coding on a 3090 ti", "coding"),
    ],
)
def test_held_out_coding_questions_list_code_models_first(question: str, title_word: str) -> None:
    reply = answer(question, CATALOG)
    assert reply.status == "answer", reply.text
    assert reply.query is not None and reply.query.intent == "which_model", reply.text
    assert reply.as_dict()["query"].get("task") == "code"
    assert title_word in reply.text.split("\n")[0], reply.text
    first = [r for r in reply.rows if r.get("placement") == "gpu"][0]
    assert "code" in CATALOG.models[first["model"]].uses, reply.rows


@pytest.mark.parametrize(
    ("question", "tradeoff_word"),
    [
        ("is it worth quantizing the kv cache to q8 for qwen3 30b a3b on a 3090", "lossless"),
        ("q4 kv 值不值得 4060ti 16g qwen3 14b", "无损"),
        ("should I enable kv cache quantization? 4090, gemma 3 27b, 64k", "lossless"),
    ],
)
def test_held_out_kv_worth_questions_get_the_size_line(question: str, tradeoff_word: str) -> None:
    reply = answer(question, CATALOG)
    assert reply.status == "answer", reply.text
    lines = [
        line
        for line in reply.text.split("\n")
        if all(w in line for w in ("f16", "q8_0", "q4_0", "GiB", tradeoff_word))
    ]
    assert len(lines) == 1, reply.text
