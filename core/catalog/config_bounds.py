"""A config.json checked against plausible ranges before any reader loops over it (issue 24).

A Hub repo is anyone's: `num_hidden_layers = 10**18` made the per-layer count loop for days in a
thread no budget could stop, `-4` layers priced a model at 21619 tok/s, a vocabulary of -1e9 gave
-2529.6 GiB, 0 heads a normal-looking table. So the whole document is walked once, iteratively
(a 100,000-deep nesting must not need 100,000 stack frames), with every bound from
catalogs/hub.toml [limits.config]: nesting depth, values in all, items per list, characters per
string, every named shape key within its range (wherever it appears: text config, vision config,
a wrapper's own keys), any other integer and float within a generous absolute bound, no NaN or
infinity. Outside any of them the config "can't be read" (`ConfigRangeError`): never a table.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from typing import Any

from core.catalog.architectures.fields import ConfigError
from core.catalog.hub_limits import ConfigLimits


class ConfigRangeError(ConfigError):
    """A config whose shape or numbers are outside what any real model has: not read at all."""


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
_BRACKET = re.compile(r"[\[\]{}]")


def check_json_depth(text: str, max_depth: int) -> None:
    """Raise ConfigRangeError when the JSON `text` nests deeper than `max_depth`, before it is parsed:
    the parser recurses once per level (a RecursionError deep in a worker thread otherwise)."""
    depth = 0
    for m in _BRACKET.finditer(_STRING.sub('""', text)):  # brackets inside strings don't count
        depth += 1 if m.group(0) in "[{" else -1
        if depth > max_depth:
            raise ConfigRangeError(f"nested deeper than {max_depth} levels")


def _number(key: str, value: object, limits: ConfigLimits) -> None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return
    if isinstance(value, float) and not math.isfinite(value):
        raise ConfigRangeError(f"{key!r} is {value!r}")
    bounds = limits.ranges.get(key)
    if bounds is not None:
        low, high = bounds
        if not low <= value <= high:
            raise ConfigRangeError(f"{key!r} is {value!r}, outside [{low:g}, {high:g}]")
        return
    cap = limits.max_int if isinstance(value, int) else limits.max_float
    if abs(value) > cap:
        raise ConfigRangeError(f"{key!r} is {value!r}, beyond any real model's")


def check_config(config: object, limits: ConfigLimits) -> None:
    """Raise ConfigRangeError when `config` (a parsed config.json) is outside `limits` anywhere."""
    # (key the value sits under, value, depth); a list's items keep their list's key.
    stack: list[tuple[str, Any, int]] = [("", config, 0)]
    nodes = 0
    while stack:
        key, value, depth = stack.pop()
        nodes += 1
        if nodes > limits.max_nodes:
            raise ConfigRangeError(f"more than {limits.max_nodes} values")
        if depth > limits.max_depth:
            raise ConfigRangeError(f"nested deeper than {limits.max_depth} levels")
        if isinstance(value, Mapping):
            if len(value) > limits.max_list:
                raise ConfigRangeError(f"{key or 'the config'!r} has {len(value)} keys")
            stack.extend((str(k), v, depth + 1) for k, v in value.items())
        elif isinstance(value, list | tuple):
            if len(value) > limits.max_list:
                raise ConfigRangeError(f"{key!r} lists {len(value)} items")
            stack.extend((key, v, depth + 1) for v in value)
        elif isinstance(value, str):
            if len(value) > limits.max_string:
                raise ConfigRangeError(f"{key!r} is a string of {len(value)} characters")
        else:
            _number(key, value, limits)


def check_reading(fields: Mapping[str, Any], total: int, limits: ConfigLimits) -> None:
    """The fields a reader derived, checked for sense: what no real model has is refused even when
    each key was in range (kv heads above heads, more active experts than experts, a count <= 0)."""
    for name in ("layers", "hidden", "heads", "kv_heads", "head_dim", "vocab"):
        value = fields.get(name)
        if isinstance(value, int) and value < 1:
            raise ConfigRangeError(f"{name} is {value}")
    heads, kv_heads = fields.get("heads"), fields.get("kv_heads")
    if isinstance(heads, int) and isinstance(kv_heads, int) and kv_heads > heads:
        raise ConfigRangeError(f"{kv_heads} KV heads for {heads} attention heads")
    experts, active = fields.get("experts"), fields.get("experts_active")
    if isinstance(experts, int) and isinstance(active, int) and active > experts:
        raise ConfigRangeError(f"{active} active experts of {experts}")
    if not 0 < total <= limits.max_params:
        raise ConfigRangeError(f"a parameter count of {total}")
