"""More cards for a vLLM / SGLang row count each card at the engine's share (vLLM 0.92, SGLang 0.88,
less its activations and graphs), the same room the row itself was judged against: DeepSeek-V3 FP8
(631 GiB at 32K) on one H100 needs more than eight (8x H100 hold ~589 GiB under vLLM), so the way
out is 16 cards (two nodes), not 8 (before: "8 cards -> ~55 tok/s", a box the 8-card answer itself
says it doesn't fit). A llama.cpp row keeps each card's whole memory.

Written before the change: 2 of 5 held on the code before it (the llama.cpp one and Llama 405B,
where eight hold it either way)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer, estimate_for
from core.catalog.loader import default_catalog
from core.estimator.choice import choose

CAT = default_catalog()


def _cards(question: str) -> int:
    reply = answer(question, CAT)
    est = estimate_for(reply.query, CAT)
    row = choose(est, CAT).row
    assert row.remedy is not None, reply.text
    kinds = [row.remedy, *row.remedy.alternatives]
    more = next((r for r in kinds if r.kind == "more_cards"), None)
    assert more is not None, reply.text
    return more.cards


@pytest.mark.parametrize(
    ("question", "cards"),
    [
        ("h100 deepseek v3 fp8", 16),
        ("one h100, deepseek-r1 in fp8 with vllm", 16),
        ("h100 sglang deepseek v3 fp8", 16),
        ("h100 llama 3.1 405b fp8", 8),
    ],
)
def test_more_cards_at_the_engine_share(question: str, cards: int) -> None:
    assert _cards(question) == cards


def test_llama_cpp_keeps_the_whole_card() -> None:
    # 2x 3090 hold Llama 3.3 70B Q8_0 (70 GiB) only as three: llama.cpp fills each card
    assert _cards("3090 llama 3.3 70b q8_0 32k llama.cpp") == 4


def test_vllm_more_cards_are_a_tensor_parallel_size() -> None:
    # vLLM splits over 1/2/4/8 cards (or whole nodes of 8): never 5 V100s
    assert _cards("v100 16g qwen2.5 72b gptq int4 vllm") in (2, 4, 8, 16)
