"""N users asked at a quant that doesn't fit the cards (DeepSeek-R1 FP8 on 8x H100, Llama 3.3 70B
BF16 on one A100 80GB): the serving plan is the one that does serve them, the line before it says
the asked quant doesn't fit and what was taken instead, and the `$` command serves that quant.
Before, the reply fell back to the TTFT table with no command at all, and priced the way out's
quant for N users even when it held one ("~1 tok/s each" for FP8 70B on an A100).

New phrasings written before the change: 1 of 7 held on the code before it (the one where nothing
smaller fits either)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CAT = default_catalog()


def _command(text: str) -> str:
    return next((line for line in text.splitlines() if line.startswith("$ ")), "")


@pytest.mark.parametrize(
    ("question", "command_start", "served"),
    [
        ("8x H100 deepseek-r1 fp8 sglang 64 concurrent", "$ python -m sglang.launch_server", "AWQ"),
        ("8张H100 部署 deepseek r1 fp8 32 并发", "$ vllm serve", "AWQ"),
        ("a100 80g llama 3.3 70b bf16 16 users", "$ vllm serve", "AWQ"),
        ("2x 4090 llama 3.3 70b fp8 vllm 8 concurrent", "$ vllm serve", "AWQ"),
        ("serve qwen3 32b in bf16 on an L40S for 20 users", "$ vllm serve", "AWQ"),  # all 20 fit at AWQ only
    ],
)
def test_the_plan_serves_a_quant_that_fits(question: str, command_start: str, served: str) -> None:
    reply = answer(question, CAT)
    assert reply.status == "answer", reply.text
    command = _command(reply.text)
    assert command.startswith(command_start), reply.text
    head = reply.text.splitlines()[:3]  # the headline (with the read-as line), then why this quant
    said = next((line for line in head if "doesn't fit" in line or "装不下" in line), "")
    assert served in said and served in head[0], reply.text


def test_the_served_quant_holds_more_than_one_user() -> None:
    reply = answer("a100 80g llama 3.3 70b bf16 16 users", CAT)
    assert "~1 tok/s each" not in reply.text, reply.text


def test_nothing_smaller_fits_keeps_the_table_and_its_way_out() -> None:
    reply = answer("h100 qwen3 235b fp8 10 users vllm", CAT)
    assert reply.status == "answer"
    assert "4 cards" in reply.text, reply.text
