"""A bare width or precision word ("4bit", "int8", "bf16", "半精度") is read as the quant the named
framework runs at that width: vLLM's "4bit" is an AWQ checkpoint, transformers' is bitsandbytes NF4,
"bf16" with a framework that serves Hugging Face checkpoints is the released repo, not a GGUF.
With a GGUF framework (or none) the words keep their GGUF reading, and an explicitly named format
("q4_k_m", "awq", "nf4", "gguf") is never rewritten (catalogs/frameworks.toml `bare_quants`)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import Catalog, default_catalog
from core.understanding.parse import parse_question


@pytest.fixture(scope="module")
def catalog() -> Catalog:
    return default_catalog()


@pytest.mark.parametrize(
    ("question", "quants"),
    [
        # Serving frameworks: the width said is their own checkpoint of that width.
        ("4090 qwen2.5 7b vllm 4bit", ("AWQ",)),
        ("用vllm跑 qwen3 32b 4bit", ("AWQ",)),
        ("sglang qwen3 8b 4bit 4090", ("AWQ",)),
        ("h100 qwen3 32b vllm 8bit", ("FP8",)),
        ("vllm int8 qwen3 32b 4090", ("GPTQ-INT8",)),
        ("vllm int4 qwen3 32b a100", ("GPTQ-INT4",)),
        ("a100 80g gemma-3-27b bf16 vllm", ("HF-BF16",)),
        ("a100 80g gemma-3-27b fp16 vllm", ("HF-FP16",)),
        ("a100 80g gemma-3-27b fp16 sglang", ("HF-FP16",)),
        # transformers: bitsandbytes for the widths, the HF checkpoint for the precisions.
        ("4090 llama 3 8b 4bit transformers", ("BNB-NF4",)),
        ("4090 llama 3 8b 8bit transformers", ("BNB-INT8",)),
        ("qwen3 8b 4-bit with transformers on a 3090", ("BNB-NF4",)),
        ("用 transformers 跑 llama 3 8b 8位 3090", ("BNB-INT8",)),
        ("a100 80g gemma-3-27b bf16 transformers", ("HF-BF16",)),
        ("transformers 半精度 qwen3 8b 4090", ("HF-FP16",)),
        # MLX: the mlx-community repo of that width, whichever order.
        ("mlx 8bit qwen3 8b m3 max", ("MLX-8BIT",)),
        ("qwen3 8b 4bit on mlx-lm m2 max", ("MLX-4BIT",)),
        ("mlx_lm 6bit qwen3 14b m4 pro", ("MLX-6BIT",)),
        # GGUF frameworks: "int4" is a 4-bit GGUF, not a GPTQ checkpoint they cannot load.
        ("ollama qwen3 8b int4 4090", ("Q4_K_M",)),
    ],
)
def test_a_bare_width_is_the_named_frameworks_quant(
    catalog: Catalog, question: str, quants: tuple[str, ...]
) -> None:
    assert parse_question(question, catalog).quants == quants


@pytest.mark.parametrize(
    ("question", "quants"),
    [
        # GGUF frameworks and no framework: unchanged.
        ("ollama qwen3 8b 4bit", ("Q4_K_M",)),
        ("llama.cpp qwen3 8b 8bit 3090", ("Q8_0",)),
        ("lm studio qwen3 8b bf16", ("BF16",)),
        ("koboldcpp qwen3 8b 4bit 3060", ("Q4_K_M",)),
        ("qwen3 8b 4bit 4090", ("Q4_K_M",)),
        ("qwen3 8b fp16 4090", ("F16",)),
        # An explicitly named format is never rewritten.
        ("4090 qwen3 8b q4_k_m vllm", ("Q4_K_M",)),
        ("vllm qwen3 8b awq 4090", ("AWQ",)),
        ("transformers qwen3 8b nf4 3090", ("BNB-NF4",)),
        ("vllm qwen3 8b 4bit gptq 4090", ("GPTQ-INT4",)),
        ("vllm qwen3 8b gguf 4bit 4090", ("Q4_K_M",)),
    ],
)
def test_gguf_frameworks_and_named_formats_keep_their_reading(
    catalog: Catalog, question: str, quants: tuple[str, ...]
) -> None:
    assert parse_question(question, catalog).quants == quants


def _commands(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("$ ")]


def test_vllm_4bit_serves_a_checkpoint_not_a_gguf(catalog: Catalog) -> None:
    # What vLLM is asked to serve is the AWQ checkpoint, never a GGUF file. (models.toml lists no AWQ
    # repo of Qwen2.5-7B-Instruct, so the estimator may print no vLLM command, or llama.cpp's instead:
    # that is the catalog's gap, not the reading's.)
    reply = answer("4090 qwen2.5 7b vllm 4bit", catalog)
    assert reply.query is not None and reply.query.quants == ("AWQ",), reply.text
    assert not any("vllm serve" in line and ".gguf" in line for line in _commands(reply.text)), reply.text


def test_vllm_4bit_serves_the_published_awq_repo(catalog: Catalog) -> None:
    text = answer("4090 qwen3 8b vllm 4bit", catalog).text
    assert "$ vllm serve Qwen/Qwen3-8B-AWQ " in text, text
    assert ".gguf" not in text, text


def test_transformers_4bit_runs_in_transformers(catalog: Catalog) -> None:
    text = answer("4090 llama 3 8b 4bit transformers", catalog).text
    commands = _commands(text)
    assert "llama-server" not in text, text
    assert any("transformers" in line and "load_in_4bit" in line for line in commands), text


@pytest.mark.parametrize(
    ("question", "quants"),
    [
        # Held out: written after the rule, not tuned on.
        ("running qwen3 14b in 4 bit on vllm with a 3090", ("AWQ",)),
        ("sglang 部署 qwen3 32b 8bit h100", ("FP8",)),
        ("can a 3060 12gb run mistral 7b 8-bit via hf transformers", ("BNB-INT8",)),
        ("llama 3 70b fp16 with vllm on 2x h100", ("HF-FP16",)),
        ("m2 ultra mlx-lm qwen3 30b a3b 8 bit", ("MLX-8BIT",)),
        ("pytorch 跑 qwen3 8b 4比特 4090", ("BNB-NF4",)),
    ],
)
def test_held_out_phrasings(catalog: Catalog, question: str, quants: tuple[str, ...]) -> None:
    assert parse_question(question, catalog).quants == quants
