"""A serving command never swaps in a same-size checkpoint the card has no kernels for: with no
GPTQ-Int4 of Qwen3-8B listed, a V100 (compute 7.0, no AWQ in vLLM) is not sent Qwen3-8B-AWQ, while a
card that runs AWQ still is."""

from __future__ import annotations

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def test_a_v100_is_not_sent_an_awq_checkpoint() -> None:
    for question in ("V100 16G 能跑 qwen3-8b 吗，用 vllm", "v100 16gb qwen3 8b gptq vllm"):
        text = answer(question, CATALOG).text
        assert "-AWQ" not in text, question


def test_a_card_with_awq_kernels_still_gets_the_sibling() -> None:
    text = answer("4090 qwen3 8b gptq vllm", CATALOG).text
    assert "$ vllm serve Qwen/Qwen3-8B-AWQ" in text
