"""The substring gate in front of a regex never turns away a text the regex would match."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from core.catalog.loader import default_catalog
from core.understanding import intent
from core.understanding.corpus import load_corpus
from core.understanding.gate import Gated, gated, required_literals
from core.understanding.normalize import clean

CATALOG = default_catalog()
QUESTIONS = [clean(c["q"]) for c in load_corpus(Path(__file__).with_name("corpus.jsonl"))]


def _all_gates() -> list[Gated]:
    pats = intent._patterns_for(CATALOG)
    gates = [g for _name, w, p in (*pats.intents, *pats.legacy) for g in (w, p) if g is not None]
    return [*gates, *pats.users, *pats.prompt, *pats.memory_card, *pats.memory_cards, intent._HOW_MANY]


def test_required_literals_of_simple_shapes() -> None:
    assert required_literals(re.compile(r"(?<![a-z0-9.])(\d{1,4})\s*(?:路)?\s*并发")) == ("并发",)
    assert set(required_literals(re.compile(r"vs|versus|对比")) or ()) <= {
        "vs",
        "versus",
        "对比",
        "v",
        "s",
        "ersus",
    }
    assert required_literals(re.compile(r"\d+")) is None  # nothing literal is needed
    assert required_literals(re.compile(r"(?:a|)b")) == ("b",)  # the empty branch makes "a" optional
    assert required_literals(re.compile(r"(?i)abc")) is None  # case folded: the source says nothing
    assert required_literals(re.compile(r"ab(?i:cd)")) == ("ab",)
    assert set(required_literals(re.compile(r"跑得?[动起]")) or ()) in ({"跑"}, {"动", "起"})


def test_the_gate_passes_every_corpus_question_the_regex_matches() -> None:
    gates = _all_gates()
    assert any(g.keys for g in gates)  # the gates are in use, not all open
    for text in QUESTIONS:
        for g in gates:
            if g.pattern.search(text):
                assert g.may_match(text), (g.pattern.pattern[:80], text)


def test_a_gated_sub_leaves_an_unmatched_text_alone() -> None:
    g = gated(re.compile(r"(?<![a-z])(?:speed|tok/s)(?![a-z])"))
    assert g.keys is not None
    assert g.sub("_", "4090 qwen3 32b") == "4090 qwen3 32b"
    assert g.sub("_", "4090 qwen3 32b speed") == "4090 qwen3 32b _"
    assert [m.group(0) for m in g.finditer("speed tok/s")] == ["speed", "tok/s"]


_PIECES = [*{w for q in QUESTIONS[:200] for w in q.split()}, " ", "能跑", "吗", "vs", "并发", "how many", "8"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_PIECES), max_size=12).map(" ".join))
def test_the_gate_never_refuses_a_match(text: str) -> None:
    for g in _all_gates():
        if g.pattern.search(text):
            assert g.may_match(text), (g.pattern.pattern[:80], text)
