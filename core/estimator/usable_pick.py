"""Which quant a which-model list shows for one model, and how high that pick ranks: the quant a
practitioner would load, not the biggest file that fits (a practitioner audit: a 48 GB Mac was shown
Qwen3-32B at Q8_0 crawling at ~6 tok/s, a 12 GB card two 22-24B models at IQ3_XXS as its top picks).

The rule, over the quants of a model that run on the setup ([which_model.pick] in
catalogs/intents.toml holds every threshold):
1. the release's own low-bit format when it runs (gpt-oss MXFP4: a Q8_0 of it is the same bytes);
2. else the `baseline` quant (Q4_K_M), or the best ~4-bit one below it where it doesn't fit
   (IQ4_XS), taking one above it (Q5_K_M, Q6_K, Q8_0) only while that keeps `upgrade_tps` and fits
   with headroom;
3. a ~3-bit file only when nothing of ~4 bits runs: the pick is then `low_bit` and ranks after
   every ~4-bit pick of another model;
4. a pick below `crawl_tps` is a crawl: the list names it in one line instead of a row.

`worth` ranks the picks of one tier: the model's size, a MoE's halfway between its active and its
total parameters, weighed down by the pace where it is below `pace_tps` (a dense 32B at ~10 tok/s on a
273 GB/s Mac counts as ~11B, below a 30B-A3B at ~32 tok/s; on a 3090 at ~32 tok/s as its full 32B)
and by `tight_weight` where it fits with little headroom.

The single-model reply's own rule (core/estimator/choice.py) chooses a row of a full estimate; this
one ranks many models from one row each, so it stays apart and small."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any


class Tier(IntEnum):
    """How high a pick ranks in the list: the lower, the earlier."""

    USABLE = 0  # ~4 bits or more at a usable pace
    LOW_BIT = 1  # a ~3-bit file: the only way the model fits
    CRAWL = 2  # below `crawl_tps`: named in one line, not a row


@dataclass(frozen=True, slots=True)
class PickRules:
    """[which_model.pick]; the defaults are the shipped values (the catalog says why)."""

    baseline: str = "Q4_K_M"
    upgrade_tps: float = 20.0
    four_bit_bpw: float = 4.0
    crawl_tps: float = 7.5
    pace_tps: float = 30.0
    moe_weight: float = 0.5
    tight_weight: float = 0.6


def pick_rules(section: Mapping[str, Any]) -> PickRules:
    """The rules from the [which_model.pick] table (a missing key keeps its default)."""
    d = PickRules()
    return PickRules(
        baseline=str(section.get("baseline", d.baseline)),
        upgrade_tps=float(section.get("upgrade_tps", d.upgrade_tps)),
        four_bit_bpw=float(section.get("four_bit_bpw", d.four_bit_bpw)),
        crawl_tps=float(section.get("crawl_tps", d.crawl_tps)),
        pace_tps=float(section.get("pace_tps", d.pace_tps)),
        moe_weight=float(section.get("moe_weight", d.moe_weight)),
        tight_weight=float(section.get("tight_weight", d.tight_weight)),
    )


@dataclass(frozen=True, slots=True)
class QuantRun:
    """One quant of a model as it runs on the setup (one estimated row that runs)."""

    quant: str
    bpw: float
    tps: float  # decode tok/s, mid of the band
    tight: bool  # fits, with little headroom
    native: bool = False  # the release's own format (gpt-oss MXFP4)


@dataclass(frozen=True, slots=True)
class Pick:
    run: QuantRun
    tier: Tier


def pick(runs: Sequence[QuantRun], rules: PickRules, baseline_bpw: float) -> Pick | None:
    """The quant to show for a model whose `runs` (any order) are the quants that run here, and its
    tier; None when none runs. `baseline_bpw`: the baseline quant's bits per weight (the catalog's)."""
    if not runs:
        return None
    ordered = sorted(runs, key=lambda r: -r.bpw)
    native = [r for r in ordered if r.native]
    if native:
        chosen = native[0]
    else:
        four = [r for r in ordered if r.bpw >= rules.four_bit_bpw]
        chosen = _four_bit(four, rules, baseline_bpw) if four else _low_bit(ordered)
    return Pick(chosen, tier_of(chosen, rules))


def _four_bit(four: list[QuantRun], rules: PickRules, baseline_bpw: float) -> QuantRun:
    """The baseline (or the best ~4-bit quant below it that isn't a crawl), or a bigger quant that
    keeps `upgrade_tps` with headroom. `four`: best first."""
    for run in four:
        if run.bpw > baseline_bpw and run.tps >= rules.upgrade_tps and not run.tight:
            return run
    base = [r for r in four if r.bpw <= baseline_bpw]
    # The baseline, or the best ~4-bit quant below it where the baseline doesn't fit (IQ4_XS); never
    # a smaller file only to pass the crawl line by a hair (Llama-3.3-70B on an M2 Max: Q4_K_M at
    # ~7 tok/s is a crawl, not IQ4_XS at 7.5). No quant at or below it: the fastest bigger one.
    return base[0] if base else four[-1]


def _low_bit(ordered: list[QuantRun]) -> QuantRun:
    # A 3-bit file that fits with headroom before a bigger one that barely fits (Llama-3.3-70B on a
    # 48 GB Mac: IQ3_XXS with room, not Q3_K_M tight).
    roomy = [r for r in ordered if not r.tight]
    return roomy[0] if roomy else ordered[0]


def tier_of(run: QuantRun, rules: PickRules) -> Tier:
    if run.tps < rules.crawl_tps:
        return Tier.CRAWL
    if run.bpw < rules.four_bit_bpw and not run.native:
        return Tier.LOW_BIT
    return Tier.USABLE


def worth(params_b: float, active_b: float, tps: float, rules: PickRules, tight: bool = False) -> float:
    """How high a pick ranks within its tier: its size (a MoE's between active and total, by
    `moe_weight`), times its pace where that is below `pace_tps`, times `tight_weight` when tight."""
    size = active_b + rules.moe_weight * (params_b - active_b)
    pace = min(1.0, tps / rules.pace_tps) if rules.pace_tps > 0 else 1.0
    return size * pace * (rules.tight_weight if tight else 1.0)
