"""Plans for cards before Ampere (T4, V100, 2080 Ti, P40, P100) asked with vLLM: every plan ends in a
`$` command a practitioner can paste. No FP8 below compute 8.0 (vLLM's FP8 Marlin W8A16 needs
Ampere), no AWQ on Volta, BF16 releases served as FP16 (--dtype half), and when vLLM has no
checkpoint it can serve here, one line says why and the llama.cpp GGUF plan follows.

Cases were written before the fix (first-run count in the session's report); HELD_OUT at the end.
"""

from __future__ import annotations

import re
from typing import Any, NamedTuple

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.serialize import plan_dict

CAT = default_catalog()


class Case(NamedTuple):
    question: str
    launcher: str  # the command starts with this ("vllm serve" / "llama-server")
    flags: tuple[str, ...] = ()  # substrings the command must hold
    said: tuple[str, ...] = ()  # substrings the reply must hold
    lang: str = "en"


def _plan(question: str, lang: str = "en") -> tuple[dict[str, Any], str]:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    est = estimate_for(reply.query, CAT)
    return plan_dict(est, CAT, lang), reply.text


def _check(case: Case) -> None:
    plan, text = _plan(case.question, case.lang)
    command = plan["command"]
    assert command.startswith(case.launcher), (case.question, plan, text)
    for flag in case.flags:
        assert flag in command, (case.question, flag, command)
    for words in case.said:
        assert words in text, (case.question, words, text)
    # No FP8 way out (nor FP8 served) on a card below compute 8.0.
    assert not re.search(r"FP8 →|换 FP8", text), (case.question, text)
    assert "--quantization fp8" not in command, (case.question, command)
    assert "runs this model, but not on this setup" not in text, (case.question, text)
    assert "$ " in text, (case.question, text)


CASES = [
    Case("T4 gemma-2-9b vllm", "llama-server", (".gguf",), ("vLLM",)),
    Case("用 vllm 在 T4 上跑 gemma2 9b", "llama-server", (".gguf",), ("vLLM",), "zh"),
    # AWQ doesn't run on Volta; Qwen's own GPTQ-Int4 is listed (catalogs/estimator.toml
    # [checkpoints]): vLLM serves it in FP16.
    Case("v100 qwen2.5 14b vllm", "vllm serve Qwen/Qwen2.5-14B-Instruct-GPTQ-Int4", ("--dtype half",)),
    Case("2x t4 llama 3 8b vllm", "vllm serve", ("--dtype half", "--tensor-parallel-size 2")),
    Case("p40 qwen3 8b vllm", "llama-server", (".gguf",), ("7.0",)),
    # 11 GB: the AWQ weights and vLLM's graph reserve don't fit 0.92 of the card; the GGUF of the same
    # width does (core/estimator/estimate.py `_gguf_where_nothing_fits`).
    Case("2080 ti qwen3 14b awq vllm", "llama-server", ("Q4_K_M.gguf",), ("can't fit",)),
    Case("p100 llama 3 8b vllm", "llama-server", (".gguf",), ("7.0",)),
    Case("t4 qwen2.5 7b vllm", "vllm serve", ("--dtype half",)),
]


@pytest.mark.parametrize("case", CASES, ids=[c.question for c in CASES])
def test_pre_ampere_vllm_plans_end_in_a_command(case: Case) -> None:
    _check(case)


def test_t4_vllm_ways_out_offer_no_fp8() -> None:
    plan, _ = _plan("T4 gemma-2-9b vllm")
    assert all(w["quant"] != "FP8" for w in plan["ways_out"]), plan["ways_out"]


# Held out: written after the fix, run once, not tuned on (first-run count in the report).
HELD_OUT = [
    "tesla t4 mistral 7b vllm",
    "2080 ti llama 3.1 8b vllm",
    "用 sglang 在 T4 上跑 qwen3 8b",
    "p100 qwen2.5 7b vllm",
    "v100 32gb qwen3 14b vllm",
]


@pytest.mark.parametrize("question", HELD_OUT)
def test_held_out_pre_ampere_plans(question: str) -> None:
    plan, text = _plan(question)
    command = plan["command"]
    assert command, (question, plan, text)
    assert not re.search(r"FP8 →|换 FP8", text), (question, text)
    assert "--quantization fp8" not in command, (question, command)
    assert "not on this setup" not in text and "装不下:见上面" not in text, (question, text)
    if command.startswith(("vllm serve", "python -m sglang")):
        assert "--dtype half" in command, (question, command)
