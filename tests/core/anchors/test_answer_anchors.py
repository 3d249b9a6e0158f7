"""answer() / follow_up() with an anchor index: calibrated speeds and the anchor lines."""

from __future__ import annotations

import pytest

from core.anchors.seed import as_approved, published_anchors
from core.ask.answer import answer, follow_up
from core.render.doc import fits

from .builders import CATALOG, index_of, make

QUESTION = "V100 32G gemma 3 27b q4_k_m 4k"


def test_without_index_nothing_changes() -> None:
    text = answer(QUESTION, CATALOG, lang="en").text
    assert "Measured: no measurement yet" in text  # the placeholder line of the plain estimate
    assert "No real-machine record" not in text


def test_answer_shows_anchors_and_calibrates() -> None:
    plain = answer(QUESTION, CATALOG, lang="en").text
    index = index_of(make(1, 40.0, name="alice", context=4096), make(2, 42.0, name="bob", context=4096))
    reply = answer(QUESTION, CATALOG, lang="en", anchors=index)
    assert reply.status == "answer"
    assert "Measured: 2 runs, median 41 tok/s (40–42), by bob 2026-11, by alice 2026-11" in reply.text
    assert "Speeds calibrated by 2 community measurements" in reply.text
    assert reply.text.split("Usable")[0] != plain.split("Usable")[0]  # the table moved


def test_answer_zh_with_call_for_runs() -> None:
    text = answer("V100 32G gemma 3 27b 多少 token", CATALOG, anchors=index_of()).text
    assert "本组合暂无真机记录" in text and "/submit" in text


def test_new_anchor_shows_up_despite_the_reply_cache() -> None:
    empty = index_of()
    assert "No real-machine record" in answer(QUESTION, CATALOG, lang="en", anchors=empty).text
    added = empty.with_added(make(7, 30.0, name="carol"))
    assert "by carol" in answer(QUESTION, CATALOG, lang="en", anchors=added).text
    back = added.without(7)
    assert "No real-machine record" in answer(QUESTION, CATALOG, lang="en", anchors=back).text


@pytest.mark.parametrize("target", ["plain", "telegram", "discord"])
def test_published_index_answers_fit_every_target(target: str) -> None:
    index = index_of(*as_approved(published_anchors(CATALOG)))
    for question in (
        "3090 llama 3 8b",
        "4090 跑 gpt-oss 20b",
        "V100 32G gemma 3 27b 多少 token",
        "m2 ultra llama 2 7b",
    ):
        reply = answer(question, CATALOG, target=target, anchors=index)
        assert reply.status == "answer"
        assert fits(reply.text, target)
        assert "Measured" in reply.text or "实测" in reply.text


def test_follow_up_is_calibrated_and_shows_anchors() -> None:
    index = index_of(make(1, 40.0, name="alice"))
    query = answer(QUESTION, CATALOG, lang="en").query
    plain = follow_up(query, "quant", CATALOG, quant="Q4_K_M")
    with_anchors = follow_up(query, "quant", CATALOG, quant="Q4_K_M", anchors=index)
    assert with_anchors.status == "answer"
    assert "by alice" in with_anchors.text and "by alice" not in plain.text
