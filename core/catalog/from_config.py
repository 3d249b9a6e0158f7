"""A Hugging Face `config.json` -> the catalog's `Model` (architecture fields) plus a parameter count.

Which families can be read, and how, is the architecture registry's (`core.catalog.architectures`:
one module per architecture, found by `model_type`); this module splits wrapper configs, picks the
reader, and turns its reading into a `Model` with a parameter count. Only families whose layer
layout the `Model` schema can describe are read; anything else is a `ConfigError` naming the
`model_type` or the missing field -- a wrong architecture silently read would size the wrong
model. Metadata a config does not carry (aliases, release month, popularity, GGUF repos)
is the caller's: `models sync` keeps what the catalog entry already has.

The count is the decoder the catalog sizes (`Model.params_b`: embeddings, attention, FFN/experts,
norms) plus what the safetensors also hold -- MTP/NextN layers and the vision tower -- so it can be
compared with a published safetensors total.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from core.catalog.architectures.fields import Config, ConfigError
from core.catalog.architectures.registry import base_reader, reader_for
from core.catalog.architectures.transformer import placeholder
from core.catalog.config_bounds import ConfigRangeError, check_config, check_reading
from core.catalog.hub_limits import ConfigLimits
from core.catalog.model import Model
from core.i18n import Note


@dataclass(frozen=True, slots=True)
class ParamCount:
    decoder: int  # what Model.params_b holds: text decoder incl. embeddings and norms
    active: int  # decoder parameters used per token
    mtp: int = 0  # multi-token-prediction (NextN) layers shipped in the checkpoint
    # vision tower + projector; None: the config has one whose layout is not known here (not counted)
    vision: int | None = 0

    @property
    def total(self) -> int:
        """Everything the checkpoint stores (comparable with a safetensors parameter total)."""
        return self.decoder + self.mtp + (self.vision or 0)


@dataclass(frozen=True, slots=True)
class ConfigReading:
    model: Model
    params: ParamCount
    model_type: str


_placeholder = placeholder
__all__ = ["ConfigError", "ConfigRangeError", "ConfigReading", "ParamCount", "merge_into", "read_config"]


def _split(config: Config) -> tuple[Config, Config | None, str]:
    """(text config, vision config, model_type) of a plain or a vision-language config."""
    model_type = config.get("model_type")
    if not isinstance(model_type, str) or not model_type:
        raise ConfigError("config.json has no 'model_type'")
    text = config.get("text_config")
    vision = config.get("vision_config")
    if isinstance(text, Mapping):
        merged = dict(text)
        # Wrappers keep a few text facts at the top level (Qwen3-VL: tie_word_embeddings).
        for key in ("tie_word_embeddings",):
            if key not in merged and key in config:
                merged[key] = config[key]
        return merged, vision if isinstance(vision, Mapping) else None, model_type
    return config, vision if isinstance(vision, Mapping) else None, model_type


def _native_quant(config: Config, t: Config) -> str:
    for cfg in (config, t):
        quant = cfg.get("quantization_config")
        if isinstance(quant, Mapping):
            method = str(quant.get("quant_method", "")).lower()
            if method == "fp8":
                return "FP8"
            if method == "mxfp4":
                return "MXFP4"
            if method == "compressed-tensors":
                return _compressed_tensors_kind(quant)
            if method:
                return method.upper()
    return ""


def _weight_schemes(quant: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The `weights` scheme of each compressed-tensors config group (one per targeted layer set)."""
    groups = (quant.get("config_groups") or {}).values()
    return [g.get("weights") or {} for g in groups if isinstance(g, Mapping)]


def _compressed_tensors_kind(quant: Mapping[str, Any]) -> str:
    """ "INT4" for Kimi K2.5's pack-quantized experts: the weights' type and bit width."""
    for weights in _weight_schemes(quant):
        if weights.get("num_bits"):
            return f"{str(weights.get('type', 'int')).upper()}{weights['num_bits']}"
    return "COMPRESSED-TENSORS"


def _native_expert_quant(config: Config, t: Config) -> str:
    """ "MLC_Q4_G32" for a compressed-tensors release whose routed experts are symmetric INT4 in
    groups of 32 (Kimi K2.5 / K2-Thinking: attention, shared experts and dense MLPs are in `ignore`,
    so only the routed experts carry it): 4 bits plus one 16-bit scale per 32 weights, the layout
    catalogs/quants.toml names MLC_Q4_G32. Any other layout: "" (the experts take the row's type)."""
    for cfg in (config, t):
        quant = cfg.get("quantization_config")
        if (
            not isinstance(quant, Mapping)
            or str(quant.get("quant_method", "")).lower() != "compressed-tensors"
        ):
            continue
        for w in _weight_schemes(quant):
            int4_g32 = w.get("num_bits") == 4 and w.get("group_size") == 32 and w.get("symmetric") is True
            if int4_g32 and str(w.get("type", "int")).lower() == "int":
                return "MLC_Q4_G32"
    return ""


def default_limits() -> ConfigLimits:
    """The shipped catalog's bounds (catalogs/hub.toml [limits.config])."""
    from core.catalog.loader import default_catalog
    from core.catalog.sections import sections

    return sections(default_catalog()).hub.limits.config


def read_config(
    config: Config,
    *,
    model_id: str = "",
    repo: str = "",
    source: str = "",
    limits: ConfigLimits | None = None,
) -> ConfigReading:
    """Read `config` (a parsed config.json) into a catalog Model and its parameter count.

    Raises ConfigError naming the model_type or field when the config cannot be read exactly, and
    ConfigRangeError (before any reader loops) when a value is outside what a real model has."""
    limits = limits or default_limits()
    check_config(config, limits)
    text, vision, model_type = _split(config)
    text_type = str(text.get("model_type") or model_type)
    arch = reader_for(model_type, text_type)
    if arch.normalise is not None and model_type in arch.model_types:
        text = arch.normalise(text, model_type)
    # Text configs of wrappers carry their own model_type (qwen3_vl_text); the readers key their
    # per-family details on the wrapper's type, which names the architecture.
    reading = base_reader(arch)(text, vision, model_type)
    check_reading(reading.fields, reading.total, limits)
    fields = dict(reading.fields, native_quant=_native_quant(config, text))
    if expert_quant := _native_expert_quant(config, text):
        fields["native_expert_quant"] = expert_quant
    probe = placeholder(fields, model_id, repo, source)
    params = ParamCount(decoder=reading.total, active=reading.active, mtp=reading.mtp, vision=reading.vision)
    model = replace(
        probe,
        params_b=_billions(reading.total),
        active_params_b=_billions(reading.active if probe.is_moe else reading.total),
        mtp_layers=int(reading.extra.get("mtp_layers", 0)),
    )
    return ConfigReading(model=model, params=params, model_type=model_type)


def _billions(count: int) -> float:
    """params_b as the catalog writes it: 2 decimals, 3 below 10B (0.27 would be 0.8 % off)."""
    return round(count / 1e9, 2 if count >= 10e9 else 3)


# ---------------------------------------------------------------- merging into a catalog entry

# What a config cannot know: the catalog entry keeps these as people wrote them.
METADATA_FIELDS = frozenset(
    {
        "id",
        "family",
        "name",
        "aliases",
        "release",
        "popularity",
        "draft_models",
        "hf_repo",
        "gguf_repo",
        "gguf_file_stem",
        "ollama_tag",
        "uses",  # what the release is tuned for ("code"): the model card's word, no config's
        "notes",
        "source",
    }
)


def merge_into(entry: Model, derived: Model) -> Model:
    """`entry` with every architecture field taken from `derived` (read from the config).

    rope_scaled_context keeps the longer of the two: model cards document YaRN contexts that the
    config itself does not carry (Qwen3: 32K native, 128K with YaRN)."""
    changes = {
        spec: getattr(derived, spec)
        for spec in Model.__dataclass_fields__
        if spec not in METADATA_FIELDS and spec != "rope_scaled_context"
    }
    scaled = max(entry.rope_scaled_context or 0, derived.rope_scaled_context or 0) or None
    source = entry.source
    if derived.source and derived.source not in source:
        source = f"{source} ; {derived.source}" if source else derived.source
    return replace(entry, **changes, rope_scaled_context=scaled, source=source)


# ---------------------------------------------------------------- checking a published count

PARAMS_MISMATCH = 0.02  # beyond this the config and the published weights disagree: say so


def params_check(derived: int, published: int | None) -> Note | None:
    """A note when the Hub's safetensors total and the count derived from config.json differ by
    more than 2 %: the architecture read may be wrong, or the checkpoint stores something else
    (quantized packing, an extra tower). None when they agree or nothing was published."""
    if not published or derived <= 0:
        return None
    off = derived / published - 1
    if abs(off) <= PARAMS_MISMATCH:
        return None
    return Note(
        "hub.params_mismatch",
        {
            "derived_b": f"{derived / 1e9:.2f}",
            "published_b": f"{published / 1e9:.2f}",
            "pct": f"{off * 100:+.1f}",
        },
    )
