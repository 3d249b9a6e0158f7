"""Three 3090s with no RAM said ("老黄 3090 三张 ... Qwen3-235B-A22B Q3"): priced with the multi-card
desktop's RAM for the experts (hosts.toml), as "3x 3090 with 128gb ram" is, not refused as if the
box had 32 GiB."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


@pytest.mark.parametrize(
    "question",
    ["老黄 3090 三张，跑 Qwen3-235B-A22B 的 Q3 量化能多少速度", "3x 3090 qwen3-235b-a22b q3 speed"],
)
def test_moe_experts_go_to_the_assumed_ram(question: str) -> None:
    reply = answer(question, CATALOG)
    assert "--n-cpu-moe" in reply.text and "5 张卡" not in reply.text.split("\n")[0], reply.text
