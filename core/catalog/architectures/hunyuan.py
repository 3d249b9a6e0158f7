"""Hunyuan MoE (`hunyuan_v1_moe` in transformers, `hunyuan` in Tencent's remote-code config):
Hunyuan-A13B.

The config gives the MoE shape per layer (lists `moe_topk`, `num_shared_expert`,
`moe_intermediate_size`, sometimes `num_experts`); the catalog schema has one shape for all MoE
layers, so the lists must be uniform, else the config is refused. What modeling_hunyuan_v1_moe
builds per layer: q/k/v/o without biases (`attention_bias`), a per-head q/k RMSNorm
(`use_qk_norm`, counted by the family's extras), a router `gate.wg` (hidden x experts, no bias),
the routed experts of `moe_intermediate_size` and, with `use_mixed_mlp_moe`, one shared MLP of
`intermediate_size` x `num_shared_expert` beside them.

Cross-layer attention (`use_cla`: layers share K/V, Hunyuan-Large) and MLA (`use_mla`) change the
KV cache and the tensor list; neither is representable, so both are refused.

The result is a normalised text config in the generic MoE reader's keys (num_experts_per_tok,
scalar moe_intermediate_size, shared_expert_intermediate_size): the layer layout is the generic
one (one attention + one MoE FFN per layer).
"""

from __future__ import annotations

from typing import Any

from core.catalog.architectures.fields import Config, ConfigError, int_field
from core.catalog.architectures.registry import Architecture, register

HUNYUAN_TYPES = frozenset({"hunyuan_v1_moe", "hunyuan"})


def _uniform(t: Config, key: str, mt: str, layers: int) -> int | None:
    """The one value of a per-layer list (or a scalar); None when absent."""
    value = t.get(key)
    if value is None:
        return None
    if isinstance(value, list):
        if len(value) != layers or len(set(value)) != 1:
            raise ConfigError(f"{mt}: {key} {value!r} differs between layers (not representable)")
        value = value[0]
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{mt}: {key!r} is {value!r}, not an integer")
    return value


def normalise_hunyuan(t: Config, mt: str) -> dict[str, Any]:
    """`t` rewritten in the generic MoE reader's keys; ConfigError for what cannot be described."""
    for flag, what in (("use_cla", "cross-layer KV sharing"), ("use_mla", "MLA attention")):
        if t.get(flag):
            raise ConfigError(f"{mt}: {flag} ({what}) is not representable")
    layers = int_field(t, "num_hidden_layers", mt)
    experts = _uniform(t, "num_experts", mt, layers)
    if not experts or experts <= 1:
        raise ConfigError(f"{mt}: num_experts {experts!r}: not a MoE config")
    top_k = _uniform(t, "moe_topk", mt, layers)
    width = _uniform(t, "moe_intermediate_size", mt, layers) or int_field(t, "intermediate_size", mt)
    if not top_k:
        raise ConfigError(f"{mt}: config.json has no 'moe_topk'")
    if _uniform(t, "moe_layer_num_skipped", mt, layers):
        raise ConfigError(f"{mt}: moe_layer_num_skipped (leading dense layers) is not read")
    shared = _uniform(t, "num_shared_expert", mt, layers) or 0
    if shared and not t.get("use_mixed_mlp_moe", True):
        shared = 0
    out = {
        k: v
        for k, v in t.items()
        if k not in {"num_experts", "moe_topk", "moe_intermediate_size", "num_shared_expert"}
    }
    head_dim = t.get("head_dim") or t.get("attention_head_dim")
    out.update(
        num_experts=experts,
        num_experts_per_tok=top_k,
        moe_intermediate_size=width,
        shared_expert_intermediate_size=shared * int_field(t, "intermediate_size", mt),
        head_dim=head_dim,
    )
    return out


# Per-layer lists normalised first; then read as the generic MoE layout.
register(Architecture("hunyuan", model_types=HUNYUAN_TYPES, normalise=normalise_hunyuan, base="moe"))
