"""Half questions: only a model ("qwen3 32b?") or only a card ("魔改2080ti 22g"). Answer what can be
answered: the model's memory needs against common card sizes, or which popular models run on the
card. The card and model lists are data (catalogs/reply.toml).
"""

from __future__ import annotations

import math
from functools import lru_cache

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.estimator.estimate import EstimateRequest, Setup, estimate
from core.estimator.memory import default_os, usable_memory
from core.estimator.setup import build_setup
from core.i18n import Lang, translate
from core.render.doc import Doc, Para, Pre
from core.render.fmt import NO_FIT, TIGHT, ctx_label, gib, num, speed_range, table, table_width

NARROW = 34


@lru_cache(maxsize=8)
def _cards(catalog: Catalog) -> tuple[tuple[Gpu, float], ...]:
    """(card, usable GiB with its default OS), smallest first."""
    out = []
    for gid in sections(catalog).reply.model_only.cards:
        gpu = catalog.gpus.get(gid)
        if gpu is not None:
            usable = usable_memory(gpu, gpu.memory_gib, 1, default_os(gpu, catalog), catalog)
            out.append((gpu, usable.total_gib))
    return tuple(sorted(out, key=lambda g: g[0].memory_gib))


def model_overview(model: Model, catalog: Catalog, lang: Lang) -> Doc:
    cfg = sections(catalog).reply.model_only
    cards = _cards(catalog)
    ctx = min(cfg.context, model.max_context)
    quants = [q for q in cfg.quants if q in catalog.quants]
    if model.native_quant and model.native_quant in catalog.quants and model.native_quant not in quants:
        quants.insert(0, model.native_quant)
    big, big_usable = cards[-1]
    setup = build_setup(big, catalog, 1, big.memory_gib, "linux")
    est = estimate(EstimateRequest(setup, model, tuple(quants), (ctx,), framework="llama.cpp"), catalog)
    rows = []
    for row in est.rows:
        holder = next((g for g, usable in cards if row.total_gib <= usable), None)
        if holder is not None:
            card = f"{holder.memory_gib:g}G"
        else:
            card = f"{math.ceil(row.total_gib / big_usable)}x{big.memory_gib:g}"
        rows.append([row.quant, gib(row.weights_gib), gib(row.total_gib), card])
    block = table(["quant", "GiB", ctx_label(ctx), "card"], rows)
    return (
        Para(translate("reply.model_only.title", lang, model=model.name)),
        Pre(block),
        Para(translate("reply.model_only.legend", lang, ctx=ctx_label(ctx))),
        Para(translate("reply.ask_gpu", lang)),
    )


def gpu_overview(setup: Setup, title: str, catalog: Catalog, lang: Lang) -> Doc:
    cfg = sections(catalog).reply.gpu_only
    ctx = cfg.context
    default_quant = cfg.quant
    rows = []
    for mid in cfg.models:
        model = catalog.models.get(mid)
        if model is None:
            continue
        quant = model.native_quant if model.native_quant in catalog.quants else default_quant
        est = estimate(EstimateRequest(setup, model, (quant,), (min(ctx, model.max_context),)), catalog)
        row = est.rows[0]
        if row.status == "no_fit" or row.decode_tps is None:
            cell = NO_FIT
        else:
            cell = num(row.decode_tps.mid) + (TIGHT if row.status == "tight" else "")
        rng = speed_range(row.decode_tps) if row.decode_tps is not None and row.status != "no_fit" else ""
        rows.append([mid, quant, gib(row.total_gib), cell, rng])
    header = ["model", "quant", "GiB", "tok/s", "range"]
    if table_width(header, rows) > NARROW:
        header, rows = header[:-1], [r[:-1] for r in rows]
    if table_width(header, rows) > NARROW:
        header, rows = [header[0], *header[2:]], [[r[0], *r[2:]] for r in rows]
    marks = [
        translate("reply.legend.speed", lang),
        translate("reply.mark.no_fit", lang),
        translate("reply.mark.tight", lang),
    ]
    return (
        Para(translate("reply.gpu_only.title", lang, gpu=title, ctx=ctx_label(ctx))),
        Para(" · ".join(marks)),
        Pre(table(header, rows)),
        Para(translate("reply.ask_model", lang)),
    )
