"""The method line says the range of the row the answer runs, not the card's llama.cpp band: vLLM on
an H100 said "range ×0.83–1.35" above a table of 82–255 tok/s around 179. Written before the fix;
on the old code 2 of 4 held (the two fully-on-GPU llama.cpp answers, whose band is the card's)."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()
_RANGE = re.compile(r"×(\d+\.\d+)[–-](\d+\.\d+)")


@pytest.mark.parametrize(
    "question",
    [
        "h100 80g gpt-oss-120b vllm",
        "3060 12gb + 32gb ram qwen3 30b a3b",
        "4090 qwen3 32b q4_k_m",
        "rtx 3090 llama 3.1 8b q8",
    ],
)
def test_the_range_said_is_the_plan_rows(question: str) -> None:
    reply = answer(question, CATALOG)
    assert reply.plan is not None, reply.text
    tps = reply.plan["decode_tps"]
    method = next(line for line in reply.text.splitlines() if line.startswith("Method:"))
    m = _RANGE.search(method)
    assert m is not None, method
    low, high = float(m.group(1)), float(m.group(2))
    assert low == pytest.approx(tps["low"] / tps["mid"], abs=0.011), method
    assert high == pytest.approx(tps["high"] / tps["mid"], abs=0.011), method
