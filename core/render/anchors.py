"""The measured-anchor lines of a reply: real runs beside the estimate, or the call for them.

For the asked card x count x model: "Measured: 3 runs, median 24 tok/s (22–25), by alice 2026-11,
published: XiongjieDai 2024-05, llama.cpp Q4_K_M 4K". Without one: the call for submissions (as the
seed page has it) and the nearest runs (same card with a model of similar size, the same model on a
similar card). When community runs calibrated the speeds, one line says by how many and how much.
Prose only (Para), so every render target escapes it; the setup labels are ASCII built from ids.
"""

from __future__ import annotations

from core.anchors.anchor_index import AnchorIndex, AnchorSummary, Credit, NearAnchor
from core.anchors.calibrate import CalibrationInfo
from core.catalog.loader import Catalog
from core.estimator.estimate import Estimate
from core.i18n import Lang, translate
from core.render.doc import Para, Part
from core.render.fmt import ctx_label, num

CREDITS_SHOWN = 2  # names on one line; the rest are "+N more" (the export has them all)


def _runs(n: int, lang: Lang) -> str:
    return translate("anchors.runs.one" if n == 1 else "anchors.runs.many", lang, n=n)


def _credit(c: Credit, lang: Lang) -> str:
    name = c.name or translate("anchors.anonymous", lang)
    return translate(f"anchors.credit.{c.origin}", lang, name=name, date=c.date)


def credits_text(credits: tuple[Credit, ...], lang: Lang) -> str:
    shown = [_credit(c, lang) for c in credits[:CREDITS_SHOWN]]
    if len(credits) > CREDITS_SHOWN:
        shown.append(translate("anchors.credit.more", lang, n=len(credits) - CREDITS_SHOWN))
    return translate("anchors.credit.sep", lang).join(shown)


def setup_label(s: AnchorSummary) -> str:
    """ "llama.cpp Q4_K_M 4K": the most used framework, the quant, the most used context."""
    framework = s.frameworks[0].split(" (")[0] if s.frameworks else ""
    parts = [framework, s.quant]
    if s.contexts and s.contexts[0] >= 512:
        parts.append(ctx_label(s.contexts[0]))
    return " ".join(p for p in parts if p)


def _spread(s: AnchorSummary, lang: Lang) -> str:
    if s.count < 2 or num(s.low_decode) == num(s.high_decode):
        return ""
    return translate("anchors.spread", lang, low=num(s.low_decode), high=num(s.high_decode))


def exact_line(s: AnchorSummary, lang: Lang) -> str:
    prefill = translate("anchors.prefill", lang, prefill=num(s.median_prefill)) if s.median_prefill else ""
    return translate(
        "anchors.exact",
        lang,
        runs=_runs(s.count, lang),
        median=num(s.median_decode),
        spread=_spread(s, lang),
        prefill=prefill,
        credits=credits_text(s.credits, lang),
        setup=setup_label(s),
    )


def _gpu_name(s: AnchorSummary, catalog: Catalog) -> str:
    """The card's name, with the runs' memory where they ran on another size of a discrete card
    ("GeForce RTX 4090 48GB" for the modded one)."""
    gpu = catalog.gpus.get(s.gpu_id)
    name = gpu.name if gpu else s.gpu_id
    if gpu is not None and s.memory_gib and not gpu.unified_memory and s.memory_gib != gpu.memory_gib:
        name = f"{name} {s.memory_gib:g}GB"
    return f"{s.gpu_count}× {name}" if s.gpu_count > 1 else name


def near_line(n: NearAnchor, catalog: Catalog, lang: Lang) -> str:
    s = n.summary
    model = catalog.models.get(s.model_id)
    return translate(
        f"anchors.near.{n.relation}",
        lang,
        model=model.name if model else s.model_id,
        gpu=_gpu_name(s, catalog),
        median=num(s.median_decode),
        runs=_runs(s.count, lang),
        credits=credits_text(s.credits, lang),
        setup=setup_label(s),
    )


def calibration_line(info: CalibrationInfo, lang: Lang) -> str:
    low, high = info.decode_span
    factor = f"{low:.2f}" if f"{low:.2f}" == f"{high:.2f}" else f"{low:.2f}–{high:.2f}"
    n = max(info.n, info.n_prefill)
    what = translate("anchors.measurements.one" if n == 1 else "anchors.measurements.many", lang, n=n)
    return translate("anchors.calibrated", lang, what=what, factor=factor)


def _ordered(summaries: tuple[AnchorSummary, ...], quants: tuple[str, ...]) -> list[AnchorSummary]:
    """The asked quants first, then the estimate's own order, then the most measured."""
    rank = {q: i for i, q in enumerate(dict.fromkeys(quants))}
    return sorted(summaries, key=lambda s: (rank.get(s.quant, len(rank)), -s.count))


def anchor_section(
    est: Estimate,
    index: AnchorIndex,
    catalog: Catalog,
    lang: Lang,
    info: CalibrationInfo | None = None,
    quants: tuple[str, ...] = (),
    limit: int = 2,
) -> tuple[Part, ...]:
    """The anchor lines for a full answer, most important first (a tight message keeps the first).

    `quants`: the quants the user asked for, which are shown first when several were measured.
    """
    setup, model = est.request.setup, est.request.model
    order = (*quants, *(r.quant for r in est.rows))
    exact = _ordered(index.summaries(setup.gpu.id, setup.count, model.id, setup.memory_gib), order)
    parts: list[Part] = []
    if exact:
        parts.extend(Para(exact_line(s, lang)) for s in exact[:limit])
    else:
        parts.append(Para(translate("anchors.call", lang)))
    if info is not None and info.applied:
        parts.append(Para(calibration_line(info, lang)))
    if not exact:
        quant = order[0] if order else None
        near = index.nearest(
            setup.gpu.id, setup.count, model.id, limit=limit, quant=quant, memory_gib=setup.memory_gib
        )
        for i, n in enumerate(near):
            line = near_line(n, catalog, lang)
            parts.append(Para(translate("anchors.near.first", lang, line=line) if i == 0 else line))
    elif not any(s.community for s in exact):
        # Only published numbers so far: a run from a member's own machine is still wanted.
        parts.append(Para(translate("anchors.call_more", lang)))
    return tuple(parts)
