"""Question in, chat reply out: parse, decide (answer / ask back / help / error), estimate, render.

`answer()` is what every chat adapter and `python -m bot ask` call. It never raises: any failure is
an "error" reply with a calm message, and the text always fits one message of the target. Follow-up
views (one quant in full, all frameworks, speculative decoding, a chart) start from the `query`
dict of an earlier reply, which is plain JSON an adapter can keep per conversation.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Literal

from core.anchors.anchor_index import AnchorIndex
from core.anchors.calibrate import calibrate
from core.catalog.kv_cache import KV_CACHE_TYPES as KV_TYPES
from core.catalog.loader import Catalog
from core.estimator.estimate import Estimate, EstimateRequest, estimate
from core.estimator.setup import SetupError, build_setup
from core.i18n import Lang, translate
from core.render.anchors import anchor_section
from core.render.compact import AskInfo, compact_reply, setup_title
from core.render.doc import Doc, Para, Part, render_first_fitting, truncate
from core.render.overview import gpu_overview, model_overview
from core.understanding.parse import ParsedQuestion, parse_question
from core.understanding.resolve import Resolution

ReplyStatus = Literal["answer", "clarify", "help", "error"]
View = Literal["quant", "frameworks", "speculative"]

MAX_INPUT = 1000  # characters of a question that are read; chat questions are a line or two
CANDIDATES = 3  # names offered when asking back


@dataclass(frozen=True, slots=True)
class Reply:
    status: ReplyStatus
    query: dict[str, Any]
    candidates: dict[str, list[str]] = field(default_factory=dict)
    text: str = ""

    def as_dict(self) -> dict[str, Any]:
        """The stable JSON shape of `python -m bot ask --json`."""
        return {"status": self.status, "query": self.query, "candidates": self.candidates, "reply": self.text}


def _lang(requested: str | None, parsed: Lang) -> Lang:
    return requested if requested in ("en", "zh") else parsed  # type: ignore[return-value]


def _sure(res: Resolution | None) -> bool:
    return res is not None and res.best_id is not None and res.confident


def _query(parsed: ParsedQuestion, lang: Lang, catalog: Catalog) -> dict[str, Any]:
    gpu_id = parsed.gpu.best_id if _sure(parsed.gpu) else None
    memory = None
    if gpu_id is not None:
        memory = parsed.gpu.memory_gib or catalog.gpus[gpu_id].memory_gib  # type: ignore[union-attr]
    return {
        "gpu": {"id": gpu_id, "count": parsed.gpu_count, "memory_gib": memory},
        "model": {"id": parsed.model.best_id if _sure(parsed.model) else None},
        "quants": list(parsed.quants),
        "contexts": list(parsed.contexts),
        "os": parsed.os,
        "framework": parsed.framework,
        "lang": lang,
        "intent": parsed.intent,
    }


def _candidates(parsed: ParsedQuestion) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {"gpu": [], "model": []}
    if parsed.gpu is not None:
        out["gpu"] = [cid for cid, _ in parsed.gpu.candidates[:CANDIDATES]]
    if parsed.model is not None:
        out["model"] = [cid for cid, _ in parsed.model.candidates[:CANDIDATES]]
    return out


def _names(ids: list[str], table: dict[str, Any]) -> str:
    return ", ".join(table[i].name for i in ids if i in table)


def _text(doc: Doc, target: str) -> str:
    return render_first_fitting([doc], target)


# --- the full answer -----------------------------------------------------------------------------


@lru_cache(maxsize=512)
def _estimate(
    catalog: Catalog,
    gpu_id: str,
    count: int,
    memory: float,
    os_name: str | None,
    model_id: str,
    quants: tuple[str, ...],
    contexts: tuple[int, ...],
    framework: str | None,
    kv_type: str = "f16",
) -> Estimate:
    # Chat groups ask the same few combinations over and over; the estimate is the costly step.
    setup = build_setup(catalog.gpus[gpu_id], catalog, count, memory, os_name)
    request = EstimateRequest(
        setup, catalog.models[model_id], quants, contexts, framework=framework, kv_type=kv_type
    )
    return estimate(request, catalog)


def _framework_for(quants: tuple[str, ...], asked: str | None, catalog: Catalog) -> str | None:
    """The framework the asked quant implies when none was named: AWQ/FP8 mean vLLM, MLX means MLX."""
    if asked or not quants:
        return asked
    formats = {catalog.quants[q].format for q in quants}
    if formats == {"serving"} and "vllm" in catalog.frameworks:
        return "vllm"
    if formats == {"mlx"} and "mlx" in catalog.frameworks:
        return "mlx"
    return None


def estimate_for(query: dict[str, Any], catalog: Catalog) -> Estimate:
    """The estimate behind a reply's `query` dict (raises SetupError / KeyError on a bad query)."""
    gpu, model = query["gpu"], query["model"]
    quants = tuple(q for q in query.get("quants", ()) if q in catalog.quants)
    contexts = tuple(int(c) for c in query.get("contexts", ()))
    framework = query.get("framework")
    if framework not in catalog.frameworks:
        framework = None
    memory = float(gpu.get("memory_gib") or catalog.gpus[gpu["id"]].memory_gib)
    kv_type = query.get("kv_type") or "f16"
    if kv_type not in KV_TYPES:
        kv_type = "f16"
    return _estimate(
        catalog, gpu["id"], int(gpu.get("count") or 1), memory,
        query.get("os"), model["id"], quants, contexts, _framework_for(quants, framework, catalog), kv_type,
    )  # fmt: skip


_SIZE = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*b(?![a-z0-9])", re.IGNORECASE)


def _said(raw: str, params_b: float) -> str:
    """ "27B" when the question named the model only by a size close to this model's."""
    for m in _SIZE.finditer(raw):
        size = float(m.group(1))
        if abs(size - params_b) <= 0.06 * params_b:
            return f"{m.group(1)}B"
    return ""


def _full(
    parsed: ParsedQuestion,
    query: dict[str, Any],
    lang: Lang,
    target: str,
    catalog: Catalog,
    anchors: AnchorIndex | None = None,
) -> str:
    model_res, gpu_res = parsed.model, parsed.gpu
    also = tuple(catalog.models[m].name for m in model_res.also if m in catalog.models)  # type: ignore[union-attr]
    gpu_also = tuple(catalog.gpus[g].name for g in gpu_res.also if g in catalog.gpus)  # type: ignore[union-attr]
    model = catalog.models[query["model"]["id"]]
    said = _said(parsed.raw, model.params_b) if also and model_res.candidates[0][1] < 100 else ""  # type: ignore[union-attr]
    gpu = query["gpu"]
    info = AskInfo(
        also=also,
        said=said,
        gpu_also=gpu_also,
        quants=tuple(query["quants"]),
        contexts=tuple(query["contexts"]),
        framework=query["framework"],
        intent=parsed.intent,
    )
    return _full_text(
        catalog, gpu["id"], gpu["count"], gpu["memory_gib"], query["os"], query["model"]["id"],
        info.quants, info.contexts, query["framework"], info, lang, target, anchors,
    )  # fmt: skip


@lru_cache(maxsize=1024)
def _full_text(
    catalog: Catalog,
    gpu_id: str,
    count: int,
    memory: float,
    os_name: str | None,
    model_id: str,
    quants: tuple[str, ...],
    contexts: tuple[int, ...],
    framework: str | None,
    info: AskInfo,
    lang: Lang,
    target: str,
    anchors: AnchorIndex | None = None,
    kv_type: str = "f16",
) -> str:
    # The same question (same reading) gets the same text: render once, serve from memory after.
    # An anchor index hashes by its version, so an approved or withdrawn anchor is a new key.
    query = {
        "gpu": {"id": gpu_id, "count": count, "memory_gib": memory},
        "model": {"id": model_id},
        "quants": quants,
        "contexts": contexts,
        "os": os_name,
        "framework": framework,
        "kv_type": kv_type,
    }
    est = estimate_for(query, catalog)
    if anchors is None:
        return compact_reply(est, catalog, lang, target, info)
    est, calibration = calibrate(est, anchors, catalog)
    section = anchor_section(est, anchors, catalog, lang, calibration, info.quants)
    return compact_reply(est, catalog, lang, target, info, anchors=section)


_seen_anchor_version = 0


def _use_index(anchors: AnchorIndex | None) -> None:
    """Drop cached replies when a new anchor index arrives: they were rendered with the old one and
    would otherwise keep every old index alive as part of their cache keys."""
    global _seen_anchor_version
    if anchors is not None and anchors.version != _seen_anchor_version:
        _seen_anchor_version = anchors.version
        _full_text.cache_clear()


@lru_cache(maxsize=256)
def _model_text(catalog: Catalog, model_id: str, lang: Lang, target: str) -> str:
    return _text(model_overview(catalog.models[model_id], catalog, lang), target)


@lru_cache(maxsize=256)
def _gpu_text(
    catalog: Catalog, gpu_id: str, count: int, memory: float, os_name: str | None, lang: Lang, target: str
) -> str:
    card = catalog.gpus[gpu_id]
    setup = build_setup(card, catalog, count, memory, os_name)
    title = _setup_name(card.name, setup.memory_gib, card.memory_gib, setup.count)
    return _text(gpu_overview(setup, title, catalog, lang), target)


def clear_caches() -> None:
    """Forget cached estimates and replies (after a catalog reload, or in benchmarks)."""
    for fn in (_estimate, _full_text, _model_text, _gpu_text):
        fn.cache_clear()


# --- the decision --------------------------------------------------------------------------------


def _ask_back(parsed: ParsedQuestion, lang: Lang, catalog: Catalog) -> tuple[ReplyStatus, Doc] | None:
    """Ask back when the card or model was named but not clearly; None when both are clear or absent."""
    lines: list[Para] = []
    unknown = False
    for res, kind, table in ((parsed.gpu, "gpu", catalog.gpus), (parsed.model, "model", catalog.models)):
        if res is None or _sure(res):
            continue
        ids = [cid for cid, _ in res.candidates[:CANDIDATES] if cid in table]
        if ids:
            lines.append(Para(translate(f"reply.clarify.{kind}", lang, names=_names(ids, table))))
        else:
            unknown = True
            lines.append(Para(translate(f"reply.unknown.{kind}", lang)))
    if not lines:
        return None
    status: ReplyStatus = "error" if unknown and len(lines) == 1 else "clarify"
    return status, tuple(lines)


def _decide(
    parsed: ParsedQuestion,
    query: dict[str, Any],
    lang: Lang,
    target: str,
    catalog: Catalog,
    anchors: AnchorIndex | None = None,
) -> tuple[ReplyStatus, str]:
    if parsed.gpu is None and parsed.model is None:
        return "help", _text((Para(translate("reply.help", lang)),), target)
    asked = _ask_back(parsed, lang, catalog)
    if asked is not None:
        return asked[0], _text(asked[1], target)
    if parsed.gpu is None:
        text = _model_text(catalog, query["model"]["id"], lang, target)
        card = _unknown_card(parsed.raw, catalog)
        if card:
            note = _text((Para(translate("reply.unknown_card_named", lang, name=card)),), target)
            text = f"{note}\n{text}"
        return "answer", text
    gpu = query["gpu"]
    try:
        if parsed.model is None:
            text = _gpu_text(catalog, gpu["id"], gpu["count"], gpu["memory_gib"], query["os"], lang, target)
            return "answer", text
        return "answer", _full(parsed, query, lang, target, catalog, anchors)
    except SetupError as exc:
        return "error", _text((Para(translate("reply.error", lang, reason=str(exc))),), target)


@lru_cache(maxsize=4)
def _unknown_card_pattern(catalog: Catalog) -> re.Pattern[str] | None:
    pattern = catalog.tables.get("understanding", {}).get("unknown_card", {}).get("pattern")
    return re.compile(pattern) if pattern else None


def _unknown_card(raw: str, catalog: Catalog) -> str:
    """The card-like name in a question whose card the catalog didn't recognise ("" if none)."""
    pattern = _unknown_card_pattern(catalog)
    m = pattern.search(raw) if pattern else None
    return " ".join(m.group(0).split()) if m else ""


def _setup_name(name: str, memory: float, default: float, count: int) -> str:
    if memory != default:
        name += f" {memory:g}GB"
    return f"{count}× {name}" if count > 1 else name


def answer(
    text: Any,
    catalog: Catalog,
    lang: str | None = None,
    target: str = "plain",
    anchors: AnchorIndex | None = None,
    default_os: str | None = None,
) -> Reply:
    """The reply to one chat question. Never raises; the text fits one message of `target`.

    `anchors`: approved measurements; when given, a full answer (card + model) is calibrated by the
    community ones on that card and shows the measured-anchor lines (or the call for them).
    `default_os`: the OS to assume when the question names none (a deployment's setting); without
    it the card decides (GeForce: Windows desktop, datacenter: headless Linux, Apple: macOS)."""
    raw = text if isinstance(text, str) else ""
    raw = raw[:MAX_INPUT]
    query: dict[str, Any] = {}
    candidates: dict[str, list[str]] = {"gpu": [], "model": []}
    chosen: Lang = _lang(lang, "en")
    try:
        parsed = parse_question(raw, catalog)
        chosen = _lang(lang, parsed.lang)
        query = _query(parsed, chosen, catalog)
        if default_os and query["os"] is None and query["gpu"]["id"]:
            query["os"] = default_os
        candidates = _candidates(parsed)
        _use_index(anchors)
        status, reply = _decide(parsed, query, chosen, target, catalog, anchors)
    except Exception:  # noqa: BLE001 - a chat bot answers calmly, whatever went wrong inside
        status = "error"
        reason = translate("reply.internal_error", chosen)
        reply = _text((Para(translate("reply.error", chosen, reason=reason)),), target)
    return Reply(status, query, candidates, reply)


# --- follow-ups ----------------------------------------------------------------------------------


def follow_up(
    query: dict[str, Any],
    view: str,
    catalog: Catalog,
    lang: str | None = None,
    target: str = "plain",
    quant: str | None = None,
    anchors: AnchorIndex | None = None,
) -> Reply:
    """A detail view for an earlier answer: "quant" (one quantization in full), "frameworks",
    "speculative". Never raises. With `anchors`, speeds are calibrated as in `answer()` and the
    measured-anchor lines follow the view."""
    chosen: Lang = _lang(lang, query.get("lang", "en") if isinstance(query, dict) else "en")
    try:
        from core.render import detail

        est = estimate_for(query, catalog)
        section: tuple[Part, ...] = ()
        if anchors is not None:
            est, calibration = calibrate(est, anchors, catalog)
            section = anchor_section(est, anchors, catalog, chosen, calibration, (quant,) if quant else ())
        if view == "quant":
            doc = detail.quant_detail(est, quant, catalog, chosen)
        elif view == "frameworks":
            doc = detail.frameworks_view(est, quant, catalog, chosen)
        elif view == "speculative":
            doc = detail.speculative_view(est, quant, catalog, chosen)
        else:
            return Reply("help", query, {}, _text((Para(translate("reply.help", chosen)),), target))
        return Reply("answer", query, {}, truncate((*doc, *section), target))
    except Exception:  # noqa: BLE001 - see answer()
        reason = translate("reply.internal_error", chosen)
        return Reply(
            "error",
            query if isinstance(query, dict) else {},
            {},
            _text((Para(translate("reply.error", chosen, reason=reason)),), target),
        )


def answer_query(
    query: dict[str, Any],
    catalog: Catalog,
    lang: str | None = None,
    target: str = "plain",
    anchors: AnchorIndex | None = None,
) -> Reply:
    """The full answer for an earlier reply's `query`, e.g. after a button switched its OS or KV cache
    type ("kv_type": f16 | q8_0 | q4_0). Never raises."""
    chosen: Lang = _lang(lang, query.get("lang", "en") if isinstance(query, dict) else "en")
    try:
        _use_index(anchors)
        gpu = query["gpu"]
        memory = float(gpu.get("memory_gib") or catalog.gpus[gpu["id"]].memory_gib)
        info = AskInfo(
            quants=tuple(query.get("quants") or ()),
            contexts=tuple(query.get("contexts") or ()),
            framework=query.get("framework"),
            intent=query.get("intent") or "general",
        )
        kv_type = query.get("kv_type") if query.get("kv_type") in KV_TYPES else "f16"
        text = _full_text(
            catalog, gpu["id"], int(gpu.get("count") or 1), memory, query.get("os"), query["model"]["id"],
            info.quants, info.contexts, info.framework, info, chosen, target, anchors, kv_type,
        )  # fmt: skip
        return Reply("answer", query, {}, text)
    except Exception:  # noqa: BLE001 - see answer()
        reason = translate("reply.internal_error", chosen)
        return Reply(
            "error",
            query if isinstance(query, dict) else {},
            {},
            _text((Para(translate("reply.error", chosen, reason=reason)),), target),
        )


def chart(
    query: dict[str, Any], catalog: Catalog, lang: str | None = None, anchors: AnchorIndex | None = None
) -> bytes:
    """PNG chart for an earlier answer; raises ChartUnavailable when matplotlib is not installed."""
    from core.render.chart import chart_png

    chosen: Lang = _lang(lang, query.get("lang", "en"))
    est = estimate_for(query, catalog)
    if anchors is not None:
        est = calibrate(est, anchors, catalog)[0]
    return chart_png(est, chosen)


__all__ = [
    "Reply",
    "answer",
    "answer_query",
    "chart",
    "clear_caches",
    "estimate_for",
    "follow_up",
    "setup_title",
]
