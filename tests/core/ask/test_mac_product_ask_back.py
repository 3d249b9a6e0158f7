"""A Mac product without its chip asks which chip and memory, naming what that product ships with,
and still shows what the model needs (tests/core/understanding/test_mac_product_without_chip.py for
the reading). Written before the fix; on the old code 0 of 4 held."""

from __future__ import annotations

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()


def test_mac_studio_and_a_model_asks_which_and_shows_the_memory_needed() -> None:
    reply = answer("mac studio qwen3 235b?", CATALOG)
    assert reply.status == "clarify", reply.text
    assert "Mac Studio" in reply.text and "M3 Ultra" in reply.text and "512" in reply.text
    assert "Q4_K_M" in reply.text  # what each quant needs, to pick the memory by


def test_in_chinese() -> None:
    reply = answer("我的mac studio能跑qwen3 235b吗", CATALOG)
    assert reply.status == "clarify", reply.text
    assert "Mac Studio" in reply.text and "M3 Ultra" in reply.text and "芯片" in reply.text


def test_macbook_pro_does_not_look_up_a_model_named_pro() -> None:
    reply = answer("macbook pro llama 3.1 8b tok/s", CATALOG)
    assert reply.status == "clarify", reply.text
    assert "pro llama" not in reply.text.lower() and "MacBook Pro" in reply.text


def test_no_model_asks_which_mac() -> None:
    reply = answer("what can i run on my mac mini", CATALOG)
    assert reply.status == "clarify", reply.text
    assert "Mac mini" in reply.text and "M4 Pro" in reply.text
