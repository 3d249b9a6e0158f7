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
from core.estimator.estimate import Row, Setup
from core.estimator.setup import HostSpec, build_setup
from core.estimator.ways_out.registry import facts
from core.i18n import Lang, translate
from core.render.doc import NARROW, Doc, Para, Pre
from core.render.fmt import ctx_label, gib, num, table, table_width
from core.render.intent_rows import PLAIN_ROW, RowAsk, card_label, config, one_row, runs, setup_for

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
    # ... or at another quant because this machine doesn't run the asked one (a 3090 + RAM runs a
    # GGUF, not an FP8 release): the reply says so under the table
    instead: bool = False

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
class Release:
    """How a model was released when not in BF16 (catalogs/models.toml `native_quant`): the quant id
    its release is priced at (`priced`) and the name the reply gives it (`name`). A release no catalog
    quant names (Kimi K2 Thinking's INT4: BF16 with compressed-tensors INT4 experts) is priced as
    HF-BF16, which core/estimator/weights.py reads as "the released checkpoint" (its experts keep
    their own type)."""

    priced: str
    name: str


def release_of(model: Model, catalog: Catalog) -> Release | None:
    native = model.native_quant
    if not native:
        return None
    return Release(native, native) if native in catalog.quants else Release("HF-BF16", native)


@dataclass(frozen=True, slots=True)
class Needs:
    model_id: str
    quant: str
    ctx: int
    need_gib: float
    options: tuple[Option, ...]
    # The quant as the reply names it: a release's own name where it is priced under another id
    # (Kimi K2 Thinking: INT4, priced as its released HF-BF16 checkpoint).
    label: str = ""
    release: Release | None = None  # how the model was released, when not BF16
    asked: bool = False  # the question named the quant ("full precision", "fp8"), or its release ("满血")


def pick_quant(model: Model, asked: tuple[str, ...], catalog: Catalog) -> str:
    if asked and asked[0] in catalog.quants:
        return asked[0]
    if model.native_quant in catalog.quants and catalog.quants[model.native_quant].format == "gguf":
        return model.native_quant
    return str(config(catalog, "which_hardware").get("quant", "Q4_K_M"))


def _labelled(option: Option, row: Row, quant: str) -> Option:
    """An option whose row was priced at another quant than the one asked (llama.cpp has no FP8: the
    3090 + RAM row is a Q4_K_M) names that quant in its label, never passes for the asked one."""
    return option if option.quant or row.quant == quant else replace(option, quant=row.quant, instead=True)


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
            return _labelled(Option("unified", gpu_id, 1, size, None, row.total_gib, _mid(row)), row, quant)
    return None


def _unified_kind(
    catalog: Catalog, kind: dict[str, Any], cards: list[str], at: tuple[str, str, int, float]
) -> Option | None:
    """The first card of a unified-memory kind (a Mac) that holds the model at `quant`; one that
    holds none at it (a 671B FP8 release on a 512 GB M3 Ultra) may show the kind's `lower_quant`,
    the row labelled with it."""
    model_id, quant, ctx, need = at
    tries = [(quant, need)]
    lower = str(kind.get("lower_quant", ""))
    if lower in catalog.quants and lower != quant:
        tries.append((lower, need * catalog.quants[lower].bpw / max(catalog.quants[quant].bpw, 0.1)))
    for q, size in tries:
        found = next((o for g in cards if (o := _unified(catalog, g, model_id, q, ctx, size))), None)
        if found is not None:
            lower = found.quant or ("" if q == quant else q)
            return replace(found, kind=str(kind.get("id", "")), quant=lower, instead=bool(lower))
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
                found = Option(
                    "offload", gpu_id, 1, gpu.memory_gib, ram, row.total_gib, way.decode_mid or 0.0
                )
                return _labelled(found, row, quant)
    return None


@lru_cache(maxsize=64)
def _server_setup(catalog: Catalog, gpu_id: str, ram: float, ram_type: str, channels: int) -> Setup:
    host = HostSpec(ram_gib=ram, ram_type=ram_type or None, channels=channels or None)
    return build_setup(catalog.gpus[gpu_id], catalog, 1, None, "linux", host)


def _server(catalog: Catalog, kind: dict[str, Any], model_id: str, quant: str, ctx: int) -> Option | None:
    """A CPU server with the RAM for a MoE's experts and one card for the rest (KTransformers runs a
    release in its own precision, experts on the CPU): the smallest RAM of the list that runs it at
    `quant` itself, its speed bound by the server's RAM bandwidth (the kind's RAM type × channels)."""
    ask = RowAsk(framework=str(kind["framework"])) if kind.get("framework") else PLAIN_ROW
    ram_type, channels = str(kind.get("ram_type", "")), int(kind.get("channels", 0))
    min_tps = float(kind.get("min_decode_tps", 0.0))
    for gpu_id in kind.get("cards", ()):
        for ram in sorted(float(r) for r in kind.get("ram_gib", ())):
            row = one_row(
                catalog, _server_setup(catalog, gpu_id, ram, ram_type, channels), model_id, quant, ctx, ask
            )
            if runs(row, min_tps) and row.quant == quant:
                memory = catalog.gpus[gpu_id].memory_gib
                return Option(str(kind.get("id", "")), gpu_id, 1, memory, ram, row.total_gib, _mid(row))
    return None


def _mid(row: Row) -> float:
    return row.decode_tps.mid if row.decode_tps else 0.0


def _applies(catalog: Catalog, kind: dict[str, Any], model_id: str, quant: str) -> bool:
    """A kind priced only for some questions: `formats` (a CPU server runs a release in its own
    serving precision, not a GGUF the RAM-offload kind already prices) and `whole_node_only` (a second
    node or another node card only for the models served on whole nodes, catalogs/deploy.toml)."""
    formats = kind.get("formats")
    if formats and catalog.quants[quant].format not in formats:
        return False
    return not kind.get("whole_node_only") or model_id in sections(catalog).deploy.deploy.whole_node


def _kind_option(
    catalog: Catalog,
    kind: dict[str, Any],
    at: tuple[str, str, int, float],
    asked: bool,
    target_tps: float = 0.0,
) -> Option | None:
    """The kind's option: its first card that holds the model; with a speed wanted, its first card
    that reaches it (a 5090 where a 3090 holds Qwen3-32B at 32 tok/s and 60 were asked), else the
    first that holds it."""
    model_id, quant, _ctx, _need = at
    cards = [g for g in kind.get("cards", ()) if g in catalog.gpus]
    if not _applies(catalog, kind, model_id, quant):
        return None
    if target_tps <= 0 or len(cards) < 2:
        return _on_cards(catalog, kind, cards, at, asked)
    first: Option | None = None
    for gpu_id in cards:
        option = _on_cards(catalog, kind, [gpu_id], at, asked)
        if option is not None and option.decode_tps >= target_tps:
            return option
        first = first or option
    return first


def _on_cards(
    catalog: Catalog, kind: dict[str, Any], cards: list[str], at: tuple[str, str, int, float], asked: bool
) -> Option | None:
    model_id, quant, ctx, need = at
    kid = str(kind.get("id", ""))
    if kid == "offload":
        return _offload(catalog, {**kind, "cards": cards}, model_id, quant, ctx)
    if kind.get("server"):
        return _server(catalog, {**kind, "cards": cards}, model_id, quant, ctx)
    if kind.get("unified"):
        return _unified_kind(catalog, kind, cards, at)
    return _cards_kind(catalog, kind, cards, at, asked)


def _cards_kind(
    catalog: Catalog, kind: dict[str, Any], cards: list[str], at: tuple[str, str, int, float], asked: bool
) -> Option | None:
    model_id, quant, ctx, need = at
    lo, hi = int(kind.get("min_count", 1)), int(kind.get("max_count", 1))
    served = tuple(str(q) for q in kind.get("serving_quants", ()) if q in catalog.quants)
    for gpu_id in cards:
        # A kind served with vLLM / SGLang (datacenter cards) is priced at its serving checkpoint, the
        # first its kernels run (FP8 on Hopper / Blackwell, AWQ on an A100), unless a quant was asked.
        own = supported_quants(catalog, gpu_id, served)[:1] if served and not asked else ()
        at_quant = own[0] if own else quant
        size = need if not own else need * catalog.quants[at_quant].bpw / max(catalog.quants[quant].bpw, 0.1)
        if catalog.gpus[gpu_id].memory_gib * hi < size:
            continue
        hit = _with_cards(catalog, gpu_id, model_id, at_quant, ctx, lo, hi, None)
        if hit is not None:
            count, row = hit
            memory = catalog.gpus[gpu_id].memory_gib
            label = at_quant if own and at_quant != quant else ""
            found = Option(
                str(kind.get("id", "")), gpu_id, count, memory, None, row.total_gib, _mid(row), label
            )
            return _labelled(found, row, quant)
    return None


def _same(a: Option, b: Option) -> bool:
    """Two kinds that land on the same machine (8x H200 FP8 as both "datacenter" and "datacenter_fp8"
    once FP8 was asked): the row is shown once."""
    return (a.gpu_id, a.count, a.ram_gib, a.quant) == (b.gpu_id, b.count, b.ram_gib, b.quant)


@lru_cache(maxsize=256)
def needs(
    catalog: Catalog, model_id: str, quant: str, ctx: int, asked: bool = False, target_tps: float = 0.0
) -> Needs:
    """What runs `model_id` at `quant` (`asked`: the question named it, so every kind is priced at
    it; else a datacenter kind at its own serving checkpoint). `target_tps`: a speed wanted, so a
    consumer card holding it too slowly doesn't leave out the kinds after it."""
    cfg = config(catalog, "which_hardware")
    kinds = list(cfg.get("kind", ()))
    # The model's need, priced once on the largest card of the list (a need doesn't depend on the card).
    probe_gpu = "h200-sxm" if "h200-sxm" in catalog.gpus else next(iter(catalog.gpus))
    probe = _probe(catalog, setup_for(catalog, probe_gpu, 1, None, "linux", None), model_id, quant, ctx)
    options: list[Option] = []
    for kind in kinds:
        if kind.get("id") in WORSE_BUYS and any(
            o.kind == "one_card" and o.decode_tps >= target_tps for o in options
        ):
            continue  # one consumer card holds it: RAM offload, a second card or a pro card is a worse buy
        option = _kind_option(catalog, kind, (model_id, quant, ctx, probe.total_gib), asked, target_tps)
        if option is not None and not any(_same(option, o) for o in options):
            options.append(option)
    release = release_of(catalog.models[model_id], catalog)
    label = release.name if release is not None and release.priced == quant else quant
    return Needs(model_id, quant, ctx, probe.total_gib, tuple(options), label, release, asked)


def _probe(catalog: Catalog, setup: Setup, model_id: str, quant: str, ctx: int) -> Row:
    """The row the header's need is read from, at `quant` itself: a serving quant the chosen
    framework doesn't load (llama.cpp has no FP8, and prices a GGUF in its place) is priced with the
    serving engine instead ([which_hardware] probe_framework), so the need is that quant's."""
    row = one_row(catalog, setup, model_id, quant, ctx)
    engine = str(config(catalog, "which_hardware").get("probe_framework", ""))
    if row.quant == quant or catalog.quants[quant].format != "serving" or engine not in catalog.frameworks:
        return row
    return one_row(catalog, setup, model_id, quant, ctx, RowAsk(framework=engine))


def _option_label(option: Option, catalog: Catalog) -> str:
    gpu = catalog.gpus[option.gpu_id]
    label = card_label(gpu)
    node = sections(catalog).deploy.deploy.node_cards
    if gpu.unified_memory:
        label = f"{label} {option.memory_gib:g}G"
    elif option.ram_gib is not None:
        # One card and system RAM (offload, a CPU server); with a quant after it the note under the
        # table says what "+512G" is, and the row keeps a narrow chat's width.
        label = f"{label}+{option.ram_gib:g}G" + ("" if option.quant else " RAM")
    elif option.count > node and option.count % node == 0:
        label = f"{option.count // node}x{node} {label}"  # whole nodes: "2x8 H100"
    elif option.count > 1:
        label = f"{option.count}x {label}"
    return f"{label} {option.quant}" if option.quant else label


def _memory_cell(option: Option) -> str:
    total = option.memory_gib * option.count + (option.ram_gib or 0.0)
    return f"{total:g}"


def _target_line(result: Needs, target_tps: float | None, catalog: Catalog, lang: Lang) -> list[Para]:
    """A speed wanted: the first (cheapest) option that reaches it and those that fall short, or the
    fastest when none does."""
    if not target_tps or not result.options:
        return []
    tps = num(target_tps)
    reach = next((o for o in result.options if o.decode_tps >= target_tps), None)
    if reach is None:
        fastest = max(result.options, key=lambda o: o.decode_tps)
        label = _option_label(fastest, catalog)
        got = num(fastest.decode_tps)
        return [Para(translate("intent.which_hardware.target_none", lang, tps=tps, option=label, got=got))]
    short = [_option_label(o, catalog) for o in result.options[: result.options.index(reach)]]
    code = "intent.which_hardware.target_short" if short else "intent.which_hardware.target_first"
    params = {"tps": tps, "option": _option_label(reach, catalog), "got": num(reach.decode_tps)}
    return [Para(translate(code, lang, **params, short=", ".join(short)))]


def needs_doc(result: Needs, catalog: Catalog, lang: Lang, target_tps: float | None = None) -> Doc:
    model = catalog.models[result.model_id]
    ctx = ctx_label(result.ctx)
    quant = result.label or result.quant
    parts: list[Para | Pre] = [
        Para(
            translate(
                "intent.which_hardware.title",
                lang,
                model=model.name,
                quant=quant,
                ctx=ctx,
                need=result.need_gib,
            )
        )
    ]
    parts += _release_lines(result, model, lang)
    if not result.options:
        parts.append(Para(translate("intent.which_hardware.none", lang, quant=quant)))
        return tuple(parts)
    header = ["option", "GiB", "tok/s"]
    rows = [[_option_label(o, catalog), _memory_cell(o), num(o.decode_tps)] for o in result.options]
    if table_width(header, rows) > NARROW:
        rows = [[_cut(r[0], NARROW - 12), *r[1:]] for r in rows]
    parts += [Para(translate("intent.which_hardware.legend", lang)), Pre(table(header, rows))]
    parts += _target_line(result, target_tps, catalog, lang)
    if any(o.kind == "offload" for o in result.options):
        parts.append(Para(translate("intent.which_hardware.offload_note", lang)))
    server = next((o for o in result.options if o.kind == "cpu_server"), None)
    if server is not None:
        parts.append(Para(translate("intent.which_hardware.server_note", lang, ram=f"{server.ram_gib:g}")))
    if any(o.instead for o in result.options):
        parts.append(Para(translate("intent.which_hardware.other_quant_note", lang, quant=quant)))
    return tuple(parts)


def _cut(label: str, width: int) -> str:
    """A label cut to the cell, keeping the quant it ends with ("RTX 3090+512G RAM Q4_K_M"): a row
    priced at another quant must still say which."""
    if len(label) <= width:
        return label
    head, _, last = label.rpartition(" ")
    keep = last if head and any(c.isdigit() for c in last) and last.isupper() else ""
    return f"{head[: width - len(keep) - 1]} {keep}" if keep else label[:width]


def _release_lines(result: Needs, model: Model, lang: Lang) -> list[Para]:
    """A model released in FP8 / MXFP4 / INT4, asked at that release ("full precision", "满血"): say
    it is the model's full precision; asked at a 16-bit copy, say it is an upcast of the release."""
    release = result.release
    if release is None or not result.asked:
        return []
    if release.priced == result.quant:
        return [Para(translate("intent.which_hardware.release", lang, model=model.name, quant=release.name))]
    if result.quant in _SIXTEEN_BIT:
        return [
            Para(translate("intent.which_hardware.upcast", lang, release=release.name, quant=result.quant))
        ]
    return []


# What an upcast of a release is asked as (an FP8 release's "BF16 copy").
_SIXTEEN_BIT = frozenset({"HF-BF16", "HF-FP16", "BF16", "F16"})


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
