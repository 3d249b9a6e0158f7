"""When vLLM / SGLang have nothing to serve here and the plan falls back to llama.cpp, the table,
the header and the plan describe the same engine: GGUF quants priced by llama.cpp under the
llama-server command, and the one line saying why not vLLM.

Cases were written before the fix (first-run count in the session's report)."""

from __future__ import annotations

from typing import Any

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _run(question: str, lang: str = "en") -> tuple[Any, dict[str, Any], str]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    est = estimate_for(reply.query, CAT)
    return est, plan_dict(est, CAT, lang), reply.text


@pytest.mark.parametrize(
    ("question", "lang", "why"),
    [
        ("T4 gemma-2-9b vllm", "en", "vLLM"),
        ("用 vllm 在 T4 上跑 gemma2 9b", "zh", "vLLM"),
        ("p40 qwen2.5 7b vllm", "en", "vLLM"),
    ],
)
def test_table_is_llama_cpp_under_a_gguf_plan(question: str, lang: str, why: str) -> None:
    est, plan, text = _run(question, lang)
    assert plan["command"].startswith("llama-server"), plan
    # The table is the GGUF ladder llama.cpp priced, not vLLM's serving quants.
    assert est.framework == "llama.cpp", est.framework
    assert all(CAT.quants[r.quant].format == "gguf" for r in est.rows), [r.quant for r in est.rows]
    header = text.splitlines()[0]
    assert header.endswith("llama.cpp"), header
    lines = text.splitlines()
    assert not any(t.startswith(("AWQ ", "GPTQ-INT4 ", "FP8 ", "HF-BF16 ")) for t in lines), text
    assert why in text, text


def test_json_speed_is_the_plans_row() -> None:
    est, plan, _ = _run("T4 gemma-2-9b vllm")
    row = next(r for r in est.rows if r.quant == plan["quant"] and r.context == plan["context"])
    assert row.decode_tps is not None
    assert plan["decode_tps"]["mid"] == pytest.approx(row.decode_tps.mid, rel=0.02), (plan, row)
    assert not any("vllm on" in a for a in plan["assumptions"]), plan["assumptions"]
