"""The answer as a page (bot/web): one full answer as plain data for a template, like the seed page.

Every figure comes from `estimate_dict`, the `python -m bot estimate --json` shape, of the same
estimate the chat reply is rendered from (calibrated by the same anchors), so the page and the engine
cannot disagree. The sections (one quant in full, frameworks with commands, speculative decoding,
measured anchors, sources) are the chat's own detail views, kept as Docs: the template renders them
part by part with autoescaping. Nothing here builds HTML or touches the network.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.anchors.anchor_index import AnchorIndex
from core.anchors.calibrate import CalibrationInfo, calibrate
from core.ask.answer import estimate_for
from core.catalog.kv_cache import KV_CACHE_TYPES
from core.catalog.loader import Catalog
from core.catalog.platforms import os_family
from core.estimator.choice import choose
from core.estimator.estimate import Estimate, Row, in_ram
from core.estimator.memory import runs_one_os
from core.estimator.serialize import estimate_dict
from core.i18n import Lang, translate
from core.render import detail
from core.render.advice import method_line, remedy_text
from core.render.anchors import anchor_section
from core.render.compact import framework_title, setup_title
from core.render.doc import Doc
from core.render.family_fallback import instead_line
from core.render.fmt import ctx_label
from core.render.sources import sources_view
from core.understanding.query import AskQuery

OS_CHOICES = ("linux", "windows")  # the switch the chat's buttons offer too


@dataclass(frozen=True, slots=True)
class Figure:
    """A number as shown, with the engine's own value beside it (the page carries it as a data
    attribute, so a reader or a test can check the shown text against `estimate --json`)."""

    text: str
    value: float | None


@dataclass(frozen=True, slots=True)
class PageRow:
    quant: str
    context: int
    ctx: str  # "32K"
    beyond_native: bool
    weights: Figure
    kv: Figure
    total: Figure
    usable: Figure
    status: str  # smooth | tight | no_fit
    status_text: str
    decode: Figure  # the mid value; `text` is the low–high band with the mid
    prefill: Figure
    way_out: str  # how a row that doesn't fit can run, with its own figures ("" when it fits)
    command: str
    planned: bool  # the row the plan runs


@dataclass(frozen=True, slots=True)
class PlanView:
    framework: str
    quant: str
    ctx: str
    kv_type: str
    command: str
    decode: Figure
    prefill: Figure
    why: str
    notes: tuple[str, ...]
    # What runs well here in the place of a poor pick (family_fallback.py): (line, command), or ("", "")
    instead: tuple[str, str] = ("", "")


@dataclass(frozen=True, slots=True)
class Section:
    key: str  # quant | frameworks | speculative | anchors | sources
    title: str
    doc: Doc


@dataclass(frozen=True, slots=True)
class Switch:
    """One link that changes a single field of the question and keeps everything else."""

    field: str  # os | kv | quant | ctx
    value: str  # the URL parameter's value ("all": every quant / every context)
    label: str
    current: bool


@dataclass(frozen=True, slots=True)
class AnswerPage:
    lang: Lang
    title: str
    assumptions: tuple[str, ...]
    usable_gib: float
    memory_is_ram: bool
    rows: tuple[PageRow, ...]
    plan: PlanView
    method: str
    sections: tuple[Section, ...]
    switches: tuple[tuple[str, tuple[Switch, ...]], ...]  # (group label, its links)
    data: dict[str, Any]  # the whole `estimate --json` object, for the page's JSON link and tests


def _fig(value: float | None, fmt: str = "{:.1f}") -> Figure:
    return Figure("-" if value is None else fmt.format(value), value)


def _band(band: dict[str, float] | None) -> Figure:
    if band is None:
        return Figure("-", None)
    digits = 1 if band["high"] < 10 else 0
    return Figure(
        f"{band['low']:.{digits}f}–{band['high']:.{digits}f} ({band['mid']:.{digits}f})", band["mid"]
    )


def _way_out(row: Row, lang: Lang) -> str:
    remedy = row.remedy
    if row.status != "no_fit" or remedy is None:
        return ""
    texts = [remedy_text(remedy, lang), *(remedy_text(a, lang) for a in remedy.alternatives[:2])]
    return " · ".join(t for t in texts if t)


def _rows(est: Estimate, data: dict[str, Any], lang: Lang) -> tuple[PageRow, ...]:
    plan = data["plan"]
    out = []
    # estimate_dict builds its rows from est.rows in order: the same rows, the same figures.
    for row, d in zip(est.rows, data["rows"], strict=True):
        out.append(
            PageRow(
                quant=d["quant"],
                context=d["context"],
                ctx=ctx_label(d["context"]),
                beyond_native=bool(d["beyond_native_context"]),
                weights=_fig(d["weights_gib"]),
                kv=_fig(d["kv_gib"], "{:.2f}"),
                total=_fig(d["total_gib"]),
                usable=_fig(d["usable_gib"]),
                status=d["status"],
                status_text=translate(f"status.{d['status']}", lang),
                decode=_band(d["decode_tps"]),
                prefill=_fig(d["prefill_tps"]["mid"] if d["prefill_tps"] else None, "{:.0f}"),
                way_out=_way_out(row, lang),
                command=d["command"] or "",
                planned=(d["quant"], d["context"]) == (plan["quant"], plan["context"]),
            )
        )
    return tuple(out)


def _plan(plan: dict[str, Any], instead: tuple[str, str] | None = None) -> PlanView:
    return PlanView(
        framework=plan["framework"],
        quant=plan["quant"],
        ctx=ctx_label(plan["context"]),
        kv_type=plan["kv_type"],
        command=plan["command"] or "",
        decode=_band(plan["decode_tps"]),
        prefill=_fig(plan["prefill_tps"]["mid"] if plan["prefill_tps"] else None, "{:.0f}"),
        why=plan["why"],
        notes=tuple([*plan["said_plainly"], *plan["notes"]]),
        instead=instead or ("", ""),
    )


def _sections(
    est: Estimate,
    query: AskQuery,
    catalog: Catalog,
    anchors: AnchorIndex | None,
    info: CalibrationInfo | None,
) -> tuple[Section, ...]:
    lang = query.lang
    focus = query.quants[0] if query.quants else None
    measured: Doc = ()
    if anchors is not None:
        measured = anchor_section(est, anchors, catalog, lang, info, query.quants, limit=6)
    docs: list[tuple[str, Doc]] = [
        ("quant", detail.quant_detail(est, focus, catalog, lang)),
        ("frameworks", detail.frameworks_view(est, focus, catalog, lang)),
        ("speculative", detail.speculative_view(est, focus, catalog, lang)),
        ("anchors", measured),
        ("sources", sources_view(est, catalog, lang, anchors)),
    ]
    return tuple(Section(key, translate(f"page.section.{key}", lang), doc) for key, doc in docs if doc)


def _open(query: AskQuery, catalog: Catalog, open_field: str) -> Estimate | None:
    """The answer's estimate with one field ("quants" or "contexts") left open: its default ladder."""
    wide = replace(query, quants=()) if open_field == "quants" else replace(query, contexts=())
    try:
        return estimate_for(wide, catalog)
    except Exception:  # noqa: BLE001 - no ladder: the page just offers no links for that field
        return None


def _quant_ladder(query: AskQuery, catalog: Catalog) -> tuple[str, ...]:
    wide = _open(query, catalog, "quants")
    return tuple(dict.fromkeys(r.quant for r in wide.rows)) if wide is not None else ()


def _context_ladder(query: AskQuery, catalog: Catalog) -> tuple[int, ...]:
    wide = _open(query, catalog, "contexts")
    return tuple(sorted({r.context for r in wide.rows})) if wide is not None else ()


def switches(est: Estimate, query: AskQuery, catalog: Catalog) -> tuple[tuple[str, tuple[Switch, ...]], ...]:
    """The links that change one field: OS (where the card runs more than one), KV cache type,
    quant and context (each with "all" to open the ladder again)."""
    lang = query.lang
    groups: list[tuple[str, tuple[Switch, ...]]] = []
    gpu = est.request.setup.gpu
    if query.gpu_id is not None and gpu.id in catalog.gpus and not runs_one_os(gpu, catalog):
        current = os_family(est.request.setup.os)
        links = tuple(Switch("os", o, translate(f"page.os.{o}", lang), o == current) for o in OS_CHOICES)
        groups.append((translate("page.switch.os", lang), links))
    kv = tuple(Switch("kv", k, k, k == est.request.kv_type) for k in KV_CACHE_TYPES)
    groups.append((translate("page.switch.kv", lang), kv))
    every = translate("page.switch.all", lang)
    quants = _quant_ladder(query, catalog)
    if quants:
        links = tuple(Switch("quant", q, q, (q,) == query.quants) for q in quants)
        groups.append(
            (translate("page.switch.quant", lang), (*links, Switch("quant", "all", every, not query.quants)))
        )
    contexts = _context_ladder(query, catalog)
    if contexts:
        links = tuple(Switch("ctx", str(c), ctx_label(int(c)), (c,) == query.contexts) for c in contexts)
        groups.append(
            (translate("page.switch.ctx", lang), (*links, Switch("ctx", "all", every, not query.contexts)))
        )
    return tuple(groups)


def answer_page(query: AskQuery, catalog: Catalog, anchors: AnchorIndex | None = None) -> AnswerPage:
    """The page for a full answer (a card or a CPU, and a model); raises like `estimate_for` on a
    query it can't price (the web shows the chat reply then)."""
    est = estimate_for(query, catalog)
    info: CalibrationInfo | None = None
    if anchors is not None:
        est, info = calibrate(est, anchors, catalog)
    lang = query.lang
    data = estimate_dict(est, catalog, lang)
    choice = choose(est, catalog)
    title = f"{setup_title(est)} · {est.request.model.name} · {framework_title(est, est.framework)}"
    return AnswerPage(
        lang=lang,
        title=title,
        assumptions=tuple(data["assumptions"]),
        usable_gib=data["usable_gib"],
        memory_is_ram=in_ram(est),
        rows=_rows(est, data, lang),
        plan=_plan(data["plan"], instead_line(est, choice, catalog, lang)),
        method=method_line(est, catalog, lang, choice),
        sections=_sections(est, query, catalog, anchors, info),
        switches=switches(est, query, catalog),
        data=data,
    )
