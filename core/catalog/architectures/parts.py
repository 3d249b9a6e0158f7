"""Sizing records and tensor builders the architecture modules share.

`KvShape` is how a model's KV cache grows (core.estimator.memory turns it into bytes); `Tensor` is
one weight tensor as llama.cpp names and shapes it (core.estimator.weights picks its storage type).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.catalog.model import Model

MIB = 1024**2

# DeepSeek-V3/Kimi-K2 query LoRA rank when the catalog does not give one.
DEFAULT_Q_LORA_RANK = 1536


@dataclass(frozen=True, slots=True)
class KvShape:
    """How a model's cache grows: values per token in growing layers, and in windowed layers."""

    full_values_per_token: int  # summed over layers whose cache holds the whole context
    swa_values_per_token: int  # summed over sliding-window layers (hold at most window + ubatch)
    window: int  # sliding window in tokens (0 when none)
    state_bytes: float  # constant recurrent state (linear attention), independent of context


@dataclass(frozen=True, slots=True)
class Tensor:
    cls: str  # "attn_q", "ffn_down_exps", "token_embd", ...
    category: str  # llama.cpp's tensor_category: attn_v also covers attn_qkv and attn_kv_b
    layer: int  # -1 for non-repeating tensors
    ne0: int  # row length: the block-size divisibility that llama.cpp checks
    rows: int  # ne1 * ne2
    expert: bool = False  # routed expert (3-D, ne2 = n_expert)
    one_d: bool = False  # norms and other 1-D tensors: never quantized (F32 in GGUF)
    router: bool = False  # ffn_gate_inp: kept F32 by convert_hf_to_gguf and llama-quantize


def full_kv_shape(model: Model) -> KvShape:
    """Plain softmax attention: K and V of kv_heads x head_dim in every layer."""
    return KvShape(2 * model.kv_heads * model.head_dim * model.layers, 0, 0, 0.0)


def opt(model: Model, name: str) -> Any:
    """An architecture field that other work may add to Model later (None when absent)."""
    return getattr(model, name, None)


def round64(x: float) -> int:
    return max(64, int(round(x / 64.0)) * 64)


def params(tensors: list[Tensor]) -> int:
    return sum(t.ne0 * t.rows for t in tensors)


def is_global(model: Model, layer: int) -> bool:
    n_global = int(model.global_layers or 0)
    if n_global <= 0:
        return False
    period = max(model.layers // n_global, 1)
    return layer % period == period - 1


def gqa_tensors(
    model: Model, layer: int, head_dim: int | None = None, kv_heads: int | None = None
) -> list[Tensor]:
    """Softmax-attention tensors of one layer: q/k/v/o with an explicit head size (and biases)."""
    h, nh = model.hidden, model.heads
    hd, kv = head_dim or model.head_dim, kv_heads or model.kv_heads
    q_dim, kv_dim = nh * hd, kv * hd
    # Qwen3-Next style output gate: q_proj is twice as wide.
    q_rows = q_dim * (2 if opt(model, "attn_output_gate") else 1)
    out = [
        Tensor("attn_q", "attn_q", layer, h, q_rows),
        Tensor("attn_k", "attn_k", layer, h, kv_dim),
        Tensor("attn_v", "attn_v", layer, h, kv_dim),
        Tensor("attn_output", "attn_output", layer, q_dim, h),
    ]
    if opt(model, "attn_bias"):
        out.append(Tensor("attn_bias", "other", layer, q_rows + 2 * kv_dim, 1, one_d=True))
    return out


def ffn_tensors(layer: int, h: int, width: int, suffix: str = "", gated: bool = True) -> list[Tensor]:
    if width <= 0:
        return []
    out = [Tensor("ffn_gate" + suffix, "ffn_gate", layer, h, width)] if gated else []
    return out + [
        Tensor("ffn_up" + suffix, "ffn_up", layer, h, width),
        Tensor("ffn_down" + suffix, "ffn_down", layer, width, h),
    ]


def expert_tensors(layer: int, h: int, width: int, n: int, gated: bool = True) -> list[Tensor]:
    gate = [Tensor("ffn_gate_exps", "ffn_gate", layer, h, width * n, expert=True)] if gated else []
    return [
        Tensor("ffn_gate_inp", "other", layer, h, n, router=True),
        *gate,
        Tensor("ffn_up_exps", "ffn_up", layer, h, width * n, expert=True),
        Tensor("ffn_down_exps", "ffn_down", layer, width, h * n, expert=True),
    ]


def head_tensors(model: Model) -> list[Tensor]:
    """Token embedding, output head (one tensor when tied) and the output norm."""
    h, vocab, tied = model.hidden, model.vocab, model.tied_embeddings
    head = [Tensor("token_embd", "output" if tied else "token_embd", -1, h, vocab)]
    if not tied:
        head.append(Tensor("output", "output", -1, h, vocab))
    head.append(Tensor("output_norm", "other", -1, h, 1, one_d=True))
    return head
