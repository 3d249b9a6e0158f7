"""What to run a row with, decided once: the framework, the quant and context it loads, where it sits
(`placement`), the launch command, and the notes that say why there is none. Every view reads this
one `Plan` (`plan_for`): the chat's framework line and `$` command (core/render/advice.py), the rows
of `estimate --json` and `ask --json` (serialize.py), the follow-up views and buttons. Nothing else
calls `recommend` / `evaluate` for a row's command, so the views can't disagree; the rules that pick
the framework, quant and placement for an answer belong here (issue 20 refines them).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Literal

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.estimator.frameworks import FrameworkOption, FrameworkQuery, evaluate, framework_options, recommend
from core.estimator.frameworks.serving_setup import serving_pick
from core.estimator.memory import GIB
from core.estimator.placement import framework_query
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import facts
from core.estimator.ways_out.remedy import Remedy
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
    if remedy is not None and remedy.wired_limit_mb:
        # macOS resets the limit at reboot; the run needs it raised first.
        return f"sudo sysctl iogpu.wired_limit_mb={remedy.wired_limit_mb} && {option.command}", caveats
    return option.command, caveats


def plan_for(est: Estimate, row: Row, catalog: Catalog, asked: str | None = None) -> Plan:
    """The plan for `row`: the framework the user named (`asked`), or why it can't run this and what
    can; with none named, the estimate's own when it runs this row, else the recommendation for the
    row. The command only when the row runs here (`runs_here`)."""
    query = framework_query(est.request, row.quant, row.context, row.status, row.remedy, catalog)
    subject = _Subject(row, query, catalog)
    if asked and asked in catalog.frameworks:
        return _asked(subject, asked)
    return _pick(subject)


def _pick(s: _Subject) -> Plan:
    # recommend() only asks which frameworks run (cheap); the one launched is evaluated in full.
    rec = recommend(s.query, catalog=s.catalog)
    priced = s.option(s.row.framework) if s.row.framework in s.catalog.frameworks else None
    blocked: tuple[Note, ...] = () if priced is None else priced.notes[:2]
    if priced is not None and priced.runnable:
        option = priced
    elif rec.framework is None:
        return s.plan("", "", blocked, "none", reason=rec.reason)
    else:
        option = s.option(rec.framework)
    command, why = _launch(s, option)
    pick = option.framework
    # The recommendation's reason when it picked this one; else the reason it gives among just this.
    reason = rec.reason if rec.framework == pick else recommend(s.query, (option,), s.catalog).reason
    notes = why if option is priced else (*blocked, *why)
    easy = rec.easy if rec.easy and rec.easy != pick else ""
    return s.plan(pick, command, notes, "pick", reason=reason, easy=easy)


def _asked(s: _Subject, asked: str) -> Plan:
    option = s.option(asked)
    if option.runnable:
        command, why = _launch(s, option)
        return s.plan(asked, command, why, "asked" if command else "asked_no_fit", asked)
    why_not = option.notes[0] if option.notes else None
    blocked = option.notes[:2]
    if option.command:
        # Runs with a workaround the note names (WSL2 on Windows): its command, under that note. A row
        # that doesn't run here has none, and "the command below works" would point at nothing.
        command, why = _launch(s, option)
        if not command:
            return s.plan(asked, "", (*blocked, *why), "asked_no_fit", asked)
        return s.plan(asked, command, blocked, "asked_blocked", asked, why_not)
    rec = recommend(s.query, catalog=s.catalog)
    if rec.framework is None:
        return s.plan("", "", blocked, "asked_blocked", asked, why_not)
    command, why = _launch(s, s.option(rec.framework))
    kind: PlanKind = "asked_blocked_alt" if command or runs_here(s.row) else "asked_blocked_alt_no_fit"
    return s.plan(rec.framework, command, (*blocked, *why), kind, asked, why_not)


def judged_options(plan: Plan, catalog: Catalog) -> tuple[FrameworkOption, ...]:
    """Every framework judged on the plan's placement (the Frameworks view), catalog order."""
    return framework_options(plan.placement, catalog)
