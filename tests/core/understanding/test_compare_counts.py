"""Machine counts and comparisons: "2 Mac mini M4 16GB vs 1 M4 32GB", "2 x 4090 slower than one 4090",
"Dual 4090 48GB ... total 96GB", "ROCm vs Vulkan on 7900 XTX". Each fix has the question it came from
and one phrasing the fix was not written against (English and Chinese)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.parse import ParsedQuestion, parse_question

CATALOG = default_catalog()


def _cards(p: ParsedQuestion) -> list[tuple[str | None, int, float | None]]:
    return [(c.res.best_id, c.count, c.res.memory_gib) for c in p.cards]


@pytest.mark.parametrize(
    ("text", "first", "other"),
    [
        ("exo performance - 2 Mac mini M4 16GB vs 1 Mac mini M4 32GB", ("apple-m4", 2, 16.0), "apple-m4"),
        # unseen: a comma before the count, a different Mac on the other side
        (
            "exo cluster, 3 mac mini m4 24gb vs 1 mac studio m4 max 128gb for llama 3.3 70b",
            ("apple-m4", 3, 24.0),
            "apple-m4-max-40c",
        ),
        ("is 2 x 4090 slower than just one 4090 for llama 3 70b q4", ("rtx-4090", 2, None), "rtx-4090"),
        # unseen: a plural card before "than", and Chinese 比 between two counted cards
        ("are 3 3090s faster than one a6000 for llama 3.3 70b", ("rtx-3090", 3, None), "rtx-a6000"),
        ("2张4090 比 1张5090 跑 qwen3 32b 快吗", ("rtx-4090", 2, None), "rtx-5090"),
    ],
)
def test_counted_cards_compared(text: str, first: tuple[str, int, float | None], other: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.intent == "compare"
    assert _cards(parsed)[0] == first
    assert parsed.cards[1].res.best_id == other


def test_a_card_said_again_is_one_card() -> None:
    # exo#587: "buy a Mac mini M4 ... 2 M4 16GB is the same as 1 M4 32GB": the first mention is the
    # same card as "2 M4 16GB", not a third machine.
    text = (
        "I am considering buy a Mac mini M4, but can't decided the memory. with EXO, 2 M4 16GB is the "
        "same as 1 M4 32GB from performance perspective?"
    )
    parsed = parse_question(text, CATALOG)
    assert parsed.intent == "compare"
    assert _cards(parsed) == [("apple-m4", 2, 16.0), ("apple-m4", 1, 32.0)]
    # unseen (zh): the count said first stays; the size said later fills in what it lacked
    zh = parse_question("我有一张4060ti，这张4060ti 16g能跑qwen3 14b吗", CATALOG)
    assert _cards(zh) == [("rtx-4060-ti-16g", 1, 16.0)]
    # ... but a together word between keeps two of them
    assert [c.count for c in parse_question("3090 + 3090 跑 70b", CATALOG).cards] == [1, 1]


def test_the_same_card_twice_is_compared_by_count() -> None:
    reply = answer("is 2 x 4090 slower than just one 4090 for llama 3 70b q4", CATALOG)
    assert reply.query is not None
    assert reply.query.as_json()["compare"]["gpu"] == {"id": "rtx-4090", "count": 1}
    assert "2× GeForce RTX 4090" in reply.text and "B = GeForce RTX 4090" in reply.text
    # unseen (zh): 比 splits the sides
    zh = answer("4090 48g 比 双3090 快多少 跑 70b", CATALOG)
    assert zh.query is not None and zh.query.other_card is not None
    assert (zh.query.other_card.gpu_id, zh.query.other_card.count) == ("rtx-3090", 2)
    assert zh.query.hardware.first.memory_gib == 48.0


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("Dual 4090 48GB total 96GB", ("rtx-4090", 2, 48.0)),
        (
            "Dual RTX 4090 48GB graphics cards with a total VRAM of 96GB — can it boot up normally?",
            ("rtx-4090", 2, 48.0),
        ),
        # unseen: the total said first in Chinese; an English total after a comma
        ("双卡2080ti 22g 总共44g显存 跑 qwen2.5 32b", ("rtx-2080-ti-22g-mod", 2, 22.0)),
        ("two 2080 ti 22gb, 44gb in total, qwen2.5 32b q4", ("rtx-2080-ti-22g-mod", 2, 22.0)),
    ],
)
def test_memory_per_card_when_the_total_is_said(text: str, card: tuple[str, int, float]) -> None:
    assert _cards(parse_question(text, CATALOG)) == [card]


def test_without_a_total_the_size_is_still_the_cards_sum() -> None:
    # Open-Assistant#2904: "3 x RTX 3090 (72GB vram)" is three 24 GB cards.
    assert _cards(parse_question("3 x RTX 3090 (72GB vram)", CATALOG)) == [("rtx-3090", 3, 24.0)]


@pytest.mark.parametrize(
    ("text", "backends"),
    [
        ("ROCm vs Vulkan on 7900 XTX for qwen3 32b", ("rocm", "vulkan")),
        # unseen: "or" in English, 还是 in Chinese, with a speed word around them
        ("vulkan or rocm for llama 3.1 8b on my 7900 xt, which is faster?", ("vulkan", "rocm")),
        ("7900xtx跑qwen3 32b用rocm还是vulkan快", ("rocm", "vulkan")),
    ],
)
def test_two_backends_compared_on_one_card(text: str, backends: tuple[str, str]) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.intent == "compare" and parsed.backends == backends
    reply = answer(text, CATALOG)
    assert reply.query is not None
    assert (reply.query.backend, reply.query.other_backend) == backends
    assert reply.query.as_json()["compare"]["backend"] == backends[1]
    assert "ROCm" in reply.text and "Vulkan" in reply.text
    assert [set(r) for r in reply.rows] and all({"a", "b"} <= set(r) for r in reply.rows)


def test_backends_named_without_a_comparison_word_are_not_compared() -> None:
    parsed = parse_question("7900 xtx qwen3 32b rocm, also tried vulkan: slow", CATALOG)
    assert parsed.backends == ("rocm", "vulkan") and parsed.intent != "compare"


def test_a_backend_the_card_cannot_run_is_not_compared() -> None:
    # CUDA can't drive a Radeon: the answer is on what it runs, said in a note, as before.
    reply = answer("CUDA vs Vulkan on 7900 XTX for qwen3 32b", CATALOG)
    assert reply.query is not None and reply.query.other_backend is None
    assert [n.code for n in reply.query.notes] == ["backend_impossible"]


def test_one_card_at_two_sizes_is_two_cards() -> None:
    # Two sizes said are two cards, not one card said twice: the comparison keeps its other side.
    parsed = parse_question("4060ti 8g, 4060ti 16g, which is better for qwen3 14b", CATALOG)
    assert parsed.intent == "compare"
    assert [c.res.best_id for c in parsed.cards] == ["rtx-4060-ti-8g", "rtx-4060-ti-16g"]
    zh = parse_question("m4 pro 24g，m4 pro 48g 跑 qwen3 32b 选哪个", CATALOG)
    assert [c.res.memory_gib for c in zh.cards] == [24.0, 48.0]
