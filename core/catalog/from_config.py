"""A Hugging Face `config.json` -> the catalog's `Model` (architecture fields) plus a parameter count.

Only families whose layer layout the `Model` schema can describe are read; anything else is a
`ConfigError` naming the `model_type` or the missing field -- a wrong architecture silently read
would size the wrong model. Metadata a config does not carry (aliases, release month, popularity,
GGUF repos) is the caller's: `models sync` keeps what the catalog entry already has.

The count is the decoder the catalog sizes (`Model.params_b`: embeddings, attention, FFN/experts,
norms) plus what the safetensors also hold -- MTP/NextN layers and the vision tower -- so it can be
compared with a published safetensors total.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.catalog.config_readers.deepseek_v4 import read_deepseek_v4
from core.catalog.config_readers.ernie import ERNIE_TYPES, normalise_ernie
from core.catalog.config_readers.fields import (
    Config,
    ConfigError,
    LayerwiseReading,
    int_field,
    opt_int,
    req,
)
from core.catalog.config_readers.gemma4 import read_gemma4
from core.catalog.config_readers.granite_hybrid import read_granite_hybrid
from core.catalog.config_readers.hunyuan import HUNYUAN_TYPES, normalise_hunyuan
from core.catalog.config_readers.nemotron_h import read_nemotron_h
from core.catalog.model import Model
from core.i18n import Note


@dataclass(frozen=True, slots=True)
class ParamCount:
    decoder: int  # what Model.params_b holds: text decoder incl. embeddings and norms
    active: int  # decoder parameters used per token
    mtp: int = 0  # multi-token-prediction (NextN) layers shipped in the checkpoint
    # vision tower + projector; None: the config has one whose layout is not known here (not counted)
    vision: int | None = 0

    @property
    def total(self) -> int:
        """Everything the checkpoint stores (comparable with a safetensors parameter total)."""
        return self.decoder + self.mtp + (self.vision or 0)


@dataclass(frozen=True, slots=True)
class ConfigReading:
    model: Model
    params: ParamCount
    model_type: str


# model_type -> reader family. The text model_type of a wrapper (text_config.model_type) is
# looked up too, so qwen3_vl_text / gemma3_text need no entry of their own.
_DENSE = {
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
    "olmo2",
    "granite",
    # Seed-OSS: llama layout with q/k/v biases (attention_bias) and an optional o_proj bias.
    "seed_oss",
    # InternLM3: llama layout; `bias` would put biases on o_proj and the MLP (refused below).
    "internlm3",
    # ERNIE 4.5 dense (0.3B): llama layout, keys normalised by config_readers/ernie.py.
    "ernie4_5",
    # GLM-4-0414 (Glm4ForCausalLM): q/k/v bias, fused gate_up MLP, two extra "sandwich" norms per
    # layer (post_self_attn_layernorm, post_mlp_layernorm); partial rotary changes neither count nor KV.
    "glm4",
}
_MOE = {
    "qwen2_moe",
    "qwen3_moe",
    "qwen3_vl_moe",
    "mixtral",
    "glm4_moe",
    "minimax_m2",
    "gpt_oss",
    *HUNYUAN_TYPES,  # per-layer lists normalised by config_readers/hunyuan.py first
    "ernie4_5_moe",  # moe_* keys normalised by config_readers/ernie.py first
}
_MLA = {"deepseek_v2", "deepseek_v3", "kimi_k2", "deepseek_v32", "glm_moe_dsa", "kimi_k25"}
_LINEAR_HYBRID = {"qwen3_next", "qwen3_5", "qwen3_5_moe"}
# Counted block by block in config_readers/ (their layers are not one mixer + one FFN each).
# Nemotron-H: one block per layer (hybrid_override_pattern -> Model.layer_pattern); its Nemotron 3
# Super/Ultra variants (LatentMoE, MTP) are refused by the reader with their reason.
# Granite 4.0 (granitemoehybrid): Mamba-2 or attention mixer + a MoE/dense FFN in every layer.
_LAYERWISE = {"gemma4", "gemma4_text", "nemotron_h", "deepseek_v4", "granitemoehybrid"}
# Known families the schema cannot describe yet: named, never approximated.
_UNSUPPORTED = {
    "llama4": "chunked attention with no-rope layers and interleaved MoE (read it by hand)",
}
# Families whose q/k/v projections always carry a bias (no config key says so).
_ALWAYS_QKV_BIAS = {"qwen2", "qwen2_5_vl", "qwen2_vl", "qwen2_moe"}
_GEMMA = {"gemma2", "gemma3", "gemma3_text"}
# Per-head q/k RMSNorm in every attention layer: always (Qwen3, Gemma 3) or when use_qk_norm says so.
_QK_NORM = {"qwen3", "qwen3_moe", "qwen3_vl", "qwen3_vl_moe", "gemma3", "gemma3_text"}
_QK_NORM_IF_FLAGGED = {"glm4_moe", *HUNYUAN_TYPES}


# ---------------------------------------------------------------- reading fields


_req, _int, _opt_int = req, int_field, opt_int
__all__ = ["ConfigError", "ConfigReading", "ParamCount", "merge_into", "read_config"]


def _split(config: Config) -> tuple[Config, Config | None, str]:
    """(text config, vision config, model_type) of a plain or a vision-language config."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ConfigError("config.json has no 'model_type'")
    text = config.get("text_config")
    vision = config.get("vision_config")
    if isinstance(text, Mapping):
        merged = dict(text)
        # Wrappers keep a few text facts at the top level (Qwen3-VL: tie_word_embeddings).
        for key in ("tie_word_embeddings",):
            if key not in merged and key in config:
                merged[key] = config[key]
        return merged, vision if isinstance(vision, Mapping) else None, model_type
    return config, vision if isinstance(vision, Mapping) else None, model_type


def _family(model_type: str, text_type: str) -> str:
    for name in (model_type, text_type):
        if name in _UNSUPPORTED:
            raise ConfigError(f"{name}: not supported yet: {_UNSUPPORTED[name]}")
    families = (
        ("dense", _DENSE),
        ("moe", _MOE),
        ("mla", _MLA),
        ("linear", _LINEAR_HYBRID),
        ("layerwise", _LAYERWISE),
    )
    for family, members in families:
        if model_type in members or text_type in members:
            return family
    raise ConfigError(f"unknown model_type {model_type!r}: no reader for this architecture")


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


def _native_quant(config: Config, t: Config) -> str:
    for cfg in (config, t):
        quant = cfg.get("quantization_config")
        if isinstance(quant, Mapping):
            method = str(quant.get("quant_method", "")).lower()
            if method == "fp8":
                return "FP8"
            if method == "mxfp4":
                return "MXFP4"
            if method == "compressed-tensors":
                return _compressed_tensors_kind(quant)
            if method:
                return method.upper()
    return ""


def _compressed_tensors_kind(quant: Mapping[str, Any]) -> str:
    """ "INT4" for Kimi K2.5's pack-quantized experts: the weights' type and bit width."""
    for group in (quant.get("config_groups") or {}).values():
        weights = group.get("weights") or {} if isinstance(group, Mapping) else {}
        if weights.get("num_bits"):
            return f"{str(weights.get('type', 'int')).upper()}{weights['num_bits']}"
    return "COMPRESSED-TENSORS"


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
    if mt in {"mixtral", "gpt_oss", "minimax_m2"}:  # intermediate_size is the expert width there
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


def _mla_fields(t: Config, mt: str) -> dict[str, Any]:
    fields = _moe_fields(t, mt)
    nope, rope = _int(t, "qk_nope_head_dim", mt), _int(t, "qk_rope_head_dim", mt)
    fields.update(
        attention="mla",
        kv_heads=fields["heads"],
        head_dim=nope + rope,
        kv_lora_rank=_int(t, "kv_lora_rank", mt),
        qk_rope_dim=rope,
        qk_nope_dim=nope,
        v_head_dim=_int(t, "v_head_dim", mt),
        q_lora_rank=_opt_int(t, "q_lora_rank"),
        attn_bias=False,
        dsa_index_heads=_opt_int(t, "index_n_heads"),
        dsa_index_head_dim=_opt_int(t, "index_head_dim"),
        dsa_index_topk=_opt_int(t, "index_topk"),
    )
    return fields


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


_READERS = {"dense": _dense_fields, "moe": _moe_fields, "mla": _mla_fields, "linear": _linear_fields}


# ---------------------------------------------------------------- parameter count


def _attention_params(m: Model, full: bool) -> int:
    h = m.hidden
    if m.attention == "linear_hybrid" and not full:
        nk, nv = m.linear_key_heads or 0, m.linear_value_heads or 0
        dk, dv, kernel = m.linear_key_head_dim or 0, m.linear_value_head_dim or 0, m.linear_conv_kernel or 0
        in_proj = h * (2 * nk * dk + 2 * nv * dv) + h * 2 * nv  # qkvz + beta/alpha
        conv = (2 * nk * dk + nv * dv) * kernel
        return in_proj + conv + 2 * nv + dv + nv * dv * h  # A_log, dt_bias, norm, out_proj
    if m.attention == "mla":
        nope, rope, v = m.qk_nope_dim or 0, m.qk_rope_dim or 0, m.v_head_dim or 0
        rank = m.kv_lora_rank or 0
        if m.q_lora_rank:
            q = h * m.q_lora_rank + m.q_lora_rank + m.q_lora_rank * m.heads * (nope + rope)
        else:
            q = h * m.heads * (nope + rope)
        kv = h * (rank + rope) + rank + rank * m.heads * (nope + v)
        return q + kv + m.heads * v * h + indexer_params(m)
    q_dim, kv_dim = m.heads * m.head_dim, m.kv_heads * m.head_dim
    q = h * q_dim * (2 if m.attn_output_gate else 1)
    bias = q_dim + 2 * kv_dim if m.attn_bias else 0
    return q + 2 * h * kv_dim + q_dim * h + bias


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
        if mt in _QK_NORM or mt in _LINEAR_HYBRID or (t.get("use_qk_norm") and mt in _QK_NORM_IF_FLAGGED):
            extra += 2 * m.head_dim
        if t.get("attention_out_bias"):
            extra += h  # o_proj bias (Seed-OSS names it apart from the q/k/v one)
        if mt == "minimax_m2" and t.get("use_qk_norm"):
            extra += (m.heads + m.kv_heads) * m.head_dim
        if mt == "gpt_oss":
            extra += h + m.heads  # o_proj bias, attention sinks
    if m.attention == "mla":
        extra += (m.q_lora_rank or 0) + (m.kv_lora_rank or 0)  # q_a / kv_a layernorms
        extra += _indexer_norm(m)
    return extra


def indexer_params(m: Model) -> int:
    """DeepSeek-V3.2 / GLM-5 sparse-attention indexer of one layer: wq_b, wk, weights_proj."""
    heads, dim = m.dsa_index_heads, m.dsa_index_head_dim
    if not heads or not dim:
        return 0
    return (m.q_lora_rank or m.hidden) * heads * dim + m.hidden * dim + m.hidden * heads


def _indexer_norm(m: Model) -> int:
    return 2 * (m.dsa_index_head_dim or 0)  # k_norm weight and bias


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
    total = active = m.vocab * h * (1 if m.tied_embeddings else 2) + h  # + final norm
    last_layer = 0
    for layer in range(m.layers):
        full = _is_full(m, layer)
        mixer = _attention_params(m, full) + 2 * h + _layer_extras(t, mt, m, full)
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
    if mt in _LINEAR_HYBRID:
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


def _layerwise(text: Config, vision: Config | None, mt: str, text_type: str) -> LayerwiseReading | None:
    """Families counted block by block in config_readers/; None for the generic layout."""
    if "gemma4" in (mt, text_type):
        return read_gemma4(text, vision, mt)
    if mt == "deepseek_v4":
        return read_deepseek_v4(text, mt)
    if mt == "nemotron_h":
        return read_nemotron_h(text, mt)
    if mt == "granitemoehybrid":
        return read_granite_hybrid(text, mt)
    return None


def _generic(text: Config, vision: Config | None, mt: str, family: str) -> LayerwiseReading:
    fields = _READERS[family](text, mt)
    probe = _placeholder(fields, "", "", "")
    total, active, layer = _decoder_params(text, mt, probe)
    return LayerwiseReading(
        fields=fields,
        total=total,
        active=active,
        vision=_vision_params(mt, vision) if vision is not None else 0,
        mtp=_mtp_params(text, mt, probe, layer),
        extra={"mtp_layers": _mtp_layer_count(text, mt)},
    )


def _placeholder(fields: dict[str, Any], model_id: str, repo: str, source: str) -> Model:
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


def read_config(config: Config, *, model_id: str = "", repo: str = "", source: str = "") -> ConfigReading:
    """Read `config` (a parsed config.json) into a catalog Model and its parameter count.

    Raises ConfigError naming the model_type or field when the config cannot be read exactly."""
    text, vision, model_type = _split(config)
    if model_type in HUNYUAN_TYPES:
        text = normalise_hunyuan(text, model_type)
    if model_type in ERNIE_TYPES:
        text = normalise_ernie(text, model_type)
    text_type = str(text.get("model_type") or model_type)
    family = _family(model_type, text_type)
    # Text configs of wrappers carry their own model_type (qwen3_vl_text); the family code keys
    # its per-family details on the wrapper's type, which names the architecture.
    mt = model_type
    reading = _layerwise(text, vision, mt, text_type) if family == "layerwise" else None
    if reading is None:
        reading = _generic(text, vision, mt, family)
    fields = dict(reading.fields, native_quant=_native_quant(config, text))
    placeholder = _placeholder(fields, model_id, repo, source)
    params = ParamCount(decoder=reading.total, active=reading.active, mtp=reading.mtp, vision=reading.vision)
    model = replace(
        placeholder,
        params_b=_billions(reading.total),
        active_params_b=_billions(reading.active if placeholder.is_moe else reading.total),
        mtp_layers=int(reading.extra.get("mtp_layers", 0)),
    )
    return ConfigReading(model=model, params=params, model_type=model_type)


def _billions(count: int) -> float:
    """params_b as the catalog writes it: 2 decimals, 3 below 10B (0.27 would be 0.8 % off)."""
    return round(count / 1e9, 2 if count >= 10e9 else 3)


# ---------------------------------------------------------------- merging into a catalog entry

# What a config cannot know: the catalog entry keeps these as people wrote them.
METADATA_FIELDS = frozenset(
    {
        "id",
        "family",
        "name",
        "aliases",
        "release",
        "popularity",
        "draft_models",
        "hf_repo",
        "gguf_repo",
        "gguf_file_stem",
        "ollama_tag",
        "notes",
        "source",
    }
)


def merge_into(entry: Model, derived: Model) -> Model:
    """`entry` with every architecture field taken from `derived` (read from the config).

    rope_scaled_context keeps the longer of the two: model cards document YaRN contexts that the
    config itself does not carry (Qwen3: 32K native, 128K with YaRN)."""
    changes = {
        spec: getattr(derived, spec)
        for spec in Model.__dataclass_fields__
        if spec not in METADATA_FIELDS and spec != "rope_scaled_context"
    }
    scaled = max(entry.rope_scaled_context or 0, derived.rope_scaled_context or 0) or None
    source = entry.source
    if derived.source and derived.source not in source:
        source = f"{source} ; {derived.source}" if source else derived.source
    return replace(entry, **changes, rope_scaled_context=scaled, source=source)


# ---------------------------------------------------------------- checking a published count

PARAMS_MISMATCH = 0.02  # beyond this the config and the published weights disagree: say so


def params_check(derived: int, published: int | None) -> Note | None:
    """A note when the Hub's safetensors total and the count derived from config.json differ by
    more than 2 %: the architecture read may be wrong, or the checkpoint stores something else
    (quantized packing, an extra tower). None when they agree or nothing was published."""
    if not published or derived <= 0:
        return None
    off = derived / published - 1
    if abs(off) <= PARAMS_MISMATCH:
        return None
    return Note(
        "hub.params_mismatch",
        {
            "derived_b": f"{derived / 1e9:.2f}",
            "published_b": f"{published / 1e9:.2f}",
            "pct": f"{off * 100:+.1f}",
        },
    )
