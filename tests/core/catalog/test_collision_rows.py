"""The rows added for names that collided with a neighbour: shapes the estimator can size (ChatGLM's
multi-query groups, glm-4-9b-chat-1m's 4 KV groups), parameter totals at the published sizes, and
releases that are rows of their own rather than aliases of the base model."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.estimator.memory import kv_cache_bytes

CATALOG = default_catalog()
MODELS = CATALOG.models

# Published totals (text decoder): chatglm3-6b 6,243,584,000 (SOURCE.txt of the config fixture),
# llama-bench sizes of the measured Ministral 3 rows (8.49 / 13.51), Mistral Large 2 "123B".
PUBLISHED_B = {
    "chatglm3-6b": 6.2436,
    "ministral-3-8b": 8.49,
    "ministral-3-14b": 13.51,
    "mistral-large-2407": 123.0,
    "baichuan2-13b": 13.9,
    "glm-4-9b-1m": 9.48,
    "deepseek-r1-distill-qwen-1.5b": 1.78,  # untied head (published_extra.csv row)
    "deepseek-coder-33b": 33.3,  # the measured rows (published_extra.csv)
    "codestral-22b": 22.2,  # the measured rows; Mistral: 22B
    "yi-1.5-9b": 8.8,  # 01.AI: "approximately 8.8B" (Yi-9B, which Yi-1.5-9B continues)
}


@pytest.mark.parametrize(("model_id", "published"), sorted(PUBLISHED_B.items()))
def test_params_match_the_published_total(model_id: str, published: float) -> None:
    assert abs(MODELS[model_id].params_b - published) <= 0.01 * published


def test_chatglm3_is_multi_query_with_two_groups() -> None:
    m = MODELS["chatglm3-6b"]
    assert (m.layers, m.kv_heads, m.head_dim, m.vocab, m.attn_bias) == (28, 2, 128, 65024, True)
    # K and V, 28 layers x 2 groups x 128 at f16: 28,672 bytes a token (a 32-head MHA would be 16x).
    assert kv_cache_bytes(m, 8192, "f16", CATALOG) == 28 * 2 * 2 * 128 * 2 * 8192


def test_chatglm3_releases_share_the_shapes_and_differ_in_context() -> None:
    base = MODELS["chatglm3-6b"]
    for mid, ctx in (("chatglm3-6b-32k", 32768), ("chatglm3-6b-128k", 131072)):
        m = MODELS[mid]
        assert (m.layers, m.hidden, m.kv_heads, m.intermediate_size) == (
            base.layers, base.hidden, base.kv_heads, base.intermediate_size,
        )  # fmt: skip
        assert m.max_context == ctx and mid not in base.aliases


def test_glm4_9b_1m_holds_twice_the_kv_of_glm4_9b() -> None:
    one_m, chat = MODELS["glm-4-9b-1m"], MODELS["glm-4-9b"]
    assert one_m.kv_heads == 4 and chat.kv_heads == 2 and one_m.max_context == 1048576
    assert kv_cache_bytes(one_m, 32768, "f16", CATALOG) == 2 * kv_cache_bytes(chat, 32768, "f16", CATALOG)


def test_mistral_large_releases_are_rows_of_their_own() -> None:
    a, b = MODELS["mistral-large-2407"], MODELS["mistral-large-2411"]
    assert (
        (a.layers, a.hidden, a.heads, a.kv_heads)
        == (88, 12288, 96, 8)
        == (b.layers, b.hidden, b.heads, b.kv_heads)
    )
    # a bare "123b" answers the established 2407 and offers 2411 (the resolver's popularity margin)
    assert a.popularity - b.popularity >= 10


def test_rx_7600_and_7600_xt_differ_in_memory_only() -> None:
    card, xt = CATALOG.gpus["rx-7600"], CATALOG.gpus["rx-7600-xt"]
    assert (card.memory_gib, xt.memory_gib) == (8.0, 16.0)
    assert card.bandwidth_gbs == xt.bandwidth_gbs and card.gfx_target == xt.gfx_target == "gfx1102"
    assert "7600" not in [a.lower() for a in card.aliases]  # a bare 7600 is also a CPU's number
