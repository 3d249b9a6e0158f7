"""Published AWQ / GPTQ-Int4 checkpoints of Qwen2.5-7B/14B-Instruct (Qwen's own) and Llama-3.3-70B
(casperhansen's AWQ) are listed in catalogs/estimator.toml [checkpoints], so vLLM serves them instead
of "no AWQ checkpoint listed" and a GGUF table under an AWQ question.

Cases were written before the fix (first-run count in the session's report)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict

CAT = default_catalog()


def _plan(question: str) -> dict[str, object]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    return plan_dict(estimate_for(reply.query, CAT), CAT, "en")


@pytest.mark.parametrize(
    ("question", "repo"),
    [
        ("3090 qwen2.5 14b awq vllm", "Qwen/Qwen2.5-14B-Instruct-AWQ"),
        ("4090 用 vllm 跑 qwen2.5 7b awq", "Qwen/Qwen2.5-7B-Instruct-AWQ"),
        ("3090 qwen2.5 7b gptq int4 vllm", "Qwen/Qwen2.5-7B-Instruct-GPTQ-Int4"),
        ("v100 qwen2.5 14b vllm", "Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4"),
        ("4x 3090 vllm llama 3.3 70b awq", "casperhansen/llama-3.3-70b-instruct-awq"),
    ],
)
def test_listed_checkpoint_is_served(question: str, repo: str) -> None:
    plan = _plan(question)
    command = str(plan["command"])
    assert command.startswith("vllm serve " + repo), (question, command)
