"""Per-tensor weight sizes: which storage type each tensor gets under a quant, and what that weighs.

A flat bits-per-weight table is wrong for small models with big vocabularies (embeddings and output
are stored at other types) and for MoE models (experts and attention differ). So the model's tensor
list is rebuilt from its architecture fields, each tensor gets the type llama.cpp's quantizer would
pick (the quant's `recipe` + `rules`, mirroring `llama_tensor_get_type_impl`), and bytes are summed
with the real block sizes. Missing widths (FFN, expert width) are derived from `params_b`, so every
catalog model gets an answer; `WeightBreakdown.derived` says which numbers were derived.

Results are cached per (model, quant id, catalog): the estimator calls this in its hot path.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.published_files import PublishedFile, published_file
from core.catalog.quant import GgmlType, Quant, RecipeRule

# GGUF header + metadata beyond the tensors: mostly the tokenizer (token strings, scores/types,
# BPE merges). Fitted on published file sizes (scripts/bench_weights.py): ~ bytes per vocab entry.
GGUF_META_BYTES_PER_TOKEN = 40
GGUF_META_BASE_BYTES = 1 << 20

# A published file whose tensors weigh this far from the per-tensor figure is no file of this model
# under this quant (a mislabelled listing, a different variant): it is not used.
PUBLISHED_PLAUSIBLE = (0.8, 1.25)

# DeepSeek-V3/Kimi-K2 query LoRA rank when the catalog does not give one.
_DEFAULT_Q_LORA_RANK = 1536


@dataclass(frozen=True, slots=True)
class WeightBreakdown:
    """Bytes of a model's weights under one quant (all sizes in bytes)."""

    model_id: str
    quant_id: str
    total_bytes: int  # every tensor once: what llama-bench prints as "size", the loaded weights
    file_bytes: int  # total_bytes + GGUF metadata (tokenizer etc.); == total_bytes for other formats
    token_embd_bytes: int  # input embedding table (llama.cpp keeps it in host memory)
    output_bytes: int  # output head as held on the GPU (a copy of token_embd when tied)
    output_tied: bool
    other_bytes: int  # non-layer tensors besides embedding and head (output_norm)
    layer_bytes: tuple[int, ...]  # one per repeating layer, experts included
    layer_expert_bytes: tuple[int, ...]  # routed-expert part of each layer (for --n-cpu-moe)
    expert_bytes: int  # all routed-expert tensors
    gpu_bytes_full_offload: int  # llama.cpp "CUDA0 model buffer size" with -ngl 99 (all layers)
    host_bytes_full_offload: int  # what stays in host memory then (the embedding table)
    active_bytes_per_token: int  # weights one decoded token reads (routed experts pro rata)
    params: int  # parameters counted from the rebuilt tensor list
    bytes_by_type: tuple[tuple[str, int], ...]  # storage type -> bytes, largest first
    derived: tuple[str, ...] = ()  # architecture numbers that were derived, not given
    # The published file the sizes were taken from (None: computed tensor by tensor), and what the
    # per-tensor computation gave before (0 when nothing was published).
    published: PublishedFile | None = None
    computed_total_bytes: int = 0

    @property
    def total_gib(self) -> float:
        return self.total_bytes / 2**30

    @property
    def bpw(self) -> float:
        return self.total_bytes * 8 / self.params if self.params else 0.0


@dataclass(frozen=True, slots=True)
class _Tensor:
    cls: str  # "attn_q", "ffn_down_exps", "token_embd", ...
    category: str  # llama.cpp's tensor_category: attn_v also covers attn_qkv and attn_kv_b
    layer: int  # -1 for non-repeating tensors
    ne0: int  # row length: the block-size divisibility that llama.cpp checks
    rows: int  # ne1 * ne2
    expert: bool = False  # routed expert (3-D, ne2 = n_expert)
    one_d: bool = False  # norms and other 1-D tensors: never quantized (F32 in GGUF)
    router: bool = False  # ffn_gate_inp: kept F32 by convert_hf_to_gguf and llama-quantize


_cache: dict[tuple[int, str, int], tuple[WeightBreakdown, Catalog, Model]] = {}


def weight_breakdown(model: Model, quant: Quant, catalog: Catalog) -> WeightBreakdown:
    """Per-tensor weight bytes of `model` stored as `quant`; cached per (model, quant, catalog)."""
    # Keyed on the model's identity: hashing a Model (all its fields) costs about a microsecond, and
    # the estimator asks this tens of times per grid. A hit must be the very same model object.
    key = (id(model), quant.id, id(catalog))
    hit = _cache.get(key)
    if hit is not None and hit[1] is catalog and hit[2] is model:
        return hit[0]
    if hit is None and len(_cache) >= 65536:
        _cache.clear()  # an unbounded stream of ad-hoc models must not grow this forever
    result = _compute(model, quant, catalog)
    if quant.format == "gguf":
        found = published_file(model, quant.id)
        if found is not None:
            result = with_published(result, found, model.vocab)
    _cache[key] = (result, catalog, model)  # keeps both alive so their id()s cannot be reused
    return result


def gguf_meta_bytes(vocab: int) -> int:
    """GGUF header + metadata beyond the tensors (mostly the tokenizer), estimated from the vocab."""
    return GGUF_META_BASE_BYTES + GGUF_META_BYTES_PER_TOKEN * vocab


def with_published(wb: WeightBreakdown, found: PublishedFile, vocab: int) -> WeightBreakdown:
    """`wb` resized to a published file: its tensors are the file less the GGUF metadata. What a
    quantizer chose differently (imatrix mixes, unsloth's dynamic layers) sits in the repeating
    layers, so those are scaled; the embedding table (kept in host RAM by llama.cpp), the output head
    and norms keep their per-tensor size. Unchanged when the file is implausible for this model.

    A size printed rounded ("12.1 GB") that the per-tensor figure already matches within its
    rounding keeps the per-tensor bytes (they are the finer figure) and only names the file."""
    if abs(wb.file_bytes - found.bytes) <= found.tolerance:
        return replace(wb, published=found, computed_total_bytes=wb.total_bytes)
    tensors = found.bytes - gguf_meta_bytes(vocab)
    fixed = wb.token_embd_bytes + (0 if wb.output_tied else wb.output_bytes) + wb.other_bytes
    layers = sum(wb.layer_bytes)
    low, high = PUBLISHED_PLAUSIBLE
    if layers <= 0 or not low <= tensors / max(wb.total_bytes, 1) <= high or tensors <= fixed:
        return wb
    scale = (tensors - fixed) / layers
    layer_bytes = tuple(round(b * scale) for b in wb.layer_bytes)
    layer_expert = tuple(round(b * scale) for b in wb.layer_expert_bytes)
    expert = sum(layer_expert)
    total = fixed + sum(layer_bytes)
    active_layers = wb.active_bytes_per_token - wb.output_bytes - wb.other_bytes
    by_type = tuple((t, round(b * total / max(wb.total_bytes, 1))) for t, b in wb.bytes_by_type)
    return replace(
        wb,
        total_bytes=total,
        file_bytes=found.bytes,
        layer_bytes=layer_bytes,
        layer_expert_bytes=layer_expert,
        expert_bytes=expert,
        gpu_bytes_full_offload=total
        - wb.host_bytes_full_offload
        + (wb.output_bytes if wb.output_tied else 0),
        active_bytes_per_token=round(active_layers * scale) + wb.output_bytes + wb.other_bytes,
        bytes_by_type=by_type,
        published=found,
        computed_total_bytes=wb.total_bytes,
    )


def bpw_bytes(model: Model, quant: Quant) -> int:
    """The flat fallback: params x the quant's effective bpw (for comparison and unknown shapes)."""
    return int(model.params_b * 1e9 * quant.bpw / 8)


# --------------------------------------------------------------------------------------------
# tensor list
# --------------------------------------------------------------------------------------------


def _round64(x: float) -> int:
    return max(64, int(round(x / 64.0)) * 64)


def _opt(model: Model, name: str) -> Any:
    """An architecture field that other work may add to Model later (None when absent)."""
    return getattr(model, name, None)


def _csa_attention(model: Model, layer: int) -> list[_Tensor]:
    """DeepSeek-V4 attention of one layer, with the layer's hyper-connection mixers (see
    core/catalog/config_readers/deepseek_v4.py for the layout). The compressor and indexer-weight
    projections are BF16 in the FP8 checkpoint: typed like the router (kept unquantized)."""
    h, nh, hd = model.hidden, model.heads, model.head_dim
    q_rank, o_rank = model.q_lora_rank or _DEFAULT_Q_LORA_RANK, model.o_lora_rank or 0
    groups, hc = model.o_groups or 1, model.hc_mult or 0
    ratios = model.kv_compress_ratios
    ratio = ratios[layer] if layer < len(ratios) else 0
    mix = (2 + hc) * hc
    out = [
        _Tensor("attn_sinks", "other", layer, nh, 1, one_d=True),
        _Tensor("attn_q_a", "other", layer, h, q_rank),
        _Tensor("attn_q_a_norm", "other", layer, q_rank, 1, one_d=True),
        _Tensor("attn_q_b", "other", layer, q_rank, nh * hd),
        _Tensor("attn_kv", "other", layer, h, hd),
        _Tensor("attn_kv_norm", "other", layer, hd, 1, one_d=True),
        _Tensor("attn_output_a", "other", layer, nh * hd // groups, groups * o_rank),
        _Tensor("attn_output", "attn_output", layer, groups * o_rank, h),
        _Tensor("hc_mix", "other", layer, 2 * (mix * hc * h + mix + 3), 1, one_d=True),
    ]
    for width, index in ((hd, False), (model.dsa_index_head_dim or 0, True)):
        if not ratio or (index and ratio != 4):
            continue
        wide = (2 if ratio == 4 else 1) * width
        tag = "indexer_comp" if index else "attn_comp"
        out += [
            _Tensor(tag + "_kv_gate", "other", layer, h, 2 * wide, router=True),
            _Tensor(tag + "_ape_norm", "other", layer, ratio * wide + width, 1, one_d=True),
        ]
    if ratio == 4:
        heads, dim = model.dsa_index_heads or 0, model.dsa_index_head_dim or 0
        out += [
            _Tensor("indexer_q_b", "other", layer, q_rank, heads * dim),
            _Tensor("indexer_weights", "other", layer, h, heads, router=True),
        ]
    if layer < model.hash_layers:  # token-id -> experts table (int32) instead of a score bias
        table = model.vocab * (model.experts_active or 0)
        out.append(_Tensor("ffn_hash_table", "other", layer, table, 1, one_d=True))
    return out


def _attention(model: Model, layer: int) -> list[_Tensor]:
    """Softmax-attention tensors of one layer (GQA with explicit head_dim, or MLA)."""
    h, nh, hd = model.hidden, model.heads, model.head_dim
    if model.attention == "csa":
        return _csa_attention(model, layer)
    if model.attention == "mla" and model.kv_lora_rank:
        rope = model.qk_rope_dim or 64
        nope = _opt(model, "qk_nope_dim") or max(hd - rope, 0)
        v_head = _opt(model, "v_head_dim") or nope or hd
        q_lora = _opt(model, "q_lora_rank") or _DEFAULT_Q_LORA_RANK
        kv_lora = model.kv_lora_rank
        # attn_kv_b counts as attn_v for llama.cpp's rules (newer converters split it into
        # attn_k_b/attn_v_b of the same total size).
        return [
            _Tensor("attn_q_a", "other", layer, h, q_lora),
            _Tensor("attn_q_a_norm", "other", layer, q_lora, 1, one_d=True),
            _Tensor("attn_q_b", "other", layer, q_lora, nh * (nope + rope)),
            _Tensor("attn_kv_a_mqa", "other", layer, h, kv_lora + rope),
            _Tensor("attn_kv_a_norm", "other", layer, kv_lora, 1, one_d=True),
            _Tensor("attn_kv_b", "attn_v", layer, kv_lora, nh * (nope + v_head)),
            _Tensor("attn_output", "attn_output", layer, nh * v_head, h),
        ]
    kv_heads = model.kv_heads
    if model.attention == "swa_hybrid" and _is_global(model, layer):
        # Gemma 4: the global layers have their own head size and KV head count.
        hd, kv_heads = _opt(model, "global_head_dim") or hd, _opt(model, "global_kv_heads") or kv_heads
    q_dim, kv_dim = nh * hd, kv_heads * hd
    # Qwen3-Next style output gate: q_proj is twice as wide.
    q_rows = q_dim * (2 if _opt(model, "attn_output_gate") else 1)
    out = [
        _Tensor("attn_q", "attn_q", layer, h, q_rows),
        _Tensor("attn_k", "attn_k", layer, h, kv_dim),
        _Tensor("attn_v", "attn_v", layer, h, kv_dim),
        _Tensor("attn_output", "attn_output", layer, q_dim, h),
    ]
    if _opt(model, "attn_bias"):
        out.append(_Tensor("attn_bias", "other", layer, q_rows + 2 * kv_dim, 1, one_d=True))
    return out


def _linear_attention(model: Model, layer: int) -> list[_Tensor] | None:
    """Linear-attention layer tensors as llama.cpp names them; None when the shapes are unknown."""
    h = model.hidden
    kind = _opt(model, "linear_kind") or ""
    if kind == "gated_deltanet":
        kh, kd = _opt(model, "linear_key_heads"), _opt(model, "linear_key_head_dim")
        vh, vd = _opt(model, "linear_value_heads"), _opt(model, "linear_value_head_dim")
        if not (kh and kd and vh and vd):
            return None
        key_dim, value_dim = kh * kd, vh * vd
        conv_dim = 2 * key_dim + value_dim
        kernel = _opt(model, "linear_conv_kernel") or 4
        # llama.cpp qwen3next: attn_qkv (an attn_v-like category for the quant rules), attn_gate (z),
        # ssm_ba, ssm_conv1d (never quantized), ssm_a/ssm_dt/ssm_norm (1-D), ssm_out.
        return [
            _Tensor("attn_qkv", "attn_v", layer, h, conv_dim),
            _Tensor("attn_gate", "other", layer, h, value_dim),
            _Tensor("ssm_ba", "other", layer, h, 2 * vh),
            _Tensor("ssm_conv1d", "other", layer, kernel * conv_dim, 1, one_d=True),
            _Tensor("ssm_a_dt_norm", "other", layer, 2 * vh + vd, 1, one_d=True),
            _Tensor("ssm_out", "other", layer, value_dim, h),
        ]
    if kind == "lightning":
        # MiniMax-M1 lightning attention: fused qkv over all heads, an output gate, out projection.
        q_dim = model.heads * model.head_dim
        return [
            _Tensor("attn_qkv", "attn_v", layer, h, 3 * q_dim),
            _Tensor("attn_gate", "other", layer, h, q_dim),
            _Tensor("attn_output", "attn_output", layer, q_dim, h),
            _Tensor("attn_norm_linear", "other", layer, q_dim, 1, one_d=True),
        ]
    return None


def _ffn(layer: int, h: int, width: int, suffix: str = "", gated: bool = True) -> list[_Tensor]:
    if width <= 0:
        return []
    out = [_Tensor("ffn_gate" + suffix, "ffn_gate", layer, h, width)] if gated else []
    return out + [
        _Tensor("ffn_up" + suffix, "ffn_up", layer, h, width),
        _Tensor("ffn_down" + suffix, "ffn_down", layer, width, h),
    ]


def _experts(layer: int, h: int, width: int, n: int, gated: bool = True) -> list[_Tensor]:
    gate = [_Tensor("ffn_gate_exps", "ffn_gate", layer, h, width * n, expert=True)] if gated else []
    return [
        _Tensor("ffn_gate_inp", "other", layer, h, n, router=True),
        *gate,
        _Tensor("ffn_up_exps", "ffn_up", layer, h, width * n, expert=True),
        _Tensor("ffn_down_exps", "ffn_down", layer, width, h * n, expert=True),
    ]


def _params(tensors: list[_Tensor]) -> int:
    return sum(t.ne0 * t.rows for t in tensors)


def _tensors(model: Model) -> tuple[list[_Tensor], list[str]]:
    """The model's tensors as llama.cpp names them; derive missing widths from params_b."""
    derived: list[str] = []
    if _opt(model, "layer_pattern"):
        return _pattern_tensors(model, derived), derived
    gated = (_opt(model, "ffn_kind") or "gated") == "gated"
    head = _head(model)
    per_layer_fixed, linear_unknown = _mixers(model)
    fixed = _params(head) + sum(_params(t) for t in per_layer_fixed)
    if model.is_moe:
        layers_ffn = _moe_ffns(model, fixed, gated, derived)
    else:
        layers_ffn = _dense_ffns(model, fixed, gated, derived)
    layers = [per_layer_fixed[i] + layers_ffn[i] for i in range(model.layers)]
    if linear_unknown:
        _add_linear_remainder(model, head, layers, derived)
    tensors = head + [t for layer in layers for t in layer]
    return tensors, derived


def _ffn_unit(model: Model, gated: bool) -> int:
    """Weights per unit of FFN width: up and down, plus the gate of a gated FFN."""
    return (3 if gated else 2) * model.hidden


def _head(model: Model) -> list[_Tensor]:
    """Token embedding, output head (one tensor when tied) and the output norm."""
    h, vocab, tied = model.hidden, model.vocab, model.tied_embeddings
    head = [_Tensor("token_embd", "output" if tied else "token_embd", -1, h, vocab)]
    if not tied:
        head.append(_Tensor("output", "output", -1, h, vocab))
    head.append(_Tensor("output_norm", "other", -1, h, 1, one_d=True))
    return head


def _mixers(model: Model) -> tuple[list[list[_Tensor]], bool]:
    """Each layer's norms and token mixer (attention or linear attention); True as the second value
    when some linear-attention shapes are missing and were modelled as softmax attention."""
    h = model.hidden
    linear_unknown = False
    per_layer: list[list[_Tensor]] = []
    for i in range(model.layers):
        mixer: list[_Tensor] | None = None
        if model.attention == "linear_hybrid" and not _is_global(model, i):
            mixer = _linear_attention(model, i)
            linear_unknown = linear_unknown or mixer is None
        if mixer is None:
            mixer = _attention(model, i)
        per_layer.append(
            [
                _Tensor("attn_norm", "other", i, h, 1, one_d=True),
                _Tensor("ffn_norm", "other", i, h, 1, one_d=True),
                *mixer,
            ]
        )
    return per_layer, linear_unknown


def _dense_ffns(model: Model, fixed: int, gated: bool, derived: list[str]) -> list[list[_Tensor]]:
    """A dense model's FFN per layer; the width from what params_b leaves when the catalog has none."""
    n_layer = model.layers
    ff = _opt(model, "intermediate_size")
    if not ff:
        ff = _round64(max(model.params_b * 1e9 - fixed, 0) / (n_layer * _ffn_unit(model, gated)))
        derived.append(f"intermediate_size={ff} (from params_b)")
    return [_ffn(i, model.hidden, int(ff), gated=gated) for i in range(n_layer)]


def _moe_ffns(model: Model, fixed: int, gated: bool, derived: list[str]) -> list[list[_Tensor]]:
    """A MoE's FFN per layer: routed (+ shared) experts in MoE layers, a dense FFN in the others;
    missing widths derived from params_b and active_params_b."""
    h, n_layer = model.hidden, model.layers
    ffn_unit = _ffn_unit(model, gated)
    target = model.params_b * 1e9
    n_exp = int(model.experts or 0)
    k = int(model.experts_active or 1)
    dense_layers = int(_opt(model, "dense_layers") or 0)
    step = max(int(_opt(model, "moe_layer_step") or 1), 1)
    is_moe = [i >= dense_layers and i % step == step - 1 for i in range(n_layer)]
    n_moe = sum(is_moe)
    n_dense = n_layer - n_moe
    moe_ff = _opt(model, "moe_intermediate_size")
    if not moe_ff:
        spread = (model.params_b - model.active_params_b) * 1e9
        moe_ff = _round64(spread / max(n_moe * (n_exp - k) * ffn_unit, 1))
        derived.append(f"moe_intermediate_size={moe_ff} (from params_b - active_params_b)")
    routed = n_moe * (n_exp * ffn_unit * moe_ff + h * n_exp)
    shared_n = _opt(model, "shared_experts")
    dense_ff = _opt(model, "intermediate_size")
    shared_ff = int(shared_n) * moe_ff if shared_n else 0
    rest = target - fixed - routed
    if n_dense and not dense_ff:
        dense_ff = _round64(max(rest - n_moe * ffn_unit * shared_ff, 0) / (n_dense * ffn_unit))
        derived.append(f"intermediate_size={dense_ff} (dense layers, from params_b)")
    if shared_n is None and not n_dense and rest > 0.005 * target:
        # Unknown shared expert (Qwen-MoE style): what params_b leaves over.
        shared_ff = _round64(rest / (n_moe * ffn_unit))
        derived.append(f"shared expert width={shared_ff} (from params_b)")
    return [
        _experts(i, h, int(moe_ff), n_exp, gated) + _ffn(i, h, shared_ff, "_shexp", gated)
        if is_moe[i]
        else _ffn(i, h, int(dense_ff or 0), gated=gated)
        for i in range(n_layer)
    ]


def _add_linear_remainder(
    model: Model, head: list[_Tensor], layers: list[list[_Tensor]], derived: list[str]
) -> None:
    """Linear-attention shapes not in the catalog: the linear layers were modelled as softmax
    attention; add what params_b leaves over to them."""
    h, target = model.hidden, model.params_b * 1e9
    rest = target - _params(head) - sum(_params(t) for t in layers)
    linear_ids = [i for i in range(model.layers) if not _is_global(model, i)]
    if linear_ids and rest > 0.005 * target:
        width = _round64(rest / (len(linear_ids) * h))
        derived.append(f"linear-attention extra {width}x{h} per layer (from params_b)")
        for i in linear_ids:
            layers[i].append(_Tensor("ssm_proj", "other", i, h, width))


# Mamba2Config's defaults (transformers), for a pattern model whose catalog entry lacks a shape.
_MAMBA2_DEFAULTS = {"head_dim": 64, "state": 128, "groups": 1, "kernel": 4, "expand": 2}


def _mamba2_shape(model: Model, derived: list[str]) -> tuple[int, int, int, int, int]:
    """(heads, head_dim, groups, d_state, conv kernel) of the Mamba-2 layers."""
    groups, state = model.linear_key_heads, model.linear_key_head_dim
    heads, head_dim = model.linear_value_heads, model.linear_value_head_dim
    kernel = model.linear_conv_kernel
    if groups and state and heads and head_dim and kernel:
        return heads, head_dim, groups, state, kernel
    d = _MAMBA2_DEFAULTS
    head_dim, state, groups, kernel = (
        head_dim or d["head_dim"],
        state or d["state"],
        groups or d["groups"],
        kernel or d["kernel"],
    )
    heads = heads or d["expand"] * model.hidden // head_dim
    derived.append(
        f"Mamba-2 {heads}x{head_dim} heads, d_state {state}, {groups} groups (Mamba2Config defaults)"
    )
    return heads, head_dim, groups, state, kernel


def _mamba2(h: int, layer: int, shape: tuple[int, int, int, int, int]) -> list[_Tensor]:
    """One Mamba-2 mixer as llama.cpp's nemotron_h / granite_hybrid hold it: ssm_in (x, z, B, C,
    dt), ssm_conv1d (F32: convert_hf_to_gguf writes it so and llama-quantize skips it), its bias,
    ssm_dt bias, ssm_a and ssm_d (one per head, not quantized), the gated norm, ssm_out."""
    heads, head_dim, groups, state, kernel = shape
    inner = heads * head_dim
    conv_dim = inner + 2 * groups * state
    return [
        _Tensor("ssm_in", "other", layer, h, 2 * inner + 2 * groups * state + heads),
        _Tensor("ssm_conv1d", "other", layer, kernel * conv_dim, 1, one_d=True),
        _Tensor("ssm_conv1d_b", "other", layer, conv_dim, 1, one_d=True),
        _Tensor("ssm_dt_a_d", "other", layer, 3 * heads, 1, one_d=True),
        _Tensor("ssm_norm", "other", layer, inner, 1, one_d=True),
        _Tensor("ssm_out", "other", layer, inner, h),
    ]


def _pattern_width(model: Model, char: str, derived: list[str]) -> int:
    """FFN width of the pattern's "-" (dense) or "E" (expert) layers; when the entry lacks the
    expert width, what params_b - active_params_b leaves over (as the mixer+FFN layout derives it)."""
    given = model.moe_intermediate_size if char == "E" else model.intermediate_size
    if given:
        return int(given)
    if char == "-":
        raise ValueError(f"{model.id}: layer_pattern has dense MLP layers but no intermediate_size")
    n = (_opt(model, "layer_ffn") or model.layer_pattern).count(char)
    spread = (model.params_b - model.active_params_b) * 1e9
    experts, k = int(model.experts or 1), int(model.experts_active or 1)
    width = _round64(spread / max(n * (experts - k) * 2 * model.hidden, 1))
    derived.append(f"moe_intermediate_size={width} (from params_b - active_params_b)")
    return width


def _pattern_tensors(model: Model, derived: list[str]) -> list[_Tensor]:
    """A single-block-per-layer hybrid (Nemotron-H): each layer one norm and the block its pattern
    character names. Nemotron-H's MLPs and experts are plain (relu2: up, down); the MoE has a sigmoid
    router with a correction bias (ffn_exp_probs_b) and a shared expert."""
    h, pattern = model.hidden, model.layer_pattern
    ffns = _opt(model, "layer_ffn") or ""
    gated = (_opt(model, "ffn_kind") or "gated") == "gated"
    mamba = _mamba2_shape(model, derived) if "M" in pattern else (0, 0, 0, 0, 0)
    dense_ff = _pattern_width(model, "-", derived) if "-" in pattern + ffns else 0
    moe_ff = _pattern_width(model, "E", derived) if "E" in pattern + ffns else 0
    n_exp = int(model.experts or 0)
    shared_ff = int(model.shared_experts or 0) * moe_ff
    out = _head(model)
    for i, char in enumerate(pattern):
        out.append(_Tensor("attn_norm", "other", i, h, 1, one_d=True))
        if ffns:
            # Granite 4.0-H: the mixer, then ffn_norm and the layer's FFN (router without a bias).
            out += _mamba2(h, i, mamba) if char == "M" else _attention(model, i)
            out.append(_Tensor("ffn_norm", "other", i, h, 1, one_d=True))
            if ffns[i] == "E":
                out += _experts(i, h, moe_ff, n_exp, gated)
            out += _ffn(
                i, h, shared_ff if ffns[i] == "E" else dense_ff, "_shexp" if ffns[i] == "E" else "", gated
            )
            continue
        if char == "M":
            out += _mamba2(h, i, mamba)
        elif char == "*":
            out += _attention(model, i)
        elif char == "-":
            out += _ffn(i, h, dense_ff, gated=gated)
        elif char == "E":
            out += _experts(i, h, moe_ff, n_exp, gated)
            out.append(_Tensor("ffn_exp_probs_b", "other", i, n_exp, 1, one_d=True))
            out += _ffn(i, h, shared_ff, "_shexp", gated)
        else:
            raise ValueError(f"{model.id}: layer_pattern character {char!r} is not one of M * - E")
    return out


def _is_global(model: Model, layer: int) -> bool:
    n_global = int(model.global_layers or 0)
    if n_global <= 0:
        return False
    period = max(model.layers // n_global, 1)
    return layer % period == period - 1


# --------------------------------------------------------------------------------------------
# type selection
# --------------------------------------------------------------------------------------------

_OPS: dict[str, Callable[[int, int], bool]] = {
    "==": operator.eq,
    "!=": operator.ne,
    ">=": operator.ge,
    "<=": operator.le,
    ">": operator.gt,
    "<": operator.lt,
}
_COND = re.compile(r"^\s*([a-z_0-9]+)\s*(==|!=|>=|<=|>|<)\s*(-?\d+)\s*$")


def _layer_selected(selector: str, i: int, n: int) -> bool:
    """llama.cpp's layer predicates (C integer division)."""
    if selector == "all":
        return True
    if i < 0:
        return False
    if selector == "more_bits":
        return i < n // 8 or i >= 7 * n // 8 or (i - n // 8) % 3 == 2
    if selector == "first_8th":
        return i < n // 8
    if selector == "first_16th":
        return i < n // 16
    if selector == "middle":
        return n // 8 <= i < 7 * n // 8
    if selector.startswith("first:"):
        return i < int(selector.split(":", 1)[1])
    raise ValueError(f"unknown layer selector {selector!r}")


def _conditions_hold(when: tuple[str, ...], facts: dict[str, int]) -> bool:
    for cond in when:
        match = _COND.match(cond)
        if not match:
            raise ValueError(f"bad recipe condition {cond!r}")
        key, op, value = match.groups()
        if key not in facts:
            raise ValueError(f"unknown recipe condition key {key!r}")
        if not _OPS[op](facts[key], int(value)):
            return False
    return True


def resolved_recipe(quant: Quant, catalog: Catalog) -> tuple[dict[str, str], tuple[RecipeRule, ...]]:
    """The quant's recipe and rules with `extends` chains flattened (base first)."""
    chain: list[Quant] = []
    seen: set[str] = set()
    q: Quant | None = quant
    while q is not None and q.id not in seen:
        chain.append(q)
        seen.add(q.id)
        q = catalog.quants.get(q.extends) if q.extends else None
    recipe: dict[str, str] = {}
    rules: list[RecipeRule] = []
    for q in reversed(chain):
        recipe.update(q.recipe)
        rules.extend(q.rules)
    return recipe, tuple(rules)


def _facts(model: Model) -> dict[str, int]:
    native = (model.native_quant or "").upper()
    return {
        "gqa": model.heads // max(model.kv_heads, 1),
        "experts": int(model.experts or 0),
        "layers": model.layers,
        "hidden": model.hidden,
        "native_mxfp4": int(native == "MXFP4"),
        "tied": int(model.tied_embeddings),
    }


def _chooser(
    model: Model, quant: Quant, catalog: Catalog
) -> tuple[Callable[[_Tensor], GgmlType], frozenset[str]]:
    """The type choice per tensor, and the tensor classes / categories an active rule applies to some
    layers only (their type is chosen layer by layer; every other group's once)."""
    recipe, rules = resolved_recipe(quant, catalog)
    types = catalog.ggml_types
    facts = _facts(model)
    active_rules = [r for r in rules if _conditions_hold(r.when, facts)]
    picked = frozenset(r.tensor for r in active_rules if r.layers != "all")
    default_id = recipe.get("default", "F16")
    default = types[default_id]
    gguf = quant.format == "gguf"
    # llama.cpp only re-types tensors when the file type is quantized (F16/BF16/F32 files copy).
    quantized = default.block_size > 1 or default.kind == "serving"
    keep_native_mxfp4 = gguf and facts["native_mxfp4"] == 1
    # The release's own format (DeepSeek-V4's FP8) keeps its experts in their native type (FP4).
    is_native = quant.id.upper() == (model.native_quant or "").upper()
    native_experts = model.native_expert_quant if is_native else ""
    n_layer = model.layers

    def choose(t: _Tensor) -> GgmlType:
        if t.one_d:
            return types[recipe.get("norm", "F32" if gguf else "BF16")]
        if t.router:
            return types[recipe.get("router", "F32" if gguf else "BF16")]
        if t.expert and native_experts:
            return types[native_experts]
        if t.expert and keep_native_mxfp4:
            # convert_hf_to_gguf writes gpt-oss experts as MXFP4 and the published quants
            # (ggml-org, unsloth) keep them; requantizing them would also fall back (2880 % 256).
            return types["MXFP4"]
        type_id = recipe.get(t.cls) or recipe.get(t.category) or default_id
        if not quantized:
            return types[type_id]
        for rule in active_rules:
            if rule.tensor != t.cls and rule.tensor != t.category:
                continue
            if rule.from_types and type_id not in rule.from_types:
                continue
            if not _layer_selected(rule.layers, t.layer, n_layer):
                continue
            type_id = rule.type
        chosen = types[type_id]
        if chosen.kind == "ggml" and t.ne0 % chosen.block_size:
            # llama.cpp tensor_type_fallback: one step to a 32-block type, else F16.
            fb = types.get(chosen.fallback or "F16", types["F16"])
            chosen = fb if t.ne0 % fb.block_size == 0 else types["F16"]
        return chosen

    return choose, picked


def _nbytes(t: _Tensor, typ: GgmlType) -> int:
    return t.ne0 * t.rows * typ.block_bytes // typ.block_size


@dataclass(frozen=True, slots=True)
class _Group:
    """Tensors alike but for their layer (every layer's attn_q of one shape): one type choice and
    one size serve them all unless a recipe rule picks layers for their class."""

    members: tuple[_Tensor, ...]


_groups_cache: dict[int, tuple[Model, tuple[_Group, ...], tuple[str, ...]]] = {}


def _groups(model: Model) -> tuple[tuple[_Group, ...], tuple[str, ...]]:
    """The model's tensors grouped by everything but the layer, with the derivation notes; cached
    per model object (the same identity rule as `weight_breakdown`'s cache). A 94-layer MoE has
    ~1,400 tensors but ~20 groups: the per-quant work (a type choice per tensor) was the ask path's
    costliest step for a model × quant not seen before."""
    hit = _groups_cache.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1], hit[2]
    if len(_groups_cache) >= 4096:
        _groups_cache.clear()
    tensors, derived = _tensors(model)
    by_key: dict[tuple[object, ...], list[_Tensor]] = {}
    for t in tensors:
        key = (t.cls, t.category, t.ne0, t.rows, t.expert, t.one_d, t.router, t.layer < 0)
        by_key.setdefault(key, []).append(t)
    groups = tuple(_Group(tuple(members)) for members in by_key.values())
    _groups_cache[id(model)] = (model, groups, tuple(derived))
    return groups, tuple(derived)


def _compute(model: Model, quant: Quant, catalog: Catalog) -> WeightBreakdown:
    groups, derived = _groups(model)
    choose, picked = _chooser(model, quant, catalog)
    n_layer = model.layers
    layer_bytes = [0] * n_layer
    layer_expert = [0] * n_layer
    by_type: dict[str, int] = {}
    token_embd = output = other = 0
    params = 0
    for group in groups:
        first = group.members[0]
        per_layer = first.cls in picked or first.category in picked
        shared = None if per_layer else choose(first)
        for t in group.members:
            typ = choose(t) if shared is None else shared
            size = _nbytes(t, typ)
            params += t.ne0 * t.rows
            by_type[typ.id] = by_type.get(typ.id, 0) + size
            if t.layer >= 0:
                layer_bytes[t.layer] += size
                if t.expert:
                    layer_expert[t.layer] += size
            elif t.cls == "token_embd":
                token_embd = size
            elif t.cls == "output":
                output = size
            else:
                other += size  # output_norm
    tied = model.tied_embeddings
    if tied:
        output = token_embd  # llama.cpp duplicates the tied matrix as the GPU output head
    total = token_embd + (0 if tied else output) + other + sum(layer_bytes)
    expert = sum(layer_expert)
    gguf = quant.format == "gguf"
    if gguf:
        # The input embedding is looked up on the CPU (llama.cpp's input layer lives in host
        # memory even with -ngl 99); a tied head is a GPU copy of it.
        gpu = total - token_embd + (output if tied else 0)
        host = token_embd
        meta = gguf_meta_bytes(model.vocab)
    else:
        gpu, host, meta = total, 0, 0
    frac = (model.experts_active or 0) / model.experts if model.experts else 0.0
    active = sum(layer_bytes) - expert + int(expert * frac) + output + other
    return WeightBreakdown(
        model_id=model.id,
        quant_id=quant.id,
        total_bytes=total,
        file_bytes=total + meta,
        token_embd_bytes=token_embd,
        output_bytes=output,
        output_tied=tied,
        other_bytes=other,
        layer_bytes=tuple(layer_bytes),
        layer_expert_bytes=tuple(layer_expert),
        expert_bytes=expert,
        gpu_bytes_full_offload=gpu,
        host_bytes_full_offload=host,
        active_bytes_per_token=active,
        params=params,
        bytes_by_type=tuple(sorted(by_type.items(), key=lambda kv: -kv[1])),
        derived=tuple(derived),
    )
