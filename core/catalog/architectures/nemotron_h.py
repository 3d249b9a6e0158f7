"""Nemotron-H (`nemotron_h`: Nemotron-H 8B-56B, Nemotron Nano 2, Nemotron 3 Nano).

Every layer is one block behind one norm, named by `hybrid_override_pattern`: `M` a Mamba-2 mixer,
`*` GQA attention (no rope, no biases), `-` a plain (relu2, up+down) MLP, `E` a MoE of plain experts
with a sigmoid router (weight and e_score_correction_bias) and one shared expert. So the KV cache
grows in the `*` layers only (`global_layers`), the Mamba-2 state is constant (`linear_state_mib`),
and the parameter count is summed block by block here rather than by the generic mixer+FFN layout.

Nemotron 3 Super/Ultra: LatentMoE (`moe_latent_size`: the routed experts work in that width between
a down and an up projection, the router and the shared expert at hidden), the layer list given as
`layers_block_type` (mamba / attention / moe / mlp) instead of the pattern string, and MTP blocks
(`num_nextn_predict_layers`, not in the parameter count: llama.cpp's GGUF leaves them out).
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
from core.catalog.architectures.mamba2 import mamba2_fields, mamba2_from
from core.catalog.architectures.registry import Architecture, register


def _moe_block(t: Config, mt: str, h: int) -> tuple[int, int, dict[str, Any]]:
    """(stored, active, Model fields) of one `E` layer."""
    experts = int_field(t, "n_routed_experts", mt)
    top_k = int_field(t, "num_experts_per_tok", mt)
    width = int_field(t, "moe_intermediate_size", mt)
    shared_width = opt_int(t, "moe_shared_expert_intermediate_size") or 0
    shared = opt_int(t, "n_shared_experts") or (1 if shared_width else 0)
    if shared_width % width:
        raise ConfigError(f"{mt}: shared expert width {shared_width} is not a multiple of {width}")
    latent = opt_int(t, "moe_latent_size")
    always = h * experts + experts + shared * 2 * h * shared_width  # router, correction bias, shared
    always += 2 * h * latent if latent else 0  # LatentMoE: the down and up projections
    fields = {
        "experts": experts,
        "experts_active": top_k,
        "moe_intermediate_size": width,
        "shared_experts": shared * shared_width // width or None,
        "moe_latent_size": latent,
    }
    unit = 2 * (latent or h) * width  # one expert: up and down (relu2, no gate)
    return experts * unit + always, top_k * unit + always, fields


_BLOCK_CHARS = {"mamba": "M", "attention": "*", "mlp": "-", "moe": "E"}


def _pattern(t: Config, mt: str) -> str:
    """`hybrid_override_pattern`, or the same read from `layers_block_type` (Nemotron 3 Ultra)."""
    pattern = t.get("hybrid_override_pattern")
    kinds = t.get("layers_block_type")
    if pattern is None and isinstance(kinds, list):
        if any(kind not in _BLOCK_CHARS for kind in kinds):
            raise ConfigError(f"{mt}: layers_block_type holds kinds other than {sorted(_BLOCK_CHARS)}")
        pattern = "".join(_BLOCK_CHARS[kind] for kind in kinds)
    if not isinstance(pattern, str):
        raise ConfigError(f"{mt}: config.json has no hybrid_override_pattern or layers_block_type")
    return pattern


def read_nemotron_h(t: Config, mt: str) -> LayerwiseReading:
    pattern = _pattern(t, mt)
    h = int_field(t, "hidden_size", mt)
    layers = opt_int(t, "num_hidden_layers") or len(pattern)
    if len(pattern) != layers or set(pattern) - set("M*-E"):
        raise ConfigError(f"{mt}: hybrid_override_pattern {pattern!r} is not {layers} of M * - E")
    heads, vocab = int_field(t, "num_attention_heads", mt), int_field(t, "vocab_size", mt)
    kv = opt_int(t, "num_key_value_heads") or heads
    dim = opt_int(t, "head_dim") or opt_int(t, "attention_head_dim") or h // heads
    bias = bool(t.get("attention_bias"))
    attention = 2 * h * heads * dim + 2 * h * kv * dim + ((heads + 2 * kv) * dim + h if bias else 0)
    mixer = mamba2_from(t, mt, h)
    fields: dict[str, Any] = {}
    moe_total = moe_active = 0
    if "E" in pattern:
        moe_total, moe_active, fields = _moe_block(t, mt, h)
    mlp = 2 * h * int_field(t, "intermediate_size", mt) if "-" in pattern else 0
    stored = {"M": mixer.params(), "*": attention, "-": mlp, "E": moe_total}
    used = dict(stored, E=moe_active)
    tied = bool(t.get("tie_word_embeddings", False))
    head = vocab * h * (1 if tied else 2) + h  # embeddings (+ output head) + final norm
    total = head + sum(stored[c] + h for c in pattern)
    active = head + sum(used[c] + h for c in pattern)
    fields.update(
        shape_fields(layers, h, heads, kv, dim, vocab, int_field(t, "max_position_embeddings", mt)),
        tied_embeddings=tied,
        attn_bias=bias,
        attention="linear_hybrid",
        global_layers=pattern.count("*"),
        layer_pattern=pattern,
        ffn_kind="plain",
        intermediate_size=opt_int(t, "intermediate_size") if "-" in pattern else None,
        **mamba2_fields(mixer, pattern.count("M")),
    )
    fields["rope_scaled_context"] = fields["max_context"]
    mtp = opt_int(t, "num_nextn_predict_layers") or 0
    return LayerwiseReading(fields=fields, total=total, active=active, extra={"mtp_layers": mtp})


register(
    Architecture(
        "nemotron_h",
        model_types=frozenset({"nemotron_h"}),
        read=lambda text, vision, mt: read_nemotron_h(text, mt),
    )
)
