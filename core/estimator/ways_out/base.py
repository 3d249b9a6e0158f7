"""What every way out says about itself: the class-level facts other code reads (instead of sets of
kind strings), when it applies, the `Remedy` it proposes with the engine's figure, and what that
changes in the run a launch command places (`Placed`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, ClassVar, Literal, NamedTuple

from core.catalog.kv_cache import KvCacheType
from core.catalog.loader import Catalog
from core.catalog.pricing_sections import RemedyRules
from core.catalog.sections import sections
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy

if TYPE_CHECKING:  # the cases read memory_fit, which reads `remedy`: only their types are needed here
    from core.estimator.ways_out.cases import CardCase, CpuCase

# Tiers: what people pick first, quality first (a lower tier is offered first). A way out that
# changes nothing the user cares about (a q8_0 cache) beats any speed; more cards cost money; a
# 1-2-bit quant answers worse, so it only comes after everything else.
LOW_BIT_TIER = 7.0
SLOW_OFFLOAD_TIER = (
    5.5  # an offload slower than [remedy] min_usable_tps: after a >= 3-bit quant, before cards
)
WIRED_LOWER_QUANT_TIER = 5.2  # a lower quant that also needs the wired limit raised: after one that doesn't


@dataclass(frozen=True, slots=True)
class Facts:
    """What the rest of the bot needs to know about a kind of way out, declared with its class."""

    tier: float  # its rank among the ways out of one row (see the tiers above)
    runs_here: bool = False  # runs on this very machine as it is: the focus row and fit verdict lead with it
    has_command: bool = False  # gets a launch command (runs here, or a file / a sysctl away on this box)
    on_card: bool = False  # runs wholly on the card(s): a card's calibration moves it as it moves the table
    in_ram: bool = False  # keeps part of the model in system RAM (layer or MoE expert offload)


class Placed(NamedTuple):
    """The run a launch command places, as a way out leaves it (core/estimator/placement.py)."""

    quant: str
    context: int
    kv_type: KvCacheType
    n_gpu_layers: int | Literal["all"]
    n_cpu_moe: int | None
    cards: int
    fits: bool  # the framework engine may treat the model as fitting the card(s)


class WayOut:
    """One way out. A subclass sets `kind` and `facts` and overrides what applies to it: `applies` /
    `propose` for a row on card(s), `applies_cpu` / `propose_cpu` for a CPU-only row, `placed` for
    what its remedy changes in the run, `tier` when its rank depends on the remedy's figures."""

    __slots__ = ()
    kind: ClassVar[WayOutKind]
    facts: ClassVar[Facts]

    def applies(self, case: CardCase) -> bool:
        """Whether this way out is worth pricing for a no-fit row on card(s)."""
        return False

    def propose(self, case: CardCase) -> Remedy | None:
        """The remedy with its figures, priced like the table; None when no setup of it fits."""
        return None

    def applies_cpu(self, case: CpuCase) -> bool:
        return False

    def propose_cpu(self, case: CpuCase) -> Remedy | None:
        return None

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        """The run with this remedy applied (unchanged by default: it runs elsewhere, or not at all)."""
        return at

    def tier(self, remedy: Remedy, rules: RemedyRules) -> float:
        return self.facts.tier


def swapped(remedy: Remedy, at: Placed) -> Placed:
    """A way out that loads another file, context or card count and then fits."""
    quant, context, cards = remedy.quant or at.quant, remedy.context or at.context, remedy.cards or at.cards
    return at._replace(quant=quant, context=context, cards=cards, fits=True)


def offload_tier(facts: Facts, remedy: Remedy, rules: RemedyRules) -> float:
    """An offload too slow to use drops below the quants that fit."""
    return SLOW_OFFLOAD_TIER if (remedy.decode_mid or 0.0) < rules.min_usable_tps else facts.tier


@cache
def remedy_rules(catalog: Catalog) -> RemedyRules:
    """[remedy] in catalogs/estimator.toml (kept per catalog: every way out reads it)."""
    return sections(catalog).estimator.remedy
