"""A speed question whose whole table is "x" (nothing fits the card as it is) leads with the way out
that runs and its speed, in one line, instead of leaving it at the foot of the table; the ways-out
line then doesn't say the same thing a second time."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()

_TPS = re.compile(r"(?:~|约 ?)(\d+(?:\.\d+)?) tok/s")


def _text(question: str) -> str:
    reply = answer(question, CATALOG)
    assert reply.status == "answer", reply.text
    return reply.text


@pytest.mark.parametrize(
    ("question", "low", "high"),
    [
        ("have a 3090 and 64gb ddr4, how fast would gpt-oss-120b run with llama.cpp?", 12, 25),
        ("gpt-oss-20b on a 16gb mac mini m4, what speed?", 15, 30),
        ("5090 跑 gpt-oss-120b，内存 96G，速度多少", 25, 50),
        ("4090 + 64gb ram gpt-oss-120b, tok/s?", 12, 40),
        ("how fast is qwen3-235b-a22b on a 4090 with 128gb ddr5", 3, 20),
    ],
)
def test_an_all_x_table_leads_with_its_way_out(question: str, low: float, high: float) -> None:
    text = _text(question)
    lead = text.splitlines()[0]
    assert "·" not in lead and "|" not in lead, lead  # a sentence, not the title or the table
    m = _TPS.search(lead)
    assert m is not None, lead
    assert low <= float(m.group(1)) <= high, lead


@pytest.mark.parametrize(
    "question",
    [
        "have a 3090 and 64gb ddr4, how fast would gpt-oss-120b run with llama.cpp?",
        "qwen3-next-80b-a3b on a single 4090 with 64gb ram, possible?",
        "5090 跑 gpt-oss-120b,内存 96G,速度多少",
    ],
)
def test_the_way_out_is_not_said_twice(question: str) -> None:
    text = _text(question)
    lines = text.splitlines()
    lead = lines[0]
    assert ";" in lead, lead  # the verdict, then the way out
    way = lead.split(";")[-1].rstrip(".。").strip()
    assert sum(way in line for line in lines) == 1, text


@pytest.mark.parametrize(
    "question",
    [
        "3090 qwen3 8b how fast",  # fits: the table is the answer, no lead
        "4090 跑 qwen3 14b 多快",
    ],
)
def test_a_table_that_fits_gets_no_lead(question: str) -> None:
    text = _text(question)
    assert "tok/s" not in text.splitlines()[0] or "·" in text.splitlines()[0]
