"""SGLang is judged against the share its command launches with (`--mem-fraction-static`, catalogs/
frameworks.toml [sglang] gpu_memory_utilization), like vLLM's `--gpu-memory-utilization`, and keeps an
activation / CUDA-graph reserve beside it: 8x A100 80GB can't load DeepSeek FP8 (627 GiB) under
0.88 x 640 = 563 GiB, so neither the plan nor the cards-needed answer may say FP8 on one node."""

from __future__ import annotations

import re

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.memory import constants, serving_share
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _plan(question: str) -> dict:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    return plan_dict(estimate_for(reply.query, CAT), CAT, "en")


def test_sglang_share_is_the_one_its_command_uses() -> None:
    assert serving_share("sglang", None, CAT) == CAT.frameworks["sglang"].gpu_memory_utilization
    assert serving_share("sglang", 0.7, CAT) == 0.7
    assert serving_share("llama.cpp", None, CAT) is None


def test_sglang_8x_a100_r1_plan_is_not_fp8_zh() -> None:
    plan = _plan("8张 A100 80GB 用 sglang 部署 deepseek r1")
    assert plan["framework"] == "sglang", plan
    assert plan["quant"] != "FP8", plan


def test_sglang_rows_keep_an_activation_and_graph_reserve() -> None:
    reply = answer("1x H100 llama 3.1 8b sglang", CAT)
    assert reply.query is not None
    est = estimate_for(reply.query, CAT)
    const = constants(CAT)
    reserve = const.vllm_activation_gib[0] + const.vllm_cuda_graph_gib
    row = est.rows[0]
    assert row.overhead_gib >= reserve - 1e-6, row


def test_cards_needed_for_deepseek_v3_fp8_sglang_is_not_one_node() -> None:
    text = answer("how many A100 80GB do I need to serve DeepSeek-V3 in FP8 with sglang?", CAT).text
    assert "one node of 8" not in text, text
    assert re.search(r"\b16\b|2 nodes|AWQ", text), text


def test_cards_needed_zh_for_deepseek_v3_fp8_sglang() -> None:
    text = answer("用 sglang 跑 DeepSeek-V3 FP8 需要几张 A100 80GB?", CAT).text
    assert not re.search(r"FP8\s+8\s", text), text
