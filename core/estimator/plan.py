"""What to run a row with, decided once: the framework, the quant and context it loads, where it sits
(`placement`), the launch command, and the notes that say why there is none. Every view reads this
one `Plan` (`plan_for`): the chat's framework line and `$` command (core/render/advice.py), the rows
of `estimate --json` and `ask --json` (serialize.py), the follow-up views and buttons. Nothing else
calls `recommend` / `evaluate` for a row's command, so the views can't disagree; the rules that pick
the framework, quant and placement for an answer belong here (issue 20 refines them).
"""

from __future__ import annotations

import re
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.estimator.frameworks import FrameworkOption, FrameworkQuery, evaluate, framework_options, recommend
from core.estimator.frameworks.commands.sources import listed_checkpoints
from core.estimator.frameworks.serving_setup import serving_pick
from core.estimator.memory import GIB
from core.estimator.placement import framework_query
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import facts
from core.estimator.ways_out.remedy import Remedy
from core.estimator.ways_out.wired_limit import tight_wired_mb
from core.estimator.weights import bpw_bytes
from core.i18n import Note

if TYPE_CHECKING:  # estimate.py imports this module (pricing_framework): only its types are needed
    from core.estimator.estimate import Estimate, EstimateRequest, FitStatus, Row

# How the framework was chosen; the chat's sentence says which (core/render/advice.py).
PlanKind = Literal[
    "pick",  # the estimate's framework (or the recommendation when that can't run the row)
    "none",  # no framework runs this row
    "asked",  # the framework the user named, with its command
    "asked_no_fit",  # the named one runs the model, but this row has no command (see `notes`)
    "asked_blocked",  # the named one can't run this (`reason`) and nothing else does, or WSL2 only
    "asked_blocked_alt",  # the named one can't, `framework` can
    "asked_blocked_alt_no_fit",  # ... and this row has no command on this setup
]


# Notes about a command that runs, said beside it (core/render/advice.py).
COMMAND_CAVEATS = frozenset({"fw.vllm.sibling_checkpoint", "fw.llama.tensor_kv"})


@dataclass(frozen=True, slots=True)
class Plan:
    """What to run one row with, for every view alike."""

    framework: str  # the framework the command launches; "" when none runs this
    placement: FrameworkQuery  # the run as the command places it, the row's way out applied
    status: FitStatus  # the row's own verdict
    way_out: Remedy | None  # the row's way out (or the offload the user asked for)
    command: str  # "" when there is none: `notes` say why
    notes: tuple[Note, ...]  # why there is no command, or the caveat it runs under (WSL2)
    kind: PlanKind
    priced: str  # the framework the row's figures were priced with (the estimate's)
    asked: str = ""  # the framework the user named, "" for none
    reason: Note | None = None  # pick / none: why this framework; asked_blocked*: why not the asked one
    easy: str = ""  # the point-and-click alternative (Ollama, LM Studio) beside a pick

    @property
    def quant(self) -> str:
        """The quant the command loads (the row's, or its way out's when that changes it)."""
        return self.placement.quant.id

    @property
    def context(self) -> int:
        return self.placement.context


def pricing_framework(request: EstimateRequest, quants: tuple[str, ...], catalog: Catalog) -> str:
    """The framework an estimate is priced with when the user named none: judged on the first quant.
    `plan_for` keeps it for every row it runs, so the command runs what the table priced."""
    if not quants:
        return "llama.cpp"
    ctx = (request.contexts or (4096,))[0]
    served = serving_pick(request, ctx, catalog) or _mac_pick(request, ctx, catalog)
    served = served or _big_moe_pick(request, quants[0], ctx, catalog)
    if served:
        return served
    pick = recommend(framework_query(request, quants[0], ctx, "smooth", None, catalog), catalog=catalog)
    # recommend() only picks a framework that loads this quant's format, so the grid is priced for
    # the engine that runs it (MLX and vLLM price differently from llama.cpp).
    return pick.framework or "llama.cpp"


def _big_moe_pick(request: EstimateRequest, quant_id: str, ctx: int, catalog: Catalog) -> str:
    """One or two NVIDIA cards and a big MoE whose weights don't fit them (DeepSeek, Kimi K2,
    Qwen3-235B with its experts in RAM): the fork measured faster at exactly that ([big_moe] in
    catalogs/estimator.toml), when it runs the setup; "" otherwise."""
    rules, setup, model = sections(catalog).estimator.big_moe, request.setup, request.model
    quant = catalog.quants.get(quant_id)
    if (
        not rules.framework
        or rules.framework not in catalog.frameworks
        or not model.is_moe
        or model.params_b < rules.min_params_b
        or setup.gpu.vendor != "NVIDIA"
        or setup.count > rules.max_cards
        or setup.gpu.unified_memory
        or request.offload == "cpu"
        or quant is None
        or quant.format != "gguf"
    ):
        return ""
    if bpw_bytes(model, quant) / GIB <= setup.count * setup.memory_gib:
        return ""  # it fits the cards: mainline llama.cpp (or serving) as usual
    kt = _amx_pick(request, ctx, catalog)
    if kt:
        return kt
    return rules.framework if _runs_offloaded(rules.framework, request, quant_id, ctx, catalog) else ""


def _runs_offloaded(
    framework: str, request: EstimateRequest, quant_id: str, ctx: int, catalog: Catalog
) -> bool:
    """Whether `framework` runs the request at this quant with every MoE expert in RAM."""
    query = framework_query(request, quant_id, ctx, "smooth", None, catalog)
    offloaded = replace(query, n_cpu_moe=request.model.layers, fits_on_gpu=False)
    return evaluate(catalog.frameworks[framework], offloaded).runnable


def _amx_pick(request: EstimateRequest, ctx: int, catalog: Catalog) -> str:
    """A named Intel CPU with AMX whose RAM holds the model's FP8 experts: KTransformers ([big_moe]
    amx_framework), its kernels made for exactly that box; "" otherwise."""
    rules, setup, model = sections(catalog).estimator.big_moe, request.setup, request.model
    cpu = catalog.cpus.get(setup.host.cpu)
    fp8 = catalog.quants.get("FP8")
    if cpu is None or cpu.simd != "amx" or rules.amx_framework not in catalog.frameworks or fp8 is None:
        return ""
    if bpw_bytes(model, fp8) / GIB > setup.host.ram_gib * rules.amx_ram_share:
        return ""  # the FP8 experts don't fit the RAM: a GGUF on ik_llama.cpp instead
    return rules.amx_framework if _runs_offloaded(rules.amx_framework, request, "FP8", ctx, catalog) else ""


def _mac_pick(request: EstimateRequest, ctx: int, catalog: Catalog) -> str:
    """Apple silicon, nothing named: "mlx" when the engine prices MLX's 4-bit faster than llama.cpp's
    4-bit at the context ([mac] in catalogs/estimator.toml), "" otherwise (llama.cpp decides)."""
    setup, rules = request.setup, sections(catalog).estimator.mac
    if (
        setup.gpu.vendor != "Apple"
        or request.quants
        or request.offload
        or "mlx" not in catalog.frameworks
        or not {rules.mlx_quant, rules.llama_cpp_quant} <= set(catalog.quants)
    ):
        return ""
    # estimate.py imports this module: the engine itself only when a Mac is priced.
    from core.estimator.estimate import estimate

    def mid(framework: str, quant: str) -> float:
        one = replace(request, framework=framework, quants=(quant,), contexts=(ctx,))
        row = estimate(one, catalog).rows[0]
        return row.decode_tps.mid if row.status != "no_fit" and row.decode_tps is not None else 0.0

    query = framework_query(request, rules.mlx_quant, ctx, "smooth", None, catalog)
    if not evaluate(catalog.frameworks["mlx"], query).runnable:
        return ""  # a model MLX can't load (DeepSeek V4): llama.cpp
    return "mlx" if mid("mlx", rules.mlx_quant) > mid("llama.cpp", rules.llama_cpp_quant) else ""


def runs_here(row: Row) -> bool:
    """The row gets a launch command: it fits, or its way out runs on this machine (`Facts.has_command`:
    the ones that run here as it is, a lower quant's file or a shorter context, and on macOS the GPU
    wired-memory limit raised first). A way out that needs other hardware (more cards, more RAM) or
    none at all gets no command: pasted, it would not run."""
    return row.status != "no_fit" or (row.remedy is not None and facts(row.remedy.kind).has_command)


@dataclass(frozen=True, slots=True)
class _Subject:
    """One row being planned: its placement and where to look frameworks up."""

    row: Row
    query: FrameworkQuery
    catalog: Catalog
    request: EstimateRequest | None = None  # the estimate's request (a llama.cpp plan in its stead)

    def option(self, framework: str) -> FrameworkOption:
        return evaluate(self.catalog.frameworks[framework], self.query)

    def plan(
        self,
        framework: str,
        command: str,
        notes: tuple[Note, ...],
        kind: PlanKind,
        asked: str = "",
        reason: Note | None = None,
        easy: str = "",
    ) -> Plan:
        row = self.row
        return Plan(
            framework=framework,
            placement=self.query,
            status=row.status,
            way_out=row.remedy,
            command=command,
            notes=notes,
            kind=kind,
            priced=row.framework,
            asked=asked,
            reason=reason,
            easy=easy,
        )


def _launch(s: _Subject, option: FrameworkOption) -> tuple[str, tuple[Note, ...]]:
    """(command, why there is none) for a framework that runs (or runs under WSL2) on this row."""
    remedy = s.row.remedy
    if not runs_here(s.row):
        if remedy is None or remedy.kind == WayOutKind.NONE:
            return "", ()  # no way out at all: the row's own verdict says it
        return "", (Note("plan.other_hardware", {"way": remedy.kind}),)
    if not option.command:
        # Runnable, but no published checkpoint to name: say so instead of a placeholder.
        return "", tuple(n for n in option.notes if n.code == "fw.vllm.no_checkpoint")
    # What the command serves in place of what was priced (a GPTQ-Int4 for an unpublished AWQ) is
    # said beside it, never left for the user to notice in the repo name.
    caveats = tuple(n for n in option.notes if n.code in COMMAND_CAVEATS)
    raise_to = remedy.wired_limit_mb if remedy is not None else 0
    raise_to = raise_to or _tight_on_a_mac(s)
    if raise_to:
        # macOS resets the limit at reboot; the run needs it raised first.
        return f"sudo sysctl iogpu.wired_limit_mb={raise_to} && {option.command}", caveats
    return option.command, caveats


def _tight_on_a_mac(s: _Subject) -> int:
    """The wired limit a tight run on an Apple machine loads under (`tight_wired_mb`), else 0: the
    row's own, or the way out's it runs as (8-bit R1 doesn't fit a 512 GB M3 Ultra, the 4-bit it
    falls back to fits tight)."""
    row, request = s.row, s.request
    if request is None:
        return 0
    total = row.total_gib if row.status == "tight" else None
    if row.status == "no_fit" and row.remedy is not None:
        total = row.remedy.total_gib
    setup = request.setup
    if not total or not (setup.gpu.unified_memory and setup.gpu.vendor == "Apple"):
        return 0
    rules = sections(s.catalog).estimator
    smooth = rules.verdict.smooth_fraction
    return tight_wired_mb(total, row.usable_gib, setup.memory_gib, rules.remedy, smooth)


def plan_for(est: Estimate, row: Row, catalog: Catalog, asked: str | None = None) -> Plan:
    """The plan for `row`: the framework the user named (`asked`), or why it can't run this and what
    can; with none named, the estimate's own when it runs this row, else the recommendation for the
    row. The command only when the row runs here (`runs_here`)."""
    query = framework_query(est.request, row.quant, row.context, row.status, row.remedy, catalog)
    subject = _Subject(row, query, catalog, est.request)
    if est.stands_in is not None:
        return _standing_in(est, subject, asked)
    if asked and asked in catalog.frameworks:
        return _asked(subject, asked)
    return _pick(subject)


def _standing_in(est: Estimate, s: _Subject, asked: str | None) -> Plan:
    """A llama.cpp estimate priced in a serving engine's stead (`Estimate.stands_in`): llama.cpp's
    own plan of the row, under the one line saying why not the engine. Named or implied by the
    request (an AWQ asked for means vLLM), it is the asked one's alternative whatever `asked` the
    view passes (`ask --json` passes the request's, now llama.cpp); a setup's own pick (a serving
    question on a card it can't serve) is the pick with that line first."""
    stand = est.stands_in
    assert stand is not None
    inner = _pick(s)
    if stand.asked or asked == stand.framework:
        return _instead_of(inner, stand.framework, stand.reason)
    return replace(inner, notes=(stand.reason, *inner.notes))


def _pick(s: _Subject) -> Plan:
    # recommend() only asks which frameworks run (cheap); the one launched is evaluated in full.
    rec = recommend(s.query, catalog=s.catalog)
    priced = s.option(s.row.framework) if s.row.framework in s.catalog.frameworks else None
    blocked: tuple[Note, ...] = () if priced is None else priced.notes[:2]
    if priced is not None and priced.runnable:
        option = priced
    elif (instead := _too_old_instead(s, priced, blocked)) is not None:
        return instead
    elif rec.framework is None:
        return _no_runner(s, blocked, rec.reason)
    else:
        option = s.option(rec.framework)
    command, why = _launch(s, option)
    if not command and any(n.code == "fw.vllm.no_checkpoint" for n in why):
        # A serving setup (T4, A100) whose engine has nothing listed to serve: llama.cpp's GGUF plan.
        reason = _nothing_to_serve(s, option.framework)
        instead = _gguf_instead(s, option.framework)
        if instead is not None:
            return replace(instead, notes=(reason, *instead.notes))
    pick = option.framework
    # The recommendation's reason when it picked this one; else the reason it gives among just this.
    reason = rec.reason if rec.framework == pick else recommend(s.query, (option,), s.catalog).reason
    notes = why if option is priced else (*blocked, *why)
    easy = rec.easy if rec.easy and rec.easy != pick else ""
    return s.plan(pick, command, notes, "pick", reason=reason, easy=easy)


def _no_runner(s: _Subject, blocked: tuple[Note, ...], reason: Note | None) -> Plan:
    """No framework runs the row's quant on this card: llama.cpp's GGUF plan (`_quant_elsewhere`)
    where it has one, else the plan that names no framework."""
    found = _quant_elsewhere(s)
    if found is not None:
        instead, why = found
        return replace(instead, notes=(why, *instead.notes))
    return s.plan("", "", blocked, "none", reason=reason)


def _quant_elsewhere(s: _Subject) -> tuple[Plan, Note] | None:
    """No framework runs the row's serving quant on this card (AWQ on a V100: vLLM's AWQ kernels need
    compute 7.5): llama.cpp's plan with the GGUF of the same bits and the line saying so; None for a
    GGUF row, or where llama.cpp has no command either."""
    priced = s.row.framework if s.row.framework in s.catalog.frameworks else None
    if s.query.quant.format == "gguf" or priced is None:
        return None
    instead = _gguf_instead(s, priced)
    if instead is None:
        return None
    engine = s.catalog.frameworks[priced]
    os_name = s.request.setup.os if s.request is not None else ""
    wsl = os_name == "windows" and "linux" in engine.os  # runs under WSL2 there
    if os_name and os_name not in engine.os and not wsl:
        # vLLM on a Mac: not the quant but the engine is what doesn't run here (no macOS build).
        said = {"framework": engine.name, "gpu": s.query.gpu.name}
        return instead, Note("plan.framework_not_on_os", said)
    return instead, Note("plan.quant_not_on_card", {"quant": s.query.quant.id, "gpu": s.query.gpu.name})


def _too_old_instead(s: _Subject, priced: FrameworkOption | None, blocked: tuple[Note, ...]) -> Plan | None:
    """Priced for a serving engine this card is too old for (P40, P100): llama.cpp's GGUF plan, not
    whatever else loads the serving quant (ExLlamaV2 on a Pascal card's slow FP16); None otherwise."""
    if priced is None or not blocked or blocked[0].code not in _CARD_TOO_OLD:
        return None
    instead = _gguf_instead(s, priced.framework)
    return None if instead is None else replace(instead, notes=(blocked[0], *instead.notes))


def _asked(s: _Subject, asked: str) -> Plan:
    option = s.option(asked)
    if option.runnable:
        command, why = _launch(s, option)
        instead = None if command else _nothing_to_download(s, asked, why)
        if instead is not None:
            return instead
        return s.plan(asked, command, why, "asked" if command else "asked_no_fit", asked)
    why_not = option.notes[0] if option.notes else None
    blocked = option.notes[:2]
    if why_not is not None and why_not.code in _CARD_TOO_OLD:
        # A card the serving engine doesn't drive (P40, P100): llama.cpp's GGUF plan, not whatever
        # else happens to load the serving quant (ExLlamaV2 on a Pascal card's slow FP16).
        instead = _gguf_instead(s, asked)
        if instead is not None:
            return _instead_of(instead, asked, why_not)
    if option.command:
        # Runs with a workaround the note names (WSL2 on Windows): its command, under that note. A row
        # that doesn't run here has none, and "the command below works" would point at nothing.
        command, why = _launch(s, option)
        if not command:
            return s.plan(asked, "", (*blocked, *why), "asked_no_fit", asked)
        return s.plan(asked, command, blocked, "asked_blocked", asked, why_not)
    rec = recommend(s.query, catalog=s.catalog)
    if rec.framework is None:
        found = _quant_elsewhere(s)
        if found is not None:
            return _instead_of(found[0], asked, found[1])
        return s.plan("", "", blocked, "asked_blocked", asked, why_not)
    command, why = _launch(s, s.option(rec.framework))
    kind: PlanKind = "asked_blocked_alt" if command or runs_here(s.row) else "asked_blocked_alt_no_fit"
    return s.plan(rec.framework, command, (*blocked, *why), kind, asked, why_not)


# Blockers that say the card is too old for the asked framework altogether (no backend drives it):
# NVIDIA below its minimum compute (P40 for vLLM), or an AMD gfx target its ROCm build isn't made for
# (MI50's gfx906 for vLLM / SGLang; only community forks run it): llama.cpp's GGUF plan instead.
_CARD_TOO_OLD = frozenset({"fw.gate.compute", "fw.gate.rocm_gfx"})


def _serving_params(s: _Subject, asked: str) -> dict[str, object]:
    model, gpu = s.query.model, s.query.gpu
    fw = s.catalog.frameworks[asked]
    return {
        "framework": fw.name,
        "gpu": gpu.name,
        "repo": model.hf_repo or model.name,
        "quant": s.query.quant.id,
    }


def _nothing_to_serve(s: _Subject, asked: str) -> Note:
    """Why the serving engine has nothing to serve here, said as it is: no checkpoint of the row's
    quant is listed, and either none of the model's that this card's kernels run is listed either
    (plan.nothing_to_serve: a V100 is never pointed at an AWQ), or the one that is (the smallest
    first) doesn't fit with room for its KV cache at the row's context (plan.listed_does_not_fit),
    or it fits: asking for that quant serves it (plan.listed_fits)."""
    params = _serving_params(s, asked)
    fw = s.catalog.frameworks[asked]
    listed = [
        (q, r)
        for q, r in listed_checkpoints(str(params["repo"]), s.catalog)
        if q != s.query.quant.id and evaluate(fw, replace(s.query, quant=s.catalog.quants[q])).runnable
    ]
    if not listed or s.request is None or _PROBING.get():
        return Note("plan.nothing_to_serve", params)
    from core.estimator.estimate import estimate  # estimate.py imports this module

    quant, repo = listed[0]
    said = {**params, "listed": repo, "listed_quant": quant, "ctx": f"{s.row.context // 1024}K"}
    request = replace(s.request, framework=asked, quants=(quant,), contexts=(s.row.context,))
    token = _PROBING.set(True)  # the probe's own plan may find nothing to serve: it says so plainly
    try:
        row = estimate(request, s.catalog).rows[0]
    finally:
        _PROBING.reset(token)
    return Note("plan.listed_does_not_fit" if row.status == "no_fit" else "plan.listed_fits", said)


# Set while `_nothing_to_serve` prices a listed checkpoint: that estimate plans its own row, and a
# plan with nothing to serve there must not price another checkpoint in turn (it would never end).
_PROBING: ContextVar[bool] = ContextVar("_PROBING", default=False)


def _nothing_to_download(s: _Subject, asked: str, why: tuple[Note, ...]) -> Plan | None:
    """The asked framework runs the model but has no files to point at: llama.cpp's GGUF plan in
    its stead, under the reason; None when llama.cpp has none either."""
    if any(n.code == "fw.vllm.no_checkpoint" for n in why):
        # vLLM / SGLang run the model, but nothing they could serve is listed, fits and runs on
        # this card (T4 and gemma-2-9b: no AWQ / GPTQ listed, BF16 too big, no FP8 kernels).
        instead = _gguf_instead(s, asked)
        if instead is not None:
            return _instead_of(instead, asked, _nothing_to_serve(s, asked))
    if s.query.quant.format == "gguf" and runs_here(s.row):
        # It runs the GGUF, but no repo of its files is known to download for it (KTransformers'
        # --gguf_path, DeepSeek-V3.2): llama.cpp's plan of the same file, not "doesn't fit here".
        instead = _gguf_instead(s, asked, any_engine=True)
        if instead is not None:
            fw_name = s.catalog.frameworks[asked].name
            return _instead_of(instead, asked, Note("plan.no_gguf_repo", {"framework": fw_name}))
    return None


def _instead_of(inner: Plan, asked: str, reason: Note) -> Plan:
    """llama.cpp's plan in place of the framework the user named, under the reason it isn't that one."""
    return replace(
        inner, kind="asked_blocked_alt", asked=asked, reason=reason, notes=(reason, *inner.notes), easy=""
    )


def _gguf_instead(s: _Subject, serving: str, any_engine: bool = False) -> Plan | None:
    """The serving engine has nothing to run here: llama.cpp's own plan at the row's context (its GGUF
    table priced and chosen by the same rule, at the bits the user asked for); None when the engine
    isn't a serving one (unless `any_engine`) or llama.cpp has no command either (the caller keeps its
    own plan)."""
    fw = s.catalog.frameworks[serving]
    if not (fw.gpu_only or any_engine) or s.request is None or GGUF_FRAMEWORK not in s.catalog.frameworks:
        return None
    # estimate.py imports this module, and choice.py imports estimate.py: both only when needed.
    from core.estimator.choice import choose
    from core.estimator.estimate import estimate

    asked_quants = tuple(q for q in gguf_like(s.request, s.catalog) if q)
    request = replace(s.request, framework=GGUF_FRAMEWORK, quants=asked_quants, contexts=(s.row.context,))
    est = estimate(request, s.catalog)
    inner = plan_for(est, choose(est, s.catalog).row, s.catalog)
    if not inner.command or inner.framework != GGUF_FRAMEWORK:
        return None
    return inner


# The framework whose GGUF plan stands in for a serving engine that has nothing to serve here.
GGUF_FRAMEWORK = "llama.cpp"  # what a serving engine's plan falls back to (also estimate.py)

# The notes a fallback plan leads with: why not the serving engine (see _pick / _asked).
_FALLBACK_REASONS = frozenset(
    {
        "plan.nothing_to_serve",
        "plan.listed_does_not_fit",
        "plan.listed_fits",
        "plan.quant_not_on_card",
        "plan.framework_not_on_os",
        *_CARD_TOO_OLD,
    }
)


def gguf_stand_in(est: Estimate, catalog: Catalog) -> tuple[EstimateRequest, Note] | None:
    """A serving engine's estimate whose chosen row's plan is llama.cpp's GGUF plan instead: the
    request to price llama.cpp's table with (the GGUF nearest the asked bits, the asked contexts)
    and the line saying why not the engine; None when the plan is the engine's own."""
    from core.estimator.choice import choose  # choice.py imports estimate.py, which imports this

    plan = plan_for(est, choose(est, catalog).row, catalog, est.request.framework)
    if plan.framework != GGUF_FRAMEWORK or plan.framework == est.framework or not plan.notes:
        return None
    reason = plan.notes[0]
    if reason.code not in _FALLBACK_REASONS:
        return None
    quants = tuple(q for q in gguf_like(est.request, catalog) if q)
    return replace(est.request, framework=GGUF_FRAMEWORK, quants=quants), reason


_NOMINAL_WIDTH = re.compile(r"\d+")


def gguf_like(request: EstimateRequest, catalog: Catalog) -> tuple[str, ...]:
    """The GGUF of the llama.cpp ladder nearest the quant the user asked for (the smallest with as
    many bits or more: "int4" / AWQ -> a 4-bit GGUF, "int8" -> Q8_0); () when none was asked, and
    llama.cpp's own table decides."""
    asked = catalog.quants.get(request.quants[0]) if request.quants else None
    if asked is None:
        return ()
    if asked.format == "gguf":
        return (asked.id,)
    from core.estimator.estimate import default_quants  # estimate.py imports this module

    ladder = [catalog.quants[q] for q in default_quants(request.model, GGUF_FRAMEWORK, catalog)]
    # The GGUF of the same nominal width first ("AWQ" / "int4" -> Q4_K_M): an AWQ file's embeddings
    # and scales put its bits per weight above Q4_K_M's, and "as many bits or more" would then read
    # a 4-bit question as Q5_K_M.
    width = _NOMINAL_WIDTH.search(asked.recipe.get("default", asked.id))
    same = [q for q in ladder if width and q.id.startswith(f"Q{width.group(0)}_")]
    if same:
        return (min(same, key=lambda q: abs(q.bpw - asked.bpw)).id,)
    above = [q for q in ladder if q.bpw >= asked.bpw]
    pick = min(above, key=lambda q: q.bpw) if above else max(ladder, key=lambda q: q.bpw, default=None)
    return (pick.id,) if pick is not None else ()


def judged_options(plan: Plan, catalog: Catalog) -> tuple[FrameworkOption, ...]:
    """Every framework judged on the plan's placement (the Frameworks view), catalog order."""
    return framework_options(plan.placement, catalog)
