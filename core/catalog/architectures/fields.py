"""Reading typed fields out of a parsed config.json, with errors that name the model_type and key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

Config = Mapping[str, Any]


class ConfigError(ValueError):
    """The config cannot be read as a catalog model; the message names the model_type or field."""


def req(cfg: Config, key: str, model_type: str) -> Any:
    value = cfg.get(key)
    if value is None:
        raise ConfigError(f"{model_type}: config.json has no {key!r}")
    return value


def int_field(cfg: Config, key: str, model_type: str) -> int:
    value = req(cfg, key, model_type)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{model_type}: {key!r} is {value!r}, not an integer")
    return value


def opt_int(cfg: Config, key: str, default: int | None = None) -> int | None:
    value = cfg.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


@dataclass(frozen=True, slots=True)
class LayerwiseReading:
    """What a family reader that counts layer by layer returns: the Model's architecture fields and
    the counts (stored and active decoder parameters, vision tower; None = tower not counted)."""

    fields: dict[str, Any]
    total: int
    active: int
    vision: int | None = 0
    mtp: int = 0
    extra: dict[str, Any] = field(default_factory=dict)


def shape_fields(
    layers: int, hidden: int, heads: int, kv_heads: int, head_dim: int, vocab: int, max_context: int
) -> dict[str, int]:
    """The Model fields every reader sets the same way: the decoder's shape and context."""
    return {
        "layers": layers,
        "hidden": hidden,
        "heads": heads,
        "kv_heads": kv_heads,
        "head_dim": head_dim,
        "vocab": vocab,
        "max_context": max_context,
    }
