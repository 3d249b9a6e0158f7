"""Quantization formats: ggml storage types and named quants with their per-tensor recipes."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal


@dataclass(frozen=True, slots=True)
class GgmlType:
    """A ggml tensor storage type: `block_bytes` bytes hold `block_size` weights."""

    id: str  # "Q4_K", "Q6_K", "F16", ...
    block_size: int
    block_bytes: int

    @property
    def bits_per_weight(self) -> float:
        return self.block_bytes * 8 / self.block_size


@dataclass(frozen=True, slots=True)
class Quant:
    id: str  # "Q4_K_M", "AWQ", "FP8", ...
    format: Literal["gguf", "serving", "mlx"]
    aliases: tuple[str, ...]
    # Effective bits per weight over a whole typical model, including the tensors kept at higher
    # precision: the fallback when per-tensor accounting is not possible.
    bpw: float
    # Per-tensor recipe: tensor class -> ggml type id (gguf) or "bits:<n>" for serving formats.
    # Classes: token_embd, output, attn_q, attn_k, attn_v, attn_output, ffn_gate, ffn_up, ffn_down,
    # ffn_down_exp, ffn_gate_exp, ffn_up_exp, ... (see core/estimator/weights.py).
    recipe: dict[str, str] = field(default_factory=dict)
    quality: int = 50  # 0..100 rough quality rank, to pick "the next lower quant"
    min_compute_capability: float | None = None  # NVIDIA kernels that need it (FP8: 8.9)
    notes: str = ""
