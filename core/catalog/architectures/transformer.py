"""The generic layout: every layer one token mixer (attention) + one FFN (dense or MoE).

What most config.json families are (Llama, Mistral, Qwen 2/3, Gemma 2/3, Phi-3, Cohere, OLMo 2,
Granite, Seed-OSS, InternLM3, GLM-4, their MoE siblings, Mixtral, MiniMax-M2, gpt-oss): read into
the Model's shape fields, then counted layer by layer here. The MLA (`mla`) and linear-hybrid
(`linear_hybrid`) readers reuse these pieces; a layer's mixer is counted by the sizing of the
model's attention kind (`Architecture.mixer_params`), plain GQA when it has none. Small per-family
tensors the schema leaves out (q/k norms, biases, sinks, routing biases) are keyed on model_type.

Registered here: the `dense` and `moe` readers and the plain `full` attention sizing (every other
kind's default); `read_moe` is also what `llama4` reads its normalised config with.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from core.catalog.architectures.fields import (
    Config,
    ConfigError,
    LayerwiseReading,
    int_field,
    opt_int,
)
from core.catalog.architectures.hunyuan import HUNYUAN_TYPES
from core.catalog.architectures.parts import full_kv_shape, gqa_tensors
from core.catalog.architectures.registry import Architecture, Reader, family_of, register, sizing_for
from core.catalog.model import Model

# model_type -> reader family. The text model_type of a wrapper (text_config.model_type) is
# looked up too, so qwen3_vl_text / gemma3_text need no entry of their own.
_DENSE = frozenset(
    {
        "llama",
        "mistral",
        "qwen2",
        "qwen3",
        "qwen2_5_vl",
        "qwen2_vl",
        "qwen3_vl",
        "gemma2",
        "gemma3",
        "gemma3_text",
        "phi3",
        "cohere",
        "cohere2",
        "granite",
        # Seed-OSS: llama layout with q/k/v biases (attention_bias) and an optional o_proj bias.
        "seed_oss",
        # InternLM3: llama layout; `bias` would put biases on o_proj and the MLP (refused below).
        "internlm3",
        # GLM-4-0414 (Glm4ForCausalLM): q/k/v bias, fused gate_up MLP, two extra "sandwich" norms per
        # layer (post_self_attn_layernorm, post_mlp_layernorm); partial rotary changes neither count nor KV.
        "glm4",
    }
)
_MOE = frozenset(
    {
        "qwen2_moe",
        "qwen3_moe",
        "qwen3_vl_moe",
        "mixtral",
        "glm4_moe",
        "minimax_m2",
        "gpt_oss",
    }
)
# Families whose q/k/v projections always carry a bias (no config key says so).
_ALWAYS_QKV_BIAS = {"qwen2", "qwen2_5_vl", "qwen2_vl", "qwen2_moe"}
_GEMMA = {"gemma2", "gemma3", "gemma3_text"}
# Per-head q/k RMSNorm in every attention layer: always (Qwen3, Gemma 3) or when use_qk_norm says so.
_QK_NORM = {"qwen3", "qwen3_moe", "qwen3_vl", "qwen3_vl_moe", "gemma3", "gemma3_text"}
_QK_NORM_IF_FLAGGED = {"glm4_moe", *HUNYUAN_TYPES}

_int, _opt_int = int_field, opt_int
FieldsReader = Callable[[Config, str], dict[str, Any]]

# ---------------------------------------------------------------- shared pieces


def _context(t: Config, mt: str) -> tuple[int, int]:
    """(native context, longest context the config's rope scaling reaches)."""
    native = _int(t, "max_position_embeddings", mt)
    scaling = t.get("rope_scaling") or {}
    factor, original = scaling.get("factor"), scaling.get("original_max_position_embeddings")
    if isinstance(factor, int | float) and isinstance(original, int):
        return native, max(native, int(original * factor))
    return native, native


def _tied(t: Config, mt: str) -> bool:
    value = t.get("tie_word_embeddings")
    if isinstance(value, bool):
        return value
    # transformers' own defaults: Gemma configs tie, the others do not.
    return mt in _GEMMA


def _gqa(t: Config, mt: str) -> dict[str, Any]:
    hidden = _int(t, "hidden_size", mt)
    heads = _int(t, "num_attention_heads", mt)
    # transformers' default when the key is absent: one KV head per query head (plain MHA).
    kv_heads = _opt_int(t, "num_key_value_heads", heads)
    head_dim = _opt_int(t, "head_dim") or hidden // heads
    bias = bool(t.get("attention_bias") or t.get("qkv_bias")) or mt in _ALWAYS_QKV_BIAS
    if mt == "glm4":
        bias = bool(t.get("attention_bias", True))  # Glm4Config's default
    native, scaled = _context(t, mt)
    return {
        "layers": _int(t, "num_hidden_layers", mt),
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "vocab": _int(t, "vocab_size", mt),
        "max_context": native,
        "rope_scaled_context": scaled,
        "tied_embeddings": _tied(t, mt),
        "attn_bias": bias,
    }


def _sliding(t: Config, mt: str, layers: int) -> dict[str, Any]:
    """swa_hybrid fields from layer_types (or Gemma's sliding_window_pattern); {} when all global."""
    window = _opt_int(t, "sliding_window")
    types = t.get("layer_types")
    if isinstance(types, list) and types:
        n_full = sum(1 for kind in types if kind == "full_attention")
    elif mt in {"gemma3", "gemma3_text"}:
        pattern = _opt_int(t, "sliding_window_pattern") or _opt_int(t, "_sliding_window_pattern")
        if not pattern:
            raise ConfigError(f"{mt}: config.json has no 'layer_types' or 'sliding_window_pattern'")
        n_full = layers // pattern
    elif mt == "gemma2":
        n_full = layers // 2  # Gemma 2 alternates local and global layers
    elif mt == "cohere2":
        pattern = _int(t, "sliding_window_pattern", mt)
        n_full = layers // pattern
    else:
        return {}
    if n_full >= layers or not window:
        return {}
    return {"attention": "swa_hybrid", "sliding_window": window, "global_layers": n_full}


# ---------------------------------------------------------------- family readers


def _dense_fields(t: Config, mt: str) -> dict[str, Any]:
    if mt == "internlm3" and t.get("bias"):
        raise ConfigError(f"{mt}: bias (o_proj and MLP biases) is not representable")
    fields = _gqa(t, mt)
    fields["intermediate_size"] = _int(t, "intermediate_size", mt)
    fields.update(_sliding(t, mt, fields["layers"]))
    return fields


def _moe_counts(t: Config, mt: str) -> tuple[int, int]:
    for experts_key in ("num_experts", "n_routed_experts", "num_local_experts"):
        experts = _opt_int(t, experts_key)
        if experts:
            break
    else:
        raise ConfigError(
            f"{mt}: config.json has no 'num_experts' / 'n_routed_experts' / 'num_local_experts'"
        )
    active = _opt_int(t, "num_experts_per_tok") or _opt_int(t, "experts_per_token")
    if not active:
        raise ConfigError(f"{mt}: config.json has no 'num_experts_per_tok'")
    return experts, active


def _shared_experts(t: Config, mt: str, expert_width: int) -> int | None:
    """Shared experts as a count of expert-wide units (the schema's unit)."""
    count = _opt_int(t, "n_shared_experts")
    if count is not None:
        return count or None
    width = _opt_int(t, "shared_expert_intermediate_size") or _opt_int(t, "shared_intermediate_size") or 0
    if not width:
        return None
    if width % expert_width:
        raise ConfigError(f"{mt}: shared expert width {width} is not a multiple of the expert width")
    return width // expert_width


def _moe_fields(t: Config, mt: str) -> dict[str, Any]:
    fields = _gqa(t, mt)
    experts, active = _moe_counts(t, mt)
    if mt in {"mixtral", "gpt_oss", "minimax_m2", "phimoe", "olmoe"}:  # intermediate_size: the expert width
        width = _int(t, "intermediate_size", mt)
    else:
        width = _int(t, "moe_intermediate_size", mt)
    fields.update(experts=experts, experts_active=active, moe_intermediate_size=width)
    fields["shared_experts"] = _shared_experts(t, mt, width)
    fields["intermediate_size"] = _opt_int(t, "intermediate_size") or width
    dense = _opt_int(t, "first_k_dense_replace") or 0
    sparse_step = _opt_int(t, "decoder_sparse_step") or 1
    if t.get("mlp_only_layers"):
        raise ConfigError(f"{mt}: mlp_only_layers {t['mlp_only_layers']} is not representable")
    fields.update(dense_layers=dense or None, moe_layer_step=sparse_step)
    fields.update(_sliding(t, mt, fields["layers"]))
    return fields


# ---------------------------------------------------------------- parameter count


def gqa_params(m: Model) -> int:
    """q/k/v/o of one softmax-attention layer (an output-gated q twice as wide; q/k/v biases)."""
    h = m.hidden
    q_dim, kv_dim = m.heads * m.head_dim, m.kv_heads * m.head_dim
    q = h * q_dim * (2 if m.attn_output_gate else 1)
    bias = q_dim + 2 * kv_dim if m.attn_bias else 0
    return q + 2 * h * kv_dim + q_dim * h + bias


def _gqa_mixer_params(m: Model, full: bool) -> int:
    return gqa_params(m)


def _is_full(m: Model, layer: int) -> bool:
    if m.attention != "linear_hybrid" or not m.global_layers:
        return True
    period = m.layers // m.global_layers
    return layer % period == period - 1


def _ffn_params(m: Model, layer: int) -> tuple[int, int]:
    """(stored, active) FFN parameters of one layer."""
    unit = (3 if m.ffn_kind == "gated" else 2) * m.hidden
    step = m.moe_layer_step
    if m.is_moe and layer >= (m.dense_layers or 0) and layer % step == step - 1:
        width = m.moe_intermediate_size or 0
        always = (m.shared_experts or 0) * unit * width + m.hidden * (m.experts or 0)
        return (m.experts or 0) * unit * width + always, (m.experts_active or 0) * unit * width + always
    dense = unit * (m.intermediate_size or 0)
    return dense, dense


def _layer_extras(t: Config, mt: str, m: Model, full: bool) -> int:
    """Small per-layer tensors the schema leaves out: extra norms, q/k norms, biases, sinks."""
    h = m.hidden
    extra = 0
    if mt in _GEMMA or mt == "glm4":
        extra += 2 * h  # Gemma's pre/post feed-forward norms, GLM-4's post-attention/post-MLP norms
    if full and m.attention != "mla":
        # Gated-DeltaNet hybrids (Qwen3-Next, Qwen3.5) norm q and k in their attention layers.
        gdn = m.linear_kind == "gated_deltanet"
        if mt in _QK_NORM or gdn or (t.get("use_qk_norm") and mt in _QK_NORM_IF_FLAGGED):
            extra += 2 * m.head_dim
        if t.get("attention_out_bias"):
            extra += h  # o_proj bias (Seed-OSS names it apart from the q/k/v one)
        if mt == "minimax_m2" and t.get("use_qk_norm"):
            extra += (m.heads + m.kv_heads) * m.head_dim
        if mt == "gpt_oss":
            extra += h + m.heads  # o_proj bias, attention sinks
    return extra


def _moe_extras(t: Config, mt: str, m: Model) -> int:
    """Per-MoE-layer tensors beside experts and router: routing bias, expert biases, shared gate."""
    experts = m.experts or 0
    if mt == "gpt_oss":  # router bias, gate_up and down biases of every expert
        return experts + experts * (2 * (m.moe_intermediate_size or 0) + m.hidden)
    extra = 0
    if t.get("topk_method") == "noaux_tc" or t.get("use_routing_bias") or mt == "glm4_moe":
        extra += experts  # e_score_correction_bias
    if mt in {"qwen2_moe", "qwen3_next", "qwen3_5_moe"} and m.shared_experts:
        extra += m.hidden  # shared_expert_gate
    return extra


def _decoder_params(t: Config, mt: str, m: Model) -> tuple[int, int, int]:
    """(stored, active, one MoE full-attention layer) parameters of the decoder."""
    h = m.hidden
    family = family_of(mt)
    own_layer = family.layer_extra if family is not None else None
    head = family.head_extra(t, m) if family is not None and family.head_extra is not None else 0
    total = active = m.vocab * h * (1 if m.tied_embeddings else 2) + h + head  # + final norm
    last_layer = 0
    mixer_params = sizing_for(m.attention).mixer_params or _gqa_mixer_params
    for layer in range(m.layers):
        full = _is_full(m, layer)
        mixer = mixer_params(m, full) + 2 * h + _layer_extras(t, mt, m, full)
        mixer += own_layer(t, m, full) if own_layer is not None else 0
        stored, used = _ffn_params(m, layer)
        if m.is_moe and stored != used:
            moe = _moe_extras(t, mt, m)
            stored, used = stored + moe, used + moe
        total += mixer + stored
        active += mixer + used
        if full:
            last_layer = mixer + stored
    return total, active, last_layer


def _mtp_layer_count(t: Config, mt: str) -> int:
    if mt == "minimax_m2":
        return 0  # configured (num_mtp_modules) but not shipped; see _mtp_params
    n = _opt_int(t, "num_nextn_predict_layers")
    if n is None:
        n = _opt_int(t, "mtp_num_hidden_layers")
    if n is None and mt == "qwen3_next":
        # Qwen3-Next's config has no MTP key, but its checkpoint ships one MTP layer (the one
        # vLLM and SGLang load for speculative decoding).
        n = 1
    return n or 0


def _mtp_params(t: Config, mt: str, m: Model, layer_params: int) -> int:
    """NextN / MTP modules as the checkpoints store them."""
    h = m.hidden
    if m.linear_kind == "gated_deltanet":  # Qwen3-Next / Qwen3.5
        n = _mtp_layer_count(t, mt)
        return n * (layer_params + 2 * h * h + 3 * h)  # fc, two pre-fc norms, final norm
    n = _mtp_layer_count(t, mt)
    if mt == "minimax_m2":
        # The released MiniMax-M2.x checkpoints leave the MTP modules out: their safetensors total
        # is the decoder alone (228,703,644,928 stored elements for M2.7 = decoder + FP8 scales).
        return 0
    if not n:
        return 0
    # DeepSeek-style NextN block: eh_proj, enorm, hnorm, shared_head norm; DeepSeek and Kimi also
    # store their own copy of the embedding and output head in it.
    copies = 2 * m.vocab * h if mt in {"deepseek_v3", "deepseek_v32", "kimi_k2", "kimi_k25"} else 0
    return n * (layer_params + 2 * h * h + 3 * h + copies)


# ---------------------------------------------------------------- vision towers


def _vit_block(hidden: int, inter: int, gated: bool, norms: int) -> int:
    mlp = (3 if gated else 2) * hidden * inter + (2 if gated else 1) * inter + hidden
    return 4 * hidden * hidden + 4 * hidden + mlp + norms


def _qwen25_vision(mt: str, v: Config) -> int:
    """Qwen2.5-VL: SwiGLU ViT blocks with RMSNorm, a 2x2 patch merger into the text width."""
    hidden, inter, depth = _int(v, "hidden_size", mt), _int(v, "intermediate_size", mt), _int(v, "depth", mt)
    patch = 3 * _int(v, "temporal_patch_size", mt) * _int(v, "patch_size", mt) ** 2 * hidden
    merged = hidden * _int(v, "spatial_merge_size", mt) ** 2
    out = _int(v, "out_hidden_size", mt)
    merger = hidden + merged * merged + merged + merged * out + out
    return patch + depth * _vit_block(hidden, inter, gated=True, norms=2 * hidden) + merger


def _qwen3_vision(mt: str, v: Config) -> int:
    """Qwen3-VL / Qwen3.5: plain-MLP ViT blocks with LayerNorm, learned positions, the merger and
    one extra merger per deepstack layer (normed after the 2x2 shuffle)."""
    hidden, inter, depth = _int(v, "hidden_size", mt), _int(v, "intermediate_size", mt), _int(v, "depth", mt)
    patch = 3 * _int(v, "temporal_patch_size", mt) * _int(v, "patch_size", mt) ** 2 * hidden + hidden
    positions = _int(v, "num_position_embeddings", mt) * hidden
    merged = hidden * _int(v, "spatial_merge_size", mt) ** 2
    out = _int(v, "out_hidden_size", mt)
    projection = merged * merged + merged + merged * out + out
    deepstack = len(v.get("deepstack_visual_indexes") or [])
    blocks = depth * _vit_block(hidden, inter, gated=False, norms=4 * hidden)
    return patch + positions + blocks + 2 * hidden + projection + deepstack * (2 * merged + projection)


def _vision_params(mt: str, v: Config) -> int | None:
    """Vision tower + merger; None for a family whose tower layout is not known here."""
    if mt == "qwen2_5_vl":
        return _qwen25_vision(mt, v)
    if mt in {"qwen3_vl", "qwen3_vl_moe", "qwen3_5", "qwen3_5_moe"}:
        return _qwen3_vision(mt, v)
    return None


# ---------------------------------------------------------------- entry point
def generic_reader(fields_of: FieldsReader) -> Reader:
    """A reader that takes the Model's fields from `fields_of` and counts the generic layout."""

    def read(text: Config, vision: Config | None, mt: str) -> LayerwiseReading:
        fields = fields_of(text, mt)
        probe = placeholder(fields, "", "", "")
        total, active, layer = _decoder_params(text, mt, probe)
        return LayerwiseReading(
            fields=fields,
            total=total,
            active=active,
            vision=_vision_params(mt, vision) if vision is not None else 0,
            mtp=_mtp_params(text, mt, probe, layer),
            extra={"mtp_layers": _mtp_layer_count(text, mt)},
        )

    return read


def placeholder(fields: dict[str, Any], model_id: str, repo: str, source: str) -> Model:
    name = repo.split("/")[-1] if repo else model_id
    return Model(
        id=model_id or name.lower(),
        family="",
        name=name,
        aliases=(),
        params_b=1.0,
        active_params_b=1.0,
        hf_repo=repo,
        source=source,
        **{k: v for k, v in fields.items() if v is not None},
    )


register(Architecture("dense", model_types=_DENSE, read=generic_reader(_dense_fields)))
read_moe = generic_reader(_moe_fields)
register(Architecture("moe", model_types=_MOE, read=read_moe))
# Plain softmax attention (and Mistral-7B-v0.1's all-layers window that llama.cpp runs as plain
# attention): K and V in every layer, q/k/v/o tensors.
register(
    Architecture(
        "full",
        attention=frozenset({"full"}),
        kv_shape=full_kv_shape,
        mixer=gqa_tensors,
        mixer_params=_gqa_mixer_params,
    )
)
