"""/accuracy as pictures: tokbot's estimates against what people measured.

Two sets, kept apart because they mean different things: community measurements with the estimate
tokbot gave when each arrived (the honest record, core/community/accuracy.py), and the published
measurements priced by today's estimator (in-sample: the fit used them, so they flatter it; the
page says so). Drawn once per language and anchor set, off the event loop.
"""

from __future__ import annotations

import asyncio
import io
from collections import defaultdict
from dataclasses import dataclass
from statistics import median
from typing import TYPE_CHECKING, Any

from core.anchors.calibrate import anchor_estimate
from core.catalog.loader import Catalog
from core.community.accuracy import AccuracyReport, accuracy
from core.i18n import Lang, translate
from core.render.chart import CJK_FONTS
from core.render.feedback import helpful_line
from core.storage.records import Submission

if TYPE_CHECKING:
    from bot.web.app import WebState

BARS = 12  # groups shown per bar chart (the most measured)


@dataclass(frozen=True, slots=True)
class Point:
    measured: float
    estimated: float
    family: str
    framework: str
    community: bool


@dataclass(frozen=True, slots=True)
class AccuracyView:
    report: AccuracyReport
    community: int
    published: int
    helpful: str
    scatter: str  # inline SVG ("" when there is nothing to draw)
    by_family: str
    by_framework: str


def points(subs: list[Submission], catalog: Catalog) -> list[Point]:
    out = []
    for s in subs:
        m = s.measurement
        gpu = catalog.gpus.get(m.gpu_id)
        if gpu is None or m.decode_tps <= 0:
            continue
        if s.origin == "community":
            mid = s.estimate.decode_mid if s.estimate is not None else None
        else:
            mid = anchor_estimate(catalog, m)[0]
        if mid is None or mid <= 0:
            continue
        framework = (m.framework or "llama.cpp").split(" (")[0]
        out.append(Point(m.decode_tps, mid, gpu.arch, framework, s.origin == "community"))
    return out


def _errors(pts: list[Point], key: str) -> list[tuple[str, float, int]]:
    groups: dict[str, list[float]] = defaultdict(list)
    for p in pts:
        groups[getattr(p, key)].append(abs(p.estimated / p.measured - 1) * 100)
    biggest = sorted(groups.items(), key=lambda kv: -len(kv[1]))[:BARS]
    return sorted(((name, median(errs), len(errs)) for name, errs in biggest), key=lambda g: g[1])


def _svg(fig: Any) -> str:
    buf = io.StringIO()
    fig.savefig(buf, format="svg")
    text = buf.getvalue()
    return text[text.find("<svg") :]  # inline: no XML prolog or doctype inside the HTML


def _scatter(pts: list[Point], lang: Lang) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 5.2), dpi=72)
    ax = fig.subplots()
    for community, color in ((False, "#8aa4c8"), (True, "#d1495b")):
        sel = [p for p in pts if p.community is community]
        if sel:
            label = translate("page.accuracy.community" if community else "page.accuracy.published", lang,
                              n=len(sel))  # fmt: skip
            ax.scatter([p.measured for p in sel], [p.estimated for p in sel], s=14, alpha=0.7, color=color,
                       label=label)  # fmt: skip
    top = max(max(p.measured for p in pts), max(p.estimated for p in pts)) * 1.2
    low = max(min(min(p.measured for p in pts), min(p.estimated for p in pts)) * 0.8, 0.1)
    ax.plot([low, top], [low, top], color="black", linewidth=1, label=translate("page.accuracy.equal", lang))
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel(translate("page.accuracy.measured", lang))
    ax.set_ylabel(translate("page.accuracy.estimated", lang))
    ax.set_title(translate("page.accuracy.scatter", lang), fontsize=11)
    ax.grid(alpha=0.3, which="both")
    ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    return fig


def _bars(groups: list[tuple[str, float, int]], title: str, lang: Lang) -> Any:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(6.4, 0.6 + 0.32 * max(len(groups), 1)), dpi=72)
    ax = fig.subplots()
    names = [f"{name} ({n})" for name, _, n in groups]
    ax.barh(names, [e for _, e, _ in groups], color="#4f7cac")
    ax.set_xlabel(translate("page.accuracy.error", lang))
    ax.set_title(title, fontsize=11)
    ax.grid(alpha=0.3, axis="x")
    fig.tight_layout()
    return fig


def draw(pts: list[Point], lang: Lang) -> tuple[str, str, str]:
    """(scatter, by card family, by framework) as inline SVG; text is text, the browser draws it."""
    import matplotlib

    matplotlib.use("Agg", force=False)
    families = [*matplotlib.rcParams["font.sans-serif"], *CJK_FONTS]
    if not pts:
        return "", "", ""
    with matplotlib.rc_context({"svg.fonttype": "none", "font.sans-serif": families}):
        import warnings

        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="Glyph .* missing from")
            family = translate("page.accuracy.by_family", lang)
            framework = translate("page.accuracy.by_framework", lang)
            return (
                _svg(_scatter(pts, lang)),
                _svg(_bars(_errors(pts, "family"), family, lang)),
                _svg(_bars(_errors(pts, "framework"), framework, lang)),
            )


async def accuracy_view(state: WebState, lang: Lang) -> AccuracyView:
    app = state.app
    subs = await app.storage.submissions(status="approved")
    counts = await app.storage.feedback_counts()
    version = hash(tuple(sorted(s.id for s in subs)))
    kept = state.accuracy.get(lang)
    if kept is not None and kept[0] == version:
        cached = kept[1]
    else:  # per language, the current anchor set only: an old set is never asked for again
        pts = await asyncio.to_thread(points, subs, app.catalog)
        cached = await asyncio.to_thread(draw, pts, lang)
        state.accuracy[lang] = (version, cached)
    community = [s for s in subs if s.origin == "community"]
    scatter, by_family, by_framework = cached
    return AccuracyView(
        report=accuracy(community),
        community=len(community),
        published=len(subs) - len(community),
        helpful=helpful_line(counts, lang),
        scatter=scatter,
        by_family=by_family,
        by_framework=by_framework,
    )
