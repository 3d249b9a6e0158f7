""" "Is a q4 KV cache worth it?": a question that asks whether a KV cache type is worth it (words as
data, catalogs/intents.toml [kv_worth]) gets one more line: the cache's GiB at the plan's context
for f16, q8_0 and q4_0 (the estimator's own kv_cache_bytes, as the table's KV), the trade-off in
plain words, and which type the plan runs and what it buys. Written before the change."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.estimator.estimate import estimate
from core.estimator.memory import GIB, kv_cache_bytes
from core.render.doc import LIMITS
from core.render.fmt import gib

CAT = default_catalog()
ROOT = Path(__file__).resolve().parents[3]
TYPES = ("f16", "q8_0", "q4_0")


def _worth_lines(text: str) -> list[str]:
    return [line for line in text.split("\n") if all(f"{t} " in line for t in TYPES) and "GiB" in line]


def _assert_line(question: str) -> str:
    reply = answer(question, CAT)
    assert reply.status == "answer", reply.text
    lines = _worth_lines(reply.text)
    assert len(lines) == 1, reply.text
    line = lines[0]
    assert ("无损" if reply.query is not None and reply.query.lang == "zh" else "lossless") in line, line
    # The figures are the estimator's KV cache at the plan's context, one per type.
    assert reply.plan is not None and reply.query is not None and reply.query.model_id is not None
    model = CAT.models[reply.query.model_id]
    ctx = int(reply.plan["context"])
    for t in TYPES:
        assert f"{t} {gib(kv_cache_bytes(model, ctx, t, CAT) / GIB)} GiB" in line, (t, line)
    # Which type the plan runs is said: "The plan runs q8_0 ...", "方案用 q8_0 ...".
    kv = str(reply.plan["kv_type"])
    assert re.search(rf"(?:plan (?:runs|keeps)|方案(?:按你说的)?(?:用|保持)) ?{kv}", line), (kv, line)
    for target in ("discord", "telegram"):
        assert len(answer(question, CAT, target=target).text) <= LIMITS[target]
    return line


BRIEF = [
    "is q4 KV cache worth it on a 3090 with qwen3 32b",
    "q8 kv cache 值得吗 4090 qwen3 32b",
    "should I quantize the kv cache, 3090, gemma 3 27b",
]
NEW = [
    "is kv cache quantization worth it for gemma 3 27b on a 4090",
    "does q8_0 kv cache hurt quality? 3090 qwen3 14b 32k",
    "should i use q4_0 kv on my 4060 ti 16gb with qwen3 14b",
    "worth using a quantized kv cache with llama 3.3 70b on 2x3090?",
    "kv缓存量化有必要吗 3090 qwen3 32b",
    "4090 跑 gemma3 27b 要不要开 q8 kv 缓存",
    "qwen3 32b 5090 kv cache q4 划算吗",
    "3060 12g qwen3 8b 64k, is 8-bit kv cache a good idea",
    "any downside to q8 kv cache? 4090 mistral small 24b",
    "kv 缓存用 q4 会掉质量吗 4090 qwen3 32b",
]


@pytest.mark.parametrize("question", BRIEF)
def test_the_briefs_questions_get_the_line(question: str) -> None:
    _assert_line(question)


@pytest.mark.parametrize("question", NEW)
def test_new_phrasings_get_the_line(question: str) -> None:
    _assert_line(question)


def test_what_the_cache_buys_is_the_estimators_verdict() -> None:
    """ "q8_0 lets Q5_K_M run at 32K": that quant at that context doesn't fit with f16 and does
    with the type the plan runs (checked against the estimator, not against fixed numbers)."""
    reply = answer("q8 kv cache 值得吗 4090 qwen3 32b", CAT)
    en = answer("is q8 kv cache worth it on a 4090 with qwen3 32b", CAT)
    line = _worth_lines(en.text)[0]
    m = re.search(r"lets (\S+) run at (\S+?)[ ,.(;]", line)
    assert en.plan is not None and reply.plan is not None
    if m is None:
        assert "no bigger quant" in line, line
        return
    quant = m.group(1)
    assert quant == en.plan["quant"], (line, en.plan)
    assert en.query is not None and en.query.model_id is not None and en.query.gpu_id is not None
    from core.ask.answer import estimate_for

    base = estimate_for(en.query, CAT).request
    ctx = int(en.plan["context"])
    for kv, fits in (("f16", False), (str(en.plan["kv_type"]), True)):
        row = estimate(replace(base, kv_type=kv, quants=(quant,), contexts=(ctx,)), CAT).rows[0]
        assert (row.status != "no_fit") is fits, (kv, row.status, line)


@pytest.mark.parametrize(
    "question",
    [
        "4090 qwen3 32b q8 kv",
        "is the 4090 worth it for qwen3 32b",
        "qwen3 32b 4090 值得买吗",
        "should i buy a 3090 for qwen3 32b",
        "3090 qwen3 32b q4_k_m 32k",
    ],
)
def test_other_questions_get_no_line(question: str) -> None:
    assert _worth_lines(answer(question, CAT).text) == []


def test_the_quality_claim_cites_its_source() -> None:
    text = (ROOT / "catalogs/messages/reply.toml").read_text(encoding="utf-8")
    start = text.index("[reply.kv_worth")
    block = text[max(0, start - 1500) : start + 3000]
    assert "github.com/ggml-org/llama.cpp/pull/7412" in block
