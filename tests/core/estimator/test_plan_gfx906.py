"""MI50 / MI60 / Radeon VII (gfx906): upstream vLLM and SGLang ROCm builds don't drive it (ROCm 6
dropped it; only community forks such as nlzy/vllm-gfx906 do), so the plan is llama.cpp's GGUF
plan, and a vLLM asked for by name says why not under that plan.

Cases were written before the fix (first-run count in the session's report)."""

from __future__ import annotations

from typing import Any

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _run(question: str) -> tuple[dict[str, Any], str]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    return plan_dict(estimate_for(reply.query, CAT), CAT, "en"), reply.text


@pytest.mark.parametrize(
    "question",
    [
        "mi50 32gb, worth it for qwen3-32b?",
        "MI50 32G 两张能跑 70b 吗",
        "mi60 qwen3 14b",
        "radeon vii qwen2.5 7b 8 users",
    ],
)
def test_gfx906_plans_llama_cpp(question: str) -> None:
    plan, text = _run(question)
    assert plan["framework"] not in ("vllm", "sglang"), (question, plan["command"])
    assert plan["command"].startswith("llama-server"), (question, plan["command"])


@pytest.mark.parametrize("question", ["mi50 qwen3 8b vllm", "用 vllm 在 mi50 上跑 qwen3 8b"])
def test_vllm_named_on_gfx906_says_why_and_runs_gguf(question: str) -> None:
    plan, text = _run(question)
    assert plan["command"].startswith("llama-server"), (question, plan["command"])
    assert "sglang" not in plan["command"], plan["command"]
    assert "gfx906" in text, text
