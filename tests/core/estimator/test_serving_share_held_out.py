"""Held-out cases over the SGLang share, the engine's "Usable" line and experts in stated RAM, written
after the fixes and run once (the count that held on the first run is in the session's report)."""

from __future__ import annotations

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _plan(question: str) -> tuple[dict, str]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    return plan_dict(estimate_for(reply.query, CAT), CAT, "en"), reply.text


def test_sglang_asked_fraction_is_the_share_said() -> None:
    # A share the user pasted is the one the line says and the rows are judged against.
    _, text = _plan("2x H100 llama 3.1 70b sglang --mem-fraction-static 0.8")
    assert "SGLang may use 0.8 of each card: 128.0 of 160 GiB" in text, text


def test_sglang_zh_line_says_its_share() -> None:
    _, text = _plan("4张 A100 80GB 用 sglang 跑 qwen3 235b a22b")
    assert "SGLang 可用每张卡的 0.88:281.6 / 320 GiB" in text, text


def test_qwen3_235b_vllm_one_4090_with_128gb_ram_offloads_experts() -> None:
    plan, _ = _plan("qwen3 235b a22b on vllm, one RTX 4090 and 128GB RAM")
    assert "--n-cpu-moe" in (plan["command"] or "") or "-ot" in (plan["command"] or ""), plan


def test_sglang_8x_h200_v3_fp8_still_fits_one_node() -> None:
    # The share must not overshoot: 8x H200 under 0.88 hold ~990 GiB, DeepSeek-V3 FP8 (627 GiB) fits.
    plan, _ = _plan("8x h200 deepseek v3 fp8 sglang")
    assert plan["framework"] == "sglang" and plan["quant"] == "FP8", plan
