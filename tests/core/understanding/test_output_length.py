"""Issue 23, "N tokens in, M out": the output length (and the prompt written beside it) read from a
question, and nothing of the phrase read as a card count, a model size or a context."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.intent import intent_details
from core.understanding.query import DEFAULT_PROMPT

CATALOG = default_catalog()

# (question, card, model, prompt read (None: the default), output read)
CASES = [
    ("4090 qwen3 8b 2000 in 500 out", "rtx-4090", "qwen3-8b", 2000, 500),
    ("4090 qwen3 8b 2k tokens in, 300 tokens out", "rtx-4090", "qwen3-8b", 2048, 300),
    ("3090 llama 3 8b input 8000 output 1000", "rtx-3090", "llama-3-8b", 8000, 1000),
    ("4090 跑 qwen3 14b 输入 4000 输出 500", "rtx-4090", "qwen3-14b", 4000, 500),
    ("4090 qwen3 8b 生成500个token 要多久", "rtx-4090", "qwen3-8b", None, 500),
    ("5090 qwen3 32b 500 tokens of output", "rtx-5090", "qwen3-32b", None, 500),
    ("4090 qwen3 8b prompt 2000, 800 output tokens", "rtx-4090", "qwen3-8b", 2000, 800),
    ("qwen3 8b on a 3090: 1000 in / 200 out", "rtx-3090", "qwen3-8b", 1000, 200),
]


@pytest.mark.parametrize(("q", "gpu", "model", "prompt", "output"), CASES)
def test_output_and_prompt_are_read(q: str, gpu: str, model: str, prompt: int | None, output: int) -> None:
    details = intent_details(q, CATALOG)
    assert details.output == output
    reply = answer(q, CATALOG)
    query = reply.query
    assert query is not None
    assert query.output == output
    assert query.prompt == (prompt if prompt is not None else DEFAULT_PROMPT)
    # the card and model as named, one card, and no context made of the phrase's numbers
    assert query.gpu_id == gpu and query.hardware.first.count == 1
    assert query.model_id == model
    assert query.model_size_b is None
    assert not set(query.contexts) & {output, prompt, 2048}
    assert query.as_json()["output"] == output


@pytest.mark.parametrize(
    "q",
    [
        "4090 qwen3 8b 32k context",
        "out of memory on a 4090 with qwen3 32b",
        "4090 qwen3 8b prompt 2000",
        "2 x 3090 llama 3 70b q4",
        # speeds, not lengths (added after the first run, as guards)
        "i get output 40 tok/s on my 3090 with qwen3 8b",
        "3090 qwen3 8b generate 40 tokens per second?",
    ],
)
def test_no_output_is_read_where_none_is_asked(q: str) -> None:
    assert intent_details(q, CATALOG).output is None
    reply = answer(q, CATALOG)
    assert reply.query is not None and reply.query.output is None
    assert reply.query.as_json()["output"] is None


def test_a_context_said_beside_the_phrase_stays() -> None:
    query = answer("4090 qwen3 8b 32k ctx, 2k in 300 out", CATALOG).query
    assert query is not None
    assert query.contexts == (32768,) and query.prompt == 2048 and query.output == 300


# Held out: written after the patterns worked, run once (issue 23's brief); kept as they first ran.
HELD_OUT = [
    ("qwen3 8b on a 4090, 1500 tokens in and 200 out", "rtx-4090", "qwen3-8b", 1500, 200),
    ("4090 qwen3 8b 输入2k，输出300", "rtx-4090", "qwen3-8b", 2048, 300),
    ("4090 qwen3 8b 回复 800 个 token", "rtx-4090", "qwen3-8b", None, 800),
    ("3090 llama 3 8b: 4k input tokens, 600 output tokens", "rtx-3090", "llama-3-8b", 4096, 600),
]


@pytest.mark.parametrize(("q", "gpu", "model", "prompt", "output"), HELD_OUT)
def test_held_out_phrasings(q: str, gpu: str, model: str, prompt: int | None, output: int) -> None:
    test_output_and_prompt_are_read(q, gpu, model, prompt, output)
