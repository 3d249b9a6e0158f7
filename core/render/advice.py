"""What to run it with, in words: the plan's framework line and its one launch command
(`core.estimator.plan` decides both), the best way out of a row that doesn't fit, and the
speculative-decoding line. It decides nothing itself: it says what the estimate and the plan hold.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.estimator import speed
from core.estimator.band import band_for
from core.estimator.choice import Choice
from core.estimator.estimate import Estimate, Row, in_ram
from core.estimator.plan import COMMAND_CAVEATS, Plan
from core.estimator.serialize import plan_decode
from core.estimator.speculative import SpecOption, option_fits, speculative_options
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.remedy import Remedy
from core.i18n import Lang, Note, translate
from core.render.fmt import ctx_label, num


@dataclass(frozen=True, slots=True)
class Advice:
    framework: str  # framework id to launch with ("" when nothing runs)
    line: str  # one sentence in the asker's language
    command: str  # one launch command ("" when none)


def _name(framework_id: str, catalog: Catalog) -> str:
    fw = catalog.frameworks.get(framework_id)
    return fw.name if fw else framework_id


def advise(plan: Plan, catalog: Catalog, lang: Lang) -> Advice:
    """The plan said in the asker's language: which framework and why, then its one command (the
    plan's own, the same `estimate --json` shows)."""
    asked = _name(plan.asked, catalog)
    why = plan.reason.text(lang) if plan.reason is not None else ""
    kind = plan.kind
    remedy = plan.way_out
    needs_more = remedy is not None and (remedy.cards > 1 or remedy.kind == WayOutKind.HOST_SHORT)
    if kind == "pick" and not plan.command and remedy is not None and needs_more:
        # The pick runs only on more cards (or more RAM) than this box has: say that, not "tensor
        # parallel over N cards" or "the option that runs this" as though they were here (one MI300X
        # for DeepSeek-R1; Kimi K2 on 24 GB + 96 GB).
        way = remedy_text(remedy, lang)
        fw_name = _name(plan.framework, catalog)
        line = translate("reply.fw.elsewhere", lang, quant=plan.quant, way=way, framework=fw_name)
    elif kind == "pick":
        line = translate("reply.fw.pick", lang, framework=_name(plan.framework, catalog), reason=why)
        if plan.easy:
            line += translate("reply.fw.easy", lang, framework=_name(plan.easy, catalog))
    elif kind == "none":
        line = why
    elif kind in ("asked", "asked_no_fit"):
        # No command: the row doesn't fit this setup and its way out needs another one (more RAM,
        # more cards): say so rather than introduce a command that isn't there.
        line = translate(f"reply.fw.{kind}", lang, framework=asked)
    elif kind == "asked_blocked":
        line = translate("reply.fw.asked_blocked", lang, framework=asked, why=why)
    else:
        alt = _name(plan.framework, catalog)
        line = translate(f"reply.fw.{kind}", lang, framework=asked, why=why, alt=alt)
    if plan.command:
        caveats = [n.text(lang) for n in plan.notes if n.code in COMMAND_CAVEATS]
        line = " ".join([line, *caveats]) if caveats else line
    return Advice(plan.framework, line, plan.command)


# --- ways out ------------------------------------------------------------------------------------


def _tps(remedy: Remedy) -> str:
    return num(remedy.decode_mid) if remedy.decode_mid is not None else "?"


def remedy_text(remedy: Remedy, lang: Lang) -> str:
    kind = remedy.kind
    params = {
        "tps": _tps(remedy),
        "kv": remedy.kv_type,
        "quant": remedy.quant,
        "on": remedy.layers_on_gpu,
        "total": remedy.layers_total,
        "n": remedy.cpu_moe_layers,
        "cards": remedy.cards,
        "host": f"{remedy.host_gib:g}",
        "ctx": ctx_label(remedy.context) if remedy.context else "",
        "mb": remedy.wired_limit_mb,
        "flag": remedy.kv_flag,
    }
    # vLLM / SGLang cache FP8 with their own flag; "q8_0" is llama.cpp's word for it.
    key = "kv_quant_serving" if kind == WayOutKind.KV_QUANT and remedy.kv_flag else str(kind)
    if kind == WayOutKind.LOWER_QUANT and remedy.context:
        key = "lower_quant_ctx"  # a smaller file at a shorter context (neither alone fits)
    text = translate(f"reply.remedy.{key}", lang, **params)
    if remedy.wired_limit_mb and kind != WayOutKind.MAC_WIRED_LIMIT:
        # A smaller quant (or context) that fits only past macOS's default GPU share: the command
        # raises it first, and the line says so (the table's "x" is at the default share).
        text += " " + translate("reply.remedy.with_wired_limit", lang, mb=remedy.wired_limit_mb)
    if remedy.quality_warning:
        # 1-2-bit quants run but answer noticeably worse: said next to the figure, never hidden.
        text += " " + translate("reply.remedy.low_bit_warning", lang)
    return text


def ways_out(rows_by_quant: dict[str, list[Row]], order: list[str], lang: Lang, limit: int = 2) -> list[str]:
    """ "Q8_0 64K+: KV q8_0 → fits, ~19 tok/s" for the first context each quant stops fitting at."""
    out: list[str] = []
    for quant in order:
        rows = rows_by_quant.get(quant, ())
        first = next((r for r in rows if r.status == "no_fit"), None)
        if first is None or first.remedy is None:
            continue
        later = any(r.context > first.context for r in rows)
        where = f"{quant} {ctx_label(first.context)}{'+' if later else ''}"
        out.append(f"{where}: {remedy_text(first.remedy, lang)}")
        if len(out) >= limit:
            break
    return out


# --- speculative decoding ------------------------------------------------------------------------


def spec_line(
    est: Estimate, framework: str, catalog: Catalog, lang: Lang, room_gib: float | None = None, ctx: int = 0
) -> str:
    """One line about the best speculative-decoding route, or "" when there is none. `room_gib`: the
    memory the command's row leaves free (`speculative.room_beside`; 0 when the target is offloaded);
    a draft whose weights and KV cache at `ctx` need more is not offered (70B Q4 on 2x 3090 leaves
    ~4 GiB: no room for an 8B draft), the next route is (n-gram needs none)."""
    if framework not in catalog.frameworks:
        return ""
    try:
        options = speculative_options(est.request.model, framework, catalog)
    except Exception:  # noqa: BLE001 - an advisory line must never sink the answer
        return ""
    best: SpecOption | None = next(
        (o for o in options if o.flags and (room_gib is None or option_fits(o, room_gib, ctx, catalog))),
        None,
    )
    if best is None:
        return ""
    params = {"gib": best.extra_memory_gib, "flags": best.flags, "framework": _name(framework, catalog)}
    if best.kind == "draft" and best.draft_model:
        draft = catalog.models.get(best.draft_model)
        params["draft"] = draft.name if draft else best.draft_model
    if best.kind == "mtp":
        params["layers"] = est.request.model.mtp_layers
    # A CPU-only run has no VRAM to spare or take: its n-gram line says RAM.
    code = "reply.spec.ngram_ram" if best.kind == "ngram" and in_ram(est) else f"reply.spec.{best.kind}"
    return translate(code, lang, **params)


# --- method --------------------------------------------------------------------------------------


def method_line(est: Estimate, catalog: Catalog, lang: Lang, choice: Choice | None = None) -> str:
    """The seed page's methodology line, short: formula, calibration, what the range means. With
    the `choice` the answer runs, the range said is its plan's: a serving engine, an MoE, several
    cards or an offload price wider than the card's own llama.cpp band (vLLM on an H100 read
    "×0.83–1.35" above a table of 82–255 around 179)."""
    cal = speed.calibration(catalog)
    gpu = est.request.setup.gpu
    seen = gpu.id in getattr(cal, "seen_decode_cards", ())
    seen = seen or f"{est.backend}/{gpu.arch_family}" in cal.seen_decode
    band = band_for(gpu, est.backend, cal)
    tps = plan_decode(choice) if choice is not None else None
    if tps is not None and tps["mid"] > 0 and tps["low"] > 0:
        band = replace(band, low=tps["low"] / tps["mid"], high=tps["high"] / tps["mid"])
    if in_ram(est) and est.request.setup.host.cpu in catalog.cpus:
        # A named CPU is priced by the CPU fit, which has seen CPU-only runs: say that, not "no data".
        return translate("reply.method_cpu", lang, low=band.low, high=band.high)
    rows = sections(catalog).calibration.rows
    code = "reply.method_n" if rows else "reply.method"
    line = translate(code, lang, low=band.low, high=band.high, n=rows)
    if not seen:
        line += translate("reply.method_unseen", lang, arch=gpu.arch)
    return line


def note_texts(notes: tuple[Note, ...] | list[Note], lang: Lang) -> list[str]:
    seen: list[str] = []
    for note in notes:
        text = note.text(lang)
        if text not in seen:
            seen.append(text)
    return seen
