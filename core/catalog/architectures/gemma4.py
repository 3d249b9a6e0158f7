"""Gemma 4 (`gemma4` wrapper, `gemma4_text` decoder), dense (31B) and MoE (26B-A4B).

Layer by layer as modeling_gemma4 builds it (checked tensor for tensor against the 31B checkpoint's
weight list, 31,273,088,876 parameters):
- sliding layers: q/k/v/o with `head_dim` and `num_key_value_heads`;
- full layers: `global_head_dim` and `num_global_key_value_heads`; with `attention_k_eq_v` there is
  no v_proj (V is read from the K projection, then normed on its own, so the cache still holds
  both K and V);
- q_norm / k_norm of the layer's head size (v_norm has no weight), four block norms and a one-value
  `layer_scalar`; a gated (GeGLU) MLP of `intermediate_size`;
- MoE layers (`enable_moe_block`): the dense MLP stays and the routed experts run beside it on the
  same residual; the router holds proj, scale (hidden) and per_expert_scale, plus three more norms.
  For the schema the dense MLP is a shared expert: `intermediate_size` must be a whole number of
  expert widths (2112 = 3 x 704 for 26B-A4B), else the config is refused.

Per-layer inputs (`hidden_size_per_layer_input`, the E2B/E4B sizes) and KV sharing across layers
(`num_kv_shared_layers`) are not described by the schema: refused, not approximated.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from core.catalog.architectures.fields import (
    Config,
    ConfigError,
    LayerwiseReading,
    int_field,
    opt_int,
    shape_fields,
)
from core.catalog.architectures.registry import Architecture, register


def _layer_kinds(t: Config, mt: str, layers: int) -> list[bool]:
    """True for each full-attention layer."""
    types = t.get("layer_types")
    if not isinstance(types, list) or len(types) != layers:
        raise ConfigError(f"{mt}: config.json has no 'layer_types' of {layers} layers")
    unknown = sorted({kind for kind in types if kind not in ("full_attention", "sliding_attention")})
    if unknown:
        raise ConfigError(f"{mt}: layer_types {unknown} are not known")
    return [kind == "full_attention" for kind in types]


def _refuse_unmodelled(t: Config, mt: str) -> None:
    if opt_int(t, "hidden_size_per_layer_input"):
        raise ConfigError(f"{mt}: per-layer inputs (hidden_size_per_layer_input) are not representable")
    if opt_int(t, "num_kv_shared_layers"):
        raise ConfigError(f"{mt}: KV shared across layers (num_kv_shared_layers) is not representable")
    if t.get("use_double_wide_mlp"):
        raise ConfigError(f"{mt}: use_double_wide_mlp is not representable")


def _attention(h: int, heads: int, kv: int, dim: int, has_v: bool) -> int:
    q, k = h * heads * dim, h * kv * dim
    return q + k * (2 if has_v else 1) + heads * dim * h + 2 * dim  # + q_norm, k_norm


def _vision(v: Config, text_hidden: int) -> int:
    """Gemma 4 ViT: patch projection, 2-D position table, gated-MLP blocks with q/k norms and four
    block norms, standardisation vectors, and the projection into the text width."""
    mt = "gemma4_vision"
    hidden, inter = int_field(v, "hidden_size", mt), int_field(v, "intermediate_size", mt)
    depth, dim = int_field(v, "num_hidden_layers", mt), int_field(v, "head_dim", mt)
    patch = 3 * int_field(v, "patch_size", mt) ** 2 * hidden
    positions = 2 * int_field(v, "position_embedding_size", mt) * hidden
    block = 4 * hidden * hidden + 3 * hidden * inter + 4 * hidden + 2 * dim
    standardize = 2 * hidden if v.get("standardize") else 0
    return patch + positions + depth * block + standardize + hidden * text_hidden


def read_gemma4(t: Config, vision: Mapping[str, Any] | None, mt: str) -> LayerwiseReading:
    _refuse_unmodelled(t, mt)
    h, layers = int_field(t, "hidden_size", mt), int_field(t, "num_hidden_layers", mt)
    heads, vocab = int_field(t, "num_attention_heads", mt), int_field(t, "vocab_size", mt)
    kv, dim = int_field(t, "num_key_value_heads", mt), int_field(t, "head_dim", mt)
    global_kv = opt_int(t, "num_global_key_value_heads") or kv
    global_dim = opt_int(t, "global_head_dim") or dim
    inter = int_field(t, "intermediate_size", mt)
    full = _layer_kinds(t, mt, layers)
    k_eq_v = bool(t.get("attention_k_eq_v"))
    fields: dict[str, Any] = {}
    expert_total = expert_active = 0
    if t.get("enable_moe_block"):
        experts, top_k = int_field(t, "num_experts", mt), int_field(t, "top_k_experts", mt)
        width = int_field(t, "moe_intermediate_size", mt)
        if inter % width:
            raise ConfigError(f"{mt}: dense MLP width {inter} is not a multiple of the expert width {width}")
        router = h * experts + h + experts + 3 * h  # proj, scale, per_expert_scale; three more norms
        expert_total = experts * 3 * h * width + router
        expert_active = top_k * 3 * h * width + router
        fields.update(
            experts=experts, experts_active=top_k, moe_intermediate_size=width, shared_experts=inter // width
        )
    tied = bool(t.get("tie_word_embeddings", True))  # Gemma's default: the head is the embedding
    total = active = vocab * h * (1 if tied else 2) + h  # + final norm
    for is_full in full:
        mixer = (
            _attention(h, heads, global_kv, global_dim, has_v=not k_eq_v)
            if is_full
            else _attention(h, heads, kv, dim, has_v=True)
        )
        common = mixer + 3 * h * inter + 4 * h + 1  # + four norms, layer_scalar
        total += common + expert_total
        active += common + expert_active
    window = int_field(t, "sliding_window", mt)
    n_full = sum(full)
    fields.update(
        shape_fields(layers, h, heads, kv, dim, vocab, int_field(t, "max_position_embeddings", mt)),
        intermediate_size=inter,
        tied_embeddings=tied,
        attention="swa_hybrid" if n_full < layers else "full",
        sliding_window=window if n_full < layers else None,
        global_layers=n_full if n_full < layers else None,
        global_kv_heads=global_kv if global_kv != kv else None,
        global_head_dim=global_dim if global_dim != dim else None,
    )
    fields["rope_scaled_context"] = fields["max_context"]
    tower = _vision(vision, h) if vision is not None else 0
    return LayerwiseReading(fields=fields, total=total, active=active, vision=tower)


register(Architecture("gemma4", model_types=frozenset({"gemma4", "gemma4_text"}), read=read_gemma4))
