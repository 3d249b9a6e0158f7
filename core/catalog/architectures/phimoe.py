"""Phi-3.5-MoE (`phimoe`, Microsoft): Mixtral's layout with LayerNorms and biases.

16 experts, 2 per token, `intermediate_size` the expert width (as Mixtral's); q/k/v/o carry biases
(attention_bias), every norm is a LayerNorm with a bias, and the lm_head has one (lm_head_bias).
KV cache: plain GQA (its sliding_window equals the context). Checked against Phi-3.5-MoE-instruct's
published 41,873,153,344.
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config
from core.catalog.architectures.registry import Architecture, register
from core.catalog.model import Model


def _as_mixtral(t: Config, mt: str) -> Config:
    return t


def _biases(t: Config, m: Model, full: bool) -> int:
    return 3 * m.hidden  # o_proj bias, and the bias of each of the two LayerNorms


def _head_biases(t: Config, m: Model) -> int:
    return m.hidden + (m.vocab if t.get("lm_head_bias") else 0)  # final LayerNorm bias, lm_head bias


register(
    Architecture(
        "phimoe",
        model_types=frozenset({"phimoe"}),
        normalise=_as_mixtral,
        base="moe",
        layer_extra=_biases,
        head_extra=_head_biases,
    )
)
