"""Family words that change which member is meant (issue 21).

"GLM 4.5 (not the Air version)": a variant word after a negation is blanked, so it can't pick GLM-4.5-Air.
"笔记本 4060 能跑 deepseek 吗": a family named without a size on a small card is asked back with the
members that fit that card first (the R1 distills), not only the 671B models. Words and limits are
data: catalogs/understanding.toml [negation] and [small_card].
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import cache

from core.catalog.loader import Catalog
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
    model: Resolution | None, memory_gib: float | None, sized: bool, catalog: Catalog
) -> Resolution | None:
    """An unsure family reading on a small card, with the family's members that fit the card first;
    a size typed ("lama 3 70b") is the member asked for, whatever the card."""
    table = shipped_doc().get("small_card", {})
    limit = float(table.get("max_memory_gib", 0.0))
    per_b = float(table.get("gib_per_billion", 0.6))
    if model is None or model.confident or not model.candidates or sized:
        return model
    if memory_gib is None or memory_gib > limit:
        return model
    models = catalog.models
    offered = [models[c] for c, _score in model.candidates[:3] if c in models]
    if any(0 < m.params_b * per_b <= memory_gib for m in offered):
        return model  # "lamma3 8b" on a 3060: a member that fits is already offered
    family = model.candidates[0][0].split("-", 1)[0]
    fitting = sorted(
        (
            m.id
            for m in catalog.models.values()
            if m.id.split("-", 1)[0] == family and 0 < m.params_b * per_b <= memory_gib
        ),
        key=lambda mid: -catalog.models[mid].params_b,
    )
    if not fitting:
        return model
    score = model.candidates[0][1]
    rest = tuple(c for c in model.candidates if c[0] not in fitting)
    return replace(model, best_id=fitting[0], candidates=(*((m, score) for m in fitting[:2]), *rest))
