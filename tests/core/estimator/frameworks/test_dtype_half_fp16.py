"""An explicit FP16 (HF-FP16) served by vLLM / SGLang carries `--dtype half`: without it both serve
a BF16 release in BF16 (vLLM `--dtype auto`; SGLang's --dtype takes half, as its test_dtype_options
runs). A BF16 ask on Ampere gets no dtype flag.

Cases were written before the fix (first-run count in the session's report)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _command(question: str) -> tuple[str, str]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    plan = plan_dict(estimate_for(reply.query, CAT), CAT, "en")
    return plan["quant"], plan["command"]


@pytest.mark.parametrize(
    ("question", "launcher"),
    [
        ("4张a100 80g qwen2.5 72b fp16 vllm", "vllm serve"),  # 80g: a bare "a100" reads as the 40G
        ("4x a100 80gb qwen2.5 72b fp16 sglang", "python -m sglang.launch_server"),
        ("h100 用 vllm 跑 qwen2.5 7b fp16", "vllm serve"),
    ],
)
def test_fp16_asked_is_served_as_half(question: str, launcher: str) -> None:
    quant, command = _command(question)
    assert quant == "HF-FP16", (quant, command)
    assert command.startswith(launcher), command
    assert command.count("--dtype half") == 1, command


def test_bf16_on_ampere_has_no_dtype_flag() -> None:
    quant, command = _command("h100 qwen2.5 7b bf16 vllm")
    assert quant == "HF-BF16" and command.startswith("vllm serve"), (quant, command)
    assert "--dtype" not in command, command
