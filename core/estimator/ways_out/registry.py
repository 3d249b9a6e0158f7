"""The ways out, in one ordered registry, and the look-up by kind every other module reads.

The order is the order they are priced in; ties in rank (ranking.py) keep it, so it is part of the
answer. A new way out is a class in a module of its own, listed here, with its `reply.remedy.<kind>`
message (catalogs/messages/reply.toml) and a member of `WayOutKind`.
"""

from __future__ import annotations

from collections.abc import Mapping

from core.estimator.ways_out.base import Facts, WayOut
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.kv_quant import KvQuant
from core.estimator.ways_out.lower_quant import LowerQuant
from core.estimator.ways_out.more_cards import MoreCards
from core.estimator.ways_out.more_ram import MoreRam
from core.estimator.ways_out.offload import ExpertOffload, LayerOffload
from core.estimator.ways_out.outcomes import CpuOnly, HostShort, NoWayOut
from core.estimator.ways_out.shorter_context import ShorterContext
from core.estimator.ways_out.wired_limit import MacWiredLimit

# Quality first: the order of the tiers (base.py), which `find` walks for every no-fit row.
WAYS_OUT: tuple[WayOut, ...] = (
    KvQuant(),
    MacWiredLimit(),
    ShorterContext(),
    ExpertOffload(),
    LayerOffload(),
    LowerQuant(),
    MoreCards(),
    MoreRam(),
)
_OUTCOMES: tuple[WayOut, ...] = (NoWayOut(), HostShort(), CpuOnly())

_BY_KIND: Mapping[WayOutKind, WayOut] = {w.kind: w for w in (*WAYS_OUT, *_OUTCOMES)}
# Every kind has exactly one class, so every look-up below finds one.
assert set(_BY_KIND) == set(WayOutKind) and len(_BY_KIND) == len(WAYS_OUT) + len(_OUTCOMES)


def way_out(kind: WayOutKind) -> WayOut:
    """The class of `kind` (its facts, what its remedy changes, its rank)."""
    return _BY_KIND[kind]


def facts(kind: WayOutKind) -> Facts:
    return _BY_KIND[kind].facts
