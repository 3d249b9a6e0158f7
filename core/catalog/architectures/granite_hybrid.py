"""IBM Granite 4.0 (`granitemoehybrid`: granite-4.0-h-small / h-tiny / h-micro, granite-4.0-micro).

What transformers' modeling_granitemoehybrid builds per layer: an RMSNorm, the mixer `layer_types[i]`
names ("mamba": a Mamba-2 mixer of mamba_n_heads x mamba_d_head with mamba_n_groups B/C groups of
mamba_d_state; "attention": GQA q/k/v/o, no rope in the hybrids, biases only with attention_bias),
a second RMSNorm, then the FFN: `shared_mlp` (SwiGLU of shared_intermediate_size, always there) plus,
when num_local_experts > 0, `block_sparse_moe` (a bias-free router and experts of
intermediate_size, SwiGLU). So unlike Nemotron-H every layer is a mixer *and* an FFN: the mixers go
to `Model.layer_pattern` ("M" / "*") and the FFNs to `Model.layer_ffn` ("E" experts + shared, "-"
dense), the KV cache grows in the "*" layers only and the Mamba-2 state is constant.

A config with no Mamba layer (granite-4.0-micro) is a plain dense or MoE transformer and is read
into the generic layout (no pattern).
"""

from __future__ import annotations

from typing import Any

from core.catalog.architectures.fields import (
    Config,
    ConfigError,
    LayerwiseReading,
    int_field,
    opt_int,
    shape_fields,
)
from core.catalog.architectures.mamba2 import Mamba2, mamba2_fields
from core.catalog.architectures.registry import Architecture, register

_MIXER = {"mamba": "M", "attention": "*"}


def _pattern(t: Config, mt: str, layers: int) -> str:
    types = t.get("layer_types")
    if not isinstance(types, list) or len(types) != layers or set(types) - set(_MIXER):
        raise ConfigError(f"{mt}: layer_types {types!r} is not {layers} of 'mamba' / 'attention'")
    return "".join(_MIXER[kind] for kind in types)


def _mamba(t: Config, mt: str, h: int) -> Mamba2:
    heads, head_dim = int_field(t, "mamba_n_heads", mt), int_field(t, "mamba_d_head", mt)
    expand = opt_int(t, "mamba_expand")
    if expand and heads * head_dim != expand * h:
        raise ConfigError(f"{mt}: mamba_n_heads x mamba_d_head != mamba_expand x hidden_size")
    return Mamba2(
        hidden=h,
        heads=heads,
        head_dim=head_dim,
        groups=opt_int(t, "mamba_n_groups") or 1,
        state=int_field(t, "mamba_d_state", mt),
        kernel=opt_int(t, "mamba_d_conv") or 4,
        conv_bias=bool(t.get("mamba_conv_bias", True)),
        proj_bias=bool(t.get("mamba_proj_bias", False)),
    )


def _ffn(t: Config, mt: str, h: int) -> tuple[int, int, dict[str, Any]]:
    """(stored, active, Model fields) of one layer's FFN: shared MLP (+ router and experts)."""
    shared = int_field(t, "shared_intermediate_size", mt)
    experts = opt_int(t, "num_local_experts") or 0
    mlp = 3 * h * shared
    if not experts:
        return mlp, mlp, {"intermediate_size": shared}
    top_k, width = int_field(t, "num_experts_per_tok", mt), int_field(t, "intermediate_size", mt)
    if shared % width:
        raise ConfigError(f"{mt}: shared_intermediate_size {shared} is not a multiple of {width}")
    always = mlp + h * experts  # shared MLP + router
    fields = {
        "experts": experts,
        "experts_active": top_k,
        "moe_intermediate_size": width,
        "shared_experts": shared // width,
        "intermediate_size": None,
    }
    return always + experts * 3 * h * width, always + top_k * 3 * h * width, fields


def read_granite_hybrid(t: Config, mt: str) -> LayerwiseReading:
    h, layers = int_field(t, "hidden_size", mt), int_field(t, "num_hidden_layers", mt)
    heads, vocab = int_field(t, "num_attention_heads", mt), int_field(t, "vocab_size", mt)
    kv = opt_int(t, "num_key_value_heads") or heads
    dim = h // heads
    bias = bool(t.get("attention_bias"))
    pattern = _pattern(t, mt, layers)
    attention = 2 * h * heads * dim + 2 * h * kv * dim + ((heads + 2 * kv) * dim + h if bias else 0)
    ffn_total, ffn_active, fields = _ffn(t, mt, h)
    mixer = _mamba(t, mt, h) if "M" in pattern else None
    mixers = {"*": attention, "M": mixer.params() if mixer else 0}
    tied = bool(t.get("tie_word_embeddings", False))
    head = vocab * h * (1 if tied else 2) + h  # embeddings (+ output head) + final norm
    total = head + sum(mixers[c] + ffn_total + 2 * h for c in pattern)
    active = head + sum(mixers[c] + ffn_active + 2 * h for c in pattern)
    max_context = int_field(t, "max_position_embeddings", mt)
    fields.update(
        shape_fields(layers, h, heads, kv, dim, vocab, max_context),
        rope_scaled_context=max_context,
        tied_embeddings=tied,
        attn_bias=bias,
    )
    if mixer is not None:
        fields.update(
            attention="linear_hybrid",
            global_layers=pattern.count("*"),
            layer_pattern=pattern,
            layer_ffn=("E" if fields.get("experts") else "-") * layers,
            **mamba2_fields(mixer, pattern.count("M")),
        )
    return LayerwiseReading(fields=fields, total=total, active=active)


register(
    Architecture(
        "granite_hybrid",
        model_types=frozenset({"granitemoehybrid"}),
        read=lambda text, vision, mt: read_granite_hybrid(text, mt),
    )
)
