"""Ollama command values: the model to pull (a library tag or a Hugging Face GGUF) and the
environment that sets its context and KV cache."""

from __future__ import annotations

from core.catalog.kv_cache import FULL_PRECISION_KV
from core.community.pasted import OLLAMA_DEFAULT_QUANT, ollama_tag
from core.estimator.frameworks.commands.sources import base_repo_name, published_gguf, shell_word
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkQuery


def ollama_values(q: FrameworkQuery) -> dict[str, str]:
    """Ollama: a bare library tag downloads Q4_K_M; any other GGUF comes from Hugging Face."""
    ollama_env = f"OLLAMA_CONTEXT_LENGTH={q.context} "
    if q.users > 1:
        # N users: N requests at once, each with the context above (Ollama FAQ: parallel requests
        # multiply the context allocated by OLLAMA_NUM_PARALLEL).
        ollama_env += f"OLLAMA_NUM_PARALLEL={q.users} "
    if q.kv_cache != FULL_PRECISION_KV:
        ollama_env += f"OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE={q.kv_cache} "
    return {"ollama_env": ollama_env, "ollama_model": _ollama_model(q)}


def _ollama_model(q: FrameworkQuery) -> str:
    model, quant = q.model, q.quant
    if q.ollama_tag and quant_in(quant, (typed_tag_quant(q.ollama_tag),)):
        return shell_word(q.ollama_tag)  # the user's own tag, when it downloads the quant priced
    published = published_gguf(model, quant)
    if model.ollama_tag and quant_in(quant, (OLLAMA_DEFAULT_QUANT,)):
        return model.ollama_tag
    if published is not None:
        return f"hf.co/{published.repo}:{quant.id}"
    if model.gguf_repo:
        return f"hf.co/{model.gguf_repo}:{quant.id}"
    return model.ollama_tag or base_repo_name(model)


def typed_tag_quant(tag: str) -> str:
    """The quant an Ollama tag downloads: the one it names ("qwen3:14b-q8_0"), else Q4_K_M."""
    return ollama_tag(tag)[1] or OLLAMA_DEFAULT_QUANT
