"""Held-out phrasings for the fit lead and the CPU-only words, written after the fix and not tuned
on: a Mac or a card that runs the model hears yes, an all-"x" speed table leads with its way out,
and a spaced "CPU only" phrase is a CPU-only run."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def _lead(question: str) -> str:
    reply = answer(question, CATALOG)
    assert reply.status == "answer", reply.text
    return reply.text.splitlines()[0]


@pytest.mark.parametrize(
    "question",
    [
        "is an M3 Max 48GB enough for qwen3 32b?",
        "MacBook Pro M4 Max 64G 跑得动 llama 3.3 70b 吗",
        # "handle" reads as a fit word (catalogs/understanding.toml [intent.patterns] fit).
        "would a 4070 ti super 16gb handle qwen3 14b?",
    ],
)
def test_held_out_runs_hear_yes(question: str) -> None:
    lead = _lead(question)
    assert lead.startswith(("Yes", "能跑", "勉强能跑")), lead


def test_held_out_all_x_speed_question_leads_with_the_way_out() -> None:
    lead = _lead("4070 12gb 64gb ram, gpt-oss-120b tokens per second?")
    assert re.search(r"~\d+(?:\.\d+)? tok/s", lead) and "·" not in lead, lead


def test_held_out_spaced_cpu_only_phrase() -> None:
    reply = answer("仅用 CPU 推理 qwen3 14b,128G DDR5 能跑多快", CATALOG)
    assert reply.query is not None and reply.query.hardware.cpu is not None, reply.text
    assert "llama.cpp (CPU)" in reply.text, reply.text
