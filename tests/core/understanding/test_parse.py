"""parse_question on the issue's examples and on the traps (sizes vs memory vs counts vs contexts)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from core.catalog.loader import default_catalog
from core.understanding.parse import ParsedQuestion, parse_question
from core.understanding.query import INTENTS
from core.understanding.resolution import Resolution

CATALOG = default_catalog()


def test_v100_27b_speed() -> None:
    p = parse_question("V100 32G 27B 多少 token", CATALOG)
    assert p.gpu and p.gpu.best_id == "tesla-v100-32g-pcie" and p.gpu.memory_gib == 32
    assert p.model and p.model.best_id == "gemma-3-27b"
    assert p.intent == "speed" and p.gpu_count == 1


def test_dual_3090_is_a_count_not_a_card_number() -> None:
    p = parse_question("双3090 跑 llama3 70b q4 速度", CATALOG)
    assert (p.gpu.best_id, p.gpu_count) == ("rtx-3090", 2)  # type: ignore[union-attr]
    assert p.model and p.model.best_id == "llama-3-70b"
    assert p.quants == ("Q4_K_M",)


def test_size_is_not_memory_and_context_is_not_size() -> None:
    p = parse_question("will qwen2.5-coder-32b fit on a 24gb 3090 with 32k ctx", CATALOG)
    assert p.gpu and p.gpu.best_id == "rtx-3090" and p.gpu.memory_gib == 24
    assert p.model and p.model.best_id == "qwen2.5-coder-32b"
    assert p.contexts == (32768,)
    assert p.intent == "fit"


@pytest.mark.parametrize(
    ("text", "gpu", "count", "model"),
    [
        ("4张4090 跑 qwen3 235b a22b", "rtx-4090", 4, "qwen3-235b-a22b"),
        ("mac mini m4 pro 64g 跑 llama 3.3 70b", "apple-m4-pro", 1, "llama-3.3-70b"),
        ("8卡h100 deepseek r1 fp8", "h100-sxm", 8, "deepseek-r1"),
        ("h100x8 deepseek v3", "h100-sxm", 8, "deepseek-v3"),
        ("3090 x2 mixtral 8x7b", "rtx-3090", 2, "mixtral-8x7b"),
        ("two 4090s llama 3.3 70b", "rtx-4090", 2, "llama-3.3-70b"),
        ("minimax m2 on 4 h100", "h100-sxm", 4, "minimax-m2"),
        ("满血 r1", None, 1, "deepseek-r1"),
    ],
)
def test_examples(text: str, gpu: str | None, count: int, model: str) -> None:
    p = parse_question(text, CATALOG)
    assert (p.gpu.best_id if p.gpu else None) == gpu
    assert p.gpu_count == count
    assert p.model and p.model.best_id == model


def test_os_framework_contexts() -> None:
    p = parse_question("2x3090 跑 r1 32b 128K上下文 ollama windows", CATALOG)
    assert p.os == "windows" and p.framework == "ollama" and p.contexts == (131072,)
    assert p.model and p.model.best_id == "deepseek-r1-distill-qwen-32b"


ODD = [
    "",
    " ",
    "0",
    "3090",
    "1234567890" * 10,
    "x" * 10_000,
    "<script>alert(1)</script> 4090",
    "'; DROP TABLE users; -- 3090",
    "\x00\x01\x02\x1b[31m 4090 \x7f",
    "🚀🔥💯 4090 🤖 llama3 70b",
    "**bold** `code` [link](http://x) @everyone",
    "9" * 600 + "x" + "8" * 600,
    "2x" * 300,
    "张" * 1000,
    "32k" * 200,
]


@pytest.mark.parametrize("text", ODD)
def test_odd_input_is_calm(text: str) -> None:
    _check(parse_question(text, CATALOG))


def _check(p: ParsedQuestion) -> None:
    assert isinstance(p, ParsedQuestion)
    assert p.gpu is None or isinstance(p.gpu, Resolution)
    assert p.model is None or isinstance(p.model, Resolution)
    assert isinstance(p.gpu_count, int) and 1 <= p.gpu_count <= 64
    assert all(isinstance(q, str) for q in p.quants)
    assert all(isinstance(c, int) and c > 0 for c in p.contexts)
    assert p.intent in INTENTS
    assert len(p.raw) <= 500
    assert p.cards == () or p.cards[0].res is p.gpu
    assert all(1 <= c.count <= 64 for c in p.cards) and 1 <= p.machines <= 64
    assert p.host_ram_gib is None or 0 < p.host_ram_gib <= 65536
    assert all(m is None or 0 < m <= 4096 for m in (c.res.memory_gib for c in p.cards))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=2000))
def test_random_text_never_raises(text: str) -> None:
    _check(parse_question(text, CATALOG))


words = st.sampled_from(
    [
        "4090",
        "3090",
        "双",
        "张",
        "卡",
        "x2",
        "2x",
        "32g",
        "27b",
        "qwen3",
        "llama",
        "r1",
        "q4",
        "32k",
        "fp8",
        "m4",
        "pro",
        "64g",
        "吗",
        "能跑",
        "how",
        "fast",
        "*",
        "8",
        "ollama",
        "win",
        " ",
        "上下文",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(words, max_size=30).map(" ".join))
def test_random_word_salad_never_raises(text: str) -> None:
    _check(parse_question(text, CATALOG))


def test_a_lone_small_number_is_no_card() -> None:
    # "请问单卡4090推理速度 7 tokens/s" (QwenLM/Qwen#372) read a Radeon VII from "7" (its alias
    # "Radeon 7" without the vendor word); "radeon7" still names it.
    parsed = parse_question("3090 上 llama3 8b 只有 9 tok/s 正常吗", CATALOG)
    assert [c.res.best_id for c in parsed.cards] == ["rtx-3090"]
    assert parse_question("radeon7 跑 qwen3 8b", CATALOG).gpu is not None


def test_an_underscored_k_quant() -> None:
    # "部署Q_4_K_M的模型" (ktransformers#733): the underscore after the q is the same quant.
    assert parse_question("4090 跑 qwen3 32b q_5_k_m", CATALOG).quants == ("Q5_K_M",)


def test_a_performance_complaint_is_a_speed_question() -> None:
    # "8*5060ti performance is low" (lmdeploy#4226), "...开始响应这之间的耗时特别久" (QwQ#7).
    assert parse_question("2x 3090 with qwen3 32b, poor performance in vllm", CATALOG).intent == "speed"
    assert parse_question("A100 上 qwen2.5 72b 每次回答耗时太长", CATALOG).intent == "speed"
