"""The longest-context line (core/render/max_context.py): asked for by "how much context can I
fit" / "能开多长上下文" (audit 3), read off the plan row's own memory sums per KV cache type."""

from __future__ import annotations

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.choice import choose
from core.estimator.memory import GIB, kv_cache_bytes
from core.estimator.plan import plan_for
from core.render.max_context import LADDER, longest

CATALOG = default_catalog()


def _line(question: str) -> str:
    text = answer(question, CATALOG).text
    return next((x for x in text.split("\n") if x.startswith("Longest context") or "最长能开" in x), "")


@pytest.mark.parametrize(
    "question",
    [
        "4090 跑 qwen3 14b 用 q4 kv cache 能开多长上下文 质量会掉吗",
        # held out
        "3090 gemma 3 27b max context",
        "how much context can i fit with qwen3 32b on a 5090",
        "4060 ti 16g llama 3.1 8b 最长能开多少上下文",
    ],
)
def test_a_max_context_question_gets_the_line(question: str) -> None:
    assert _line(question)


def test_the_asked_q4_cache_is_priced_and_past_native_says_rope() -> None:
    line = _line("4090 跑 qwen3 14b 用 q4 kv cache 能开多长上下文 质量会掉吗")
    assert "KV q4_0 128K(模型上限)" in line
    assert "rope 外推" in line


def test_the_quality_question_gets_the_kv_trade_off_line() -> None:
    text = answer("4090 跑 qwen3 14b 用 q4 kv cache 能开多长上下文 质量会掉吗", CATALOG).text
    assert "q4_0 只占约四分之一,但质量损失明显" in text


def test_no_line_without_the_question() -> None:
    assert not _line("3090 gemma 3 27b")


def test_each_longest_holds_its_cache_and_the_next_rung_does_not() -> None:
    reply = answer("3090 gemma 3 27b max context", CATALOG)
    est = estimate_for(reply.query, CATALOG)
    plan = plan_for(est, choose(est, CATALOG).row, CATALOG)
    row = next(r for r in est.rows if r.quant == plan.quant and r.context == plan.context)
    room = (row.usable_gib - (row.total_gib - row.kv_gib)) * GIB
    model = est.request.model
    for found in longest(est, plan, CATALOG):
        assert kv_cache_bytes(model, found.context, found.kv, CATALOG) <= room
        above = [c for c in LADDER if c > found.context and c <= model.max_context]
        if above and not found.capped:
            assert kv_cache_bytes(model, above[0], found.kv, CATALOG) > room


def test_a_run_with_experts_in_ram_has_no_line() -> None:
    assert not _line("3060 12g qwen3-30b-a3b max context")
