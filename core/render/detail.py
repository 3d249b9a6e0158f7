"""Detail views for follow-ups: one quantization in full (the seed page's columns), every framework
with its launch command, and the speculative-decoding routes. Each returns a `Doc`; the caller
renders it for its target (`core.render.doc.render` / `truncate`).
"""

from __future__ import annotations

from core.catalog.loader import Catalog, default_catalog
from core.catalog.sections import sections
from core.estimator.choice import choose, focus_context
from core.estimator.estimate import Estimate, Row, in_ram
from core.estimator.plan import judged_options, plan_for
from core.estimator.speculative import room_beside
from core.estimator.weights import weight_breakdown
from core.i18n import Lang, Note, translate
from core.render.advice import advise, note_texts, remedy_text
from core.render.assumptions import gpu_memory_line
from core.render.compact import prefill_line, ram_line, setup_title
from core.render.doc import Cmd, Doc, Para, Part, Pre
from core.render.fmt import ROPE, ctx_label, gib, speed_range, table

_STATUS = {"smooth": "ok", "tight": "tight", "no_fit": "no"}


def _rows_of(est: Estimate, quant: str | None, catalog: Catalog) -> tuple[str, list[Row]]:
    quants = list(dict.fromkeys(r.quant for r in est.rows))
    if quant not in quants:
        quant = choose(est, catalog).row.quant
    return quant, [r for r in est.rows if r.quant == quant]


def focus_quant(est: Estimate, catalog: Catalog | None = None) -> str:
    """The quant a reply's command is for when none was asked (the one "in full" shows)."""
    return choose(est, catalog or default_catalog()).row.quant


def _focus(est: Estimate, quant: str | None, catalog: Catalog) -> Row:
    """The row a view is for: the reply's own choice (core/estimator/choice.py), or the asked quant
    at the reply's context."""
    choice = choose(est, catalog)
    if quant is None or quant == choice.row.quant:
        return choice.row
    rows = [r for r in est.rows if r.quant == quant]
    if not rows:
        return choice.row
    ctx = focus_context([r.context for r in rows], (), catalog)
    return next((r for r in rows if r.context == ctx), rows[0])


def _file_source(est: Estimate, quant_id: str, catalog: Catalog, lang: Lang) -> tuple[Part, ...]:
    """Where the size came from: the published file (repo and parts), or the per-tensor count."""
    quant = catalog.quants.get(quant_id)
    if quant is None or quant.format != "gguf":
        return ()
    wb = weight_breakdown(est.request.model, quant, catalog)
    found = wb.published
    if found is None:
        return (Para(translate("published.computed", lang, gib=gib(wb.file_bytes / 2**30), quant=quant_id)),)
    files = (
        found.files[0] + (f" +{len(found.files) - 1}" if len(found.files) > 1 else "")
        if found.files
        else found.source
    )
    return (
        Para(
            translate(
                "published.file_source", lang, gib=gib(found.bytes / 2**30), repo=found.repo, files=files
            )
        ),
    )


def _usable(est: Estimate, catalog: Catalog, lang: Lang) -> str:
    if in_ram(est):
        return ram_line(est, lang)  # a CPU-only run: usable RAM, not VRAM
    return gpu_memory_line(est, catalog, lang)


def _gpu_only_notes(catalog: Catalog) -> frozenset[str]:
    """Framework notes about the card (GPU Offload slider, layers Ollama puts on the GPU) that a
    CPU-only run has nothing to do with (catalogs/reply.toml [cpu_only] hide_notes)."""
    return sections(catalog).reply.cpu_only.hide_notes


def _said_instead(catalog: Catalog) -> dict[str, str]:
    """Notes a CPU-only run says its own way (catalogs/reply.toml [cpu_only.say_instead])."""
    return dict(sections(catalog).reply.cpu_only.say_instead)


def _cpu_worded(notes: tuple[Note, ...], instead: dict[str, str]) -> tuple[Note, ...]:
    return tuple(Note(instead.get(n.code, n.code), n.params) for n in notes)


def quant_detail(est: Estimate, quant: str | None, catalog: Catalog, lang: Lang) -> Doc:
    """Every context for one quant: KV, total, verdict, speed range; ways out; framework + command."""
    quant, rows = _rows_of(est, quant, catalog)
    body = []
    for r in rows:
        speed = speed_range(r.decode_tps) if r.decode_tps is not None and r.status != "no_fit" else "-"
        label = ctx_label(r.context) + (ROPE if r.beyond_native else "")
        body.append([label, gib(r.kv_gib), gib(r.total_gib), _STATUS.get(r.status, r.status), speed])
    parts: list[Part] = [
        Para(
            translate(
                "reply.detail.title", lang, model=est.request.model.name, quant=quant, setup=setup_title(est)
            )
        ),
        Para(translate("reply.detail.legend", lang, weights=gib(rows[0].weights_gib) if rows else "?")),
        *_file_source(est, quant, catalog, lang),
        Pre(table(["ctx", "KV", "total", "fit", "tok/s"], body)),
        Para(_usable(est, catalog, lang)),
    ]
    focus = _focus(est, quant, catalog)
    if in_ram(est) and prefill_line(est, focus, lang):
        parts.append(Para(prefill_line(est, focus, lang)))
    for r in rows:
        if r.status == "no_fit" and r.remedy is not None:
            parts.append(Para(f"{ctx_label(r.context)}: {remedy_text(r.remedy, lang)}"))
    notes = note_texts([n for r in rows for n in r.notes], lang)
    if notes:
        parts.append(Para("; ".join(notes[:3])))
    advice = advise(plan_for(est, focus, catalog, est.request.framework), catalog, lang)
    parts.append(Para(advice.line))
    if advice.command:
        parts.append(Cmd(advice.command))
    return tuple(parts)


def frameworks_view(est: Estimate, quant: str | None, catalog: Catalog, lang: Lang) -> Doc:
    """Every framework for the focus row: runs or why not, overhead, its filled launch command."""
    row = _focus(est, quant, catalog)
    # Every framework judged on the placement the plan's command uses (the row's way out applied).
    judged = judged_options(plan_for(est, row, catalog, est.request.framework), catalog)
    ram = in_ram(est)
    hidden = _gpu_only_notes(catalog) if ram else frozenset()
    instead = _said_instead(catalog) if ram else {}
    parts: list[Part] = [
        Para(
            translate(
                "reply.frameworks.title",
                lang,
                model=est.request.model.name,
                quant=row.quant,
                ctx=ctx_label(row.context),
                setup=setup_title(est),
            )
        )
    ]
    for opt in sorted(judged, key=lambda o: not o.runnable):
        fw = catalog.frameworks.get(opt.framework)
        name = fw.name if fw else opt.framework
        if opt.runnable:
            low, high = opt.overhead_gib
            code = "reply.frameworks.runs_ram" if ram else "reply.frameworks.runs"
            line = translate(code, lang, framework=name, low=round(low, 1), high=round(high, 1))
            shown = [n for n in opt.notes if n.code not in hidden]
            if shown:
                line += " — " + shown[0].text(lang)
            parts.append(Para(line))
            if opt.command:
                parts.append(Cmd(opt.command))
        else:
            why = _cpu_worded(opt.notes[:1], instead)[0].text(lang) if opt.notes else ""
            parts.append(Para(translate("reply.frameworks.blocked", lang, framework=name, why=why)))
    return tuple(parts)


def _room(est: Estimate, quant: str | None, catalog: Catalog) -> float:
    """GiB the view's row leaves free beside the target for a draft (`speculative.room_beside` of the
    reply's choice; an asked quant's own row: what it leaves when it fits, else none)."""
    choice = choose(est, catalog)
    if quant is None or quant == choice.row.quant:
        return room_beside(choice)
    row = _focus(est, quant, catalog)
    return max(row.usable_gib - row.total_gib, 0.0) if row.status != "no_fit" else 0.0


def speculative_view(est: Estimate, quant: str | None, catalog: Catalog, lang: Lang) -> Doc:
    """The speculative-decoding routes for the recommended (or asked) framework, with their flags."""
    from core.estimator.speculative import option_fits, speculative_options

    plan = plan_for(est, _focus(est, quant, catalog), catalog, est.request.framework)
    framework = plan.framework or est.framework
    fw = catalog.frameworks.get(framework)
    parts: list[Part] = [
        Para(
            translate(
                "reply.spec.title", lang, model=est.request.model.name, framework=fw.name if fw else framework
            )
        )
    ]
    base, ram = None, in_ram(est)
    if ram:
        # A CPU-only run: the routes are added to the reply's own CPU command (no -ngl 99), and a
        # draft model runs on the CPU too.
        base = plan.command or None
    options = speculative_options(est.request.model, framework, catalog, base_command=base) if fw else []
    shown = 0
    instead = _said_instead(catalog) if ram else {}
    room = None if ram else _room(est, quant, catalog)
    for opt in options:
        texts = note_texts(_cpu_worded(opt.notes, instead), lang)
        if not texts:
            continue
        parts.append(Para(translate("reply.spec.option", lang, kind=opt.kind, text=" ".join(texts))))
        if room is not None and not option_fits(opt, room, plan.context, catalog):
            # A draft that doesn't fit beside the target gets no command to paste (issue 20).
            parts.append(Para(translate("reply.spec.no_room", lang, gib=opt.extra_memory_gib, room=room)))
            continue
        # The whole command, program included (a bare "-md … -ngld 99" can't be pasted and run).
        if opt.command or opt.flags:
            command = opt.command or opt.flags
            if ram:  # no layer of the target or the draft on a card (the default command's -ngl 99)
                command = command.replace(" -ngl 99", " -ngl 0").replace(" -ngld 99", " -ngld 0")
            parts.append(Cmd(command))
            shown += 1
    if not shown:
        parts.append(Para(translate("reply.spec.none", lang)))
    return tuple(parts)


__all__ = ["frameworks_view", "quant_detail", "speculative_view"]
