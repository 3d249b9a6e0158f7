"""Which models run on a card ("what can I run on a 3090", "能跑多少B的模型"): the most popular
catalog models, each at the quant a practitioner would run it at (core/estimator/usable_pick.py:
Q4_K_M, a bigger one only while it stays fast, a 3-bit file only when nothing of 4 bits fits), by
size weighed by pace (a MoE streaming at ~35 tok/s before a dense 32B crawling at ~10), every 3-bit
pick after every 4-bit one; a model that would only crawl is named in one line instead of a row;
why the next size up doesn't fit; the top pick's `$` command (core/ask/which_model_run.py). The
lists and limits are data (catalogs/intents.toml [which_model]).

A question that names a task ("best model for coding on a 4090") puts the models tuned for it
first (catalogs/models.toml `uses`; every one of them is tried, not only the most popular), marked
"+", then the general ones; a task's own context (RAG: 32K) sizes the list, and its `task_last`
tags go last (a reasoning model for roleplay). The experts-in-RAM line and the next size up look at
the tuned ones first too."""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.estimator.estimate import Row, Setup
from core.estimator.usable_pick import PickRules, QuantRun, Tier, pick, pick_rules, worth
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import facts
from core.i18n import Lang, messages, translate
from core.render.doc import NARROW, Doc, Para, Pre
from core.render.fmt import ROPE, TIGHT, ctx_label, gib, num, table
from core.render.intent_rows import (
    RowAsk,
    config,
    one_row,
    prose_label,
    rough_weights_gib,
    runs,
    supported_context,
)
from core.render.model_names import is_whole, short_name

TASK_MARK = "+"  # a row tuned for the task the question named
PROSE_WIDTH = 24  # a model named in a line of text (experts in RAM, too slow): room for its short name


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
    tier: Tier = Tier.USABLE  # how high the pick ranks (usable_pick): ~4-bit, 3-bit, crawl
    last: bool = False  # a kind the task puts after every other (a reasoning model for roleplay)

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
    # Models that run here only below the crawl pace ([which_model.pick] crawl_tps): one line, no row.
    crawl: tuple[ModelFit, ...] = ()
    crawl_tps: float = 0.0
    tagged: bool = False  # some catalog model is tagged for `task` (else no "none of them fits" line)


def _ladder(model: Model, quants: list[str], catalog: Catalog) -> list[str]:
    ladder = [q for q in quants if q in catalog.quants]
    if model.native_quant in catalog.quants and catalog.quants[model.native_quant].format == "gguf":
        ladder = [model.native_quant] + [q for q in ladder if q != model.native_quant]
    return ladder


def _rows_that_run(pricing: _Pricing, model: Model, ladder: list[str]) -> dict[str, Row]:
    """Every quant of the ladder that runs, by quant. The lowest is estimated first: if even it
    doesn't run, none does; if it does, its KV cache and buffers (the same at every quant) rule out
    the quants whose weights leave no room for them without an estimate."""
    catalog, usable = pricing.catalog, pricing.usable
    lowest = min(ladder, key=lambda q: catalog.quants[q].bpw)
    if rough_weights_gib(model, catalog.quants[lowest].bpw) > usable:
        return {}  # weights alone are too big: no estimate needed
    row = one_row(catalog, pricing.setup, model.id, lowest, pricing.ctx, pricing.ask)
    if not runs(row, pricing.min_tps):
        return {}
    extra = row.total_gib - row.weights_gib
    out = {lowest: row}
    for quant in ladder:
        if quant == lowest or rough_weights_gib(model, catalog.quants[quant].bpw) + extra > usable:
            continue
        candidate = one_row(catalog, pricing.setup, model.id, quant, pricing.ctx, pricing.ask)
        if runs(candidate, pricing.min_tps):
            out[quant] = candidate
    return out


def _best_fit(pricing: _Pricing, model: Model, ladder: list[str]) -> ModelFit | None:
    """The quant a practitioner would run the model at here (usable_pick), with its tier."""
    rows = _rows_that_run(pricing, model, ladder)
    catalog = pricing.catalog
    quant_runs = [
        QuantRun(
            q,
            catalog.quants[q].bpw,
            r.decode_tps.mid if r.decode_tps else 0.0,
            r.status == "tight",
            native=q == model.native_quant,
        )
        for q, r in rows.items()
    ]
    chosen = pick(quant_runs, pricing.rules, catalog.quants[pricing.rules.baseline].bpw)
    if chosen is None:
        return None
    best = rows[chosen.run.quant]
    return ModelFit(
        model.id,
        best.quant,
        best.total_gib,
        chosen.run.tps,
        best.status == "tight",
        best.beyond_native,
        tier=chosen.tier,
    )


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
    """One list's models that run on the card at a usable pace (one per size), those that run only
    at a crawl, and those that don't run."""

    fits: list[ModelFit]
    misses: list[Model]
    crawl: list[ModelFit]

    @property
    def running(self) -> list[ModelFit]:
        """Every model that runs, crawls included: the next size up and the experts-in-RAM line
        start above the largest of them."""
        return self.fits + self.crawl


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
    rules: PickRules
    last_tags: frozenset[str] = frozenset()  # `uses` tags the task puts last ([which_model] task_last)


def _group(models: list[Model], pricing: _Pricing, fold_sizes: bool = True) -> _Group:
    catalog = pricing.catalog
    fits: list[ModelFit] = []
    misses: list[Model] = []
    crawl: list[ModelFit] = []
    for model in models:
        fit = _best_fit(pricing, model, _ladder(model, pricing.quants, catalog))
        if fit is None:
            misses.append(model)
            continue
        fit = replace(fit, last=bool(pricing.last_tags & set(model.uses)))
        (crawl if fit.tier == Tier.CRAWL else fits).append(fit)
    if fold_sizes:  # one model per family and size (a family's own sizes list keeps them all)
        # Folded tier by tier: a family's largest at 3 bits (Qwen3-32B IQ3_XXS on 16 GB) hides
        # none of its sizes that run at 4 bits (Qwen3-14B Q4_K_M), which lead the list.
        fits = [f for tier in (Tier.USABLE, Tier.LOW_BIT) for f in _one_per_size(_in(fits, tier), catalog)]
        crawl = _one_per_size(crawl, catalog)
    fits.sort(key=lambda f: _rank(f, catalog, pricing.rules))
    crawl.sort(key=lambda f: _largest_first(f, catalog))
    return _Group(fits, misses, crawl)


def _in(fits: list[ModelFit], tier: Tier) -> list[ModelFit]:
    return [f for f in fits if f.tier == tier]


def _largest_first(fit: ModelFit, catalog: Catalog) -> tuple[float, str]:
    model = catalog.models[fit.model_id]
    return -model.params_b, _newest_first(model)


def _rank(fit: ModelFit, catalog: Catalog, rules: PickRules) -> tuple[int, bool, bool, float, str]:
    """Where a pick stands in the list: every ~4-bit pick before every 3-bit one; then the models
    tuned for the task; then those the task puts last after the rest; then by size weighed by pace
    (usable_pick `worth`), the newest first of equal worth."""
    model = catalog.models[fit.model_id]
    value = worth(model.params_b, model.active_params_b, fit.decode_tps, rules, fit.tight)
    return (int(fit.tier), not fit.for_task, fit.last, -round(value, 3), _newest_first(model))


def _pricing(
    catalog: Catalog, setup: Setup, ctx: int, kv_type: KvCacheType, probe_id: str, task: str | None
) -> tuple[_Pricing, dict[str, Any]]:
    cfg = config(catalog, "which_model")
    ask = RowAsk(kv_type=kv_type)
    quants = [str(q) for q in cfg.get("quants", ("Q4_K_M",))]
    probe = one_row(catalog, setup, probe_id, quants[-1], ctx, ask)
    last = cfg.get("task_last", {}).get(task or "", ())
    pricing = _Pricing(
        setup,
        ctx,
        ask,
        probe.usable_gib,
        quants,
        float(cfg.get("min_decode_tps", 0.0)),
        catalog,
        pick_rules(cfg.get("pick", {})),
        frozenset(str(t) for t in last),
    )
    return pricing, cfg


@lru_cache(maxsize=256)
def which_models(
    catalog: Catalog,
    setup: Setup,
    ctx: int,
    kv_type: KvCacheType = FULL_PRECISION_KV,
    task: str | None = None,
) -> WhichModel:
    """The models that run on `setup` at `ctx`, each at the quant to run it at. `kv_type`: the cache
    the question asked for ("q8 kv cache"): every row is priced with it, as the header says it is.
    `task`: what the models are wanted for ("code"): the models tuned for it lead the list."""
    pricing, cfg = _pricing(catalog, setup, ctx, kv_type, _candidates(catalog, 1, 0)[0].id, task)
    quants, ask = pricing.quants, pricing.ask
    tuned_models = _tuned(catalog, task, ctx) if task is not None else []
    tuned_ids = {m.id for m in tuned_models}
    popular = _candidates(catalog, int(cfg.get("candidates", 40)), ctx)
    general = _group([m for m in popular if m.id not in tuned_ids], pricing)
    experts = _experts_in_ram(setup, general.misses, general.running, cfg, ctx, catalog, ask)
    nxt = _next_up(setup, general.running, general.misses, quants, ctx, catalog, ask)
    fits, crawl = general.fits, general.crawl
    if task is not None:
        tuned = _group(tuned_models, pricing)
        lead = [replace(f, for_task=True) for f in tuned.fits[: int(cfg.get("task_rows", 5))]]
        fits = sorted(lead + fits, key=lambda f: _rank(f, catalog, pricing.rules))
        crawl = sorted(crawl + tuned.crawl, key=lambda f: _largest_first(f, catalog))
        tuned_experts = _experts_in_ram(setup, tuned.misses, tuned.running, cfg, ctx, catalog, ask)
        shown = int(cfg.get("experts_shown", 3))
        experts = (*(replace(f, for_task=True) for f in tuned_experts), *experts)[:shown]
        nxt = _next_up(setup, tuned.running, tuned.misses, quants, ctx, catalog, ask) or nxt
    tagged = task is not None and any(task in m.uses for m in catalog.models.values())
    return WhichModel(
        ctx,
        pricing.usable,
        tuple(fits),
        nxt,
        quants[-1],
        experts,
        setup.host.ram_gib,
        task,
        tuple(crawl[: int(cfg.get("crawl_shown", 2))]),
        pricing.rules.crawl_tps,
        tagged,
    )


def _newest_first(model: Model) -> str:
    # "2025-08" sorts after "2024-12"; inverted so that the newest of equal size comes first.
    return "".join(chr(0x7F - ord(c)) if c.isdigit() else c for c in model.release or "0000-00")


def _one_per_size(fits: list[ModelFit], catalog: Catalog) -> list[ModelFit]:
    """One model per family and per size (within 4 %): the most popular of Qwen3-32B,
    a 32B distill and a 32B coder stands for all three, and the largest of a family for the family.
    A MoE and a dense model are not one kind: Qwen3-30B-A3B at ~120 tok/s and the dense gemma-4-31B
    at ~35, or Gemma 4's 26B-A4B and its 31B, are different picks, each kept."""
    kept: list[ModelFit] = []
    by_popularity = sorted(fits, key=lambda f: (-catalog.models[f.model_id].popularity, f.model_id))
    for fit in by_popularity:
        model = catalog.models[fit.model_id]
        clash = False
        for other in kept:
            o = catalog.models[other.model_id]
            same_kind = o.is_moe == model.is_moe
            if same_kind and abs(o.params_b - model.params_b) <= 0.04 * max(o.params_b, model.params_b):
                clash = True
            elif same_kind and o.family == model.family and o.params_b > model.params_b:
                clash = True
        if not clash:
            kept = [k for k in kept if not _smaller_same_family(catalog.models[k.model_id], model)]
            kept.append(fit)
    return kept


def _smaller_same_family(kept: Model, new: Model) -> bool:
    return kept.family == new.family and kept.is_moe == new.is_moe and kept.params_b < new.params_b


def _label(fit: ModelFit, catalog: Catalog, width: int) -> str:
    mark = TASK_MARK if fit.for_task else ""
    return short_name(catalog.models[fit.model_id], catalog, width - len(mark)) + mark


def _cells(fit: ModelFit) -> tuple[str, str, str]:
    speed = num(fit.decode_tps) + (TIGHT if fit.tight else "") + (ROPE if fit.beyond_native else "")
    return fit.quant, gib(fit.total_gib), speed


def _table(fits: tuple[ModelFit, ...], catalog: Catalog) -> tuple[tuple[str, ...], bool]:
    """The table, and whether it kept its GiB column. The model column gets what the other columns
    leave of a phone's width; where that would cut a name past its own short forms (only the last
    resort cut is ambiguous), the GiB column goes and the names get its room."""
    cells = [_cells(f) for f in fits]
    quant_w = max(len("quant"), *(len(c[0]) for c in cells))
    gib_w = max(len("GiB"), *(len(c[1]) for c in cells))
    speed_w = max(len("tok/s"), *(len(c[2]) for c in cells))
    with_gib = NARROW - (quant_w + gib_w + speed_w + 3)
    whole = all(
        is_whole(catalog.models[f.model_id], catalog, with_gib - (len(TASK_MARK) if f.for_task else 0))
        for f in fits
    )
    if whole:
        rows = [[_label(f, catalog, with_gib), *c] for f, c in zip(fits, cells, strict=True)]
        return table(["model", "quant", "GiB", "tok/s"], rows), True
    width = NARROW - (quant_w + speed_w + 2)
    rows = [[_label(f, catalog, width), c[0], c[2]] for f, c in zip(fits, cells, strict=True)]
    return table(["model", "quant", "tok/s"], rows), False


def _title_and_task(result: WhichModel, title: str, lang: Lang, shown: int) -> list[Para | Pre]:
    """The title ("… for coding" when a task was asked); the task's own line (RAG: the context it is
    sized at; translation while no model is tagged for it: what to run instead); and, for a task
    whose tuned models don't fit, the line that says so before the general ones."""
    ctx = ctx_label(result.ctx)
    if result.task is None:
        return [Para(translate("intent.which_model.title", lang, setup=title, ctx=ctx))]
    task = translate(f"intent.task.{result.task}", lang)
    parts: list[Para | Pre] = [
        Para(translate("intent.which_model.title_task", lang, setup=title, ctx=ctx, task=task))
    ]
    known = messages()
    note = f"intent.task.{result.task}.note"
    untagged = f"intent.task.{result.task}.untagged"
    if note in known:
        parts.append(Para(translate(note, lang, ctx=ctx)))
    if not result.tagged and untagged in known:
        parts.append(Para(translate(untagged, lang)))
    if result.tagged and result.fits and not any(f.for_task for f in result.fits[:shown]):
        tuned = translate(f"intent.task.{result.task}.tuned", lang)
        parts.append(Para(translate("intent.which_model.task_none", lang, tuned=tuned, ctx=ctx)))
    return parts


def _legend(result: WhichModel, lang: Lang, shown: int, with_gib: bool) -> str:
    legend = translate("intent.which_model.legend" if with_gib else "intent.which_model.legend_narrow", lang)
    if result.task is not None and any(f.for_task for f in result.fits[:shown]):
        label = translate(f"intent.task.{result.task}.tuned", lang)
        legend += " · " + translate("intent.which_model.task_mark", lang, tuned=label)
    if any(f.beyond_native for f in result.fits[:shown]):
        legend += " · " + translate("reply.mark.rope", lang)
    return legend


def _picks(fits: tuple[ModelFit, ...], catalog: Catalog) -> str:
    """Models named in a line of text: "Qwen3-Coder-30B-A3B Q4_K_M ~33 tok/s · ..."."""
    return " · ".join(
        f"{short_name(catalog.models[f.model_id], catalog, PROSE_WIDTH)}{ROPE if f.beyond_native else ''}"
        f" {f.quant} ~{num(f.decode_tps)} tok/s"
        for f in fits
    )


def _next_line(result: WhichModel, catalog: Catalog, lang: Lang) -> list[Para]:
    nxt = result.next_up
    if nxt is None:
        return []
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
    return [Para(line)]


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
        block, with_gib = _table(result.fits[:shown], catalog)
        parts.append(Para(_legend(result, lang, shown, with_gib)))
        parts.append(Pre(block))
        rope = _rope_line(result.fits[:shown] + result.experts, result.ctx, catalog, lang)
        if rope is not None:
            parts.append(Para(rope))
    if result.crawl:
        slow = _picks(result.crawl, catalog)
        parts.append(Para(translate("intent.which_model.crawl", lang, tps=num(result.crawl_tps), picks=slow)))
    parts += _next_line(result, catalog, lang)
    if result.experts:
        picks = _picks(result.experts, catalog)
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
    member in `ids` at the quant to run it at (a crawl named in one line), none folded into a larger
    sibling as the general list does, the MoE ones too big for the card with their experts in RAM."""
    models = [
        catalog.models[i] for i in ids if i in catalog.models and supported_context(catalog.models[i]) >= ctx
    ]
    pricing, cfg = _pricing(catalog, setup, ctx, kv_type, models[0].id if models else ids[0], None)
    quants, ask = pricing.quants, pricing.ask
    members = _group(models, pricing, fold_sizes=False)
    experts = _experts_in_ram(setup, members.misses, [], cfg, ctx, catalog, ask)
    nxt = _next_up(setup, members.running, members.misses, quants, ctx, catalog, ask)
    return WhichModel(
        ctx,
        pricing.usable,
        tuple(members.fits),
        nxt,
        quants[-1],
        experts,
        setup.host.ram_gib,
        crawl=tuple(members.crawl[: int(cfg.get("crawl_shown", 2))]),
        crawl_tps=pricing.rules.crawl_tps,
    )
