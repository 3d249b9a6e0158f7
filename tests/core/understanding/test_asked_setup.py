"""Several setups in one question, read by structure (issue 21): the card alone in the asked clause is
the machine, the others are noted; cards standing together or said to be added stay one machine."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question


@pytest.mark.parametrize(
    ("question", "asked", "count", "other"),
    [
        ("H100s are backordered for months, so could 2x A6000 handle mixtral 8x7b?", "rtx-a6000", 2, "h100"),
        ("公司不给批 H100，用 8张 4090 可以吗？跑 qwen2.5 72b", "rtx-4090", 8, "h100"),
        ("L20 涨价了，改用 2张 4090D 能不能行？跑 qwen3 32b", "rtx-4090d", 2, "l20"),
        ("A100 买不到，只能买 8张 4090。能不能行？跑 qwen2.5 72b", "rtx-4090", 8, "a100"),
    ],
)
def test_the_card_in_the_asked_clause_is_the_machine(
    question: str, asked: str, count: int, other: str
) -> None:
    parsed = parse_question(question, default_catalog())
    assert [(c.res.best_id, c.count) for c in parsed.cards] == [(asked, count)]
    assert ("other_setup", other) in parsed.notes
    assert parsed.intent == "fit"


@pytest.mark.parametrize(
    ("question", "ids"),
    [
        ("3090 + 3060, would qwen 72b fit?", ["rtx-3090", "rtx-3060-12g"]),
        ("I have a 3090, would adding a 3060 help with 72b?", ["rtx-3090", "rtx-3060-12g"]),
        ("我有一张 3090，再加一张 3060 能行吗？跑 qwen2.5 72b", ["rtx-3090", "rtx-3060-12g"]),
        ("My box has a 3090, will a 3060 alongside it run qwen2.5 72b q4?", ["rtx-3090", "rtx-3060-12g"]),
        ("一张4090加一张3090，能不能跑 qwen2.5 72b int4", ["rtx-4090", "rtx-3090"]),
    ],
)
def test_cards_together_or_added_stay_one_machine(question: str, ids: list[str]) -> None:
    parsed = parse_question(question, default_catalog())
    assert [c.res.best_id for c in parsed.cards] == ids
    assert not any(code == "other_setup" for code, _ in parsed.notes)


def test_a_longer_name_is_not_the_card_said_again() -> None:
    # "4090" stands inside "4090d": the 4090 is not in the asked clause, only the 4090D is.
    parsed = parse_question("4090 太贵了，改用 2张 4090D 能不能行？跑 qwen3 32b", default_catalog())
    assert [(c.res.best_id, c.count) for c in parsed.cards] == [("rtx-4090d", 2)]
