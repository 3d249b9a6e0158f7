"""What hardware a model needs ("what gpu do i need for 70b", "140亿模型需要多大显存"): one option per
kind of machine, the cheapest kind first (one consumer card, one card + system RAM, several cards,
unified memory, datacenter cards), each with its memory and speed; and "how many A800 80G" as the
count of that card. The kinds and cards are data (catalogs/intents.toml [which_hardware])."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.estimator.estimate import Row
from core.estimator.ways_out.registry import facts
from core.i18n import Lang, translate
from core.render.doc import NARROW, Doc, Para, Pre
from core.render.fmt import ctx_label, gib, num, table, table_width
from core.render.intent_rows import RowAsk, card_label, config, one_row, runs, setup_for

MAX_CARDS = 64
WORSE_BUYS = ("offload", "multi_card", "workstation")


@dataclass(frozen=True, slots=True)
class Option:
    kind: str
    gpu_id: str
    count: int
    memory_gib: float  # per card (unified: the size chosen)
    ram_gib: float | None  # offload: the system RAM it needs
    total_gib: float
    decode_tps: float
    quant: str = ""  # a kind priced at its own quant (datacenter cards: their serving checkpoint)

    def as_json(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            **({"quant": self.quant} if self.quant else {}),
            "gpu": self.gpu_id,
            "count": self.count,
            "memory_gib": self.memory_gib,
            "ram_gib": self.ram_gib,
            "total_gib": self.total_gib,
            "decode_tps": self.decode_tps,
        }


@dataclass(frozen=True, slots=True)
class Needs:
    model_id: str
    quant: str
    ctx: int
    need_gib: float
    options: tuple[Option, ...]


def pick_quant(model: Model, asked: tuple[str, ...], catalog: Catalog) -> str:
    if asked and asked[0] in catalog.quants:
        return asked[0]
    if model.native_quant in catalog.quants and catalog.quants[model.native_quant].format == "gguf":
        return model.native_quant
    return str(config(catalog, "which_hardware").get("quant", "Q4_K_M"))


def _with_cards(
    catalog: Catalog,
    gpu_id: str,
    model_id: str,
    quant: str,
    ctx: int,
    lo: int,
    hi: int,
    framework: str | None,
) -> tuple[int, Row] | None:
    """The fewest cards (lo..hi) that hold the model, and that row. One card's "doesn't fit" row
    says how much is needed, so the count starts there instead of at lo."""
    gpu = catalog.gpus[gpu_id]
    rules = sections(catalog).deploy.deploy

    def row_on(count: int) -> Row:
        setup = setup_for(catalog, gpu_id, count, None, "linux", None)
        return one_row(catalog, setup, model_id, quant, ctx, RowAsk(framework=framework))

    if not gpu.unified_memory:
        lo = rules.deployable(max(lo, _node_floor(catalog, gpu_id, model_id))) or lo
    first = row_on(lo)
    if runs(first):
        return lo, first
    if gpu.unified_memory:
        return None
    per_card = max(first.usable_gib / lo, 0.1)
    start = max(lo + 1, math.ceil(first.total_gib / per_card))
    # Only counts people deploy: 1/2/4/8 per node (tensor parallel), then whole nodes.
    tried = [c for c in sorted(rules.counts) if start <= c <= min(hi, MAX_CARDS)]
    if not tried and start <= min(hi, MAX_CARDS):
        tried = [start]  # a list of counts that stops short of the kind's maximum
    for count in tried[:3]:
        row = row_on(count)
        if runs(row):
            return count, row
    return None


def _node_floor(catalog: Catalog, gpu_id: str, model_id: str) -> int:
    """A model served on a whole node (catalogs/deploy.toml whole_node: 405B, DeepSeek V3 / R1,
    Kimi K2) gets at least a node of datacenter cards: the rest of the node is its users' KV cache."""
    rules = sections(catalog).deploy.deploy
    if catalog.gpus[gpu_id].segment == "datacenter" and model_id in rules.whole_node:
        return rules.node_cards
    return 1


def _unified(
    catalog: Catalog, gpu_id: str, model_id: str, quant: str, ctx: int, need: float
) -> Option | None:
    gpu = catalog.gpus[gpu_id]
    for size in sorted(set(gpu.memory_options_gib or (gpu.memory_gib,))):
        if size < need:
            continue
        row = one_row(catalog, setup_for(catalog, gpu_id, 1, size, None, None), model_id, quant, ctx)
        if runs(row):
            return Option("unified", gpu_id, 1, size, None, row.total_gib, _mid(row))
    return None


def _offload(catalog: Catalog, kind: dict[str, Any], model_id: str, quant: str, ctx: int) -> Option | None:
    """One card with the rest in system RAM: the estimate's own way out (layer or MoE expert
    offload), at the smallest RAM size of the list that holds what spills over."""
    min_tps = float(kind.get("min_decode_tps", 0.0))
    for gpu_id in kind.get("cards", ()):
        for ram in sorted(float(r) for r in kind.get("ram_gib", (64,))):
            setup = setup_for(catalog, gpu_id, 1, None, None, ram)
            row = one_row(catalog, setup, model_id, quant, ctx)
            if runs(row):
                return None  # fits the card alone: the one-card option already says so
            remedy = row.remedy
            if remedy is None:
                continue
            ways = (remedy, *remedy.alternatives)
            way = next((w for w in ways if facts(w.kind).in_ram and w.decode_mid), None)
            if way is not None and (way.decode_mid or 0.0) >= min_tps:
                gpu = catalog.gpus[gpu_id]
                return Option("offload", gpu_id, 1, gpu.memory_gib, ram, row.total_gib, way.decode_mid or 0.0)
    return None


def _mid(row: Row) -> float:
    return row.decode_tps.mid if row.decode_tps else 0.0


def _kind_option(
    catalog: Catalog, kind: dict[str, Any], model_id: str, quant: str, ctx: int, need: float, asked: bool
) -> Option | None:
    kid = str(kind.get("id", ""))
    cards = [g for g in kind.get("cards", ()) if g in catalog.gpus]
    if kid == "offload":
        return _offload(catalog, {**kind, "cards": cards}, model_id, quant, ctx)
    if kind.get("unified"):
        found = next((o for g in cards if (o := _unified(catalog, g, model_id, quant, ctx, need))), None)
        return replace(found, kind=kid) if found is not None else None
    lo, hi = int(kind.get("min_count", 1)), int(kind.get("max_count", 1))
    served = tuple(str(q) for q in kind.get("serving_quants", ()) if q in catalog.quants)
    for gpu_id in cards:
        # A kind served with vLLM / SGLang (datacenter cards) is priced at its serving checkpoint, the
        # first its kernels run (FP8 on Hopper / Blackwell, AWQ on an A100), unless a quant was asked.
        own = supported_quants(catalog, gpu_id, served)[:1] if served and not asked else ()
        at = own[0] if own else quant
        size = need if not own else need * catalog.quants[at].bpw / max(catalog.quants[quant].bpw, 0.1)
        if catalog.gpus[gpu_id].memory_gib * hi < size:
            continue
        hit = _with_cards(catalog, gpu_id, model_id, at, ctx, lo, hi, None)
        if hit is not None:
            count, row = hit
            memory = catalog.gpus[gpu_id].memory_gib
            label = at if own else ""
            return Option(kid, gpu_id, count, memory, None, row.total_gib, _mid(row), label)
    return None


@lru_cache(maxsize=256)
def needs(catalog: Catalog, model_id: str, quant: str, ctx: int, asked: bool = False) -> Needs:
    """What runs `model_id` at `quant` (`asked`: the question named it, so every kind is priced at
    it; else a datacenter kind at its own serving checkpoint)."""
    cfg = config(catalog, "which_hardware")
    kinds = list(cfg.get("kind", ()))
    # The model's need, priced once on the largest card of the list (a need doesn't depend on the card).
    probe_gpu = "h200-sxm" if "h200-sxm" in catalog.gpus else next(iter(catalog.gpus))
    probe = one_row(catalog, setup_for(catalog, probe_gpu, 1, None, "linux", None), model_id, quant, ctx)
    options: list[Option] = []
    for kind in kinds:
        if kind.get("id") in WORSE_BUYS and any(o.kind == "one_card" for o in options):
            continue  # one consumer card holds it: RAM offload, a second card or a pro card is a worse buy
        option = _kind_option(catalog, kind, model_id, quant, ctx, probe.total_gib, asked)
        if option is not None:
            options.append(option)
    return Needs(model_id, quant, ctx, probe.total_gib, tuple(options))


def _option_label(option: Option, catalog: Catalog) -> str:
    label = card_label(catalog.gpus[option.gpu_id])
    if option.quant:
        label = f"{label} {option.quant}"
    if catalog.gpus[option.gpu_id].unified_memory:
        return f"{label} {option.memory_gib:g}G"
    if option.kind == "offload":
        return f"{label}+{option.ram_gib:g}G RAM"
    return f"{option.count}x {label}" if option.count > 1 else label


def _memory_cell(option: Option) -> str:
    total = option.memory_gib * option.count + (option.ram_gib or 0.0)
    return f"{total:g}"


def needs_doc(result: Needs, catalog: Catalog, lang: Lang) -> Doc:
    model = catalog.models[result.model_id]
    ctx = ctx_label(result.ctx)
    parts: list[Para | Pre] = [
        Para(
            translate(
                "intent.which_hardware.title",
                lang,
                model=model.name,
                quant=result.quant,
                ctx=ctx,
                need=result.need_gib,
            )
        )
    ]
    if not result.options:
        parts.append(Para(translate("intent.which_hardware.none", lang, quant=result.quant)))
        return tuple(parts)
    header = ["option", "GiB", "tok/s"]
    rows = [[_option_label(o, catalog), _memory_cell(o), num(o.decode_tps)] for o in result.options]
    if table_width(header, rows) > NARROW:
        rows = [[r[0][: NARROW - 12], *r[1:]] for r in rows]
    parts += [Para(translate("intent.which_hardware.legend", lang)), Pre(table(header, rows))]
    if any(o.kind == "offload" for o in result.options):
        parts.append(Para(translate("intent.which_hardware.offload_note", lang)))
    return tuple(parts)


# --- "how many A800 80G" ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CardCount:
    quant: str
    cards: int | None  # None: more than MAX_CARDS
    total_gib: float
    decode_tps: float | None


def supported_quants(catalog: Catalog, gpu_id: str, quants: tuple[str, ...]) -> tuple[str, ...]:
    """The quants the card's kernels run: FP8 needs compute capability 8.9 (no FP8 on an A100/A800)."""
    cc = catalog.gpus[gpu_id].compute_capability
    out = []
    for q in quants:
        need = catalog.quants[q].min_compute_capability
        if need is None or cc is None or cc >= need:
            out.append(q)
    return tuple(out) or quants


@lru_cache(maxsize=256)
def cards_needed(
    catalog: Catalog, gpu_id: str, model_id: str, quants: tuple[str, ...], ctx: int, framework: str | None
) -> tuple[CardCount, ...]:
    out = []
    for quant in supported_quants(catalog, gpu_id, quants):
        hit = _with_cards(catalog, gpu_id, model_id, quant, ctx, 1, MAX_CARDS, framework)
        if hit is None:
            row = one_row(
                catalog,
                setup_for(catalog, gpu_id, 1, None, "linux", None),
                model_id,
                quant,
                ctx,
                RowAsk(framework=framework),
            )
            out.append(CardCount(quant, None, row.total_gib, None))
        else:
            out.append(CardCount(quant, hit[0], hit[1].total_gib, _mid(hit[1])))
    return tuple(out)


def cards_doc(
    counts: tuple[CardCount, ...],
    gpu_id: str,
    model_id: str,
    ctx: int,
    catalog: Catalog,
    lang: Lang,
    have: int = 1,
) -> Doc:
    """`have`: the cards the question says it has (more than one: a line on what they hold)."""
    gpu, model = catalog.gpus[gpu_id], catalog.models[model_id]
    header = ["quant", "cards", "GiB", "tok/s"]
    rows = [
        [
            c.quant,
            str(c.cards) if c.cards else "x",
            gib(c.total_gib),
            num(c.decode_tps) if c.decode_tps else "x",
        ]
        for c in counts
    ]
    parts: list[Para | Pre] = [
        Para(translate("intent.cards.title", lang, model=model.name, gpu=gpu.name, ctx=ctx_label(ctx))),
        Para(translate("intent.cards.legend", lang, max=MAX_CARDS)),
        Pre(table(header, rows)),
    ]
    parts += _answer_lines(counts, gpu_id, catalog, lang)
    if have > 1:  # "h100x8 ... how many cards": say what the cards they have already hold
        held = [c.quant for c in counts if c.cards is not None and c.cards <= have]
        quants = ", ".join(held) if held else translate("intent.cards.yours_none", lang)
        parts.append(Para(translate("intent.cards.yours", lang, count=have, quants=quants)))
    return tuple(parts)


def _answer_lines(counts: tuple[CardCount, ...], gpu_id: str, catalog: Catalog, lang: Lang) -> list[Para]:
    """The answer: the best quant that one node holds (the first that needs no second node), said as
    "one node of 8 ×" when it takes the node; a better quant that needs whole nodes after it."""
    node = sections(catalog).deploy.deploy.node_cards
    counted = [c for c in counts if c.cards and c.decode_tps is not None]
    best = next((c for c in counted if (c.cards or 0) <= node), counted[0] if counted else None)
    if best is None or best.cards is None:
        return []
    gpu = card_label(catalog.gpus[gpu_id])
    figures = {"cards": best.cards, "gpu": gpu, "quant": best.quant, "tps": num(best.decode_tps or 0.0)}
    segment = catalog.gpus[gpu_id].segment
    key = "intent.cards.answer"
    if best.cards == node and segment == "datacenter":
        key = "intent.cards.answer_node"
    elif best.cards > node:
        key = "intent.cards.answer_nodes"
    out = [Para(translate(key, lang, nodes=-(-best.cards // node), node=node, **figures))]
    for c in counted:
        if c is not best and (c.cards or 0) > node and counts.index(c) < counts.index(best):
            nodes = -(-(c.cards or 0) // node)
            out.append(
                Para(
                    translate(
                        "intent.cards.more_nodes", lang, quant=c.quant, cards=c.cards, nodes=nodes, node=node
                    )
                )
            )
    return out


def needs_json(result: Needs) -> list[dict[str, Any]]:
    return [o.as_json() for o in result.options]


def cards_json(counts: tuple[CardCount, ...]) -> list[dict[str, Any]]:
    return [
        {"quant": c.quant, "cards": c.cards, "total_gib": c.total_gib, "decode_tps": c.decode_tps}
        for c in counts
    ]
