"""Linear-attention hybrids (`linear_hybrid`): most layers a recurrent mixer with a constant state,
every n-th layer softmax attention whose K/V cache grows.

Read here from config.json: Qwen3-Next / Qwen3.5 (`qwen3_next`, `qwen3_5`, `qwen3_5_moe`), Gated
DeltaNet layers (q/k/v/z in one projection, beta/alpha, a short conv, A_log, dt_bias, a gated
norm, out_proj) with one full-attention layer per `full_attention_interval`, the attention output
gated through a doubled q projection. Nemotron-H and Granite 4.0-H (`nemotron_h`,
`granite_hybrid`) are read by their own modules into the same attention kind with a
`layer_pattern` of Mamba-2 / attention / FFN blocks; MiniMax-M1's lightning layers are catalog rows.

Sized here for every `linear_hybrid` model: the cache grows in the full-attention layers (the "*"
layers of a pattern) only, plus the recurrent state (`linear_state_mib`, f32 as llama.cpp allocates
it); the tensors are the linear mixers as llama.cpp names them, or, with a `layer_pattern`, built
block by block.
"""

from __future__ import annotations

from typing import Any

from core.catalog.architectures.fields import Config, ConfigError
from core.catalog.architectures.mamba2 import mamba2_tensor_shape, mamba2_tensors
from core.catalog.architectures.parts import (
    MIB,
    KvShape,
    Tensor,
    expert_tensors,
    ffn_tensors,
    gqa_tensors,
    head_tensors,
    is_global,
    opt,
    params,
    round64,
)
from core.catalog.architectures.registry import Architecture, register
from core.catalog.architectures.transformer import (
    _dense_fields,
    _int,
    _moe_fields,
    generic_reader,
    gqa_params,
)
from core.catalog.model import Model

LINEAR_HYBRID_TYPES = frozenset({"qwen3_next", "qwen3_5", "qwen3_5_moe"})

# ---------------------------------------------------------------- reading config.json


def _gated_deltanet_state_mib(
    layers: int, k_heads: int, v_heads: int, dk: int, dv: int, kernel: int
) -> float:
    """Per-sequence recurrent state of the linear layers in f32, as llama.cpp allocates it."""
    ssm = v_heads * dk * dv
    conv = (kernel - 1) * (2 * k_heads * dk + v_heads * dv)
    return layers * (ssm + conv) * 4 / 2**20


def _linear_fields(t: Config, mt: str) -> dict[str, Any]:
    is_moe = any(t.get(key) for key in ("num_experts", "n_routed_experts"))
    fields = _moe_fields(t, mt) if is_moe else _dense_fields(t, mt)
    layers = fields["layers"]
    types = t.get("layer_types")
    if isinstance(types, list) and types:
        n_full = sum(1 for kind in types if kind == "full_attention")
        interval = layers // max(n_full, 1)
        expected = [
            "full_attention" if i % interval == interval - 1 else "linear_attention" for i in range(layers)
        ]
        if list(types) != expected:
            raise ConfigError(f"{mt}: layer_types are not one full-attention layer per {interval}")
    else:
        interval = _int(t, "full_attention_interval", mt)
        n_full = layers // interval
    k_heads, v_heads = _int(t, "linear_num_key_heads", mt), _int(t, "linear_num_value_heads", mt)
    dk, dv = _int(t, "linear_key_head_dim", mt), _int(t, "linear_value_head_dim", mt)
    kernel = _int(t, "linear_conv_kernel_dim", mt)
    fields.update(
        attention="linear_hybrid",
        global_layers=n_full,
        linear_kind="gated_deltanet",
        linear_key_heads=k_heads,
        linear_value_heads=v_heads,
        linear_key_head_dim=dk,
        linear_value_head_dim=dv,
        linear_conv_kernel=kernel,
        linear_state_mib=_gated_deltanet_state_mib(layers - n_full, k_heads, v_heads, dk, dv, kernel),
        # Qwen3-Next / 3.5 gate the attention output through a doubled q projection.
        attn_output_gate=bool(t.get("attn_output_gate", True)),
        sliding_window=None,
    )
    return fields


def _mixer_params(m: Model, full: bool) -> int:
    """One layer's Gated DeltaNet mixer (the full-attention layers: GQA with the output gate)."""
    if full:
        return gqa_params(m)
    h = m.hidden
    nk, nv = m.linear_key_heads or 0, m.linear_value_heads or 0
    dk, dv, kernel = m.linear_key_head_dim or 0, m.linear_value_head_dim or 0, m.linear_conv_kernel or 0
    in_proj = h * (2 * nk * dk + 2 * nv * dv) + h * 2 * nv  # qkvz + beta/alpha
    conv = (2 * nk * dk + nv * dv) * kernel
    return in_proj + conv + 2 * nv + dv + nv * dv * h  # A_log, dt_bias, norm, out_proj


# ---------------------------------------------------------------- sizing


def _kv_shape(model: Model) -> KvShape:
    per_layer = 2 * model.kv_heads * model.head_dim  # K and V
    full = model.global_layers or model.layers
    if model.layer_pattern:
        # Block-per-layer hybrids (Nemotron-H): only the "*" layers cache K/V, possibly none.
        full = model.layer_pattern.count("*")
    return KvShape(per_layer * full, 0, 0, (model.linear_state_mib or 0.0) * MIB)


def _mixer(model: Model, layer: int) -> list[Tensor] | None:
    """The layer's mixer: softmax attention in the global layers, else the linear one (None when
    its shapes are unknown)."""
    if is_global(model, layer):
        return gqa_tensors(model, layer)
    return _linear_attention(model, layer)


def _linear_attention(model: Model, layer: int) -> list[Tensor] | None:
    """Linear-attention layer tensors as llama.cpp names them; None when the shapes are unknown."""
    h = model.hidden
    kind = opt(model, "linear_kind") or ""
    if kind == "gated_deltanet":
        kh, kd = opt(model, "linear_key_heads"), opt(model, "linear_key_head_dim")
        vh, vd = opt(model, "linear_value_heads"), opt(model, "linear_value_head_dim")
        if not (kh and kd and vh and vd):
            return None
        key_dim, value_dim = kh * kd, vh * vd
        conv_dim = 2 * key_dim + value_dim
        kernel = opt(model, "linear_conv_kernel") or 4
        # llama.cpp qwen3next: attn_qkv (an attn_v-like category for the quant rules), attn_gate (z),
        # ssm_ba, ssm_conv1d (never quantized), ssm_a/ssm_dt/ssm_norm (1-D), ssm_out.
        return [
            Tensor("attn_qkv", "attn_v", layer, h, conv_dim),
            Tensor("attn_gate", "other", layer, h, value_dim),
            Tensor("ssm_ba", "other", layer, h, 2 * vh),
            Tensor("ssm_conv1d", "other", layer, kernel * conv_dim, 1, one_d=True),
            Tensor("ssm_a_dt_norm", "other", layer, 2 * vh + vd, 1, one_d=True),
            Tensor("ssm_out", "other", layer, value_dim, h),
        ]
    if kind == "lightning":
        # MiniMax-M1 lightning attention: fused qkv over all heads, an output gate, out projection.
        q_dim = model.heads * model.head_dim
        return [
            Tensor("attn_qkv", "attn_v", layer, h, 3 * q_dim),
            Tensor("attn_gate", "other", layer, h, q_dim),
            Tensor("attn_output", "attn_output", layer, q_dim, h),
            Tensor("attn_norm_linear", "other", layer, q_dim, 1, one_d=True),
        ]
    return None


def _add_linear_remainder(
    model: Model, head: list[Tensor], layers: list[list[Tensor]], derived: list[str]
) -> None:
    """Linear-attention shapes not in the catalog: the linear layers were modelled as softmax
    attention; add what params_b leaves over to them."""
    h, target = model.hidden, model.params_b * 1e9
    rest = target - params(head) - sum(params(t) for t in layers)
    linear_ids = [i for i in range(model.layers) if not is_global(model, i)]
    if linear_ids and rest > 0.005 * target:
        width = round64(rest / (len(linear_ids) * h))
        derived.append(f"linear-attention extra {width}x{h} per layer (from params_b)")
        for i in linear_ids:
            layers[i].append(Tensor("ssm_proj", "other", i, h, width))


# Mamba2Config's defaults (transformers), for a pattern model whose catalog entry lacks a shape.
def _pattern_width(model: Model, char: str, derived: list[str]) -> int:
    """FFN width of the pattern's "-" (dense) or "E" (expert) layers; when the entry lacks the
    expert width, what params_b - active_params_b leaves over (as the mixer+FFN layout derives it)."""
    given = model.moe_intermediate_size if char == "E" else model.intermediate_size
    if given:
        return int(given)
    if char == "-":
        raise ValueError(f"{model.id}: layer_pattern has dense MLP layers but no intermediate_size")
    n = (opt(model, "layer_ffn") or model.layer_pattern).count(char)
    spread = (model.params_b - model.active_params_b) * 1e9
    experts, k = int(model.experts or 1), int(model.experts_active or 1)
    width = round64(spread / max(n * (experts - k) * 2 * model.hidden, 1))
    derived.append(f"moe_intermediate_size={width} (from params_b - active_params_b)")
    return width


def _routed_experts(model: Model, layer: int, width: int, n: int, gated: bool) -> list[Tensor]:
    """One layer's router and routed experts. LatentMoE (Nemotron 3 Super / Ultra,
    `moe_latent_size`): the router reads the hidden width, the experts the latent one, between the
    layer's ffn_latent_down (hidden -> latent) and ffn_latent_up (latent -> hidden), which every token
    reads whole; llama.cpp's names, and neither matches its ffn_down / ffn_up quant rules."""
    h, latent = model.hidden, opt(model, "moe_latent_size")
    if not latent:
        return expert_tensors(layer, h, width, n, gated)
    experts = [t for t in expert_tensors(layer, int(latent), width, n, gated) if not t.router]
    return [
        Tensor("ffn_gate_inp", "other", layer, h, n, router=True),
        Tensor("ffn_latent_down", "other", layer, h, int(latent)),
        *experts,
        Tensor("ffn_latent_up", "other", layer, int(latent), h),
    ]


def _pattern_tensors(model: Model, derived: list[str]) -> list[Tensor] | None:
    """A single-block-per-layer hybrid (Nemotron-H): each layer one norm and the block its pattern
    character names. Nemotron-H's MLPs and experts are plain (relu2: up, down); the MoE has a sigmoid
    router with a correction bias (ffn_exp_probs_b) and a shared expert. None without a pattern
    (the generic mixer + FFN layout)."""
    if not opt(model, "layer_pattern"):
        return None
    h, pattern = model.hidden, model.layer_pattern
    ffns = opt(model, "layer_ffn") or ""
    gated = (opt(model, "ffn_kind") or "gated") == "gated"
    mamba = mamba2_tensor_shape(model, derived) if "M" in pattern else (0, 0, 0, 0, 0)
    dense_ff = _pattern_width(model, "-", derived) if "-" in pattern + ffns else 0
    moe_ff = _pattern_width(model, "E", derived) if "E" in pattern + ffns else 0
    n_exp = int(model.experts or 0)
    shared_ff = int(model.shared_experts or 0) * moe_ff
    out = head_tensors(model)
    for i, char in enumerate(pattern):
        out.append(Tensor("attn_norm", "other", i, h, 1, one_d=True))
        if ffns:
            # Granite 4.0-H: the mixer, then ffn_norm and the layer's FFN (router without a bias).
            out += mamba2_tensors(h, i, mamba) if char == "M" else gqa_tensors(model, i)
            out.append(Tensor("ffn_norm", "other", i, h, 1, one_d=True))
            if ffns[i] == "E":
                out += expert_tensors(i, h, moe_ff, n_exp, gated)
            out += ffn_tensors(
                i, h, shared_ff if ffns[i] == "E" else dense_ff, "_shexp" if ffns[i] == "E" else "", gated
            )
            continue
        if char == "M":
            out += mamba2_tensors(h, i, mamba)
        elif char == "*":
            out += gqa_tensors(model, i)
        elif char == "-":
            out += ffn_tensors(i, h, dense_ff, gated=gated)
        elif char == "E":
            out += _routed_experts(model, i, moe_ff, n_exp, gated)
            out.append(Tensor("ffn_exp_probs_b", "other", i, n_exp, 1, one_d=True))
            out += ffn_tensors(i, h, shared_ff, "_shexp", gated)
        else:
            raise ValueError(f"{model.id}: layer_pattern character {char!r} is not one of M * - E")
    return out


register(
    Architecture(
        "linear_hybrid",
        model_types=LINEAR_HYBRID_TYPES,
        attention=frozenset({"linear_hybrid"}),
        read=generic_reader(_linear_fields),
        kv_shape=_kv_shape,
        mixer=_mixer,
        tensors=_pattern_tensors,
        rest=_add_linear_remainder,
        mixer_params=_mixer_params,
    )
)
