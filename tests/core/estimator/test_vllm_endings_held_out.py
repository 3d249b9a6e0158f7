"""Held-out cases over the fallback table, FP8 rows below Ampere, the serving KV wording, --dtype half
for FP16, the listed checkpoints and gfx906 plans: written after the fixes, run once (first-run
count in the session's report)."""

from __future__ import annotations

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.estimate import Estimate
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _run(question: str, lang: str = "en") -> tuple[Estimate, dict[str, object], str]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    est = estimate_for(reply.query, CAT)
    return est, plan_dict(est, CAT, lang), reply.text


def test_sglang_fallback_on_t4_prices_llama_cpp() -> None:
    est, plan, text = _run("t4 gemma-2-9b sglang")
    assert str(plan["command"]).startswith("llama-server"), plan["command"]
    assert est.framework == "llama.cpp" and text.splitlines()[0].endswith("llama.cpp"), text


def test_2080ti_vllm_table_has_no_fp8() -> None:
    est, _, text = _run("2080ti 22g qwen2.5 14b vllm")
    assert "FP8" not in {r.quant for r in est.rows}, text


def test_sglang_kv_way_out_in_chinese_names_its_flag() -> None:
    text = answer("4090 用 sglang 跑 qwen3 14b awq 128k", CAT).text
    line = next((t for t in text.splitlines() if t.startswith("装不下时")), "")
    assert "fp8_e5m2" in line and "q8_0" not in line, text


def test_fp16_on_two_h100_with_sglang_says_half() -> None:
    _, plan, _ = _run("2x h100 qwen2.5 32b fp16 sglang")
    assert "--dtype half" in str(plan["command"]), plan["command"]


def test_mi60_with_vllm_named_gets_gguf() -> None:
    _, plan, text = _run("mi60 32g 用 vllm 跑 qwen2.5 14b awq", "zh")
    assert str(plan["command"]).startswith("llama-server"), plan["command"]
    assert "gfx906" in text, text
