"""SmolLM3 (`smollm3`, HuggingFaceTB): the llama layout with RoPE left out of every fourth layer.

`no_rope_layers` (1 = rotary, 0 = NoPE) changes neither the weights nor the KV cache -- every layer
still caches K and V of all its positions -- so the config is read as a llama's. Embeddings tied.
Checked against SmolLM3-3B's published 3,075,098,624 (tests/core/catalog/test_typed_architectures.py).
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config
from core.catalog.architectures.registry import Architecture, register


def _as_llama(t: Config, mt: str) -> Config:
    # SmolLM3Config's default ties the embeddings (the 3B's config says so too).
    return {"tie_word_embeddings": True, **t}


register(Architecture("smollm3", model_types=frozenset({"smollm3"}), normalise=_as_llama, base="dense"))
