"""What a reply assumed and says it assumed (issue 20): the OS, and the host RAM an offload figure
rests on.

The OS: a card that runs one OS (an Apple chip, a datacenter / SXM board, a Jetson module) is not
asked which OS it runs; a server (a server CPU, server RAM, 4+ cards, a serving question) is said to
be priced on Linux; any other card keeps "say windows/linux if not". The host RAM: a figure that
reads weights from system RAM (MoE experts or layers in RAM) names the RAM it was priced on.
"""

from __future__ import annotations

from core.estimator.estimate import Estimate, Setup
from core.estimator.ways_out.kind import WayOutKind
from core.i18n import Lang, translate

_HOST_KINDS = frozenset({WayOutKind.EXPERT_OFFLOAD, WayOutKind.OFFLOAD, WayOutKind.HOST_SHORT})


def os_assumed(setup: Setup, lang: Lang) -> str:
    """The end of the usable-memory line for an OS the user didn't name ("" when named)."""
    if not setup.os_assumed or setup.os_only:
        # Named, or the only OS the card runs: its note already says which (macOS / headless Linux).
        return ""
    if setup.os_server:
        return translate("reply.os_assumed_server", lang)
    return translate("reply.os_assumed", lang)


def uses_host_ram(est: Estimate) -> bool:
    """Whether a figure of the reply reads weights from system RAM: the asked placement, or a row's
    way out (or one of its alternatives) that puts experts or layers in RAM. Unified memory has no
    separate RAM to name."""
    setup = est.request.setup
    if setup.gpu.unified_memory or setup.host.name == "unified":
        return False
    if est.request.offload in ("experts", "layers", "cpu"):
        return True
    for row in est.rows:
        remedy = row.remedy
        if remedy is None:
            continue
        if any(r.kind in _HOST_KINDS for r in (remedy, *remedy.alternatives)):
            return True
    return False
