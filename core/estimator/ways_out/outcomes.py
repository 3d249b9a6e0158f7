"""What a row's `remedy` can say that is no way out here: nothing runs it (`none`), the offload
needs more system RAM than the box has (`host_short`: the offload asked for, or the experts-in-RAM
way out on too small a box, which proposes it), or the CPU-only run asked for (`cpu`). Registered
beside the ways out so that every kind has its facts."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.estimator.ways_out.base import LOW_BIT_TIER, Facts, Placed, WayOut
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy

_NOT_RANKED = Facts(tier=LOW_BIT_TIER)  # never among one row's options: ranked last if it were


@dataclass(frozen=True, slots=True)
class NoWayOut(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.NONE
    facts: ClassVar[Facts] = _NOT_RANKED


@dataclass(frozen=True, slots=True)
class HostShort(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.HOST_SHORT
    # Proposed by the experts-in-RAM way out when the box has too little RAM for them: buying RAM
    # ranks just before buying cards (192 GB of DDR5 costs less than seven more 5090s).
    facts: ClassVar[Facts] = Facts(tier=5.9)


@dataclass(frozen=True, slots=True)
class CpuOnly(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.CPU
    facts: ClassVar[Facts] = _NOT_RANKED

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        return at._replace(n_gpu_layers=0, fits=True)  # no layer on a card
