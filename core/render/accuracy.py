"""/accuracy text: tokbot's estimates against approved community measurements, for one scope."""

from __future__ import annotations

from core.community.accuracy import AccuracyReport
from core.i18n import Lang, translate
from core.render.message import one


def accuracy_text(report: AccuracyReport, scope: str, lang: Lang, target: str) -> str:
    if report.n == 0:
        return one(target, translate("accuracy.none", lang, scope=scope))
    lines = [
        translate("accuracy.header", lang, scope=scope, n=report.n),
        translate(
            "accuracy.figures",
            lang,
            err=report.median_error_pct,
            inside=report.inside_band_pct,
            ratio=report.median_ratio,
        ),
    ]
    if report.worst:
        worst = ", ".join(f"#{i} {e:g}%" for i, e in report.worst)
        lines.append(translate("accuracy.worst", lang, worst=worst))
    lines.append(translate("accuracy.method", lang))
    return one(target, *lines)
