"""A quantized KV cache as the way out under vLLM / SGLang: their cache is FP8 (one byte a value,
`--kv-cache-dtype fp8` / `fp8_e5m2`), never llama.cpp's q4_0, and the command that runs the way
out carries the engine's own flag."""

from __future__ import annotations

from typing import Any

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict
from core.estimator.ways_out.kind import WayOutKind

CAT = default_catalog()


def _est_plan(question: str) -> tuple[Any, dict[str, Any], str]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    est = estimate_for(reply.query, CAT)
    return est, plan_dict(est, CAT, "en"), reply.text


def _kv_remedies(est: Any) -> list[Any]:
    out = []
    for row in est.rows:
        if row.remedy is None:
            continue
        out += [r for r in (row.remedy, *row.remedy.alternatives) if r.kind == WayOutKind.KV_QUANT]
    return out


@pytest.mark.parametrize(
    "question", ["3090 qwen3 8b bnb 4bit", "4090 qwen3 14b awq vllm 128k", "3090 qwen3 8b sglang 128k"]
)
def test_serving_kv_way_out_is_eight_bit_only(question: str) -> None:
    est, _, _ = _est_plan(question)
    assert est.framework in ("vllm", "sglang"), est.framework
    kinds = {r.kv_type for r in _kv_remedies(est)}
    assert kinds and kinds <= {"q8_0"}, (question, kinds)


@pytest.mark.parametrize(
    ("question", "flag"),
    [
        ("3090 qwen3 8b bnb 4bit 128k", "--kv-cache-dtype fp8"),
        ("3090 qwen3 8b awq sglang 128k", "--kv-cache-dtype fp8_e5m2"),
    ],
)
def test_kv_way_out_command_uses_the_engine_flag(question: str, flag: str) -> None:
    _, plan, text = _est_plan(question)
    assert flag in plan["command"], (question, plan)
    assert "-ctk" not in plan["command"], plan["command"]


def test_vllm_way_out_line_names_the_vllm_cache_type() -> None:
    _, _, text = _est_plan("3090 qwen3 8b bnb 4bit")
    line = next(t for t in text.splitlines() if t.startswith("If it doesn't fit"))
    assert "q8_0" not in line and "fp8" in line, line
