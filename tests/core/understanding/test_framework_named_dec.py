"""A framework the user names is never silently ignored: Hugging Face transformers ("用 pytorch 跑"),
MLC LLM and gpt-fast are read and priced when named; a framework the estimator does not price
(TensorRT-LLM, TGI) gets a plain line saying so, in the question's language, and the rest of the
answer stays."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("question", "framework"),
    [
        ("4090 qwen3 8b transformers 速度", "transformers"),
        ("qwen3 8b on a 4090 with hf transformers", "transformers"),
        ("用 pytorch 跑 qwen3 8b,4090 多快", "transformers"),
        ("用pytorch跑qwen3 8b 3090", "transformers"),
        ("huggingface transformers llama 3 8b bf16 on 3090", "transformers"),
        ("mlc llm qwen3 8b on 3060", "mlc-llm"),
        ("mlc-llm 跑 qwen3 8b 3060 速度", "mlc-llm"),
        ("gpt-fast llama 3 8b on a100 80g", "gpt-fast"),
        ("用 gpt-fast 跑 llama 3 8b,a100 80g", "gpt-fast"),
        # The older names keep theirs: KTransformers is not transformers, vLLM stays vLLM.
        ("ktransformers deepseek r1 4090", "ktransformers"),
        ("vllm qwen3 8b 4090", "vllm"),
    ],
)
def test_the_named_framework_is_read(catalog: Catalog, question: str, framework: str) -> None:
    assert parse_question(question, catalog).framework == framework


@pytest.mark.parametrize(
    ("question", "framework", "command"),
    [
        ("4090 qwen3 8b transformers 速度", "transformers", "transformers"),
        ("qwen3 8b on a 4090 with hf transformers", "transformers", "transformers"),
        ("mlc llm qwen3 8b on 3060", "mlc-llm", "mlc_llm serve"),
        ("gpt-fast llama 3 8b on a100 80g", "gpt-fast", "generate.py"),
    ],
)
def test_the_named_framework_is_priced_and_launched(
    catalog: Catalog, question: str, framework: str, command: str
) -> None:
    text = answer(question, catalog).text
    heading = text.splitlines()[0]
    assert "llama.cpp" not in heading, text
    assert catalog.frameworks[framework].name in text, text
    assert any(line.startswith("$ ") and command in line for line in text.splitlines()), text
    assert "llama-server" not in text, text


@pytest.mark.parametrize(
    ("question", "said", "lang_word"),
    [
        ("tensorrt-llm qwen3 8b on 4090", "tensorrt-llm", "don't price"),
        ("4090 用 tensorrt 跑 qwen3 8b 多快", "tensorrt-llm", "还没法估算"),
        ("tgi qwen3 8b 4090 how fast", "tgi", "don't price"),
    ],
)
def test_an_unpriced_framework_is_said_and_the_answer_stays(
    catalog: Catalog, question: str, said: str, lang_word: str
) -> None:
    parsed = parse_question(question, catalog)
    assert parsed.framework is None
    assert ("framework_not_priced", said) in parsed.notes
    text = answer(question, catalog).text
    assert lang_word in text and said in text.lower(), text
    assert "Qwen3-8B" in text and "$ " in text, text  # the table and the command are still there
