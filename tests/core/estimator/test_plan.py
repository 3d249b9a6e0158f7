"""One plan per row (core/estimator/plan.py): the chat's `$` line and `estimate --json`'s `command` are
the same command, because both read the same plan; a row that runs only on other hardware has none."""

from __future__ import annotations

import re
from typing import Any

import pytest

from bot.cli.estimate import answer as estimate_json
from core.ask.answer import answer, estimate_for
from core.ask.estimate_request import run_query
from core.catalog.loader import default_catalog
from core.estimator.plan import plan_for
from core.estimator.serialize import row_dict
from core.render.advice import advise

CAT = default_catalog()


def _chat_command(text: str) -> str:
    """The plan's own command: not the one under "runs well here instead" (family_fallback.py)."""
    said = text.splitlines()
    lines = [
        line[2:]
        for i, line in enumerate(said)
        if line.startswith("$ ") and not (i and "instead of the quant asked" in said[i - 1])
    ]
    assert len(lines) <= 1, text
    return lines[0] if lines else ""


def _json_row(request: dict[str, Any], quant: str, ctx: int) -> dict[str, Any]:
    result, ok = estimate_json(request, "en")
    assert ok, result
    return next(r for r in result["rows"] if r["quant"] == quant and r["context"] == ctx)


def test_mac_studio_raised_wired_limit_is_the_same_command_in_chat_and_json() -> None:
    # Q2_K fits under no wired limit: the way out is IQ2_XXS with the limit raised, on this Mac.
    reply = answer("mac studio m2 ultra 192g deepseek r1 q2", CAT)
    chat = _chat_command(reply.text)
    assert chat.startswith("sudo sysctl iogpu.wired_limit_mb=") and "IQ2_XXS" in chat
    row = _json_row({"gpu": "M2 Ultra 192G", "model": "deepseek r1", "quant": "Q2_K"}, "Q2_K", 32768)
    assert row["status"] == "no_fit" and row["remedy"]["wired_limit_mb"]
    assert row["command"] == chat


def test_every_row_of_the_mac_studio_answer_has_one_command_for_every_view() -> None:
    reply = answer("mac studio m2 ultra 192g deepseek r1 q2", CAT)
    est = estimate_for(reply.query, CAT)
    for r in est.rows:
        plan = plan_for(est, r, CAT, est.request.framework)
        assert advise(plan, CAT, "en").command == row_dict(est, r, CAT)["command"] == plan.command
        # A way out that raises the limit says so in the command; one that fits under macOS's
        # default share (IQ1_S at 160K) but tight raises it only to what makes it smooth; never to a
        # value at or below the default, which would lower it (audit 3), nor above 90 % of memory.
        m = re.match(r"sudo sysctl iogpu\.wired_limit_mb=(\d+) && ", plan.command)
        if r.remedy is not None and r.remedy.wired_limit_mb > 0:
            assert m is not None and int(m.group(1)) == r.remedy.wired_limit_mb
        if m is not None:
            assert 144 * 1024 < int(m.group(1)) <= 192 * 0.9 * 1024


def test_a_row_that_needs_more_cards_has_no_command_in_chat_or_json() -> None:
    # 4090 without the host RAM to offload to: Llama 4 Scout's way out is more RAM (its experts need
    # 43 GiB, the box is assumed 32), then more cards; neither is on this machine.
    request = {"gpu": "4090", "model": "llama 4 scout", "quant": "Q4_K_M", "ctx": "32k"}
    est = run_query(request, CAT)
    row = est.rows[0]
    assert row.status == "no_fit" and row.remedy is not None
    assert row.remedy.kind == "host_short" and [a.kind for a in row.remedy.alternatives] == ["more_cards"]
    plan = plan_for(est, row, CAT)
    assert plan.command == "" and advise(plan, CAT, "en").command == ""
    assert [n.code for n in plan.notes] == ["plan.other_hardware"]
    assert _json_row(request, "Q4_K_M", 32768)["command"] == ""
    assert _chat_command(answer("llama4 scout 4090 q4", CAT).text) == ""


def test_the_plan_keeps_the_estimates_framework_when_it_runs_the_row() -> None:
    est = run_query({"gpu": "4090", "model": "qwen3 32b", "quant": "Q4_K_M", "ctx": "8k"}, CAT)
    plan = plan_for(est, est.rows[0], CAT)
    assert plan.framework == est.framework == "llama.cpp" and plan.kind == "pick"
    assert (plan.quant, plan.context) == ("Q4_K_M", 8192) and plan.command.startswith("llama-server")


@pytest.mark.parametrize(
    ("question", "engine"),
    [("m2 ultra 192gb vllm llama 70b", "vLLM"), ("m4 max 128gb sglang qwen3 32b", "SGLang")],
)
def test_a_serving_engine_asked_on_a_mac_is_said_not_to_run_there(question: str, engine: str) -> None:
    # Not "no framework runs AWQ on the M2 Ultra": the engine has no macOS build at all.
    text = answer(question, CAT).text
    assert f"{engine} doesn't run on the Apple" in text and "No framework runs" not in text, text
