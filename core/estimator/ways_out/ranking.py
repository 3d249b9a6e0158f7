"""Which way out leads: the way people pick them, quality first (each class's tier, base.py), then
(1-2-bit quants) the better quant, then the faster option. The rest follow as its alternatives."""

from __future__ import annotations

from core.catalog.loader import Catalog
from core.catalog.pricing_sections import RemedyRules
from core.estimator.ways_out.base import LOW_BIT_TIER, remedy_rules
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import way_out
from core.estimator.ways_out.remedy import Remedy, with_alternatives


def chosen(options: list[Remedy], catalog: Catalog) -> Remedy:
    """The best of `options` with the others as its alternatives; `none` when there is none."""
    if not options:
        return Remedy(WayOutKind.NONE, None)
    if len(options) == 1:
        return options[0]  # already the best, with no alternatives
    best, *rest = ranked(options, catalog)
    return with_alternatives(best, tuple(rest))


def tier(option: Remedy, rules: RemedyRules) -> float:
    if option.quality_warning:
        return LOW_BIT_TIER  # a 1-2-bit quant answers worse: never the answer when anything else works
    return way_out(option.kind).tier(option, rules)


def ranked(options: list[Remedy], catalog: Catalog) -> list[Remedy]:
    """Best first: by tier, then (1-2-bit quants) the better quant, then the faster option. A stable
    sort: equal keys keep the registry's order."""
    rules = remedy_rules(catalog)

    def key(o: Remedy) -> tuple[float, int, float]:
        quality = catalog.quants[o.quant].quality if o.quality_warning and o.quant in catalog.quants else 0
        return (tier(o, rules), -quality, -(o.decode_mid or 0.0))

    return sorted(options, key=key)
