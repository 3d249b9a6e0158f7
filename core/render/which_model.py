"""Which models run on a card ("what can I run on a 3090", "能跑多少B的模型"): the most popular
catalog models, each at the best quant that fits at a usable context, the largest and newest first,
and why the next size up doesn't fit. The lists and limits are data (catalogs/intents.toml).

A question that names a task ("best model for coding on a 4090") puts the models tuned for it
first (catalogs/models.toml `uses`; every one of them is tried, not only the most popular), then the
general ones; the experts-in-RAM line and the next size up look at the tuned ones first too."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.estimator.estimate import Row, Setup
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import facts
from core.i18n import Lang, translate
from core.render.doc import NARROW, Doc, Para, Pre
from core.render.fmt import ROPE, TIGHT, ctx_label, gib, num, table, table_width
from core.render.intent_rows import (
    RowAsk,
    config,
    model_label,
    one_row,
    prose_label,
    rough_weights_gib,
    runs,
    supported_context,
)


@dataclass(frozen=True, slots=True)
class ModelFit:
    model_id: str
    quant: str
    total_gib: float
    decode_tps: float
    tight: bool
    # The asked context is above the model's native window: it runs there only with rope scaling
    # (YaRN), which llama.cpp / vLLM don't turn on by themselves; marked "^" as in the single-model table.
    beyond_native: bool = False
    for_task: bool = False  # tuned for the task the question named ("for coding"): listed first

    def as_json(self) -> dict[str, Any]:
        return {
            "model": self.model_id,
            "quant": self.quant,
            "total_gib": self.total_gib,
            "decode_tps": self.decode_tps,
            "tight": self.tight,
            "beyond_native_context": self.beyond_native,
        }


@dataclass(frozen=True, slots=True)
class NextUp:
    model_id: str
    quant: str
    need_gib: float
    offload_tps: float | None


@dataclass(frozen=True, slots=True)
class WhichModel:
    ctx: int
    usable_gib: float
    fits: tuple[ModelFit, ...]
    next_up: NextUp | None
    lowest_quant: str
    # MoE models too big for the card that run with their experts in system RAM at a chat pace
    # (an 8 GB card and 32 GB RAM: gpt-oss-20b / Qwen3-30B-A3B beat any 3-bit 12B fully on the card)
    experts: tuple[ModelFit, ...] = ()
    ram_gib: float = 0.0
    task: str | None = None  # the task the list was made for ("code"), None for the plain list


def _ladder(model: Model, quants: list[str], catalog: Catalog) -> list[str]:
    ladder = [q for q in quants if q in catalog.quants]
    if model.native_quant in catalog.quants and catalog.quants[model.native_quant].format == "gguf":
        ladder = [model.native_quant] + [q for q in ladder if q != model.native_quant]
    return ladder


def _best_fit(
    setup: Setup,
    usable: float,
    model: Model,
    ladder: list[str],
    ctx: int,
    min_tps: float,
    catalog: Catalog,
    ask: RowAsk,
) -> ModelFit | None:
    """The best quant of the ladder that runs. The lowest is estimated first: if even it doesn't
    fit, that is the answer; if it does, its KV cache and buffers (the same at every quant) pick the
    best quant whose weights leave room for them, and only that one is estimated."""
    lowest = ladder[-1]
    if rough_weights_gib(model, catalog.quants[lowest].bpw) > usable:
        return None  # weights alone are too big: no estimate needed
    row = one_row(catalog, setup, model.id, lowest, ctx, ask)
    if not runs(row, min_tps):
        return None
    extra = row.total_gib - row.weights_gib
    best = row
    for quant in ladder[:-1]:
        if rough_weights_gib(model, catalog.quants[quant].bpw) + extra > usable:
            continue
        candidate = one_row(catalog, setup, model.id, quant, ctx, ask)
        if runs(candidate, min_tps):
            best = candidate
            break
    speed = best.decode_tps.mid if best.decode_tps else 0.0
    return ModelFit(model.id, best.quant, best.total_gib, speed, best.status == "tight", best.beyond_native)


def _candidates(catalog: Catalog, n: int, ctx: int) -> list[Model]:
    """The `n` most popular models that run at `ctx`, natively or with the rope scaling their catalog
    entry documents. A model that can't reach it is left out: its estimate would be capped at its own
    window (one_row) and listed as if it ran at the asked context."""
    ranked = sorted(catalog.models.values(), key=lambda m: (-m.popularity, m.id))
    return [m for m in ranked if supported_context(m) >= ctx][:n]


def _tuned(catalog: Catalog, task: str, ctx: int) -> list[Model]:
    """Every catalog model tuned for `task` that runs at `ctx` (a Devstral or a Codestral is no less
    a coding model for being less asked about than the forty most popular)."""
    ranked = sorted(catalog.models.values(), key=lambda m: (-m.popularity, m.id))
    return [m for m in ranked if task in m.uses and supported_context(m) >= ctx]


def _next_up(
    setup: Setup,
    fits: list[ModelFit],
    misses: list[Model],
    ladder: list[str],
    ctx: int,
    catalog: Catalog,
    ask: RowAsk,
) -> NextUp | None:
    biggest = max((catalog.models[f.model_id].params_b for f in fits), default=0.0)
    larger = sorted((m for m in misses if m.params_b > biggest), key=lambda m: (m.params_b, -m.popularity))
    if not larger or not ladder:
        return None
    model = larger[0]
    quant = _ladder(model, ladder, catalog)[-1]
    row: Row = one_row(catalog, setup, model.id, quant, ctx, ask)
    tps = None
    if row.remedy is not None and facts(row.remedy.kind).in_ram:
        tps = row.remedy.decode_mid
    return NextUp(model.id, quant, row.total_gib, tps)


def _experts_in_ram(
    setup: Setup,
    misses: list[Model],
    fits: list[ModelFit],
    cfg: dict[str, Any],
    ctx: int,
    catalog: Catalog,
    ask: RowAsk,
) -> tuple[ModelFit, ...]:
    """The MoE misses that run with their experts in RAM (the RAM the box has, less the OS's share)
    at `experts_min_tps` or more, the largest first; none smaller than the largest model that fits."""
    min_tps = float(cfg.get("experts_min_tps", 10.0))
    quant = str(cfg.get("experts_quant", "Q4_K_M"))
    room = setup.host.ram_gib - sections(catalog).estimator.host.os_reserve_gib
    biggest = max((catalog.models[f.model_id].params_b for f in fits), default=0.0)
    out: list[ModelFit] = []
    for model in misses:
        if not model.is_moe or model.params_b <= biggest:
            continue
        q = _ladder(model, [quant], catalog)[0]
        row = one_row(catalog, setup, model.id, q, ctx, ask)
        remedy = row.remedy
        if remedy is None or remedy.kind != WayOutKind.EXPERT_OFFLOAD or not remedy.decode_mid:
            continue
        if remedy.decode_mid >= min_tps and remedy.host_gib <= room:
            out.append(
                ModelFit(
                    model.id,
                    remedy.quant or q,
                    remedy.total_gib or row.total_gib,
                    remedy.decode_mid,
                    False,
                    row.beyond_native,
                )
            )
    out = _one_per_size(out, catalog)
    out.sort(key=lambda f: -catalog.models[f.model_id].params_b)
    return tuple(out[: int(cfg.get("experts_shown", 3))])


@dataclass(frozen=True, slots=True)
class _Group:
    """One list's models that run on the card (one per size, largest first) and those that don't."""

    fits: list[ModelFit]
    misses: list[Model]


@dataclass(frozen=True, slots=True)
class _Pricing:
    """What every model of one which-model list is priced with."""

    setup: Setup
    ctx: int
    ask: RowAsk
    usable: float
    quants: list[str]
    min_tps: float
    catalog: Catalog


def _group(models: list[Model], pricing: _Pricing, fold_sizes: bool = True) -> _Group:
    catalog = pricing.catalog
    fits: list[ModelFit] = []
    misses: list[Model] = []
    for model in models:
        ladder = _ladder(model, pricing.quants, catalog)
        fit = _best_fit(
            pricing.setup, pricing.usable, model, ladder, pricing.ctx, pricing.min_tps, catalog, pricing.ask
        )
        if fit is None:
            misses.append(model)
        else:
            fits.append(fit)
    if fold_sizes:  # one model per family and size (a family's own sizes list keeps them all)
        fits = _one_per_size(fits, catalog)
    fits.sort(key=lambda f: (-catalog.models[f.model_id].params_b, _newest_first(catalog.models[f.model_id])))
    return _Group(fits, misses)


@lru_cache(maxsize=256)
def which_models(
    catalog: Catalog,
    setup: Setup,
    ctx: int,
    kv_type: KvCacheType = FULL_PRECISION_KV,
    task: str | None = None,
) -> WhichModel:
    """The models that run on `setup` at `ctx`, each at its best quant. `kv_type`: the cache the
    question asked for ("q8 kv cache"): every row is priced with it, as the header says it is.
    `task`: what the models are wanted for ("code"): the models tuned for it lead the list."""
    cfg = config(catalog, "which_model")
    ask = RowAsk(kv_type=kv_type)
    quants = [str(q) for q in cfg.get("quants", ("Q4_K_M",))]
    min_tps = float(cfg.get("min_decode_tps", 0.0))
    probe = one_row(catalog, setup, _candidates(catalog, 1, 0)[0].id, quants[-1], ctx, ask)
    pricing = _Pricing(setup, ctx, ask, probe.usable_gib, quants, min_tps, catalog)
    tuned_models = _tuned(catalog, task, ctx) if task is not None else []
    tuned_ids = {m.id for m in tuned_models}
    popular = _candidates(catalog, int(cfg.get("candidates", 40)), ctx)
    general = _group([m for m in popular if m.id not in tuned_ids], pricing)
    experts = _experts_in_ram(setup, general.misses, general.fits, cfg, ctx, catalog, ask)
    nxt = _next_up(setup, general.fits, general.misses, quants, ctx, catalog, ask)
    fits = general.fits
    if task is not None:
        tuned = _group(tuned_models, pricing)
        lead = [replace(f, for_task=True) for f in tuned.fits[: int(cfg.get("task_rows", 5))]]
        fits = lead + fits
        tuned_experts = _experts_in_ram(setup, tuned.misses, tuned.fits, cfg, ctx, catalog, ask)
        shown = int(cfg.get("experts_shown", 3))
        experts = (*(replace(f, for_task=True) for f in tuned_experts), *experts)[:shown]
        nxt = _next_up(setup, tuned.fits, tuned.misses, quants, ctx, catalog, ask) or nxt
    return WhichModel(ctx, probe.usable_gib, tuple(fits), nxt, quants[-1], experts, setup.host.ram_gib, task)


def _newest_first(model: Model) -> str:
    # "2025-08" sorts after "2024-12"; inverted so that the newest of equal size comes first.
    return "".join(chr(0x7F - ord(c)) if c.isdigit() else c for c in model.release or "0000-00")


def _one_per_size(fits: list[ModelFit], catalog: Catalog) -> list[ModelFit]:
    """One model per family and per size (within 4 %): the most popular of Qwen3-32B,
    a 32B distill and a 32B coder stands for all three, and the largest of a family for the family."""
    kept: list[ModelFit] = []
    by_popularity = sorted(fits, key=lambda f: (-catalog.models[f.model_id].popularity, f.model_id))
    for fit in by_popularity:
        model = catalog.models[fit.model_id]
        clash = False
        for other in kept:
            o = catalog.models[other.model_id]
            if abs(o.params_b - model.params_b) <= 0.04 * max(o.params_b, model.params_b):
                clash = True
            elif o.family == model.family and o.params_b > model.params_b:
                clash = True
        if not clash:
            kept = [k for k in kept if not _smaller_same_family(catalog.models[k.model_id], model)]
            kept.append(fit)
    return kept


def _smaller_same_family(kept: Model, new: Model) -> bool:
    return kept.family == new.family and kept.params_b < new.params_b


def _table(fits: tuple[ModelFit, ...], catalog: Catalog) -> tuple[str, ...]:
    for width in (16, 15, 14, 13, 11):
        header = ["model", "quant", "GiB", "tok/s"]
        rows = [
            [
                model_label(catalog.models[f.model_id], width),
                f.quant,
                gib(f.total_gib),
                num(f.decode_tps) + (TIGHT if f.tight else "") + (ROPE if f.beyond_native else ""),
            ]
            for f in fits
        ]
        if table_width(header, rows) <= NARROW:
            return table(header, rows)
    return table(header[:2] + header[3:], [r[:2] + r[3:] for r in rows])


def _title_and_task(result: WhichModel, title: str, lang: Lang, shown: int) -> list[Para | Pre]:
    """The title ("… for coding" when a task was asked) and, for a task no tuned model of which
    fits, the line that says so before the general ones."""
    ctx = ctx_label(result.ctx)
    if result.task is None:
        return [Para(translate("intent.which_model.title", lang, setup=title, ctx=ctx))]
    task = translate(f"intent.task.{result.task}", lang)
    parts: list[Para | Pre] = [
        Para(translate("intent.which_model.title_task", lang, setup=title, ctx=ctx, task=task))
    ]
    if result.fits and not any(f.for_task for f in result.fits[:shown]):
        tuned = translate(f"intent.task.{result.task}.tuned", lang)
        parts.append(Para(translate("intent.which_model.task_none", lang, tuned=tuned, ctx=ctx)))
    return parts


def _legend(result: WhichModel, lang: Lang, shown: int) -> str:
    legend = translate("intent.which_model.legend", lang)
    tuned = sum(1 for f in result.fits[:shown] if f.for_task)
    if result.task is not None and tuned:
        label = translate(f"intent.task.{result.task}.tuned", lang)
        legend += " · " + translate("intent.which_model.task_first", lang, n=tuned, tuned=label)
    if any(f.beyond_native for f in result.fits[:shown]):
        legend += " · " + translate("reply.mark.rope", lang)
    return legend


def which_model_doc(result: WhichModel, title: str, catalog: Catalog, lang: Lang, shown: int = 8) -> Doc:
    ctx = ctx_label(result.ctx)
    parts = _title_and_task(result, title, lang, shown)
    if not result.fits:
        parts.append(
            Para(
                translate(
                    "intent.which_model.none",
                    lang,
                    ctx=ctx,
                    usable=result.usable_gib,
                    quant=result.lowest_quant,
                )
            )
        )
    else:
        parts.append(Para(_legend(result, lang, shown)))
        parts.append(Pre(_table(result.fits[:shown], catalog)))
        rope = _rope_line(result.fits[:shown] + result.experts, result.ctx, catalog, lang)
        if rope is not None:
            parts.append(Para(rope))
    nxt = result.next_up
    if nxt is not None:
        line = translate(
            "intent.which_model.next",
            lang,
            model=catalog.models[nxt.model_id].name,
            need=nxt.need_gib,
            quant=nxt.quant,
            usable=result.usable_gib,
        )
        if nxt.offload_tps:
            line += translate("intent.which_model.next_offload", lang, tps=num(nxt.offload_tps))
        parts.append(Para(line))
    if result.experts:
        picks = " · ".join(
            f"{prose_label(catalog.models[f.model_id])}{ROPE if f.beyond_native else ''} {f.quant}"
            f" ~{num(f.decode_tps)} tok/s"
            for f in result.experts
        )
        parts.append(
            Para(translate("intent.which_model.experts", lang, ram=num(result.ram_gib), picks=picks))
        )
    if result.fits:
        example = f"{title.split(' (')[0]} {prose_label(catalog.models[result.fits[0].model_id])}"
        parts.append(Para(translate("intent.which_model.more", lang, example=example)))
    return tuple(parts)


def _rope_line(fits: tuple[ModelFit, ...], ctx: int, catalog: Catalog, lang: Lang) -> str | None:
    """The one line the single-model table prints under a "^" row (row.rope_scaling), for every
    model marked, grouped by native window: "Qwen3-30B-A3B, Qwen3-14B (native 40K)". Each of them
    reaches `ctx` with the rope scaling its catalog entry documents (_candidates keeps no other)."""
    by_native: dict[int, list[str]] = {}
    for fit in fits:
        if fit.beyond_native:
            model = catalog.models[fit.model_id]
            by_native.setdefault(model.max_context, []).append(prose_label(model))
    if not by_native:
        return None
    models = "; ".join(
        translate("intent.which_model.rope_native", lang, models=", ".join(names), native=ctx_label(native))
        for native, names in sorted(by_native.items())
    )
    return translate("intent.which_model.rope", lang, models=models, ctx=ctx_label(ctx))


def rows_json(result: WhichModel, shown: int = 8) -> list[dict[str, Any]]:
    on_card = [{**_row_json(f, result), "placement": "gpu"} for f in result.fits[:shown]]
    return on_card + [{**_row_json(f, result), "placement": "experts"} for f in result.experts]


def _row_json(fit: ModelFit, result: WhichModel) -> dict[str, Any]:
    # `for_task` only in a list made for a task: the plain list's rows keep their keys.
    return fit.as_json() if result.task is None else {**fit.as_json(), "for_task": fit.for_task}


@lru_cache(maxsize=64)
def family_models(
    catalog: Catalog, setup: Setup, ctx: int, ids: tuple[str, ...], kv_type: KvCacheType = FULL_PRECISION_KV
) -> WhichModel:
    """Which of one family's sizes run on `setup` ("4060ti 16g 跑 gemma-4 哪个版本合适"): every
    member in `ids` at its best quant, none folded into a larger sibling as the general list does,
    the MoE ones too big for the card with their experts in RAM."""
    cfg = config(catalog, "which_model")
    ask = RowAsk(kv_type=kv_type)
    quants = [str(q) for q in cfg.get("quants", ("Q4_K_M",))]
    min_tps = float(cfg.get("min_decode_tps", 0.0))
    models = [
        catalog.models[i] for i in ids if i in catalog.models and supported_context(catalog.models[i]) >= ctx
    ]
    probe = one_row(catalog, setup, models[0].id if models else ids[0], quants[-1], ctx, ask)
    pricing = _Pricing(setup, ctx, ask, probe.usable_gib, quants, min_tps, catalog)
    members = _group(models, pricing, fold_sizes=False)
    fits, misses = members.fits, members.misses
    experts = _experts_in_ram(setup, misses, [], cfg, ctx, catalog, ask)
    nxt = _next_up(setup, fits, misses, quants, ctx, catalog, ask)
    return WhichModel(ctx, probe.usable_gib, tuple(fits), nxt, quants[-1], experts, setup.host.ram_gib)
