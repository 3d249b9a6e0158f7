"""Issue 23: a question that says how long the reply is gets the end-to-end output rate beside pure
decode, in the reply (en, zh), in `ask --json`'s plan, and from `estimate --output M`."""

from __future__ import annotations

import json

import pytest

from bot.cli.main import main
from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def test_english_reply_has_the_line_and_the_plan_its_figures() -> None:
    reply = answer("4090 qwen3 8b 2000 in 500 out", CATALOG)
    assert reply.status == "answer"
    assert "2000 in → 500 out" in reply.text and "end to end" in reply.text
    plan = reply.plan
    assert plan is not None
    e2e, decode, ttft = plan["e2e_tps"], plan["decode_tps"], plan["ttft_s"]
    assert e2e["low"] <= e2e["mid"] <= e2e["high"]
    assert e2e["mid"] == pytest.approx(500 / (ttft + 500 / decode["mid"]), rel=0.01)
    assert plan["e2e_s"] == pytest.approx(ttft + 500 / decode["mid"], rel=0.01)
    assert e2e["mid"] < decode["mid"]
    assert f"~{e2e['mid']:.0f} tok/s end to end" in reply.text


def test_chinese_reply_has_the_line() -> None:
    reply = answer("4090 跑 qwen3 8b 输入 2000 输出 500", CATALOG)
    assert reply.status == "answer" and reply.plan is not None
    assert "端到端" in reply.text and "2000" in reply.text
    assert "e2e_tps" in reply.plan


def test_no_output_no_line_and_no_plan_keys() -> None:
    reply = answer("4090 qwen3 8b prompt 2000", CATALOG)
    assert reply.status == "answer" and reply.plan is not None
    assert "end to end" not in reply.text
    assert "e2e_tps" not in reply.plan and "e2e_s" not in reply.plan


def test_an_output_length_prices_decode_where_that_reply_runs() -> None:
    # Decode at the prompt plus half the reply (the average token's depth), not at the row's full
    # context; the first token's time is the same prompt's either way.
    a = answer("4090 qwen3 8b 2000 in 500 out", CATALOG).plan
    b = answer("4090 qwen3 8b prompt 2000", CATALOG).plan
    assert a is not None and b is not None
    assert a["decode_tps"]["mid"] > b["decode_tps"]["mid"] and a["ttft_s"] == b["ttft_s"]


BASE = ["estimate", "--gpu", "4090", "--model", "qwen3 8b", "--quant", "Q4_K_M", "--ctx", "8k"]


def test_estimate_output_flag_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--prompt", "2000", "--output", "500", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    row = result["rows"][0]
    e2e = row["e2e_tps"]
    assert e2e["mid"] == pytest.approx(500 / (row["ttft_s"] + 500 / row["decode_tps"]["mid"]), rel=0.01)
    assert row["e2e_s"] == pytest.approx(row["ttft_s"] + 500 / row["decode_tps"]["mid"], rel=0.01)
    assert "e2e_tps" in result["plan"]


def test_estimate_without_output_has_no_e2e(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert "e2e_tps" not in result["rows"][0] and "e2e_tps" not in result["plan"]


def test_estimate_output_flag_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([*BASE, "--prompt", "2000", "--output", "500"]) == 0
    text = capsys.readouterr().out
    header = next(line for line in text.splitlines() if line.startswith("quant"))
    assert "e2e" in header
    assert max(len(line) for line in text.splitlines() if not line.lstrip().startswith("$")) <= 110
