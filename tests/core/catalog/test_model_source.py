"""Repo references people paste: ids, Hub URLs, Ollama's hf.co tags."""

from __future__ import annotations

import pytest

from core.catalog.model_source import ModelSourceError, RepoRef, parse_repo_ref


@pytest.mark.parametrize(
    ("text", "ref"),
    [
        ("Qwen/Qwen3-Coder-30B-A3B-Instruct", RepoRef("Qwen/Qwen3-Coder-30B-A3B-Instruct")),
        ("https://huggingface.co/zai-org/GLM-4.5-Air", RepoRef("zai-org/GLM-4.5-Air")),
        ("huggingface.co/zai-org/GLM-4.5-Air/tree/main", RepoRef("zai-org/GLM-4.5-Air")),
        ("hf.co/unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF:Q4_K_M",
         RepoRef("unsloth/Qwen3-Coder-30B-A3B-Instruct-GGUF", "Q4_K_M")),
        ("ollama run hf.co/bartowski/google_gemma-3-27b-it-GGUF:Q4_K_M",
         RepoRef("bartowski/google_gemma-3-27b-it-GGUF", "Q4_K_M")),
        ("https://hf-mirror.com/Qwen/Qwen3-8B", None),  # a mirror URL is not the Hub's name for it
        ("qwen3 coder 30b", None),
        ("4090 qwen3:32b", None),
    ],
)  # fmt: skip
def test_parse_repo_ref(text: str, ref: RepoRef | None) -> None:
    assert parse_repo_ref(text) == ref


def test_error_names_kind_and_repo() -> None:
    error = ModelSourceError("gated", "meta-llama/Llama-3.1-8B", "needs HF_TOKEN")
    assert (error.kind, error.repo) == ("gated", "meta-llama/Llama-3.1-8B")
    assert "gated" in str(error) and "meta-llama/Llama-3.1-8B" in str(error)
