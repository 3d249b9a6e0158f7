"""What a reply assumed and says it assumed (issue 20): the OS, and the host RAM an offload figure
rests on.

The OS: a card that runs one OS (an Apple chip, a datacenter / SXM board, a Jetson module) is not
asked which OS it runs; a server (a server CPU, server RAM, 4+ cards, a serving question) is said to
be priced on Linux; any other card keeps "say windows/linux if not". The host RAM: a figure that
reads weights from system RAM (MoE experts or layers in RAM) names the RAM it was priced on.
"""

from __future__ import annotations

from core.catalog.loader import Catalog
from core.estimator.estimate import Estimate, Setup
from core.estimator.memory import serving_share
from core.estimator.ways_out.kind import WayOutKind
from core.i18n import Lang, translate
from core.render.advice import note_texts

_HOST_KINDS = frozenset({WayOutKind.EXPERT_OFFLOAD, WayOutKind.OFFLOAD, WayOutKind.HOST_SHORT})


def os_assumed(setup: Setup, lang: Lang) -> str:
    """The end of the usable-memory line for an OS the user didn't name ("" when named)."""
    if not setup.os_assumed or setup.os_only:
        # Named, or the only OS the card runs: its note already says which (macOS / headless Linux).
        return ""
    if setup.os_server:
        return translate("reply.os_assumed_server", lang)
    return translate("reply.os_assumed", lang)


def gpu_memory_line(est: Estimate, catalog: Catalog, lang: Lang) -> str:
    """What the cards let the run allocate, and why ("Usable 636.4 of 640 GiB (headless Linux ...)"). A
    serving engine fills the share its command sets (`--gpu-memory-utilization 0.92`), not all the
    card has free: the line says that share and the GiB the rows were judged against (the smaller of
    the two, as estimate.py `_serving_room`), so 8x H100 under vLLM read 588.8 of 640 GiB, not 636.4."""
    setup = est.request.setup
    total = setup.memory_gib * setup.count
    how = "; ".join(note_texts(est.usable.notes, lang))
    fw = catalog.frameworks.get(est.framework)
    share = serving_share(fw.engine, est.request.gpu_memory_utilization, catalog) if fw else None
    if fw is None or share is None:
        return translate("reply.usable", lang, usable=est.usable.total_gib, total=total, how=how)
    usable = min(est.usable.total_gib, total * share)
    return translate(
        "reply.usable_share", lang, engine=fw.name, share=share, usable=usable, total=total, how=how
    )


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
