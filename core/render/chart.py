"""A picture for people who would rather look than read: decode speed against context per quant, and
memory against context with the card's usable line. PNG for the chats, SVG for the web page.

A chart is never empty: an answer of one cell ("4090 qwen3 32b q4 32k") or one row is drawn with its
neighbouring quants and contexts from the default ladder (`chart_grid` with a catalog), the asked
cells ringed, against the card's usable memory; where nothing fits, the speed panel shows what the
ways out would run at, and says so. Labels are in the asker's language: always in the SVG (the
browser draws the text), in the PNG when the server has a font that draws Chinese.

matplotlib is imported inside the drawing functions, so start-up and every other answer don't pay.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from functools import cache
from typing import TYPE_CHECKING, Any

from core.catalog.loader import Catalog
from core.estimator.estimate import Estimate, Row, estimate, in_ram
from core.i18n import Lang, translate
from core.render.compact import framework_title, setup_title
from core.render.fmt import ctx_label

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure


class ChartUnavailable(RuntimeError):
    """matplotlib could not be imported (a trimmed install): the chart button says so calmly."""


# Fonts that draw Chinese, in the order they are preferred; a server usually has none of them.
CJK_FONTS = (
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Microsoft YaHei",
    "SimHei",
    "PingFang SC",
    "Heiti SC",
    "Sarasa Gothic SC",
)
MIN_QUANTS = 3  # fewer asked: the neighbouring quants of the ladder join them
MIN_CONTEXTS = 3  # fewer asked: the neighbouring contexts join them


@cache
def cjk_font() -> str | None:
    """The first installed font that draws Chinese, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def label_language(lang: Lang) -> tuple[Lang, str | None]:
    """The PNG's labels are in the asker's language when the server can draw it: Chinese needs a
    CJK font (else every character is a box), so without one the labels stay English."""
    if lang == "zh":
        font = cjk_font()
        return ("zh", font) if font else ("en", None)
    return lang, None


# --- what is drawn (pure data) -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ChartGrid:
    """The cells a chart draws: quants in ladder order, contexts ascending, the asked cells."""

    quants: tuple[str, ...]
    contexts: tuple[int, ...]
    cells: dict[tuple[str, int], Row]
    asked: frozenset[tuple[str, int]]
    usable_gib: float
    ram: bool  # a CPU-only run: the memory is system RAM
    title: str

    def speed_points(self, quant: str) -> list[tuple[int, Row]]:
        """(context index, row) of the cells of `quant` that run (they have a decode speed)."""
        return [
            (i, r)
            for i, c in enumerate(self.contexts)
            if (r := self.cells.get((quant, c))) is not None
            and r.decode_tps is not None
            and r.status != "no_fit"
        ]

    def way_out_points(self, quant: str) -> list[tuple[int, float]]:
        """(context index, tok/s) of the cells of `quant` that don't fit but have a way out."""
        out = []
        for i, c in enumerate(self.contexts):
            r = self.cells.get((quant, c))
            if r is not None and r.status == "no_fit" and r.remedy is not None and r.remedy.decode_mid:
                out.append((i, r.remedy.decode_mid))
        return out

    @property
    def anything_runs(self) -> bool:
        return any(self.speed_points(q) for q in self.quants)


def _near(ladder: list[Any], asked: list[Any], want: int, key: Any) -> list[Any]:
    """The asked values plus the ladder values nearest them (by `key`), up to `want` in all."""
    chosen = list(dict.fromkeys(asked))
    for value in sorted(ladder, key=lambda v: min(abs(key(v) - key(a)) for a in asked) if asked else 0):
        if len(chosen) >= want:
            break
        if value not in chosen:
            chosen.append(value)
    return chosen


def _widened(est: Estimate, catalog: Catalog) -> Estimate | None:
    """The same request with the neighbouring quants and contexts of the default ladder, where the
    answer has too few of either to draw a line; None when it has enough (or can't be widened)."""
    quants = list(dict.fromkeys(r.quant for r in est.rows))
    contexts = sorted({r.context for r in est.rows})
    if len(quants) >= MIN_QUANTS and len(contexts) >= MIN_CONTEXTS:
        return None
    request = est.request
    try:
        ladder = estimate(replace(request, quants=(), contexts=()), catalog)
    except Exception:  # noqa: BLE001 - no ladder to borrow from: draw what the answer has
        return None
    ladder_q = list(dict.fromkeys(r.quant for r in ladder.rows))
    ladder_c = sorted({r.context for r in ladder.rows})
    size = {r.quant: r.weights_gib for r in ladder.rows}
    for q in quants:
        size.setdefault(q, next(r.weights_gib for r in est.rows if r.quant == q))
    if len(quants) < MIN_QUANTS:
        quants = _near(ladder_q, quants, MIN_QUANTS, lambda q: size.get(q, 0.0))
        quants.sort(key=lambda q: -size.get(q, 0.0))  # largest first, as the ladder reads
    if len(contexts) < MIN_CONTEXTS:
        contexts = sorted(_near(ladder_c, contexts, MIN_CONTEXTS + 1, lambda c: abs(c).bit_length()))
    try:
        return estimate(replace(request, quants=tuple(quants), contexts=tuple(contexts)), catalog)
    except Exception:  # noqa: BLE001 - see above
        return None


def chart_grid(est: Estimate, catalog: Catalog | None = None) -> ChartGrid:
    """What the chart of `est` draws. With `catalog`, an answer too small to draw is widened with
    its neighbours; the answer's own cells keep their own (calibrated) figures and are marked."""
    asked = frozenset((r.quant, r.context) for r in est.rows)
    cells = {(r.quant, r.context): r for r in est.rows}
    wide = _widened(est, catalog) if catalog is not None else None
    rows = list(wide.rows) if wide is not None else list(est.rows)
    if wide is None:
        asked = frozenset()  # every cell was asked: nothing to ring
    cells = {(r.quant, r.context): r for r in rows} | cells
    quants = tuple(dict.fromkeys(r.quant for r in rows if (r.quant, r.context) in cells))
    quants = tuple(dict.fromkeys((*quants, *(q for q, _ in asked))))
    contexts = tuple(sorted({c for _, c in cells}))
    title = f"{setup_title(est)} · {est.request.model.name} · {framework_title(est, est.framework)}"
    return ChartGrid(quants, contexts, cells, asked, est.usable.total_gib, in_ram(est), title)


# --- drawing -------------------------------------------------------------------------------------


def _matplotlib() -> Any:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ChartUnavailable("charts need matplotlib: pip install 'tokbot[chart]'") from exc
    return matplotlib


def _speed_line(ax: Axes, grid: ChartGrid, quant: str, colors: dict[str, Any]) -> bool:
    """One quant's speeds with their band; True when it drew way-out speeds instead (nothing runs)."""
    run = [(i, r.decode_tps) for i, r in grid.speed_points(quant) if r.decode_tps is not None]
    xs = [i for i, _ in run]
    line = ax.plot(xs, [d.mid for _, d in run], marker="o", label=quant, color=colors.get(quant))[0]
    colors[quant] = line.get_color()
    if run:
        ax.fill_between(xs, [d.low for _, d in run], [d.high for _, d in run], color=line.get_color(),
                        alpha=0.12, linewidth=0)  # fmt: skip
    way = grid.way_out_points(quant)
    if not way or grid.anything_runs:
        return False
    # Nothing fits as asked: what the first way out runs at, hollow, so the panel says something.
    ax.plot([i for i, _ in way], [t for _, t in way], marker="o", linestyle=":", mfc="none",
            color=line.get_color())  # fmt: skip
    return True


def _asked_speeds(ax: Axes, grid: ChartGrid, colors: dict[str, Any]) -> None:
    """Rings on the asked cells; an asked cell that doesn't fit shows its way out's speed, hollow."""
    for quant, ctx in grid.asked:
        row = grid.cells.get((quant, ctx))
        if row is None:
            continue
        x, color = grid.contexts.index(ctx), colors.get(quant)
        if row.decode_tps is not None and row.status != "no_fit":
            ring(ax, x, row.decode_tps.mid, color)
        elif row.remedy is not None and row.remedy.decode_mid and grid.anything_runs:
            ax.plot([x], [row.remedy.decode_mid], marker="o", mfc="none", color=color)
            ring(ax, x, row.remedy.decode_mid, color)


def _speed_panel(ax: Axes, grid: ChartGrid, labels: Lang, colors: dict[str, Any]) -> None:
    drew_way_out = any([_speed_line(ax, grid, quant, colors) for quant in grid.quants])
    _asked_speeds(ax, grid, colors)
    title = "chart.speed_way_out" if drew_way_out else "chart.speed"
    ax.set_title(translate(title, labels), fontsize=10)
    if not drew_way_out and not grid.anything_runs:
        ax.text(0.5, 0.5, translate("chart.nothing_fits", labels), ha="center", va="center",
                transform=ax.transAxes)  # fmt: skip
    ax.set_ylabel(translate("chart.tok_s", labels))


def ring(ax: Axes, x: float, y: float, color: Any) -> None:
    """An asked cell: a ring around its point, so it stands out among the neighbours."""
    ax.plot([x], [y], marker="o", markersize=13, mfc="none", mec=color or "black", mew=2.0, zorder=5)


def _memory_panel(ax: Axes, grid: ChartGrid, labels: Lang, colors: dict[str, Any]) -> None:
    for quant in grid.quants:
        pts = [(i, grid.cells[(quant, c)]) for i, c in enumerate(grid.contexts) if (quant, c) in grid.cells]
        ax.plot([i for i, _ in pts], [r.total_gib for _, r in pts], marker="o", color=colors.get(quant),
                label=quant)  # fmt: skip
    for quant, ctx in grid.asked:
        row = grid.cells.get((quant, ctx))
        if row is not None:
            ring(ax, grid.contexts.index(ctx), row.total_gib, colors.get(quant))
    usable = translate("chart.usable_ram" if grid.ram else "chart.usable", labels, gib=grid.usable_gib)
    ax.axhline(grid.usable_gib, color="red", linestyle="--", linewidth=1.2, label=usable)
    ax.set_ylabel("GiB")
    ax.set_xlabel(translate("chart.context", labels))
    ax.set_title(translate("chart.memory_ram" if grid.ram else "chart.memory", labels), fontsize=10)
    ax.set_xticks(list(range(len(grid.contexts))), [ctx_label(c) for c in grid.contexts])


def _figure(grid: ChartGrid, labels: Lang, dpi: int) -> Figure:
    from matplotlib.figure import Figure

    fig = Figure(figsize=(7.0, 6.4), dpi=dpi)
    speed_ax, mem_ax = fig.subplots(2, 1, sharex=True)
    colors: dict[str, Any] = {}
    _speed_panel(speed_ax, grid, labels, colors)
    _memory_panel(mem_ax, grid, labels, colors)
    speed_ax.legend(fontsize=8, ncol=3)
    mem_ax.legend(fontsize=8, ncol=3)
    for ax in (speed_ax, mem_ax):
        ax.grid(alpha=0.3)
        ax.set_xlim(-0.5, max(len(grid.contexts) - 0.5, 0.5))
    # The title is names (cards, models, frameworks), the same in both languages.
    fig.suptitle(grid.title, fontsize=11)
    fig.tight_layout()
    return fig


@contextmanager
def _drawing(font: str | None, svg_text: bool = False) -> Iterator[None]:
    """matplotlib settings for one drawing: the CJK font first when there is one; for SVG, text as
    text (the browser draws it with its own fonts, Chinese included)."""
    matplotlib = _matplotlib()
    params: dict[str, Any] = {}
    families = list(matplotlib.rcParams["font.sans-serif"])
    if font:
        params["font.sans-serif"] = [font, *families]
    if svg_text:
        params["svg.fonttype"] = "none"
        params["font.sans-serif"] = [*(params.get("font.sans-serif") or families), *CJK_FONTS]
    with matplotlib.rc_context(params), warnings.catch_warnings():
        # Layout measures Chinese with a Latin font when the server has no CJK one: glyph warnings only.
        warnings.filterwarnings("ignore", message="Glyph .* missing from")
        yield


def chart_png(est: Estimate, lang: Lang = "en", dpi: int = 110, catalog: Catalog | None = None) -> bytes:
    """The chat's chart. With `catalog`, an answer of one cell is drawn with its neighbours."""
    labels, font = label_language(lang)
    grid = chart_grid(est, catalog)
    with _drawing(font):
        buf = io.BytesIO()
        _figure(grid, labels, dpi).savefig(buf, format="png")
    return buf.getvalue()


def chart_svg(est: Estimate, lang: Lang = "en", catalog: Catalog | None = None) -> str:
    """The web page's chart: an SVG whose text the browser draws, so labels are in `lang` always."""
    grid = chart_grid(est, catalog)
    with _drawing(cjk_font(), svg_text=True):
        buf = io.StringIO()
        _figure(grid, lang, 72).savefig(buf, format="svg")
    return buf.getvalue()
