"""A serving engine's default table drops the quants its kernels can't run on the card: no FP8 row
below compute 8.0 (T4, V100, 2080 Ti: vLLM's weight-only FP8 Marlin needs Ampere), and the FP8 block
rule says the same 8.0 in both languages.

Cases were written before the fix (first-run count in the session's report)."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.estimate import default_quants

CAT = default_catalog()
ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize(
    "question",
    [
        "T4 qwen2.5 7b vllm",
        "v100 32gb qwen2.5 14b vllm",
        "2080 ti qwen2.5 7b vllm",
        "两张 T4 用 vllm 跑 qwen2.5 7b",
    ],
)
def test_no_fp8_row_below_ampere(question: str) -> None:
    reply = answer(question, CAT)
    assert reply.query is not None, question
    est = estimate_for(reply.query, CAT)
    assert "FP8" not in {r.quant for r in est.rows}, (question, [r.quant for r in est.rows])
    assert not any(t.startswith("FP8 ") for t in reply.text.splitlines()), reply.text


def test_ampere_keeps_its_fp8_row() -> None:
    reply = answer("A100 qwen2.5 7b vllm", CAT)
    assert reply.query is not None
    assert "FP8" in {r.quant for r in estimate_for(reply.query, CAT).rows}


def test_ladder_without_a_card_is_unchanged() -> None:
    assert "FP8" in default_quants(CAT.models["qwen2.5-7b"], "vllm", CAT)


def test_fp8_rule_matches_weight_only_floor() -> None:
    data = tomllib.loads((ROOT / "catalogs/frameworks.toml").read_text())
    floor = tomllib.loads((ROOT / "catalogs/estimator.toml").read_text())["choice"]["weight_only_min_cc"]
    rules = [
        r
        for f in data["framework"]
        for r in f.get("rules", [])
        if r.get("note") == "fw.common.fp8_needs_turing"
    ]
    assert rules and all(r["compute_below"] == floor for r in rules), rules
    msg = tomllib.loads((ROOT / "catalogs/messages/frameworks.toml").read_text())["fw"]["common"][
        "fp8_needs_turing"
    ]
    assert "8.0" in msg["en"] and "8.0" in msg["zh"] and "7.5" not in msg["en"] + msg["zh"], msg
