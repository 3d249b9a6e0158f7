"""How close tokbot's estimates were to what people measured.

Each community submission stores the estimate tokbot gave for that exact setup when it arrived, so
the record is honest: later calibration can't rewrite what was said at the time. Only approved
submissions count (a moderator looked at them). Published anchors are not in these figures: the
estimator was fitted on them, so they would flatter it.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

from core.storage.records import Submission


@dataclass(frozen=True, slots=True)
class AccuracyReport:
    n: int
    median_error_pct: float | None  # median |estimate mid - measured| / measured
    inside_band_pct: float | None  # share of measurements inside the estimate's [low, high]
    median_ratio: float | None  # measured / estimate mid: >1 means tokbot was too pessimistic
    worst: tuple[tuple[int, float], ...] = ()  # (submission id, error %) of the largest misses


def accuracy(subs: list[Submission], worst: int = 3) -> AccuracyReport:
    rows = [
        s
        for s in subs
        if s.status == "approved"
        and s.origin == "community"
        and s.estimate is not None
        and s.estimate.decode_mid > 0
        and s.measurement.decode_tps > 0
    ]
    if not rows:
        return AccuracyReport(0, None, None, None)
    errors = []
    inside = 0
    ratios = []
    for s in rows:
        est, measured = s.estimate, s.measurement.decode_tps
        assert est is not None
        errors.append((s.id, abs(est.decode_mid - measured) / measured * 100))
        ratios.append(measured / est.decode_mid)
        inside += est.decode_low <= measured <= est.decode_high
    largest = tuple(sorted(errors, key=lambda e: -e[1])[:worst])
    return AccuracyReport(
        n=len(rows),
        median_error_pct=round(median(e for _, e in errors), 1),
        inside_band_pct=round(inside / len(rows) * 100, 1),
        median_ratio=round(median(ratios), 3),
        worst=tuple((i, round(e, 1)) for i, e in largest),
    )
