"""What the intent replies share: short ASCII labels for cards and models, one cached single-row
estimate, and a cheap lower bound on a quant's weights so that a list of forty models does not pay
for forty "doesn't fit" estimates (each searches its ways out)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from core.catalog.gpu import Gpu
from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.estimator.estimate import EstimateRequest, Row, Setup, estimate
from core.estimator.setup import HostSpec, build_setup
from core.understanding.intent import intents_table

GIB = 1024**3
_PAREN = re.compile(r"\s*\(.*?\)")
_PREFIXES = ("GeForce ", "NVIDIA ", "AMD ", "Apple ", "Radeon ", "Tesla ", "Intel ")


def config(catalog: Catalog, key: str) -> dict[str, Any]:
    section: dict[str, Any] = intents_table(catalog).get(key, {})
    return section


def card_label(gpu: Gpu) -> str:
    """ "GeForce RTX 3090" -> "RTX 3090", "AMD Ryzen AI Max+ 395 (Strix Halo ...)" -> "Ryzen AI Max+ 395"."""
    name = _PAREN.sub("", gpu.name)
    for prefix in _PREFIXES:
        name = name.removeprefix(prefix)
    return name if name.isascii() else gpu.id


def short_card_label(gpu: Gpu, width: int = 12) -> str:
    """A card's label for a table cell: `card_label` when short enough, else its longest alias that is."""
    label = card_label(gpu)
    if len(label) <= width:
        return label
    short = [a for a in gpu.aliases if a.isascii() and len(a) <= width and any(ch.isdigit() for ch in a)]
    return max(short, key=len) if short else label[:width]


def model_label(model: Model, width: int = 16) -> str:
    """The display name when it is short enough, else the longest ASCII alias or id that is."""
    if model.name.isascii() and len(model.name) <= width:
        return model.name
    if len(model.id) <= width:
        return model.id
    names = [a for a in model.aliases if a.isascii() and not any(c in a for c in " /:")]
    short = [a for a in names if len(a) <= width and any(ch.isdigit() for ch in a)]
    # Cut to the cell: never ending on the hyphen the cut fell after ("qwen3-coder-30b-").
    return max(short, key=len) if short else model.id[:width].rstrip("-")


def prose_label(model: Model) -> str:
    """The label for a line of text, where a name someone can ask for matters more than width:
    `model_label`, or the catalog id where that label had to be cut ("qwen2.5-coder-32" names no
    model; "qwen2.5-coder-32b" does)."""
    label = model_label(model)
    return label if label in (model.name, model.id, *model.aliases) else model.id


def rough_weights_gib(model: Model, quant_bpw: float) -> float:
    """A lower bound on the weights at a quant: parameters × bits per weight, nothing else (the
    estimate adds embeddings kept at higher precision, KV cache and buffers)."""
    return model.params_b * 1e9 * quant_bpw / 8 / GIB * 0.97


def supported_context(model: Model) -> int:
    """The largest context the model runs at: its native window, or the rope-scaled (YaRN) one the
    catalog documents. Above the native one the row is `beyond_native` and needs rope scaling."""
    return max(model.max_context, model.rope_scaled_context or 0)


@lru_cache(maxsize=512)
def setup_for(
    catalog: Catalog,
    gpu_id: str,
    count: int,
    memory: float | None,
    os_name: str | None,
    ram: float | None,
    serving: bool = False,
) -> Setup:
    """`serving`: a serving question (vLLM / SGLang, N users): Linux assumed (core/estimator/setup.py)."""
    gpu = catalog.gpus[gpu_id]
    return build_setup(gpu, catalog, count, memory, os_name, HostSpec(ram_gib=ram), serving)


@dataclass(frozen=True, slots=True)
class RowAsk:
    """What a one-row estimate asks beyond the card, model, quant and context: the prompt and the
    depth its figures are read at (None: the context), the framework and backend (None: chosen)."""

    prompt: int = 512
    depth: int | None = None
    framework: str | None = None
    backend: str | None = None
    kv_type: KvCacheType = FULL_PRECISION_KV


PLAIN_ROW = RowAsk()


@lru_cache(maxsize=8192)
def one_row(
    catalog: Catalog, setup: Setup, model_id: str, quant: str, ctx: int, ask: RowAsk = PLAIN_ROW
) -> Row:
    """One quant × one context: the figures every intent table is made of (cached: chat groups ask
    the same cards and models over and over)."""
    model = catalog.models[model_id]
    ctx = min(ctx, supported_context(model))
    request = EstimateRequest(
        setup,
        model,
        (quant,),
        (ctx,),
        depth=ask.depth,
        prompt=ask.prompt,
        framework=ask.framework,
        backend=ask.backend,
        kv_type=ask.kv_type,
    )
    return estimate(request, catalog).rows[0]


def runs(row: Row, min_tps: float = 0.0) -> bool:
    return row.status != "no_fit" and row.decode_tps is not None and row.decode_tps.mid >= min_tps


def clear() -> None:
    setup_for.cache_clear()
    one_row.cache_clear()
