"""The "If it doesn't fit" line leads with the way out the `$` command runs, as it runs it: a q8_0
cache, experts in RAM, or a smaller quant that fits only after macOS's GPU limit is raised (the table's
"x" is at the default share, so without the sysctl named the line and the command disagreed). Written
after the change; 4 of 4 held on their first run."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def _line(text: str) -> str:
    return next(line for line in text.splitlines() if line.startswith(("If it doesn't fit", "装不下时")))


@pytest.mark.parametrize(
    ("question", "lead"),
    [
        ("4090 qwen3 32b", r"^If it doesn't fit: Q4_K_M 32K: KV q8_0"),
        ("3060 12g qwen3 30b a3b", r"^If it doesn't fit: Q5_K_M 32K: MoE experts of \d+ layers in RAM"),
        ("m4 max 128g qwen3 235b", r"^If it doesn't fit: Q4_K_M 32K: Q3_K_M .*wired_limit_mb=\d+"),
        ("m4 max 128g 跑 qwen3 235b 速度", r"^装不下时:Q4_K_M 32K: 换 Q3_K_M .*wired_limit_mb=\d+"),
    ],
)
def test_the_line_leads_with_what_the_command_runs(question: str, lead: str) -> None:
    reply = answer(question, CATALOG)
    assert reply.plan is not None
    line = _line(reply.text)
    assert re.search(lead, line), line
    if "wired_limit_mb" in line:
        assert str(reply.plan["command"]).startswith("sudo sysctl iogpu.wired_limit_mb=")
