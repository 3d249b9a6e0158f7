"""MiniCPM (`minicpm`, OpenBMB: MiniCPM 1/2, MiniCPM4): the llama layout with muP scalars.

scale_emb, scale_depth and dim_model_base scale activations, not shapes; MiniCPM4's sparse_config
(InfLLM v2) picks which cached blocks attention reads, but every layer still caches K and V of the
whole context, so memory is plain GQA's. MiniCPMConfig ties embeddings unless the config says not
(MiniCPM4-8B: untied). Checked against MiniCPM4-8B's published 8,185,253,888.

MiniCPM3 (`minicpm3`) is MLA with its own LoRA keys: known, not read yet.
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config
from core.catalog.architectures.registry import Architecture, register


def _as_llama(t: Config, mt: str) -> Config:
    return {"tie_word_embeddings": True, **t}


register(Architecture("minicpm", model_types=frozenset({"minicpm"}), normalise=_as_llama, base="dense"))
register(
    Architecture(
        "minicpm3",
        model_types=frozenset({"minicpm3"}),
        unsupported="MiniCPM3's multi-head latent attention (q/kv LoRA in its own keys)",
    )
)
