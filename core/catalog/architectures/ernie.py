"""ERNIE 4.5 text models (`ernie4_5`: ERNIE-4.5-0.3B; `ernie4_5_moe`: ERNIE-4.5-21B-A3B, 300B-A47B).

What transformers' modeling_ernie4_5(_moe) builds per layer: q/k/v/o (biases on every linear layer
when `use_bias`, which the schema cannot say: refused), a SwiGLU MLP, two RMSNorms. The MoE layers
are those from `moe_layer_start_index` to `moe_layer_end_index` every `moe_layer_interval`: routed
experts of `moe_intermediate_size` behind a router `gate` (hidden x experts, no bias) with its
`moe_statics.e_score_correction_bias` (one per expert), plus `moe_num_shared_experts` shared
experts of the same width; the leading dense layers use `intermediate_size`.

The schema's MoE placement is "after the first k dense layers, every layer": a config whose MoE
layers stop before the last layer or skip layers is refused. The result is the config in the
generic MoE reader's keys (num_experts, first_k_dense_replace, n_shared_experts, ...). ERNIE-VL's
per-modality lists (`moe_num_experts` as a list) are refused too.
"""

from __future__ import annotations

from typing import Any

from core.catalog.architectures.fields import Config, ConfigError, int_field, opt_int
from core.catalog.architectures.registry import Architecture, register

ERNIE_TYPES = frozenset({"ernie4_5", "ernie4_5_moe"})

_RENAMED = {
    "moe_num_experts",
    "moe_k",
    "moe_num_shared_experts",
    "moe_layer_start_index",
    "moe_layer_end_index",
    "moe_layer_interval",
}


def _scalar(t: Config, key: str, mt: str) -> int | None:
    value = t.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{mt}: {key} {value!r} is not one integer (per-modality lists are not read)")
    return value


def normalise_ernie(t: Config, mt: str) -> dict[str, Any]:
    """`t` in the generic readers' keys; ConfigError for what the schema cannot describe."""
    if t.get("use_bias"):
        raise ConfigError(f"{mt}: use_bias (biases on every linear layer) is not representable")
    out = {k: v for k, v in t.items() if k not in _RENAMED}
    if mt == "ernie4_5":
        return out
    layers = int_field(t, "num_hidden_layers", mt)
    experts = _scalar(t, "moe_num_experts", mt)
    top_k = _scalar(t, "moe_k", mt)
    width = _scalar(t, "moe_intermediate_size", mt)
    if not experts or not top_k or not width:
        raise ConfigError(f"{mt}: config.json needs moe_num_experts, moe_k and moe_intermediate_size")
    start = opt_int(t, "moe_layer_start_index") or 0
    end = opt_int(t, "moe_layer_end_index")
    if end is not None and end not in (-1, layers - 1):
        raise ConfigError(f"{mt}: moe_layer_end_index {end} leaves trailing dense layers (not representable)")
    if (opt_int(t, "moe_layer_interval") or 1) != 1:
        raise ConfigError(
            f"{mt}: moe_layer_interval {t['moe_layer_interval']} (MoE every n-th layer) is not read"
        )
    out.update(
        num_experts=experts,
        num_experts_per_tok=top_k,
        moe_intermediate_size=width,
        n_shared_experts=opt_int(t, "moe_num_shared_experts") or 0,
        first_k_dense_replace=start,
        # transformers' Ernie4_5_MoeStatics: a correction bias per expert in every MoE layer.
        use_routing_bias=True,
    )
    return out


# Keys normalised first; then read as the generic dense (0.3B) or MoE layout.
register(
    Architecture("ernie4_5", model_types=frozenset({"ernie4_5"}), normalise=normalise_ernie, base="dense")
)
register(
    Architecture(
        "ernie4_5_moe", model_types=frozenset({"ernie4_5_moe"}), normalise=normalise_ernie, base="moe"
    )
)
