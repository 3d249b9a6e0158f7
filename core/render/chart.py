"""A PNG for people who would rather look than read: decode speed against context per quant, and
memory against context with the card's usable line. matplotlib is imported here, inside the
function, so start-up and every other answer don't pay for it.
"""

from __future__ import annotations

import io
from functools import cache

from core.estimator.estimate import Estimate, in_ram
from core.i18n import Lang, translate
from core.render.compact import framework_title, setup_title
from core.render.fmt import ctx_label


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


@cache
def cjk_font() -> str | None:
    """The first installed font that draws Chinese, or None."""
    from matplotlib import font_manager

    installed = {f.name for f in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FONTS if name in installed), None)


def label_language(lang: Lang) -> tuple[Lang, str | None]:
    """The chart's labels are in the asker's language when the server can draw it: Chinese needs a
    CJK font (else every character is a box), so without one the labels stay English."""
    if lang == "zh":
        font = cjk_font()
        return ("zh", font) if font else ("en", None)
    return lang, None


def chart_png(est: Estimate, lang: Lang = "en", dpi: int = 110) -> bytes:
    try:
        import matplotlib

        matplotlib.use("Agg", force=False)
        from matplotlib.figure import Figure
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise ChartUnavailable("charts need matplotlib: pip install 'tokbot[chart]'") from exc

    labels, font = label_language(lang)
    if font:
        matplotlib.rcParams["font.sans-serif"] = [font, *matplotlib.rcParams["font.sans-serif"]]
    quants = list(dict.fromkeys(r.quant for r in est.rows))
    contexts = sorted({r.context for r in est.rows})
    cells = {(r.quant, r.context): r for r in est.rows}
    fig = Figure(figsize=(7.0, 6.4), dpi=dpi)
    speed_ax, mem_ax = fig.subplots(2, 1, sharex=True)
    xs = list(range(len(contexts)))
    for quant in quants:
        pts = [(i, cells[(quant, c)]) for i, c in enumerate(contexts) if (quant, c) in cells]
        run = [(i, r.decode_tps) for i, r in pts if r.decode_tps is not None and r.status != "no_fit"]
        if run:
            line = speed_ax.plot([i for i, _ in run], [d.mid for _, d in run], marker="o", label=quant)[0]
            speed_ax.fill_between(
                [i for i, _ in run],
                [d.low for _, d in run],
                [d.high for _, d in run],
                color=line.get_color(),
                alpha=0.12,
                linewidth=0,
            )
        else:
            line = speed_ax.plot([], [], marker="o", label=quant)[0]
        mem_ax.plot(
            [i for i, _ in pts],
            [r.total_gib for _, r in pts],
            marker="o",
            color=line.get_color(),
            label=quant,
        )
    usable = est.usable.total_gib  # a CPU-only run: the usable system RAM
    ram = in_ram(est)
    mem_ax.axhline(
        usable,
        color="red",
        linestyle="--",
        linewidth=1.2,
        label=translate("chart.usable_ram" if ram else "chart.usable", labels, gib=usable),
    )
    speed_ax.set_ylabel(translate("chart.tok_s", labels))
    speed_ax.set_title(translate("chart.speed", labels), fontsize=10)
    mem_ax.set_ylabel("GiB")
    mem_ax.set_xlabel(translate("chart.context", labels))
    mem_ax.set_title(translate("chart.memory_ram" if ram else "chart.memory", labels), fontsize=10)
    mem_ax.set_xticks(xs, [ctx_label(c) for c in contexts])
    speed_ax.legend(fontsize=8, ncol=3)
    mem_ax.legend(fontsize=8, ncol=3)
    for ax in (speed_ax, mem_ax):
        ax.grid(alpha=0.3)
    # The title is names (cards, models, frameworks), the same in both languages.
    framework = framework_title(est, est.framework)
    fig.suptitle(f"{setup_title(est)} · {est.request.model.name} · {framework}", fontsize=11)
    fig.tight_layout()
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()
