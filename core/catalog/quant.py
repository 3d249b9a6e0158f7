"""Quantization formats: ggml storage types and named quants with their per-tensor recipes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True, slots=True)
class GgmlType:
    """A storage type: `block_bytes` bytes hold `block_size` weights.

    Mostly ggml's own types (`kind = "ggml"`, sizes from ggml's type traits); the serving formats'
    layouts (AWQ/GPTQ groups, bitsandbytes blocks, MLX groups, FP8) are described the same way with
    `kind = "serving"` so one size function covers every format.
    """

    id: str  # "Q4_K", "Q6_K", "F16", ...
    block_size: int
    block_bytes: int
    kind: Literal["ggml", "serving"] = "ggml"
    # llama.cpp's `tensor_type_fallback`: the type used when a row length is not a multiple of
    # `block_size` (e.g. Q4_K -> Q5_0); empty = F16.
    fallback: str = ""
    notes: str = ""
    source: str = ""

    @property
    def bits_per_weight(self) -> float:
        return self.block_bytes * 8 / self.block_size


@dataclass(frozen=True, slots=True)
class RecipeRule:
    """One conditional override of a quant's tensor type, applied in order (the last match wins).

    Mirrors a branch of llama.cpp's `llama_tensor_get_type`: e.g. Q4_K_M stores attn_v and ffn_down
    of the "use_more_bits" layers as Q6_K.
    """

    tensor: str  # a tensor class ("ffn_down_exps") or a llama.cpp category ("ffn_down", "attn_v")
    type: str  # storage type id
    # "all", "more_bits" (first 1/8, last 1/8, every third between), "first_8th", "first_16th",
    # "middle" (1/8 .. 7/8), "first:N" (layer index < N)
    layers: str = "all"
    # conditions that must all hold: "<key><op><int>", keys gqa, experts, layers, hidden,
    # native_mxfp4, tied; ops == != >= <= > <
    when: tuple[str, ...] = ()
    from_types: tuple[str, ...] = ()  # only when the type chosen so far is one of these


@dataclass(frozen=True, slots=True)
class Quant:
    id: str  # "Q4_K_M", "AWQ", "FP8", ...
    format: Literal["gguf", "serving", "mlx"]
    aliases: tuple[str, ...]
    # Effective bits per weight over a whole typical model, including the tensors kept at higher
    # precision: the fallback when per-tensor accounting is not possible.
    bpw: float
    # Per-tensor recipe: tensor class or category -> storage type id (a `GgmlType`), with the key
    # "default" for every quantizable 2-D tensor not named. Classes: token_embd, output, attn_q,
    # attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down, ffn_{gate,up,down}_exps (routed
    # experts), ffn_{gate,up,down}_shexp, norm (1-D), router, ... (see core/estimator/weights.py).
    recipe: dict[str, str] = field(default_factory=dict)
    quality: int = 50  # 0..100 rough quality rank, to pick "the next lower quant"
    min_compute_capability: float | None = None  # NVIDIA kernels that need it (FP8: 8.9)
    notes: str = ""
    # Conditional overrides after `recipe`, in order (llama.cpp's per-layer rules).
    rules: tuple[RecipeRule, ...] = ()
    extends: str = ""  # id of a quant whose recipe and rules come first (bartowski's _L variants)
    source: str = ""
