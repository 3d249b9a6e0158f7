"""Mamba-2 mixers (Nemotron-H), counted and sized as transformers and llama.cpp hold them.

One mixer, d_inner = heads x head_dim SSM channels, G groups of B/C of size N (d_state), conv kernel K:
- in_proj: hidden -> 2*d_inner (x, gate z) + 2*G*N (B, C) + heads (dt);
- conv1d over x, B, C (conv_dim = d_inner + 2*G*N): weight conv_dim x K, bias conv_dim;
- dt_bias, A_log, D (one per head); the gated RMSNorm (d_inner); out_proj d_inner -> hidden.
Per-sequence state (llama.cpp, f32): the conv window (K-1) x conv_dim and the SSM state
heads x head_dim x N.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.catalog.architectures.fields import Config, int_field, opt_int
from core.catalog.architectures.parts import Tensor
from core.catalog.model import Model


@dataclass(frozen=True, slots=True)
class Mamba2:
    hidden: int
    heads: int
    head_dim: int
    groups: int
    state: int
    kernel: int
    conv_bias: bool = True
    proj_bias: bool = False

    @property
    def inner(self) -> int:
        return self.heads * self.head_dim

    @property
    def conv_dim(self) -> int:
        return self.inner + 2 * self.groups * self.state

    def params(self) -> int:
        h, inner, conv = self.hidden, self.inner, self.conv_dim
        in_out = 2 * inner + 2 * self.groups * self.state + self.heads
        in_proj = h * in_out + (in_out if self.proj_bias else 0)
        conv1d = conv * self.kernel + (conv if self.conv_bias else 0)
        out_proj = inner * h + (h if self.proj_bias else 0)
        return in_proj + conv1d + 3 * self.heads + inner + out_proj

    def state_bytes(self) -> int:
        """One sequence's recurrent state in f32."""
        return ((self.kernel - 1) * self.conv_dim + self.inner * self.state) * 4


def mamba2_from(cfg: Config, mt: str, hidden: int) -> Mamba2:
    """The mixer of a Nemotron-H style config (mamba_num_heads, mamba_head_dim, n_groups, ...)."""
    return Mamba2(
        hidden=hidden,
        heads=int_field(cfg, "mamba_num_heads", mt),
        head_dim=int_field(cfg, "mamba_head_dim", mt),
        groups=opt_int(cfg, "n_groups") or 1,
        state=int_field(cfg, "ssm_state_size", mt),
        kernel=int_field(cfg, "conv_kernel", mt),
        conv_bias=bool(cfg.get("use_conv_bias", True)),
        proj_bias=bool(cfg.get("mamba_proj_bias", False)),
    )


def mamba2_fields(mixer: Mamba2, n_layers: int) -> dict[str, object]:
    """The Model's linear-attention fields for `n_layers` Mamba-2 mixers."""
    return {
        "linear_kind": "mamba2",
        "linear_key_heads": mixer.groups,
        "linear_key_head_dim": mixer.state,
        "linear_value_heads": mixer.heads,
        "linear_value_head_dim": mixer.head_dim,
        "linear_conv_kernel": mixer.kernel,
        "linear_state_mib": n_layers * mixer.state_bytes() / 2**20,
    }


# ---------------------------------------------------------------- weight tensors (catalog rows)

_MAMBA2_DEFAULTS = {"head_dim": 64, "state": 128, "groups": 1, "kernel": 4, "expand": 2}


def mamba2_tensor_shape(model: Model, derived: list[str]) -> tuple[int, int, int, int, int]:
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


def mamba2_tensors(h: int, layer: int, shape: tuple[int, int, int, int, int]) -> list[Tensor]:
    """One Mamba-2 mixer as llama.cpp's nemotron_h / granite_hybrid hold it: ssm_in (x, z, B, C,
    dt), ssm_conv1d (F32: convert_hf_to_gguf writes it so and llama-quantize skips it), its bias,
    ssm_dt bias, ssm_a and ssm_d (one per head, not quantized), the gated norm, ssm_out."""
    heads, head_dim, groups, state, kernel = shape
    inner = heads * head_dim
    conv_dim = inner + 2 * groups * state
    return [
        Tensor("ssm_in", "other", layer, h, 2 * inner + 2 * groups * state + heads),
        Tensor("ssm_conv1d", "other", layer, kernel * conv_dim, 1, one_d=True),
        Tensor("ssm_conv1d_b", "other", layer, conv_dim, 1, one_d=True),
        Tensor("ssm_dt_a_d", "other", layer, 3 * heads, 1, one_d=True),
        Tensor("ssm_norm", "other", layer, inner, 1, one_d=True),
        Tensor("ssm_out", "other", layer, inner, h),
    ]
