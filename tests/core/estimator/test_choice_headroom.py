"""The plan a practitioner would run (issue 23 review of the plan): Q8_0 only where its speed is there
to spare ([choice] rich_quants / rich_tps), headroom bought with a smaller quant at the same context
rather than a load with little room (llama.cpp; vLLM pages its cache into what it is given), and an
offload that only just reads along (~5 tok/s) after a 3-bit+ run fully on the card at a shorter
context; vLLM serves what its kernels and the listed checkpoints allow. Written after the rules (the
golden snapshot's changed plans were read first): 12 of 12, then the 6 serving cases 6 of 6, held on
their first run."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def _plan(question: str) -> dict[str, object]:
    reply = answer(question, CATALOG)
    assert reply.plan is not None, reply.text
    return reply.plan


@pytest.mark.parametrize(
    "question",
    [
        "V100 32G 27B 多少 token",
        "tesla v100 32gb gemma 3 27b speed",
        "jetson agx orin 64gb llama 3.1 8b",
        "双卡2080ti 22g 跑 qwen2.5 32b",
    ],
)
def test_q8_0_only_where_the_speed_is_there_to_spare(question: str) -> None:
    plan = _plan(question)
    assert plan["quant"] != "Q8_0", plan["command"]
    assert plan["placement"] == {"kind": "gpu", "gpus": plan["placement"]["gpus"]}  # type: ignore[index]


@pytest.mark.parametrize("question", ["4090 qwen3 8b", "5090 跑 llama 3.1 8b 多快"])
def test_q8_0_stays_where_it_is_fast(question: str) -> None:
    plan = _plan(question)
    assert plan["quant"] == "Q8_0", plan["command"]


@pytest.mark.parametrize("question", ["3090 gemma 3 27b", "4090 qwen3.6 27b", "rtx 3090ti gemma3 27b"])
def test_the_pick_has_headroom_at_the_default_context(question: str) -> None:
    reply = answer(question, CATALOG)
    assert reply.plan is not None
    assert reply.plan["context"] == 32768
    # The table marks a fit with little headroom "*"; the row the command loads is not one of them.
    row = next(line for line in reply.text.splitlines() if line.startswith(str(reply.plan["quant"]) + " "))
    column = row.split()[2:]
    header = next(line for line in reply.text.splitlines() if line.startswith("quant"))
    at = header.split()[2:].index("32K")
    assert not column[at].endswith("*"), (row, header)


def test_vllm_keeps_fp8_where_the_cards_hold_it() -> None:
    """8 x H20 96 GB and DeepSeek-R1: FP8 is the release served; its tight memory means fewer
    sequences at once under vLLM, not a load that fails."""
    plan = _plan("8卡H20跑满血版r1")
    assert plan["quant"] == "FP8" and plan["framework"] in {"vllm", "sglang"}


@pytest.mark.parametrize(
    "question", ["4060 8g 是不是不能跑 qwen3 14b", "got a 3070 8gb, would qwen3 14b even load"]
)
def test_a_crawl_with_layers_in_ram_comes_after_a_shorter_context_on_the_card(question: str) -> None:
    plan = _plan(question)
    assert plan["placement"]["kind"] == "gpu", plan["command"]  # type: ignore[index]
    decode = plan["decode_tps"]
    assert isinstance(decode, dict) and decode["mid"] >= 20, decode


@pytest.mark.parametrize(
    ("question", "quant"),
    [
        ("两张A100 40G 跑 Qwen2-72B-Instruct vllm", "AWQ"),  # no FP8 tensor cores: AWQ at ~1.3x the pace
        ("2x h100 llama 3.3 70b", "FP8"),  # FP8 cores: FP8 over BF16, which buys nothing at 60 % pace
        ("四张2080ti 22g vllm 跑 qwen2.5 72b", "AWQ"),  # Turing: no FP8 path at all
    ],
)
def test_serving_quant_by_the_cards_kernels(question: str, quant: str) -> None:
    plan = _plan(question)
    assert plan["quant"] == quant and plan["command"], (plan["quant"], plan["command"])


@pytest.mark.parametrize("question", ["t4 chatglm3 6b vllm", "v100 32g vllm qwen2.5 14b"])
def test_no_fp8_plan_on_cards_without_a_path_for_it(question: str) -> None:
    assert _plan(question)["quant"] != "FP8"


def test_a_serving_plan_is_one_whose_checkpoint_exists() -> None:
    """2x A6000 and Llama-3.3-70B under vLLM: no AWQ checkpoint is listed, so the plan is one whose
    command can be written (FP8 made on the fly), never a table row without a `$`."""
    plan = _plan("两张a6000 跑 llama 3.3 70b vllm")
    assert plan["command"], plan
