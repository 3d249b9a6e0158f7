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

from core.catalog.architectures.parts import Tensor as _Tensor
from core.catalog.architectures.parts import expert_tensors as _experts
from core.catalog.architectures.parts import ffn_tensors as _ffn
from core.catalog.architectures.parts import gqa_tensors
from core.catalog.architectures.parts import head_tensors as _head
from core.catalog.architectures.parts import opt as _opt
from core.catalog.architectures.parts import params as _params
from core.catalog.architectures.parts import round64 as _round64
from core.catalog.architectures.registry import Architecture, sizing_for
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
    # Per-layer token table (Gemma 3n / Gemma 4 E models' per_layer_token_embd): in total_bytes and,
    # in a GGUF, in host_bytes_full_offload beside the token embedding; never read whole per token.
    per_layer_embd_bytes: int = 0

    @property
    def total_gib(self) -> float:
        return self.total_bytes / 2**30

    @property
    def bpw(self) -> float:
        return self.total_bytes * 8 / self.params if self.params else 0.0


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
    fixed = (
        wb.token_embd_bytes
        + wb.per_layer_embd_bytes
        + (0 if wb.output_tied else wb.output_bytes)
        + wb.other_bytes
    )
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


def _tensors(model: Model) -> tuple[list[_Tensor], list[str]]:
    """The model's tensors as llama.cpp names them; derive missing widths from params_b."""
    derived: list[str] = []
    arch = sizing_for(model.attention)  # the architecture module of its attention kind
    whole = arch.tensors(model, derived) if arch.tensors is not None else None
    if whole is not None:  # built block by block (Nemotron-H's layer_pattern)
        return whole, derived
    gated = (_opt(model, "ffn_kind") or "gated") == "gated"
    head = _head(model) + _per_layer_input_head(model)
    per_layer_fixed, linear_unknown = _mixers(model, arch)
    fixed = _params(head) + sum(_params(t) for t in per_layer_fixed)
    if model.is_moe:
        layers_ffn = _moe_ffns(model, fixed, gated, derived)
    else:
        layers_ffn = _dense_ffns(model, fixed, gated, derived)
    layers = [per_layer_fixed[i] + layers_ffn[i] for i in range(model.layers)]
    if linear_unknown and arch.rest is not None:
        arch.rest(model, head, layers, derived)
    tensors = head + [t for layer in layers for t in layer]
    return tensors, derived


def _per_layer_input_head(model: Model) -> list[_Tensor]:
    """Per-Layer Embeddings' model-wide tensors as llama.cpp names them: the per-layer token table
    (ne0 = layers x per-layer width, one row per token), the projection of the hidden state into
    all layers' slices, and its norm. Empty for a model without per-layer inputs."""
    width = _opt(model, "per_layer_input_size")
    if not width:
        return []
    all_layers = int(width) * model.layers
    # Typed like the token embedding it sits beside: with a tied head that is the output's type
    # (Q6_K in a Q4_K_M), as the published Gemma 4 E2B / E4B Q4_K_M files weigh (Q4_K would be ~15 %
    # under them).
    category = "output" if model.tied_embeddings else "token_embd"
    return [
        _Tensor("per_layer_token_embd", category, -1, all_layers, model.vocab),
        _Tensor("per_layer_model_proj", "per_layer_model_proj", -1, model.hidden, all_layers),
        _Tensor("per_layer_proj_norm", "other", -1, int(width), 1, one_d=True),
    ]


def _per_layer_input_tensors(model: Model, layer: int) -> list[_Tensor]:
    """One layer's per-layer-input gate (hidden -> width), projection back (width -> hidden) and the
    norm after it; empty for a model without per-layer inputs."""
    width = _opt(model, "per_layer_input_size")
    if not width:
        return []
    h, w = model.hidden, int(width)
    return [
        _Tensor("per_layer_inp_gate", "per_layer_inp_gate", layer, h, w),
        _Tensor("per_layer_proj", "per_layer_proj", layer, w, h),
        _Tensor("per_layer_post_norm", "other", layer, h, 1, one_d=True),
    ]


def _ffn_unit(model: Model, gated: bool) -> int:
    """Weights per unit of FFN width: up and down, plus the gate of a gated FFN."""
    return (3 if gated else 2) * model.hidden


def _mixers(model: Model, arch: Architecture) -> tuple[list[list[_Tensor]], bool]:
    """Each layer's norms and token mixer (attention or linear attention, `arch.mixer`); True as the
    second value when some linear-attention shapes are missing and were modelled as softmax attention."""
    h = model.hidden
    mixer_of = arch.mixer or gqa_tensors
    linear_unknown = False
    per_layer: list[list[_Tensor]] = []
    for i in range(model.layers):
        mixer = mixer_of(model, i)
        if mixer is None:
            linear_unknown = True
            mixer = gqa_tensors(model, i)
        per_layer.append(
            [
                _Tensor("attn_norm", "other", i, h, 1, one_d=True),
                _Tensor("ffn_norm", "other", i, h, 1, one_d=True),
                *mixer,
                *_per_layer_input_tensors(model, i),
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
    # use_double_wide_mlp (Gemma 4 E2B): the KV-shared layers at the end run a twice-as-wide FFN.
    first_wide = (
        n_layer - int(_opt(model, "kv_shared_layers") or 0) if _opt(model, "double_wide_mlp") else n_layer
    )
    return [
        _ffn(i, model.hidden, int(ff) * (2 if i >= first_wide else 1), gated=gated) for i in range(n_layer)
    ]


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
    native = (model.native_quant or "").upper()
    # A release whose format no serving quant names (Kimi-K2-Thinking: BF16 with compressed-tensors
    # INT4 experts) is priced as HF-BF16, "the released checkpoint": its experts keep their type.
    is_native = quant.id.upper() == native or (
        quant.id == "HF-BF16" and bool(native) and native not in {q.upper() for q in catalog.quants}
    )
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
    token_embd = output = other = per_layer_embd = 0
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
            elif t.cls == "per_layer_token_embd":
                per_layer_embd = size
            elif t.cls == "output":
                output = size
            else:
                other += size  # output_norm
    tied = model.tied_embeddings
    if tied:
        output = token_embd  # llama.cpp duplicates the tied matrix as the GPU output head
    total = token_embd + per_layer_embd + (0 if tied else output) + other + sum(layer_bytes)
    expert = sum(layer_expert)
    gguf = quant.format == "gguf"
    if gguf:
        # The input embeddings are looked up on the CPU (llama.cpp's input layer lives in host
        # memory even with -ngl 99, the per-layer token table with it); a tied head is a GPU copy.
        host = token_embd + per_layer_embd
        gpu = total - host + (output if tied else 0)
        meta = gguf_meta_bytes(model.vocab)
    else:
        gpu, host, meta = total, 0, 0
    frac = (model.experts_active or 0) / model.experts if model.experts else 0.0
    # Neither embedding table is read whole per token (one row each): both stay out of `active`.
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
        per_layer_embd_bytes=per_layer_embd,
    )
