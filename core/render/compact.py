"""The compact answer: quantizations x contexts in a narrow monospace table, then one line each for
usable memory, ways out, the framework with one command, speculative decoding, the method and the
measured anchors. It must fit one chat message, so it is built at decreasing richness until the
rendered text fits the target (`render_first_fitting`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TypeVar

from core.catalog.loader import Catalog
from core.estimator.choice import Choice, choose
from core.estimator.estimate import Estimate, Row, in_ram
from core.estimator.plan import Plan, plan_for
from core.estimator.serialize import plan_decode, plan_end_to_end
from core.estimator.speculative import room_beside
from core.estimator.ways_out.kind import WayOutKind
from core.i18n import Lang, translate
from core.render.advice import Advice, advise, method_line, note_texts, remedy_text, spec_line, ways_out
from core.render.assumptions import gpu_memory_line, os_assumed, uses_host_ram
from core.render.doc import NARROW, Cmd, Doc, Para, Part, Pre, fits, render, truncate
from core.render.family_fallback import family_fallback_parts
from core.render.fmt import NO_FIT, OVER, ROPE, TIGHT, ctx_label, gib, num, speed_range, table, table_width
from core.render.kv_worth import kv_worth, kv_worth_line
from core.render.max_context import longest, max_context_line
from core.understanding.query import AskQuery

T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class Reading:
    """How the question's names were read, for the lines above the table; what it asked for is
    the query itself (core/understanding/query.py)."""

    also: tuple[str, ...] = ()  # other readings of the model name (display names)
    said: str = ""  # the words the model was read from, when short and ambiguous ("27B")
    gpu_also: tuple[str, ...] = ()  # other readings of the card name (display names)
    # What to type for the first of those when it is another memory size ("80g"); "" when it isn't
    # (an M4 Max of another core count has its own name to type).
    gpu_hint: str = ""


@dataclass(frozen=True, slots=True)
class _Level:
    max_quants: int
    max_contexts: int
    extras: bool  # speculative line, row notes
    ways_out: bool
    method: bool


LEVELS = (
    _Level(6, 5, True, True, True),
    _Level(6, 5, False, True, True),
    _Level(4, 3, False, True, True),
    _Level(3, 3, False, False, False),
)


def thin(items: list[T], n: int, keep: tuple[T, ...] = ()) -> list[T]:
    """At most n items, evenly spread, first and last kept, and every item in `keep`."""
    if len(items) <= n:
        return items
    chosen = {i for i, it in enumerate(items) if it in keep}
    free = n - len(chosen)
    if free > 0:
        step = (len(items) - 1) / max(free - 1, 1)
        for k in range(free):
            chosen.add(round(k * step))
    return [items[i] for i in sorted(chosen)][: max(n, len(keep))]


def _grid(est: Estimate) -> tuple[list[str], list[int], dict[tuple[str, int], Row]]:
    quants: list[str] = []
    contexts: list[int] = []
    cells: dict[tuple[str, int], Row] = {}
    for row in est.rows:
        if row.quant not in quants:
            quants.append(row.quant)
        if row.context not in contexts:
            contexts.append(row.context)
        cells[(row.quant, row.context)] = row
    return quants, sorted(contexts), cells


def _cell(row: Row | None, memory: bool, ranges: bool) -> str:
    if row is None:
        return ""
    if memory:
        text = gib(row.total_gib) + (OVER if row.status == "no_fit" else "")
    elif row.status == "no_fit" or row.decode_tps is None:
        text = NO_FIT
    else:
        text = speed_range(row.decode_tps) if ranges else num(row.decode_tps.mid)
    if row.status == "tight":
        text += TIGHT
    if row.beyond_native:
        text += ROPE
    return text


def _table(
    quants: list[str],
    contexts: list[int],
    cells: dict[tuple[str, int], Row],
    memory: bool,
    keep: tuple[int, ...],
) -> tuple[str, ...]:
    """Quants as rows when there are several; contexts as rows when one or two quants are shown."""
    contexts = list(contexts)
    by_context = len(quants) <= 2 and len(contexts) > len(quants)
    while True:
        for ranges in (True, False) if not memory else (False,):
            if by_context:
                header = ["ctx", *quants]
                rows = [
                    [ctx_label(c), *(_cell(cells.get((q, c)), memory, ranges) for q in quants)]
                    for c in contexts
                ]
                if len(quants) == 1:
                    header.insert(1, "GiB")
                    for row, c in zip(rows, contexts, strict=True):
                        cell = cells.get((quants[0], c))
                        row.insert(1, gib(cell.total_gib) if cell else "")
            else:
                header = ["quant", "GiB", *(ctx_label(c) for c in contexts)]
                rows = []
                for q in quants:
                    first = next((cells[(q, c)] for c in contexts if (q, c) in cells), None)
                    rows.append(
                        [
                            q,
                            gib(first.weights_gib) if first else "",
                            *(_cell(cells.get((q, c)), memory, ranges) for c in contexts),
                        ]
                    )
            if table_width(header, rows) <= NARROW:
                return table(header, rows)
        droppable = [c for c in contexts[1:-1] if c not in keep]
        if len(contexts) <= 2 or not droppable:
            return table(header, rows)
        contexts.remove(droppable[len(droppable) // 2])


def _marks_used(lines: tuple[str, ...], memory: bool, lang: Lang, ram: bool = False) -> str:
    body = " ".join(" ".join(line.split()[1:]) for line in lines[1:])  # cells only, not the quant names
    legend = "reply.legend.speed"
    if memory:
        legend = "reply.legend.memory_ram" if ram else "reply.legend.memory"
    parts = [translate(legend, lang)]
    if OVER in body:
        parts.append(translate("reply.mark.over", lang))
    if NO_FIT in body:
        parts.append(translate("reply.mark.no_fit", lang))
    if TIGHT in body:
        parts.append(translate("reply.mark.tight", lang))
    if ROPE in body:
        parts.append(translate("reply.mark.rope", lang))
    return " · ".join(parts)


def cpu_name(est: Estimate) -> str:
    """The CPU a CPU-only run names ("2x AMD EPYC 9654"), "" when none was named."""
    return next((str(n.params["cpu"]) for n in est.assumptions if n.code == "assume.cpu"), "")


def framework_title(est: Estimate, framework: str) -> str:
    """The framework as a title names it: "llama.cpp (CPU)" for a run with no GPU layers."""
    return f"{framework} (CPU)" if in_ram(est) else framework


def setup_title(est: Estimate) -> str:
    setup = est.request.setup
    if in_ram(est) and setup.gpu.id == "cpu-only":
        # A CPU-only run is named by its CPU, when the question named one.
        return cpu_name(est) or setup.gpu.name
    name = setup.gpu.name
    if setup.memory_gib != setup.gpu.memory_gib:
        name += f" {setup.memory_gib:g}GB"
    if setup.count > 1 and not setup.mix:  # a mix's name lists its cards
        name = f"{setup.count}× {name}"
    return name


def _ram_kind(est: Estimate, lang: Lang) -> str:
    host = est.request.setup.host
    params = {"type": host.ram_type, "mt_s": host.mt_s, "channels": host.channels, "sockets": host.sockets}
    return translate("reply.ram_kind_sockets" if host.sockets > 1 else "reply.ram_kind", lang, **params)


def ram_line(est: Estimate, lang: Lang) -> str:
    """A CPU-only run's memory line: the usable RAM (RAM less the OS's share) and what that RAM is."""
    host = est.request.setup.host
    mem = _ram_kind(est, lang)
    return translate(
        "reply.usable_ram",
        lang,
        usable=est.usable.total_gib,
        total=host.ram_gib,
        reserve=host.ram_gib - est.usable.total_gib,
        mem=mem,
        bw=host.bandwidth_gbs,
    )


def prefill_line(est: Estimate, row: Row, lang: Lang) -> str:
    """A CPU-only run's prefill and time to first token for `row` ("" when it doesn't run): the
    prompt from an empty context, and the same prompt at the row's full context where the row has
    that figure; at the depth the question named when it named one."""
    if row.prefill_tps is None or row.ttft_s is None:
        return ""
    figures = {"pp": num(row.prefill_tps.mid), "quant": row.quant, "prompt": est.request.prompt}
    figures["ttft"] = num(row.ttft_s)
    if row.deep_prefill_tps is not None and row.deep_ttft_s is not None:
        deep = {"deep_pp": num(row.deep_prefill_tps.mid), "deep_ttft": num(row.deep_ttft_s)}
        return translate("reply.prefill_cpu_deep", lang, ctx=ctx_label(row.context), **figures, **deep)
    if est.request.depth:
        return translate("reply.prefill_cpu", lang, ctx=ctx_label(row.depth), **figures)
    return translate("reply.prefill_cpu_empty", lang, **figures)


def _seconds(value: float) -> str:
    return f"{value:.2f}" if value < 1 else num(value)


def _e2e_line(est: Estimate, catalog: Catalog, choice: Choice, output: int | None, lang: Lang) -> list[Part]:
    """The question said how long the reply is (issue 23): the plan's end-to-end output rate (prefill
    included) beside its pure decode; the same figures as `ask --json`'s plan `e2e_tps` / `e2e_s`."""
    got = plan_end_to_end(est, catalog, choice, output) if output else None
    if got is None:
        return []
    figures = {"prompt": est.request.prompt, "output": got.output, "tps": num(got.tps.mid)}
    times = {"ttft": _seconds(got.ttft_s), "decode": num(got.decode_mid), "total": num(got.seconds)}
    return [Para(translate("reply.e2e", lang, **figures, **times))]


def _usable_line(est: Estimate, catalog: Catalog, lang: Lang) -> str:
    if in_ram(est):
        return ram_line(est, lang)
    setup = est.request.setup
    line = gpu_memory_line(est, catalog, lang)
    cpu = cpu_name(est)
    if cpu:
        # The CPU the question named sets the RAM the offload ways out are priced on: say which.
        host = setup.host
        mem = _ram_kind(est, lang)
        line += translate("reply.host_cpu", lang, cpu=cpu, ram=host.ram_gib, mem=mem, bw=host.bandwidth_gbs)
    elif uses_host_ram(est):
        # An offload figure rests on the system RAM: say which (issue 20), assumed or as told.
        host = setup.host
        mem = _ram_kind(est, lang)
        # The size as told, the kind of RAM a preset's guess: say which part is theirs.
        key = "reply.host_ram_stated" if host.ram_stated and host.name != "custom" else "reply.host_ram"
        line += translate(key, lang, ram=host.ram_gib, mem=mem, bw=host.bandwidth_gbs)
    return line + os_assumed(setup, lang)


def _cards_needed(row: Row, count: int, lang: Lang) -> str:
    if row.status != "no_fit":
        cards = str(count)
    elif row.remedy is not None:
        options = (row.remedy, *row.remedy.alternatives)
        more = next((o for o in options if o.kind == WayOutKind.MORE_CARDS), None)
        cards = str(more.cards) if more else translate("reply.cards_too_many", lang)
    else:
        cards = translate("reply.cards_too_many", lang)
    return translate("reply.cards", lang, quant=row.quant, ctx=ctx_label(row.context), cards=cards)


def _header(est: Estimate, query: AskQuery, reading: Reading, framework: str) -> list[Part]:
    """The title line (setup · model · framework) and how the names were read."""
    lang = query.lang
    setup, model = est.request.setup, est.request.model
    parts: list[Part] = [Para(f"{setup_title(est)} · {model.name} · {framework_title(est, framework)}")]
    if reading.also:
        code = "reply.read_as_from" if reading.said else "reply.read_as"
        also = ", ".join(reading.also)
        parts.append(Para(translate(code, lang, said=reading.said, model=model.name, also=also)))
    if reading.gpu_also:
        parts.append(Para(card_reading_line(setup.gpu.name, reading, lang)))
    return parts


def card_reading_line(card: str, reading: Reading, lang: Lang) -> str:
    """ "Read as A100 PCIe 40GB; also sold as A100 SXM4 80GB: add “80g” …" for a card typed without
    its memory (`reading.gpu_also`); the plain "also:" form when the sibling differs by more than
    memory (an M4 Max of another core count)."""
    code = "reply.card_read_as" if reading.gpu_hint else "reply.read_as"
    return translate(code, lang, model=card, also=", ".join(reading.gpu_also), hint=reading.gpu_hint)


def _row_notes(est: Estimate, shown_q: list[str], lang: Lang) -> list[Part]:
    notes = note_texts(
        [n for r in est.rows if r.quant in shown_q for n in r.notes if n.code.startswith("row.")], lang
    )
    return [Para("; ".join(notes[:2]))] if notes else []


def _ways_out(est: Estimate, row: Row, shown_q: list[str], shown_c: list[int], lang: Lang) -> list[Part]:
    by_quant: dict[str, list[Row]] = {}
    for r in est.rows:
        if r.quant in shown_q and r.context in shown_c:
            by_quant.setdefault(r.quant, []).append(r)
    order = [row.quant] + [q for q in shown_q if q != row.quant]
    if row.status == "no_fit" and row.remedy is not None:
        # The command runs a way out (a raised macOS limit, a q8_0 cache, experts in RAM): that one
        # leads, as the command applies it, so the line and the `$` say the same thing.
        chosen = f"{row.quant} {ctx_label(row.context)}: {remedy_text(row.remedy, lang)}"
        rest = ways_out(by_quant, [q for q in order if q != row.quant], lang, limit=1)
        outs = [chosen, *rest]
    else:
        outs = ways_out(by_quant, order, lang)
    return [Para(translate("reply.ways_out", lang, items=" · ".join(outs)))] if outs else []


def _kv_worth(est: Estimate, choice: Choice, plan: Plan, catalog: Catalog, lang: Lang) -> list[Part]:
    """ "Is q4 KV cache worth it?": the cache per type at the plan's context and what the plan's
    type buys (core/render/kv_worth.py); nothing for a run without a card."""
    worth = None if in_ram(est) else kv_worth(est, choice, plan, catalog)
    return [Para(kv_worth_line(worth, lang))] if worth is not None else []


def _target_line(choice: Choice, target_tps: float | None, lang: Lang) -> list[Part]:
    """A decode speed wanted: whether the plan's own figure reaches it."""
    tps = plan_decode(choice) if target_tps else None
    if tps is None or target_tps is None:
        return []
    code = "reply.target.reached" if tps["mid"] >= target_tps else "reply.target.short"
    return [Para(translate(code, lang, tps=num(target_tps), got=num(tps["mid"])))]


def _said_plainly(choice: Choice, lang: Lang) -> list[Part]:
    """A 1-2-bit or too-slow pick, said plainly above its command (core/estimator/choice.py)."""
    texts = note_texts(choice.notes, lang)
    return [Para(" ".join(texts))] if texts else []


def _advice(
    est: Estimate,
    advice: Advice,
    catalog: Catalog,
    lang: Lang,
    level: _Level,
    choice: Choice | None = None,
    instead: list[Part] | None = None,
) -> list[Part]:
    """The framework line, its launch command, what runs well `instead` of a poor pick
    (family_fallback.py), then (at the richest level) the speculative line: a draft only when its
    weights and KV cache fit in what the chosen row leaves free."""
    parts: list[Part] = [Para(advice.line)]
    if advice.command:
        parts.append(Cmd(advice.command))
    parts += instead or []
    if level.extras and advice.framework:
        room = room_beside(choice) if choice is not None else None
        ctx = choice.context if choice is not None else 0
        spec = spec_line(est, advice.framework, catalog, lang, room, ctx)
        if spec:
            parts.append(Para(spec))
    return parts


def compact_doc(
    est: Estimate,
    catalog: Catalog,
    query: AskQuery,
    reading: Reading = Reading(),
    level: _Level = LEVELS[0],
    anchors: tuple[Part, ...] | None = None,
    instead: list[Part] | None = None,
) -> Doc:
    """`anchors`: the measured-anchor lines (core/render/anchors.py) in place of the "none yet" line;
    the tightest level keeps only the first of them. `instead`: what runs well in the place of a
    poor pick (`family_fallback_parts`, a few estimates), when the caller has it already."""
    lang = query.lang
    quants, contexts, cells = _grid(est)
    choice = choose(est, catalog)
    row = choice.row
    shown_q = thin(quants, level.max_quants, (*query.quants, row.quant))
    shown_c = thin(contexts, level.max_contexts, (*query.contexts, row.context))
    memory = query.intent == "memory"
    plan = plan_for(est, row, catalog, query.framework)
    advice = advise(plan, catalog, lang)

    parts = _header(est, query, reading, advice.framework or est.framework)
    block = _table(shown_q, shown_c, cells, memory, (*query.contexts, row.context))
    parts += [
        Para(_marks_used(block, memory, lang, in_ram(est))),
        Pre(block),
        Para(_usable_line(est, catalog, lang)),
    ]
    if in_ram(est) and prefill_line(est, row, lang):
        parts.append(Para(prefill_line(est, row, lang)))
    parts += _e2e_line(est, catalog, choice, query.output, lang)
    if level.extras:
        parts += _row_notes(est, shown_q, lang)
    if level.ways_out:
        parts += _ways_out(est, row, shown_q, shown_c, lang)
        if query.kv_worth:
            parts += _kv_worth(est, choice, plan, catalog, lang)
        parts += [Para(translate(f"reply.topic.{topic}", lang)) for topic in query.topics]
        if query.max_context:
            line = max_context_line(
                longest(est, plan, catalog), plan.quant, est.request.model.max_context, lang
            )
            parts += [Para(line)] if line else []
    if query.intent == "cards_needed":
        parts.append(Para(_cards_needed(row, est.request.setup.count, lang)))
    parts += _said_plainly(choice, lang)
    parts += _target_line(choice, query.target_tps, lang)
    if instead is None:
        instead = family_fallback_parts(est, choice, catalog, lang)
    parts += _advice(est, advice, catalog, lang, level, choice, instead)
    if level.method:
        parts.append(Para(method_line(est, catalog, lang, choice)))
    if anchors is None:
        parts.append(Para(translate("reply.anchors.none", lang)))
    else:
        parts.extend(anchors if level.method else anchors[:1])
    return tuple(parts)


def compact_reply(
    est: Estimate,
    catalog: Catalog,
    query: AskQuery,
    reading: Reading = Reading(),
    anchors: tuple[Part, ...] | None = None,
) -> str:
    """The compact answer for `query.target`, at the richest level that fits one message."""
    target = query.target
    text = ""
    # The same at every level: priced once (it may run an estimate per family member).
    instead = family_fallback_parts(est, choose(est, catalog), catalog, query.lang)
    for level in LEVELS:
        text = render(compact_doc(est, catalog, query, reading, level, anchors, instead), target)
        if fits(text, target):
            return text
    return truncate(compact_doc(est, catalog, query, reading, LEVELS[-1], anchors, instead), target)
