"""The speculative view offers a draft's command only when the draft fits beside the plan (issue 20:
"a draft model only when it fits beside the target"); a command that serves a sibling checkpoint
says so beside it."""

from __future__ import annotations

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.render.detail import speculative_view
from core.render.doc import render

CATALOG = default_catalog()


def test_a_draft_with_no_room_gets_no_command() -> None:
    reply = answer("rtx 4090 qwen3 32b q4_k_m 32k", CATALOG)
    assert reply.query is not None
    text = render(speculative_view(estimate_for(reply.query, CATALOG), None, CATALOG, "en"), "plain")
    lines = text.splitlines()
    for k, line in enumerate(lines):
        if line.startswith("draft:"):
            following = lines[k + 1] if k + 1 < len(lines) else ""
            # either its command, or the reason it has none; never a command that doesn't fit
            assert following.startswith("$ ") or following.startswith("Not on this setup"), text
    assert any(line.startswith("Not on this setup") for line in lines), text


def test_a_sibling_checkpoint_is_said_beside_its_command() -> None:
    reply = answer("rtx 3090 linux vllm awq qwen3 30b a3b", CATALOG)
    assert reply.plan is not None and "GPTQ-Int4" in reply.plan["command"]
    assert "No AWQ checkpoint is listed as published" in reply.text
