"""CPU only: more system RAM, the size the run needs (the OS's share too) at the speed it then
reaches. Buying RAM, like buying cards, ranks after every way out that runs on this box."""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import ClassVar

from core.catalog.sections import sections
from core.estimator.memory import GIB
from core.estimator.ways_out.base import Facts, WayOut
from core.estimator.ways_out.cases import CpuCase, cpu_option
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy


@dataclass(frozen=True, slots=True)
class MoreRam(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.MORE_RAM
    facts: ClassVar[Facts] = Facts(tier=6.0)

    def applies_cpu(self, case: CpuCase) -> bool:
        return True  # always said: the last resort on a box with no card

    def propose_cpu(self, case: CpuCase) -> Remedy | None:
        reserve = sections(case.pricing.catalog).estimator.host.os_reserve_gib
        need = math.ceil(case.forced.host_bytes / GIB + reserve)
        return dataclasses.replace(cpu_option(self.kind, case.forced), host_gib=float(need))
