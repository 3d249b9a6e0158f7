"""OLMo 2 (`olmo2`) and OLMoE (`olmoe`), AllenAI: the llama layout (dense / MoE) with the norms moved.

Each layer norms after attention and after the MLP (post_attention_layernorm,
post_feedforward_layernorm: two norms, as the generic count has), and q and k are RMS-normed over
*all* heads at once (q_norm of heads x head_dim, k_norm of kv_heads x head_dim), not per head as
Qwen 3 does. KV cache: plain GQA. Checked against OLMo-2-1124-13B (13,716,198,400) and
OLMoE-1B-7B-0924 (6,919,161,856), tests/core/catalog/test_typed_architectures.py.
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config
from core.catalog.architectures.registry import Architecture, register
from core.catalog.model import Model


def _identity(t: Config, mt: str) -> Config:
    return t


def _qk_norm_all_heads(t: Config, m: Model, full: bool) -> int:
    return (m.heads + m.kv_heads) * m.head_dim


register(
    Architecture(
        "olmo2",
        model_types=frozenset({"olmo2"}),
        normalise=_identity,
        base="dense",
        layer_extra=_qk_norm_all_heads,
    )
)
register(
    Architecture(
        "olmoe",
        model_types=frozenset({"olmoe"}),
        normalise=_identity,
        base="moe",
        layer_extra=_qk_norm_all_heads,
    )
)
