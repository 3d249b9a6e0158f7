"""What hardware a model needs "at full precision" when its release is not BF16: DeepSeek-V3 / R1 /
V3.1, Kimi K2 and MiniMax-M2 ship FP8 weights, gpt-oss MXFP4, Kimi K2 Thinking INT4 (QAT). "Full
precision / 满血 / 原版 / unquantized / fp16" of such a model is that release (BF16 would be an upcast
nobody serves), and every option row is priced at the quant the header names, or says its own.

Cases were written before the fix (first-run count in the session's report)."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CAT = default_catalog()
# The header: "<model> <quant> at 8K: needs N GiB" / "<model> <quant> 8K:需要 N GiB"
_HEADER = re.compile(r"^(?P<model>.+?) (?P<quant>[A-Z][\w\-]+) (?:at |@ )?\d+K")


def _header_quant(text: str) -> str:
    m = _HEADER.match(text.splitlines()[0])
    assert m, text
    return m.group("quant")


@pytest.mark.parametrize(
    ("question", "quant"),
    [
        ("what gpu do i need for deepseek v3 671b full precision at home", "FP8"),
        ("deepseek r1 unquantized what hardware", "FP8"),
        ("部署满血 kimi k2 需要什么配置", "FP8"),
        ("跑原版 deepseek v3.1 需要什么硬件", "FP8"),
        ("minimax m2 fp16 what gpus do i need", "FP8"),
        ("what hardware do i need for gpt-oss-120b full precision", "HF-MXFP4"),
        ("kimi k2 thinking full precision what hardware", "INT4"),
    ],
)
def test_full_precision_of_a_native_release_is_that_release(question: str, quant: str) -> None:
    reply = answer(question, CAT)
    assert reply.query is not None and reply.query.intent == "which_hardware", reply.text
    native = CAT.models[reply.query.model_id or ""].native_quant
    expected = native if native in CAT.quants else quant
    assert _header_quant(reply.text) == expected, reply.text
    assert "BF16" not in reply.text.splitlines()[0], reply.text


def test_a_bf16_release_stays_bf16() -> None:
    """Qwen3-32B is released in BF16: its full precision is BF16."""
    text = answer("what gpu do i need for qwen3 32b full precision", CAT).text
    assert _header_quant(text) == "HF-BF16", text


@pytest.mark.parametrize(
    "question",
    [
        "what gpu do i need for deepseek v3 671b full precision at home",
        "deepseek r1 unquantized what hardware",
        "部署满血 kimi k2 需要什么配置",
    ],
)
def test_every_option_is_priced_at_the_header_quant_or_says_its_own(question: str) -> None:
    reply = answer(question, CAT)
    header = _header_quant(reply.text)
    assert reply.rows, reply.text
    for row in reply.rows:
        assert row.get("quant", header) == header or row.get("quant") in reply.text, reply.text
        if row.get("quant", header) != header:
            # a row at another quant names it in its own label
            label_lines = [ln for ln in reply.text.splitlines() if row["quant"] in ln]
            assert label_lines, reply.text


def test_deepseek_full_precision_options_per_kind() -> None:
    """A datacenter node at FP8 (8× H200 / H20-141G, or two nodes), a CPU server with the RAM for the
    FP8 experts and one card (KTransformers) at a few tok/s; no 3090 + 512 GB row priced at Q4."""
    reply = answer("what gpu do i need for deepseek v3 671b full precision at home", CAT)
    kinds = {r["kind"]: r for r in reply.rows}
    assert "datacenter_fp8" in kinds or "datacenter" in kinds, reply.text
    node = kinds.get("datacenter_fp8") or kinds["datacenter"]
    assert node["count"] in (8, 16) and node.get("quant", "FP8") == "FP8", reply.text
    server = [r for r in reply.rows if r["kind"] == "cpu_server"]
    assert server, reply.text
    assert server[0]["ram_gib"] >= 768 and 2.0 <= server[0]["decode_tps"] <= 15.0, reply.text
    assert server[0].get("quant", "FP8") == "FP8", reply.text
    offload = [r for r in reply.rows if r["kind"] == "offload"]
    assert all(r.get("quant") for r in offload), reply.text  # a Q4 row says it is Q4


def test_the_native_release_is_said_in_the_reply() -> None:
    text = answer("what gpu do i need for deepseek v3 671b full precision at home", CAT).text
    assert "FP8" in text.splitlines()[0] and "released" in text, text
    zh = answer("部署满血 kimi k2 需要什么配置", CAT).text
    assert "FP8" in zh.splitlines()[0] and "原版" in zh, zh


def test_how_many_cards_for_full_kimi_k2_counts_fp8() -> None:
    """ "部署满血 kimi k2 要几张卡" names no card: the hardware it needs, at its FP8 release."""
    reply = answer("部署满血 kimi k2 要几张卡", CAT)
    assert reply.query is not None and reply.query.model_id == "kimi-k2", reply.text
    assert "FP8" in reply.text.splitlines()[0], reply.text
