"""Replies to a wanted speed (tests/core/understanding/test_speed_target.py reads it): the hardware
answer names the cheapest option that reaches it, or says none does; a card answer says whether its
plan reaches it. Written before the fix: 0 of 4 held."""

from __future__ import annotations

import re

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def test_hardware_for_a_speed_names_the_cheapest_that_reaches_it() -> None:
    reply = answer("what gpu do i need for llama 3.3 70b at 20 tok/s", CATALOG)
    assert reply.status == "answer", reply.text
    line = next(ln for ln in reply.text.splitlines() if "20 tok/s" in ln)
    m = re.search(r": (.+?) \(~(\d+(?:\.\d+)?) tok/s\)", line)
    assert m is not None, reply.text
    assert float(m.group(2)) >= 20 and "RAM" not in m.group(1), line


def test_hardware_in_chinese() -> None:
    reply = answer("需要什么显卡才能让 llama 3.3 70b 达到 20 token/s", CATALOG)
    assert "要 20 tok/s 以上" in reply.text, reply.text


def test_a_card_answer_says_its_plan_falls_short() -> None:
    reply = answer("can i get 25 tok/s on a 3090 with llama 3.3 70b q4_k_m", CATALOG)
    line = next((ln for ln in reply.text.splitlines() if "25 tok/s wanted" in ln), "")
    assert line and ("short" in line or "not" in line), reply.text


def test_a_card_answer_says_its_plan_reaches_it() -> None:
    reply = answer("4090 qwen3 8b can it do at least 50 tok/s", CATALOG)
    line = next((ln for ln in reply.text.splitlines() if "50 tok/s wanted" in ln), "")
    assert line and "reach" in line, reply.text
