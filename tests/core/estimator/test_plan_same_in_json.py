"""`estimate --json` gives the same plan as the chat for the same request (issue 20's goal: "the
reply's `$` command is exactly plan.command, and estimate --json gives the same plan")."""

from __future__ import annotations

from typing import Any

import pytest

from bot.cli.estimate import answer as estimate_answer
from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()

# (chat question, the same request as `estimate` takes it)
CASES: list[tuple[str, dict[str, Any]]] = [
    ("4090 qwen3 32b q4 32k", {"gpu": "4090", "model": "qwen3 32b", "quant": ["Q4_K_M"], "ctx": [32768]}),
    ("3060 12g qwen3 30b a3b 32g ram", {"gpu": "3060 12g", "model": "qwen3 30b a3b", "ram": 32}),
    ("2x 3090 llama 3.3 70b", {"gpu": "3090", "count": 2, "model": "llama 3.3 70b"}),
    ("m4 max 128gb qwen3 30b a3b", {"gpu": "m4 max", "memory": 128, "model": "qwen3 30b a3b"}),
    ("8x h100 glm-4.6", {"gpu": "h100", "count": 8, "model": "glm-4.6"}),
]


@pytest.mark.parametrize(("question", "request_"), CASES)
def test_estimate_json_plan_is_the_chats(question: str, request_: dict[str, Any]) -> None:
    chat = answer(question, CATALOG)
    assert chat.plan is not None, chat.text
    result, ok = estimate_answer(request_)
    assert ok, result
    plan = result["plan"]
    for key in ("framework", "quant", "context", "kv_type", "command"):
        assert plan[key] == chat.plan[key], (key, plan[key], chat.plan[key])
    assert f"$ {plan['command']}" in chat.text
