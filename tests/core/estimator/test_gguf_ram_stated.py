"""A serving engine that fits nothing on the cards falls back to llama.cpp's GGUF plan only if that
plan keeps the weights on the cards, unless the user stated their RAM: then experts in that RAM
(`--n-cpu-moe`) is what a practitioner runs. Plain layer offload stays out (it crawls), and with no
RAM said the engine's "more cards" verdict stands (test_serving_plan.py, one MI300X + R1)."""

from __future__ import annotations

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _plan(question: str) -> dict:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    return plan_dict(estimate_for(reply.query, CAT), CAT, "en")


def test_gpt_oss_120b_sglang_2x3090_64gb_ram_offloads_experts() -> None:
    plan = _plan("I'm trying to run GPT-OSS-120B on SGLang using a system with 2x RTX 3090 and 64 GB RAM.")
    assert "--n-cpu-moe" in (plan["command"] or ""), plan


def test_gpt_oss_120b_sglang_2x3090_64gb_ram_zh() -> None:
    plan = _plan("两张 RTX 3090,64GB 内存,想用 SGLang 跑 GPT-OSS-120B")
    assert "--n-cpu-moe" in (plan["command"] or ""), plan


def test_no_ram_said_keeps_the_engine_verdict() -> None:
    plan = _plan("2x RTX 3090 gpt-oss-120b sglang")
    assert plan["framework"] == "sglang" and not plan["command"], plan


def test_dense_model_with_ram_said_is_not_layer_offloaded() -> None:
    # A dense 70B has no experts to put in RAM: layers in RAM run at a few tok/s, not a plan.
    plan = _plan("llama 3.1 70b fp16 on vllm with 1x RTX 3090 and 64 GB RAM")
    assert "-ngl" not in (plan["command"] or ""), plan
