"""Serving capacity and the quant a multi-user plan picks (practitioner audit, Dec 2026).

"How many users can it serve?" with no number is answered backwards: the KV-bound maximum of
concurrent sequences at the context, the aggregate / per-user tok/s at that many, and the command
that serves them (`--max-num-seqs K`). A plan for N users on a card with native FP8 kernels picks the
quant that holds the N users (FP8 first), not BF16 holding 5 of 100; a model released quantized
(gpt-oss MXFP4) is served from that checkpoint, never an invented FP8 / AWQ requantisation. The cases
were written from the questions before the code was changed.
"""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()
_CMD = re.compile(r"^\$ (.+)$", re.MULTILINE)
_SEQS = re.compile(r"--max-num-seqs (\d+)|--max-running-requests (\d+)")

# (question, the quants the plan may be on (None: any serving checkpoint), the context each user is
# counted at (None: the default the N-user path uses))
CAPACITY = [
    ("L40S 48GB vllm serve qwen3-32b fp8 max-model-len 32k how many concurrent users", ("FP8",), 32768),
    ("H200 gpt-oss-120b vllm, how many users can I serve?", ("HF-MXFP4",), None),
    ("how many users can one H100 serve with qwen3-8b", ("FP8",), None),
    ("H100 跑 qwen3-32b 能同时服务多少人", ("FP8",), None),
    ("4090 vllm qwen3 8b awq 最多多少并发", ("AWQ",), None),
    ("A100 80GB vllm llama 3.1 8b how many concurrent requests can it handle", None, None),
    ("H200 sglang qwen3-32b 最大并发多少", ("FP8",), None),
]
CAPACITY_HELD_OUT = [
    ("how many simultaneous users can an H200 handle with qwen3-32b at 16k context", ("FP8",), 16384),
    ("L40S 部署 qwen3-14b 最多支持多少用户同时使用", ("FP8",), None),
    ("how many people can use llama 3.1 8b on an A100 80GB with vllm at once", None, None),
]


def _plan_users(text: str) -> int:
    """The running sequences the command allows (one user: the engine's default, no flag)."""
    commands = _CMD.findall(text)
    assert len(commands) == 1, text
    m = _SEQS.search(commands[0])
    return int(m.group(1) or m.group(2)) if m else 1


def _check_capacity(question: str, quants: tuple[str, ...] | None, ctx: int | None) -> None:
    reply = answer(question, CATALOG)
    assert reply.status == "answer" and reply.query is not None, reply.text
    assert reply.query.intent == "concurrency", reply.query.intent
    assert "not estimated yet" not in reply.text and "尚未" not in reply.text, reply.text
    assert reply.plan is not None, reply.text
    figures = reply.plan["concurrency"]
    held = figures["users"]
    assert held >= 1
    # the command serves exactly the capacity the reply states, and the headline says the count
    assert _plan_users(reply.text) == held, reply.text
    head = next(line for line in reply.text.splitlines() if line.strip())
    assert str(held) in head, head
    assert figures["aggregate_tps"] > figures["per_user_tps"] > 0 or held == 1, figures
    if quants is not None:
        assert reply.plan["quant"] in quants, reply.text
    if ctx is not None:
        assert reply.plan["context"] == ctx, reply.plan
    assert ".gguf" not in reply.text


@pytest.mark.parametrize(("question", "quants", "ctx"), CAPACITY)
def test_capacity_answered(question: str, quants: tuple[str, ...] | None, ctx: int | None) -> None:
    _check_capacity(question, quants, ctx)


@pytest.mark.parametrize(("question", "quants", "ctx"), CAPACITY_HELD_OUT)
def test_capacity_held_out(question: str, quants: tuple[str, ...] | None, ctx: int | None) -> None:
    _check_capacity(question, quants, ctx)


def test_capacity_matches_the_n_user_room() -> None:
    """The count a capacity answer gives is the room the N-user answer states at the same context."""
    capacity = answer("L40S qwen3-32b fp8 vllm how many users", CATALOG)
    many = answer("L40S qwen3-32b fp8 vllm 20 users", CATALOG)
    assert capacity.plan is not None and many.plan is not None
    room = re.search(r"Room for ~(\d+) users", many.text)
    assert room is not None, many.text
    assert capacity.plan["concurrency"]["users"] == int(room.group(1)), capacity.text


def test_gpt_oss_rows_are_its_release() -> None:
    """gpt-oss ships as MXFP4: no FP8 / AWQ requantisation rows in a serving answer."""
    reply = answer("H200 gpt-oss-120b vllm, how many users can I serve?", CATALOG)
    table = [line.split()[0] for line in reply.text.splitlines() if re.match(r"^[A-Z][A-Z0-9-]+\s+\d", line)]
    assert table and set(table) <= {"HF-MXFP4"}, reply.text


# --- the quant for N users (no quant named) --------------------------------------------------------

# (question, the quants that may serve it)
MANY_USERS = [
    ("H100 部署 qwen3-32b，100 个并发用户，吞吐大概多少", ("FP8",)),
    # FP8 holds 19 of the 50 even with an 8-bit cache; a 4-bit checkpoint holds all 50
    ("H100 qwen3-32b vllm 50 users", ("FP8", "AWQ", "GPTQ-INT4")),
    ("L40S qwen3-14b 30 concurrent users", ("FP8",)),
    ("A100 80GB qwen3-32b vllm 64 users", ("AWQ", "GPTQ-INT4")),
    ("H100 gpt-oss-20b vllm 并发 32", ("HF-MXFP4",)),
]
MANY_USERS_HELD_OUT = [
    ("H200 llama 3.3 70b 80 concurrent users", ("FP8",)),
    ("2x L40S qwen3-32b vllm 并发 40", ("FP8",)),
]


def _check_many(question: str, quants: tuple[str, ...]) -> None:
    reply = answer(question, CATALOG)
    assert reply.status == "answer" and reply.plan is not None, reply.text
    assert reply.plan["quant"] in quants, reply.text
    head = next(line for line in reply.text.splitlines() if line.strip())
    assert reply.plan["quant"] in head, head


@pytest.mark.parametrize(("question", "quants"), MANY_USERS)
def test_many_users_quant(question: str, quants: tuple[str, ...]) -> None:
    _check_many(question, quants)


@pytest.mark.parametrize(("question", "quants"), MANY_USERS_HELD_OUT)
def test_many_users_quant_held_out(question: str, quants: tuple[str, ...]) -> None:
    _check_many(question, quants)


def test_short_of_n_users_says_what_would() -> None:
    """100 users that the best plan can't hold: how many it holds, and what would hold them all."""
    reply = answer("H100 qwen3-32b vllm 100 users", CATALOG)
    assert reply.plan is not None
    assert re.search(r"Room for ~(\d+) users", reply.text), reply.text
    assert re.search(r"All 100 .*\d+× .*H100", reply.text), reply.text
