"""A card's calibration applied to a row's ways out: those that run wholly on the card(s)
(`Facts.on_card`) move as the table's cells move; an offload also reads system RAM, which a card's
anchors say nothing about."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from core.estimator.ways_out.registry import facts
from core.estimator.ways_out.remedy import Remedy


def scaled_remedy(remedy: Remedy, factor_for: Callable[[str], float]) -> Remedy:
    """The way out (and its alternatives) with each on-card figure times `factor_for(its quant)`
    ("" = the row's own quant), rounded as the table rounds."""

    def one(r: Remedy) -> Remedy:
        if not facts(r.kind).on_card or r.decode_mid is None:
            return r
        f = factor_for(r.quant)
        return dataclasses.replace(
            r,
            decode_mid=round(r.decode_mid * f, 1),
            decode_low=None if r.decode_low is None else round(r.decode_low * f, 1),
            decode_high=None if r.decode_high is None else round(r.decode_high * f, 1),
        )

    return dataclasses.replace(one(remedy), alternatives=tuple(one(a) for a in remedy.alternatives))
