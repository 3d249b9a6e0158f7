"""EXAONE 4.0 (`exaone4`, LG AI Research): the llama layout, norms after each block, q/k norms,
three sliding-window layers to one global.

Each layer has post_attention_layernorm and post_feedforward_layernorm (two norms, as the generic
count has) and per-head q/k RMSNorms. The 32B interleaves: `layer_types` (or the older
`sliding_window_pattern` "LLLG": L local, G global) -- read as swa_hybrid; the 1.2B has no window
(every layer global). Checked against EXAONE-4.0-32B's published 32,003,216,384.
"""

from __future__ import annotations

from core.catalog.architectures.fields import Config, ConfigError
from core.catalog.architectures.registry import Architecture, register
from core.catalog.model import Model


def _layer_types(t: Config, mt: str) -> Config:
    pattern = t.get("sliding_window_pattern")
    if t.get("layer_types") or not t.get("sliding_window") or not isinstance(pattern, str) or not pattern:
        return t
    if set(pattern) - {"L", "G"}:
        raise ConfigError(f"{mt}: sliding_window_pattern {pattern!r} is not L/G letters")
    layers = t.get("num_hidden_layers")
    if not isinstance(layers, int):
        return t  # the dense reader names the missing key
    kinds = [
        "full_attention" if pattern[i % len(pattern)] == "G" else "sliding_attention" for i in range(layers)
    ]
    return {**t, "layer_types": kinds}


def _qk_norm_per_head(t: Config, m: Model, full: bool) -> int:
    return 2 * m.head_dim


register(
    Architecture(
        "exaone4",
        model_types=frozenset({"exaone4"}),
        normalise=_layer_types,
        base="dense",
        layer_extra=_qk_norm_per_head,
    )
)
