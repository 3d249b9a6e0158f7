"""Family words that change which member is meant (issue 21).

"GLM 4.5 (not the Air version)": a variant word after a negation is blanked, so it can't pick GLM-4.5-Air.
"笔记本 4060 能跑 deepseek 吗": a family named without a size on a small card is asked back with the
members that fit that card first (the R1 distills), not only the 671B models. Words and limits are
data: catalogs/understanding.toml [negation] and [small_card].
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import cache

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.estimator.setup import HostSpec, default_host
from core.understanding.resolution import Resolution
from core.understanding.vocab import shipped_doc


@cache
def _negated() -> re.Pattern[str] | None:
    table = shipped_doc().get("negation", {})
    words, variants = table.get("words", []), table.get("variants", [])
    if not words or not variants:
        return None
    neg = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True))
    var = "|".join(re.escape(v) for v in sorted(variants, key=len, reverse=True))
    # "not the Air version", "not GLM-4.5-Air", "不是air版": the negation, a name's words, the variant.
    return re.compile(
        rf"(?<![a-z])(?:{neg})\s*(?:the\s+|an?\s+)?(?:[a-z0-9.]+[- ]){{0,2}}(?:{var})(?![a-z])"
        r"(?:\s*(?:version|variant|model|版本|版))?"
    )


def without_negated_variants(t: str) -> str:
    """`t` (cleaned) with each "not the Air version" blanked."""
    pat = _negated()
    if pat is None or not pat.search(t):
        return t
    return pat.sub(lambda m: " " * len(m.group(0)), t)


def fitting_members_first(
    model: Resolution | None,
    memory_gib: float | None,
    sized: bool,
    catalog: Catalog,
    room: MachineRoom | None = None,
) -> Resolution | None:
    """An unsure family reading on a card, with the family's members that fit the machine first, the
    most popular first; on a small card the members that fit are offered even where the reading did
    not name them. A size typed ("lama 3 70b") is the member asked for, whatever the card."""
    table = shipped_doc().get("small_card", {})
    limit = float(table.get("max_memory_gib", 0.0))
    per_b = float(table.get("gib_per_billion", 0.6))
    if model is None or model.best_id is None or model.confident or sized or memory_gib is None:
        return model
    room = room or MachineRoom(memory_gib)
    models = catalog.models
    top = max((s for _c, s in model.candidates), default=0.0)  # a reading always lists itself
    # The readings the name fits equally ("qwen3.5": each member); a lower one is another name.
    tied = [c for c, s in model.candidates if s >= top - 0.05 and c in models]
    fitting = sorted((c for c in tied if room.holds(models[c], per_b)), key=lambda c: -models[c].popularity)
    if memory_gib <= limit and not any(room.holds(models[c], per_b) for c in tied[:3]):
        fitting = _fitting_members(model.best_id, room, per_b, catalog)
    if not fitting:
        return model
    rest = tuple(c for c in model.candidates if c[0] not in fitting)
    return replace(model, best_id=fitting[0], candidates=(*((m, top) for m in fitting), *rest))


def _fitting_members(reading: str, room: MachineRoom, per_b: float, catalog: Catalog) -> list[str]:
    """ "笔记本 4060 能跑 deepseek": none offered fits the small card; the family's two most popular
    members that do come first."""
    family = reading.split("-", 1)[0]
    models = catalog.models
    members = (m for m in models.values() if m.id.split("-", 1)[0] == family and room.holds(m, per_b))
    return sorted((m.id for m in members), key=lambda c: -models[c].popularity)[:2]


@dataclass(frozen=True, slots=True)
class MachineRoom:
    """Where a member's weights may sit: the cards' memory, all of them, and the host RAM a MoE's
    routed experts are offloaded to (0 with unified memory: it is the cards' memory already)."""

    cards_gib: float
    host_gib: float = 0.0

    def holds(self, model: Model, per_b: float) -> bool:
        weights = model.params_b * per_b
        if 0 < weights <= self.cards_gib:
            return True
        # A MoE reads only its active experts per token: in the cards with the rest in RAM it runs.
        active = (model.active_params_b or 0.0) * per_b
        return 0 < active <= self.cards_gib and weights <= self.cards_gib + self.host_gib


def machine_room(
    gpu_id: str | None, count: int, memory_gib: float | None, host_gib: float | None, catalog: Catalog
) -> MachineRoom | None:
    """The room of the machine asked about: its cards' memory, and the RAM the user said or the one
    the estimate assumes for that card (catalogs/hosts.toml [defaults], as its answer says)."""
    gpu = catalog.gpus.get(gpu_id or "")
    if gpu is None or memory_gib is None:
        return None
    host = default_host(gpu, catalog, HostSpec(ram_gib=host_gib), count)
    return MachineRoom(memory_gib * max(count, 1), 0.0 if gpu.unified_memory else host.ram_gib)
