"""More discrete cards of the same kind, with the count (up to `MAX_CARDS`): other hardware, so no
command, and after every way out that runs on this box."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.estimator.frameworks.serving_setup import is_serving_setup, serving_rules
from core.estimator.memory import GIB, SERVING_ENGINES, constants, discrete_per_card_gib, engine_of
from core.estimator.memory_fit import NoFitRow, decode_range, engine_card_room, fits, packs
from core.estimator.ways_out.base import Facts, Placed, WayOut, swapped
from core.estimator.ways_out.cases import CardCase
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy

MAX_CARDS = 16


@dataclass(frozen=True, slots=True)
class MoreCards(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.MORE_CARDS
    facts: ClassVar[Facts] = Facts(tier=6.0, on_card=True)

    def applies(self, case: CardCase) -> bool:
        return not case.row.request.setup.gpu.unified_memory  # no card to add to unified memory

    def propose(self, case: CardCase) -> Remedy | None:
        row = case.row
        weights_and_kv = row.weights.gpu_bytes_full_offload + row.kv_bytes
        cards = _cards_that_fit(row, weights_and_kv)
        if not cards:
            return None
        total = weights_and_kv + row.buffer * cards
        lo, mid, hi = decode_range(row, row.full_read, count=cards)
        return Remedy(self.kind, mid, lo, hi, round(total / GIB, 2), cards=cards)

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        return swapped(remedy, at)


def _cards_that_fit(row: NoFitRow, fixed: float) -> int:
    """The fewest discrete cards above the setup's count (up to MAX_CARDS) that fit `fixed` bytes
    (weights + KV) plus one compute buffer per card, whole layers per card on a llama.cpp layer split;
    0 when even MAX_CARDS don't."""
    setup, buffer, catalog = row.request.setup, row.buffer, row.catalog
    const = constants(catalog)
    engine = engine_of(row.rt.framework, catalog)
    # vLLM / SGLang split tensor parallel over 1/2/4/8 cards a node, whatever the setup asked
    served = engine in SERVING_ENGINES or is_serving_setup(setup.gpu, setup.count, None, catalog)
    tp_sizes = serving_rules(catalog).tp_sizes
    for cards in range(setup.count + 1, MAX_CARDS + 1):
        if served and cards not in tp_sizes and cards % max(tp_sizes):
            continue  # vLLM / SGLang split over 1/2/4/8 cards a node (6 H100 are bought as 8)
        per_card = discrete_per_card_gib(setup.memory_gib, cards, setup.os, const)
        # vLLM / SGLang fill their share of each card, as the row itself was judged (8x H100 hold
        # ~589 GiB under vLLM, not DeepSeek-V3 FP8's 631).
        room = engine_card_room(engine, row.request, cards, buffer, catalog)
        per_card = per_card if room is None else min(per_card, room / GIB)
        if not fits(fixed + buffer * cards, per_card * cards * GIB, const.smooth_fraction):
            continue
        usable = (per_card * GIB,) * cards if row.layer_split else ()
        if packs(row, row.weights, row.kv_bytes, buffer, usable=usable):
            return cards
    return 0
