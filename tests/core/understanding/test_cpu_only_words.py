"""The ways people say "CPU only" (catalogs/backends.toml [words] cpu): with or without a space
between the Chinese and "CPU", "CPU 推理", "no GPU", "cpu inference". A question that says so is
priced as a CPU-only run, never answered with a VRAM table that asks for a card."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("question", "model"),
    [
        ("纯 CPU 跑 qwen3-30b-a3b，内存 64G DDR5，能有多少 token/s", "qwen3-30b-a3b"),
        ("纯 CPU 64G DDR5 跑 qwen3-30b-a3b", "qwen3-30b-a3b"),
        ("纯cpu推理 qwen3-30b-a3b 64G DDR5", "qwen3-30b-a3b"),
        ("CPU 推理 qwen3-30b-a3b 64G DDR5 多快", "qwen3-30b-a3b"),
        ("没有显卡 64G DDR5 qwen3-30b-a3b", "qwen3-30b-a3b"),
        ("无显卡,64G 内存跑 qwen3 8b 多快", "qwen3-8b"),
        ("不用显卡 跑 qwen3 8b 32G DDR4", "qwen3-8b"),
        ("no gpu, 64gb ddr5, qwen3-30b-a3b speed?", "qwen3-30b-a3b"),
        ("without a gpu how fast is qwen3-30b-a3b on 64gb ddr5", "qwen3-30b-a3b"),
        ("cpu inference qwen3-30b-a3b 64gb ddr5", "qwen3-30b-a3b"),
        ("只用 CPU 跑 qwen3 8b,32G 内存", "qwen3-8b"),
    ],
)
def test_cpu_only_phrasings_are_a_cpu_only_run(question: str, model: str) -> None:
    parsed = parse_question(question, CATALOG)
    assert parsed.backend == "cpu", question
    assert parsed.model is not None and parsed.model.best_id == model
    reply = answer(question, CATALOG)
    assert reply.status == "answer" and reply.query is not None
    assert reply.query.hardware.cpu is not None, reply.text
    assert "llama.cpp (CPU)" in reply.text, reply.text


def test_a_named_cpu_with_a_spaced_phrase_is_priced_on_that_cpu() -> None:
    reply = answer("纯 CPU 9950X 96G DDR5 跑 qwen3-30b-a3b", CATALOG)
    assert reply.query is not None and reply.query.hardware.cpu == "ryzen-9-9950x"
    assert "AMD Ryzen 9 9950X · Qwen3-30B-A3B · llama.cpp (CPU)" in reply.text


@pytest.mark.parametrize(
    ("question", "gpu"),
    [
        ("4090 qwen3 8b 纯 CPU", "rtx-4090"),  # a card and "CPU only": the card's box, on the CPU backend
        ("3090 cpu inference only qwen3 8b", "rtx-3090"),
    ],
)
def test_a_named_card_stays_read_beside_the_words(question: str, gpu: str) -> None:
    parsed = parse_question(question, CATALOG)
    assert parsed.backend == "cpu"
    assert parsed.gpu is not None and parsed.gpu.best_id == gpu


@pytest.mark.parametrize(
    "question",
    [
        "4090 + 64gb cpu ram gpt-oss-120b",
        "4090 qwen3 30b a3b experts on cpu --cpu-moe",
        "3090 跑 qwen3 30b,cpu 是 9950x",
        "4070 12g + 7950x, qwen3 30b a3b 用 cpu 跑专家",
    ],
)
def test_cpu_alone_is_still_no_backend(question: str) -> None:
    assert parse_question(question, CATALOG).backend is None
