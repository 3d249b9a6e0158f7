"""`python -m bot ask`: prints the chat reply; --json prints the stable shape."""

from __future__ import annotations

import io
import json

from bot.cli.ask import run_ask
from bot.cli.main import build_parser


def _run(*argv: str) -> tuple[int, str]:
    args = build_parser().parse_args(["ask", *argv])
    out = io.StringIO()
    code = run_ask(args, out)
    return code, out.getvalue()


def test_json_shape() -> None:
    code, out = _run("V100 32G 27B 多少 token", "--json")
    assert code == 0
    data = json.loads(out)
    assert set(data) == {"status", "query", "candidates", "reply"}
    assert data["status"] == "answer"
    q = data["query"]
    # A stable interface: fields may be added, never renamed or dropped.
    assert {"gpu", "model", "quants", "contexts", "os", "framework", "lang", "intent"} <= set(q)
    assert {"id", "count", "memory_gib"} <= set(q["gpu"]) and {"id"} <= set(q["model"])
    assert q["gpu"]["id"] == "tesla-v100-32g-pcie" and q["gpu"]["memory_gib"] == 32.0
    assert q["model"]["id"] == "gemma-3-27b"
    assert q["quants"] == [] and q["contexts"] == [] and q["lang"] == "zh"
    assert set(data["candidates"]) == {"gpu", "model"}
    assert "gemma-2-27b" in data["candidates"]["model"]


def test_json_lists_what_was_asked() -> None:
    _, out = _run("双3090 跑 llama3 70b q4 32k", "--json")
    q = json.loads(out)["query"]
    assert q["quants"] == ["Q4_K_M"] and q["contexts"] == [32768] and q["gpu"]["count"] == 2


def test_targets_and_lang() -> None:
    _, discord = _run("V100 32G 27B 多少 token", "--target", "discord", "--lang", "en")
    assert discord.count("```") >= 2 and "Usable" in discord
    _, telegram = _run("V100 32G 27B", "--target", "telegram")
    assert "<pre>" in telegram


def test_help_exit_code() -> None:
    code, out = _run("hello there")
    assert code == 1 and out.strip()
