"""The architecture registry: readers found by config.json `model_type`, sizing by `Model.attention`.

Every module of this package that describes an architecture calls `register` at import time;
`reader_for` and `sizing_for` import them all on first use (so a new module is found without being
listed anywhere). A `model_type` or an attention kind claimed twice is an error at load.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from core.catalog.architectures.fields import Config, ConfigError, LayerwiseReading

if TYPE_CHECKING:
    from core.catalog.architectures.parts import KvShape, Tensor
    from core.catalog.model import Model

# (text config, vision config or None, model_type) -> architecture fields and counts
Reader = Callable[[Config, Config | None, str], LayerwiseReading]
# (text config, model_type) -> the config in another architecture's keys (read by `base`)
Normaliser = Callable[[Config, str], Config]
KvRule = Callable[["Model"], "KvShape"]
# (model, depth) -> cached values one decoded token reads; None: what the KvShape implies
KvReadRule = Callable[["Model", int], "int | None"]
# (model, layer) -> the layer's token-mixer tensors; None: shapes unknown (sized as GQA, then `rest`)
MixerRule = Callable[["Model", int], "list[Tensor] | None"]
# (model, derivation notes) -> the whole tensor list; None: the generic mixer + FFN layout
TensorsRule = Callable[["Model", list[str]], "list[Tensor] | None"]
# (model, head tensors, per-layer tensors, notes): fills in what unknown mixers left out
RestRule = Callable[["Model", "list[Tensor]", "list[list[Tensor]]", list[str]], None]
# (model, full-attention layer?) -> parameters of one layer's token mixer (its own norms included)
MixerParams = Callable[["Model", bool], int]
# (text config, model, full-attention layer?) -> a family's small per-layer tensors the generic count
# leaves out (q/k norms over all heads, LayerNorm biases, an o_proj bias)
LayerExtra = Callable[[Config, "Model", bool], int]
# (text config, model) -> the same once per model (the final norm's bias, an lm_head bias)
HeadExtra = Callable[[Config, "Model"], int]


@dataclass(frozen=True, slots=True)
class Architecture:
    """One architecture's reader and sizing rules; a hook left None takes the generic default."""

    name: str
    model_types: frozenset[str] = frozenset()  # config.json model_type / text_config.model_type
    attention: frozenset[str] = frozenset()  # Model.attention kinds whose sizing this module owns
    read: Reader | None = None
    normalise: Normaliser | None = None  # rewrite the config, then read it with `base`'s reader
    base: str = ""  # name of the architecture whose reader reads the normalised config
    unsupported: str = ""  # known, not representable: the reason a ConfigError gives
    kv_shape: KvRule | None = None
    kv_read: KvReadRule | None = None
    mixer: MixerRule | None = None
    tensors: TensorsRule | None = None
    rest: RestRule | None = None
    mixer_params: MixerParams | None = None
    layer_extra: LayerExtra | None = None
    head_extra: HeadExtra | None = None


@dataclass(slots=True)
class _Registry:
    by_name: dict[str, Architecture] = field(default_factory=dict)
    by_type: dict[str, Architecture] = field(default_factory=dict)
    by_attention: dict[str, Architecture] = field(default_factory=dict)
    loaded: bool = False


_REGISTRY = _Registry()
DEFAULT_ATTENTION = "full"  # the sizing of a kind no module claims (plain softmax attention)


def register(arch: Architecture) -> Architecture:
    """Add `arch`; a name, model_type or attention kind already claimed raises ValueError."""
    reg = _REGISTRY
    if arch.name in reg.by_name:
        raise ValueError(f"architecture {arch.name!r} registered twice")
    for key, table in [(t, reg.by_type) for t in arch.model_types] + [
        (k, reg.by_attention) for k in arch.attention
    ]:
        if key in table:
            raise ValueError(f"{arch.name}: {key!r} is already {table[key].name}'s")
    reg.by_name[arch.name] = arch
    reg.by_type.update(dict.fromkeys(arch.model_types, arch))
    reg.by_attention.update(dict.fromkeys(arch.attention, arch))
    return arch


def _load() -> _Registry:
    reg = _REGISTRY
    if not reg.loaded:
        reg.loaded = True
        package = importlib.import_module("core.catalog.architectures")
        for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
            importlib.import_module(f"{package.__name__}.{info.name}")
    return reg


def reader_for(model_type: str, text_type: str) -> Architecture:
    """The architecture that reads a config of `model_type` (or of its text config's type).

    Raises ConfigError for a known unsupported family or an unknown type."""
    reg = _load()
    for name in (model_type, text_type):
        arch = reg.by_type.get(name)
        if arch is not None and arch.unsupported:
            raise ConfigError(f"{name}: not supported yet: {arch.unsupported}")
    arch = reg.by_type.get(model_type) or reg.by_type.get(text_type)
    if arch is None:
        raise ConfigError(f"unknown model_type {model_type!r}: no reader for this architecture")
    return arch


def family_of(model_type: str) -> Architecture | None:
    """The architecture registered for `model_type` (its per-family extras), None when none is."""
    return _load().by_type.get(model_type)


def base_reader(arch: Architecture) -> Reader:
    """`arch`'s own reader, or that of its `base` (a normalising architecture)."""
    reg = _load()
    target = reg.by_name[arch.base] if arch.base else arch
    if target.read is None:
        raise ConfigError(f"{arch.name}: no reader")
    return target.read


def sizing_for(attention: str) -> Architecture:
    """The architecture that sizes models of this attention kind (the plain default otherwise)."""
    reg = _load()
    return reg.by_attention.get(attention) or reg.by_attention[DEFAULT_ATTENTION]


def architectures() -> tuple[Architecture, ...]:
    """Every registered architecture, in registration order."""
    return tuple(_load().by_name.values())
