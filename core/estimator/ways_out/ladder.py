"""The ladders a way out walks down: the contexts below the asked one, and the quants of the same
format below the row's (each with its weights), the same for every no-fit row of a grid."""

from __future__ import annotations

from functools import cache

from core.catalog.kv_cache import KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.quant import Quant
from core.catalog.sections import sections
from core.estimator.memory import compute_buffer_bytes, constants, kv_cache_bytes
from core.estimator.weights import WeightBreakdown, weight_breakdown


@cache
def ladder_contexts(catalog: Catalog) -> tuple[int, ...]:
    """The contexts a shorter-context way out walks down, longest first: the table's and the stops
    between them ([ladder] shorter_contexts)."""
    ladder = sections(catalog).estimator.ladder
    return tuple(sorted(set(ladder.contexts) | set(ladder.shorter_contexts), reverse=True))


@cache
def _lower_quants(quant_id: str, catalog: Catalog, own: tuple[str, ...] = ()) -> tuple[Quant, ...]:
    """Ladder quants of the same format below this one, best first (the same for every row); `own`:
    the framework's own ladder (ExLlamaV2's EXL2 6.0 / 5.0 / 4.0 bpw), whose members the estimator's
    ladders don't hold, also count."""
    current = catalog.quants[quant_id]
    lower = (
        q
        for q in catalog.quants.values()
        if q.format == current.format
        and q.quality < current.quality
        and (_is_ladder_quant(q.id, catalog) or q.id in own)
    )
    return tuple(sorted(lower, key=lambda q: -q.quality))


Lower = tuple[tuple[Quant, WeightBreakdown], ...]
_LOWER: dict[tuple[int, str, int, tuple[str, ...]], tuple[Lower, Model, Catalog]] = {}


def lower_weights(model: Model, quant_id: str, catalog: Catalog, own: tuple[str, ...] = ()) -> Lower:
    """`_lower_quants` with each one's weights: every no-fit row of a quant walks this same list.
    Kept per identity (see `weight_breakdown`); the entry keeps the model and catalog alive."""
    key = (id(model), quant_id, id(catalog), own)
    hit = _LOWER.get(key)
    if hit is not None and hit[1] is model and hit[2] is catalog:
        return hit[0]
    pairs = tuple((q, weight_breakdown(model, q, catalog)) for q in _lower_quants(quant_id, catalog, own))
    if len(_LOWER) >= 65536:
        _LOWER.clear()
    _LOWER[key] = (pairs, model, catalog)
    return pairs


def natively_gguf(model: Model, catalog: Catalog) -> bool:
    """A release quantized natively in a GGUF type (gpt-oss MXFP4): its own format is the only one
    published, so there is no lower quant of it to offer."""
    native = catalog.quants.get(model.native_quant or "")
    return native is not None and native.format == "gguf"


def _is_ladder_quant(quant_id: str, catalog: Catalog) -> bool:
    return quant_id in _ladder_quants(catalog)


@cache
def _ladder_quants(catalog: Catalog) -> frozenset[str]:
    ladder = sections(catalog).estimator.ladder
    return frozenset(ladder.remedy) | frozenset(ladder.serving) | frozenset(ladder.mlx)


def on_card_bytes(
    model: Model, weights: WeightBreakdown, ctx: int, kv_type: KvCacheType, catalog: Catalog, cards: int
) -> float:
    """What a row at `ctx` holds on its card(s) with every weight there: the weights, the KV cache
    and one compute buffer per card (the shorter-context and smaller-file ways out price the same)."""
    fa = constants(catalog).flash_attention
    return (
        weights.gpu_bytes_full_offload
        + kv_cache_bytes(model, ctx, kv_type, catalog)
        + compute_buffer_bytes(model, ctx, catalog, fa) * cards
    )
