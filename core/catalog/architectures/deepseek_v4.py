"""DeepSeek-V4 (`deepseek_v4`: DeepSeek-V4-Flash, DeepSeek-V4-Pro).

Layer by layer as DeepSeek's own inference/model.py builds it (`Block`, `Attention`, `Compressor`,
`Indexer`, `Gate`, `MoE`, `MTPBlock`, `Transformer`); the count with the checkpoint's storage rules
(FP8 weights + one scale per 128x128 block, FP4 experts packed two per byte + one scale per 32)
reproduces the stored tensor elements of both checkpoints exactly (158,069,433,298 and
861,608,274,846, tests/core/catalog), so the layout below is the real one:

- attention: one shared K=V head of `head_dim` (512, the last `qk_rope_head_dim` of it roped) from
  `wkv` + kv_norm; queries through a low rank (`wq_a`, q_norm, `wq_b`); the output through a grouped
  low rank (`wo_a`: `o_groups` blocks of heads x head_dim / o_groups -> `o_lora_rank`, then `wo_b`);
  one attention-sink logit per head;
- `compress_ratios[i]` per layer (the list also covers the MTP layers after the decoder's): 0 = the
  sliding window (`sliding_window` tokens) only; r > 0 adds a Compressor that pools every r tokens
  into one cached entry of head_dim (wkv, wgate, ape, norm; r == 4 pools overlapping windows, so
  twice as wide); r == 4 layers also carry the lightning Indexer (wq_b from the q rank, weights_proj,
  its own overlapping compressor of `index_head_dim`) that picks `index_topk` compressed entries;
- MoE in every layer: `n_routed_experts` of `moe_intermediate_size` (top `num_experts_per_tok`),
  `n_shared_experts` (must be 1) of the same width, a router; the first `num_hash_layers` route by a
  token-id table (tid2eid, vocab x top-k) instead of the learned score bias;
- hyper-connections: `hc_mult` residual streams mixed before attention and FFN (fn, base, scale
  each) and once more before the head;
- untied embedding and head; `num_nextn_predict_layers` MTP blocks sharing them (e_proj, h_proj,
  three norms, their own hc head).

The published totals (284B / 1.6T) are the decoder without the MTP block; the published activated
counts (13B / 49B) leave out the input embedding (a lookup), which `active` here keeps, as the
catalog does for every model.
"""

from __future__ import annotations

from typing import Any

from core.catalog.architectures.fields import Config, ConfigError, LayerwiseReading, int_field, opt_int
from core.catalog.architectures.parts import DEFAULT_Q_LORA_RANK, KvShape, Tensor, full_kv_shape
from core.catalog.architectures.registry import Architecture, register
from core.catalog.model import Model

_QUANT_BLOCK = 128  # FP8 block scales: one per 128 x 128 weights
_FP4_BLOCK = 32  # FP4 experts: one ue8m0 scale per 32 weights along the input


def _linear(out: int, inp: int, stored: bool, fp4: bool = False) -> int:
    """Elements of one [out, in] weight; `stored`: as the checkpoint holds it (packed + scales)."""
    if not stored:
        return out * inp
    if fp4:
        return out * inp // 2 + out * (inp // _FP4_BLOCK)
    return out * inp + -(-out // _QUANT_BLOCK) * -(-inp // _QUANT_BLOCK)


def _compressor(ratio: int, dim: int, hidden: int) -> int:
    """ape, wkv, wgate (BF16, no scales), norm; ratio 4 compresses overlapping windows (2x wide)."""
    width = (2 if ratio == 4 else 1) * dim
    return ratio * width + 2 * hidden * width + dim


class _Shape:
    """The config's numbers, read once and checked."""

    def __init__(self, t: Config, mt: str) -> None:
        self.h, self.layers = int_field(t, "hidden_size", mt), int_field(t, "num_hidden_layers", mt)
        self.heads, self.head_dim = int_field(t, "num_attention_heads", mt), int_field(t, "head_dim", mt)
        self.rope = int_field(t, "qk_rope_head_dim", mt)
        self.q_rank, self.o_rank = int_field(t, "q_lora_rank", mt), int_field(t, "o_lora_rank", mt)
        self.groups = int_field(t, "o_groups", mt)
        self.experts, self.top_k = (
            int_field(t, "n_routed_experts", mt),
            int_field(t, "num_experts_per_tok", mt),
        )
        self.width, self.vocab = int_field(t, "moe_intermediate_size", mt), int_field(t, "vocab_size", mt)
        self.index_heads, self.index_dim = (
            int_field(t, "index_n_heads", mt),
            int_field(t, "index_head_dim", mt),
        )
        self.hc, self.hash_layers = int_field(t, "hc_mult", mt), opt_int(t, "num_hash_layers") or 0
        self.mtp = opt_int(t, "num_nextn_predict_layers") or 0
        self.window = int_field(t, "sliding_window", mt)
        if int_field(t, "num_key_value_heads", mt) != 1:
            raise ConfigError(f"{mt}: num_key_value_heads != 1 (the V4 layout has one shared K=V head)")
        if (opt_int(t, "n_shared_experts") or 0) != 1:
            raise ConfigError(f"{mt}: n_shared_experts != 1 is not the V4 layout")
        if (self.heads * self.head_dim) % self.groups:
            raise ConfigError(f"{mt}: heads x head_dim is not a multiple of o_groups {self.groups}")
        ratios = t.get("compress_ratios")
        if not isinstance(ratios, list) or len(ratios) < self.layers + self.mtp:
            raise ConfigError(f"{mt}: compress_ratios must list {self.layers + self.mtp} layers (+ MTP)")
        if any(not isinstance(r, int) or isinstance(r, bool) or r < 0 for r in ratios):
            raise ConfigError(f"{mt}: compress_ratios {ratios!r} are not whole numbers >= 0")
        # The cache holds head_dim / r values per token (index_head_dim / 4 for the indexer): the
        # schema keeps whole values per token, so a ratio must divide them.
        if any(r and (self.head_dim % r or (r == 4 and self.index_dim % r)) for r in ratios):
            raise ConfigError(f"{mt}: compress_ratios {sorted(set(ratios))} do not divide head_dim")
        self.ratios: tuple[int, ...] = tuple(ratios)


def _block(s: _Shape, layer: int, stored: bool) -> tuple[int, int]:
    """(stored, active) elements of block `layer` (a decoder or an MTP block)."""
    h, ratio = s.h, s.ratios[layer]
    attn = s.heads + _linear(s.q_rank, h, stored) + s.q_rank + _linear(s.heads * s.head_dim, s.q_rank, stored)
    attn += _linear(s.head_dim, h, stored) + s.head_dim  # wkv, kv_norm
    attn += _linear(s.groups * s.o_rank, s.heads * s.head_dim // s.groups, stored)  # wo_a
    attn += _linear(h, s.groups * s.o_rank, stored)  # wo_b
    if ratio:
        attn += _compressor(ratio, s.head_dim, h)
    if ratio == 4:
        attn += _linear(s.index_heads * s.index_dim, s.q_rank, stored) + h * s.index_heads
        attn += _compressor(4, s.index_dim, h)
    # Router weight (BF16), and the token-id table in hash layers, the score bias in the others.
    gate = s.experts * h + (s.vocab * s.top_k if layer < s.hash_layers else s.experts)
    expert = 2 * _linear(s.width, h, stored, fp4=True) + _linear(h, s.width, stored, fp4=True)
    shared = 2 * _linear(s.width, h, stored) + _linear(h, s.width, stored)
    mix = (2 + s.hc) * s.hc
    hyper = 2 * (mix * s.hc * h + mix + 3)  # fn, base, scale before attention and before the FFN
    common = attn + gate + shared + hyper + 2 * h  # + attn_norm, ffn_norm
    return common + s.experts * expert, common + s.top_k * expert


def _hc_head(s: _Shape) -> int:
    return s.hc * s.hc * s.h + s.hc + 1


def _counts(s: _Shape, stored: bool) -> tuple[int, int, int]:
    """(decoder, active decoder, MTP) elements."""
    total = active = 2 * s.vocab * s.h + s.h + _hc_head(s)  # embed, head, norm, hc head
    for layer in range(s.layers):
        block, used = _block(s, layer, stored)
        total, active = total + block, active + used
    mtp = 0
    for layer in range(s.layers, s.layers + s.mtp):
        # e_proj, h_proj, enorm, hnorm, norm, own hc head; embedding and head are the decoder's.
        mtp += _block(s, layer, stored)[0] + 2 * _linear(s.h, s.h, stored) + 3 * s.h + _hc_head(s)
    return total, active, mtp


def stored_elements(t: Config, mt: str = "deepseek_v4") -> int:
    """Tensor elements as the FP8/FP4 checkpoint stores them (packed FP4, block scales), MTP
    included: what a weight scan of the safetensors counts."""
    s = _Shape(t, mt)
    total, _, mtp = _counts(s, stored=True)
    return total + mtp


def read_deepseek_v4(t: Config, mt: str) -> LayerwiseReading:
    s = _Shape(t, mt)
    total, active, mtp = _counts(s, stored=False)
    decoder_ratios = s.ratios[: s.layers]
    fields: dict[str, Any] = {
        "layers": s.layers,
        "hidden": s.h,
        "heads": s.heads,
        "kv_heads": 1,
        "head_dim": s.head_dim,
        "vocab": s.vocab,
        "max_context": int_field(t, "max_position_embeddings", mt),
        "attention": "csa",
        "sliding_window": s.window,
        "qk_rope_dim": s.rope,
        "q_lora_rank": s.q_rank,
        "experts": s.experts,
        "experts_active": s.top_k,
        "shared_experts": 1,
        "moe_intermediate_size": s.width,
        "intermediate_size": s.width,
        "tied_embeddings": False,
        "dsa_index_heads": s.index_heads,
        "dsa_index_head_dim": s.index_dim,
        "dsa_index_topk": opt_int(t, "index_topk"),
        "kv_compress_ratios": decoder_ratios,
        "o_lora_rank": s.o_rank,
        "o_groups": s.groups,
        "hc_mult": s.hc,
        "hash_layers": s.hash_layers,
        # The released experts are FP4 (e2m1, one ue8m0 scale per 32 weights: the MXFP4 layout),
        # the other linear weights FP8 (config `expert_dtype: fp4` in later copies, and the
        # checkpoint's stored element count, which only packed experts explain).
        "native_expert_quant": "MXFP4",
    }
    # The YaRN factor is already applied: max_position_embeddings (1M) = 64K x 16.
    fields["rope_scaled_context"] = fields["max_context"]
    return LayerwiseReading(fields=fields, total=total, active=active, mtp=mtp, extra={"mtp_layers": s.mtp})


# ---------------------------------------------------------------- sizing (catalog rows of attention "csa")


def _kv_shape(model: Model) -> KvShape:
    if not model.kv_compress_ratios:
        return full_kv_shape(model)
    return _csa_kv_shape(model)


def _csa_kv_shape(model: Model) -> KvShape:
    """DeepSeek-V4: a layer of compress ratio r caches one head_dim entry per r tokens (ratio-4
    layers also one index_head_dim indexer key per 4 tokens); every layer keeps its last
    `sliding_window` tokens whole; the compressors' running pools (f32 kv + score, over 2r tokens
    of twice the width for the overlapping r = 4) are constant per sequence. The growing part is
    4,924 values per token for V4-Pro: 9.62 GiB at 1M tokens in BF16, vLLM's published figure."""
    hd, index_dim = model.head_dim, model.dsa_index_head_dim or 0
    ratios = model.kv_compress_ratios
    growing = sum(hd // r + (index_dim // r if r == 4 else 0) for r in ratios if r)
    state = sum(
        2 * 4 * (2 * r * 2 * hd + (2 * r * 2 * index_dim if index_dim else 0)) if r == 4 else 2 * 4 * r * hd
        for r in ratios
        if r
    )
    return KvShape(growing, hd * model.layers, model.sliding_window or 0, float(state))


def _csa_read_values(model: Model, depth: int) -> int:
    """Cached values one DeepSeek-V4 token reads: the window in every layer, every compressed
    entry of a ratio > 4 layer, but in a ratio-4 layer only the indexer keys in full and then the
    `dsa_index_topk` entries the indexer picked."""
    hd, index_dim, topk = model.head_dim, model.dsa_index_head_dim or 0, model.dsa_index_topk or 0
    read = min(depth, model.sliding_window or 0) * hd * model.layers
    for r in model.kv_compress_ratios:
        if r == 4:
            read += (depth // r) * index_dim + min(depth // r, topk or depth) * hd
        elif r:
            read += (depth // r) * hd
    return read


def _kv_read(model: Model, depth: int) -> int | None:
    return _csa_read_values(model, depth) if model.kv_compress_ratios else None


def _csa_attention(model: Model, layer: int) -> list[Tensor]:
    """DeepSeek-V4 attention of one layer, with the layer's hyper-connection mixers (see
    the module docstring for the layout). The compressor and indexer-weight
    projections are BF16 in the FP8 checkpoint: typed like the router (kept unquantized)."""
    h, nh, hd = model.hidden, model.heads, model.head_dim
    q_rank, o_rank = model.q_lora_rank or DEFAULT_Q_LORA_RANK, model.o_lora_rank or 0
    groups, hc = model.o_groups or 1, model.hc_mult or 0
    ratios = model.kv_compress_ratios
    ratio = ratios[layer] if layer < len(ratios) else 0
    mix = (2 + hc) * hc
    out = [
        Tensor("attn_sinks", "other", layer, nh, 1, one_d=True),
        Tensor("attn_q_a", "other", layer, h, q_rank),
        Tensor("attn_q_a_norm", "other", layer, q_rank, 1, one_d=True),
        Tensor("attn_q_b", "other", layer, q_rank, nh * hd),
        Tensor("attn_kv", "other", layer, h, hd),
        Tensor("attn_kv_norm", "other", layer, hd, 1, one_d=True),
        Tensor("attn_output_a", "other", layer, nh * hd // groups, groups * o_rank),
        Tensor("attn_output", "attn_output", layer, groups * o_rank, h),
        Tensor("hc_mix", "other", layer, 2 * (mix * hc * h + mix + 3), 1, one_d=True),
    ]
    for width, index in ((hd, False), (model.dsa_index_head_dim or 0, True)):
        if not ratio or (index and ratio != 4):
            continue
        wide = (2 if ratio == 4 else 1) * width
        tag = "indexer_comp" if index else "attn_comp"
        out += [
            Tensor(tag + "_kv_gate", "other", layer, h, 2 * wide, router=True),
            Tensor(tag + "_ape_norm", "other", layer, ratio * wide + width, 1, one_d=True),
        ]
    if ratio == 4:
        heads, dim = model.dsa_index_heads or 0, model.dsa_index_head_dim or 0
        out += [
            Tensor("indexer_q_b", "other", layer, q_rank, heads * dim),
            Tensor("indexer_weights", "other", layer, h, heads, router=True),
        ]
    if layer < model.hash_layers:  # token-id -> experts table (int32) instead of a score bias
        table = model.vocab * (model.experts_active or 0)
        out.append(Tensor("ffn_hash_table", "other", layer, table, 1, one_d=True))
    return out


register(
    Architecture(
        "deepseek_v4",
        model_types=frozenset({"deepseek_v4"}),
        attention=frozenset({"csa"}),
        read=lambda text, vision, mt: read_deepseek_v4(text, mt),
        kv_shape=_kv_shape,
        kv_read=_kv_read,
        mixer=_csa_attention,
    )
)
