"""Held out: one phrasing per fix (thinking kept, a family version, a framework word, a family
asked back, several cards' RAM), written after the fixes and run once as they stood."""

from __future__ import annotations

from core.catalog.loader import default_catalog
from core.estimator.setup import build_setup
from core.understanding.hub_rule import model_need
from core.understanding.parse import parse_question

CATALOG = default_catalog()


def test_kimi_thinking_gguf_on_h200s() -> None:
    m = parse_question("8 张 H200 跑 unsloth 的 Kimi-K2-Thinking GGUF", CATALOG).model
    assert m is not None and m.best_id == "kimi-k2-thinking", m


def test_qwen_3_6_is_not_qwen3() -> None:
    m = parse_question("qwen 3.6 27b on a 4090", CATALOG).model
    assert m is None or m.best_id is None or not m.best_id.startswith("qwen3-"), m


def test_exl3_word_before_a_model() -> None:
    q = "exllamav3 qwen3 32b on a 5090"
    res, need = model_need(q, parse_question(q, CATALOG).model, CATALOG)
    assert need is None and res is not None and res.best_id == "qwen3-32b", (res, need)


def test_gemma_family_on_a_small_card_is_asked_back() -> None:
    m = parse_question("4060 8G 跑 gemma 4 多快", CATALOG).model
    assert m is not None and not m.confident
    assert m.candidates[0][0] in ("gemma-4-e4b", "gemma-4-e2b", "gemma-4-26b-a4b"), m


def test_two_4090s_assume_the_multi_card_ram() -> None:
    assert build_setup(CATALOG.gpus["rtx-4090"], CATALOG, 2).host.ram_gib == 64
