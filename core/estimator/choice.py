"""Which row of an estimate the reply recommends, decided once (issue 20): the row whose quant, context
and placement the `$` command loads (`plan.plan_for` builds that command). The compact reply, the
detail views, the fit verdict and both `--json` shapes read this one `Choice`; the table itself keeps
every row.

The rule, quality first while usable ([choice] in catalogs/estimator.toml):
1. the quant the user asked for, when they named one;
2. the best quant of ~4 bits or more that runs fully on the GPU(s) at the asked (or default) context,
   a quantized KV cache (or a raised macOS wired limit) counting as "fully on the GPU", so KV q8_0
   comes before smaller weights;
3. for a MoE, a ~4-5-bit quant (Q4_K_M .. Q5_K_M) with its experts in RAM, never Q8_0 with more
   experts off the card;
4. a shorter context (down to `min_context`) or a ~3-bit quant fully on the GPU; the asked context
   keeps the 3-bit quant first;
5. an offload (layers, or experts at another quant) only while it stays usable;
6. a 1-2-bit quant (IQ1_*, IQ2_*, Q2_K) only when nothing else runs, and then said plainly: a 3-bit+
   run at `slow_floor_tps` or more (said to be slow), at `min_context` up to the context, comes first;
7. else the fastest thing that runs here, said to be too slow for chat.
For N users at once (a concurrency question), step 2 first takes the best quant whose weights and N
users' KV caches at the context all fit (`fits_users`), before one that fits a single user.
Within a step the best quant that reaches `comfortable_tps` wins (a `rich_quants` one, Q8_0, only at
`rich_tps`: its gain over Q6_K is noise, its cost a quarter of the speed); when none does, the fastest
that is still usable. A llama.cpp row that fits with little headroom ("tight") comes after a smaller
quant that fits at the same context; an offload below `comfortable_tps` comes after a 3-bit+ run
fully on the card at a shorter context. No offload is chosen whose system RAM need exceeds the box's
RAM (less the OS's share).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from core.catalog.loader import Catalog
from core.catalog.pricing_sections import ChoiceRules
from core.catalog.sections import sections
from core.estimator.estimate import Estimate, Row
from core.estimator.frameworks.commands.serving import servable
from core.estimator.frameworks.kernels import kernels_run
from core.estimator.frameworks.quant_match import loads, quant_in
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.registry import facts
from core.estimator.ways_out.remedy import Remedy
from core.i18n import Note

# Why this row: the step of the rule that chose it (the `why` of `ask --json`'s plan).
ChoiceStep = Literal["asked", "gpu", "experts", "shorter", "lower", "offload", "low_bit", "slow", "none"]
Place = Literal["gpu", "experts", "layers"]

_ON_GPU = frozenset(
    {WayOutKind.KV_QUANT, WayOutKind.MAC_WIRED_LIMIT, WayOutKind.SHORTER_CTX, WayOutKind.LOWER_QUANT}
)
_ON_TABLE = frozenset({WayOutKind.SHORTER_CTX, WayOutKind.LOWER_QUANT})  # ways out that are a row as it is
_PLACE: dict[WayOutKind, Place] = {WayOutKind.EXPERT_OFFLOAD: "experts", WayOutKind.OFFLOAD: "layers"}


@dataclass(frozen=True, slots=True)
class Choice:
    """The row the reply recommends, with its way out (if any) as the command applies it."""

    row: Row  # `row.remedy` is the way out the command runs with (one of the row's alternatives)
    step: ChoiceStep
    quant: str  # what the command loads: the row's quant, or its way out's
    context: int
    place: Place
    decode_mid: float | None  # tok/s as chosen (None: it doesn't run here)
    low_bit: bool  # a 1-2-bit quant: said plainly
    slow: bool  # below `usable_tps`: said plainly

    @property
    def notes(self) -> tuple[Note, ...]:
        """What the reply says plainly about this pick (empty for a pick that needs no warning)."""
        params = {"quant": self.quant, "tps": round(self.decode_mid or 0.0, 1)}
        out = []
        if self.low_bit:
            out.append(Note("choice.low_bit", params))
        if self.slow:
            out.append(Note("choice.slow", params))
        return tuple(out)

    @property
    def why(self) -> Note:
        return Note(f"choice.why.{self.step}", {"quant": self.quant, "ctx": self.context})


@dataclass(frozen=True, slots=True)
class _Option:
    row: Row
    remedy: Remedy | None
    quant: str
    bpw: float
    context: int
    place: Place
    tps: float
    tight: bool = False  # fits the usable memory but past its smooth share: little headroom (llama.cpp)
    rich: bool = False  # more bits than buy quality here (`_rich`): taken only at `rich_tps`


def rules(catalog: Catalog) -> ChoiceRules:
    return sections(catalog).estimator.choice


def focus_context(contexts: Iterable[int], asked: tuple[int, ...], catalog: Catalog | None = None) -> int:
    """The context the command is written for: the asked one, else the longest up to the default."""
    if asked:
        return asked[0]
    default = (rules(catalog) if catalog is not None else ChoiceRules()).default_context
    ordered = sorted(set(contexts))
    below = [c for c in ordered if c <= default]
    return below[-1] if below else ordered[0]


def _host_ok(remedy: Remedy, est: Estimate, catalog: Catalog) -> bool:
    if not remedy.host_gib:
        return True
    host = est.request.setup.host
    return remedy.host_gib <= host.ram_gib - sections(catalog).estimator.host.os_reserve_gib


def _option(row: Row, remedy: Remedy | None, catalog: Catalog) -> _Option | None:
    """One way to run `row` here (as it is, or with `remedy`), or None when that doesn't run here."""
    if remedy is None:
        if row.status == "no_fit" or row.decode_tps is None:
            return None
        return _Option(row, None, row.quant, _bpw(row.quant, catalog), row.context, "gpu", row.decode_tps.mid)
    if not facts(remedy.kind).has_command or not remedy.decode_mid:
        return None
    if remedy.kind not in _ON_GPU and remedy.kind not in _PLACE:
        return None
    quant = remedy.quant or row.quant
    place = _PLACE.get(remedy.kind, "gpu")
    ctx = remedy.context or row.context
    return _Option(row, remedy, quant, _bpw(quant, catalog), ctx, place, remedy.decode_mid)


def _kernels_run(quant: str, est: Estimate, catalog: Catalog) -> bool:
    """A card that runs the engine's kernels for this quant (`kernels.kernels_run`: no FP8 below
    `weight_only_min_cc`, no AWQ on Volta)."""
    q = catalog.quants.get(quant)
    if q is None:
        return True
    fw = catalog.frameworks.get(est.framework)
    return kernels_run(fw, q, est.request.setup.gpu, est.request.model, catalog)


def _servable(quant: str, est: Estimate, catalog: Catalog) -> bool:
    """Weights vLLM / SGLang can serve here: a checkpoint or release in this quant (`servable`), on
    a card that runs its kernels."""
    q = catalog.quants.get(quant)
    if q is None:
        return True
    return _kernels_run(quant, est, catalog) and servable(est.request.model, q)


def _listed(quant: str, est: Estimate, catalog: Catalog) -> bool:
    """A quant the priced framework loads: any, for one that lists none (llama.cpp, vLLM run every
    quant of their formats); else one of its `quants` (a family id names its members: EXL2-5.0)."""
    fw, q = catalog.frameworks.get(est.framework), catalog.quants.get(quant)
    if fw is None or q is None or not fw.quants:
        return True
    return quant_in(q, fw.quants) and loads(fw, q)


def _rich(quant: str, est: Estimate, catalog: Catalog) -> bool:
    """More bits than buy answer quality here: Q8_0 over Q6_K anywhere ([choice] rich_quants); FP8 on
    a card without its tensor cores (vLLM's weight-only path on Ampere, W8A16) where it is not the
    model's own release: 8-bit weights at about the quality of a good 4-bit AWQ, at 60 % of its pace
    (2x A6000 and Llama-3.3-70B: AWQ at ~15 tok/s, not FP8 at ~10)."""
    if quant in rules(catalog).rich_quants:
        return True
    q, gpu, model = catalog.quants.get(quant), est.request.setup.gpu, est.request.model
    if q is None or not q.min_compute_capability or gpu.compute_capability is None:
        return False
    return gpu.compute_capability < q.min_compute_capability and model.native_quant != quant


def _bpw(quant: str, catalog: Catalog) -> float:
    q = catalog.quants.get(quant)
    return q.bpw if q is not None else 16.0


def _options(est: Estimate, catalog: Catalog) -> list[_Option]:
    out = []
    # A smaller quant or a shorter context as a way out lands on a row of the table; it has that
    # row's headroom (Q8_0 -> Q6_K at 32K is as tight as the Q6_K row at 32K).
    fw = catalog.frameworks.get(est.framework)
    # vLLM / SGLang hold everything on the cards: no way out that leaves experts or layers in RAM.
    # Their memory is what --gpu-memory-utilization gives them, the KV cache paged into the rest:
    # a tight row there means fewer sequences at once, not a load that may fail.
    gpu_only = fw is not None and fw.gpu_only
    tight = set() if gpu_only else {(row.quant, row.context) for row in est.rows if row.status == "tight"}
    for row in est.rows:
        if not row.unsupported:
            out += _row_options(row, est, catalog, gpu_only, tight)
    # A way out onto weights the framework can't load is no way to run it (ExLlamaV2's EXL2-6.0 row
    # walked down the serving ladder to AWQ): the framework's `quants`, where it lists them, bound it.
    out = [o for o in out if _listed(o.quant, est, catalog)]
    if not gpu_only:
        return out
    # What vLLM / SGLang can serve here first; when nothing is, the rows whose kernels run on the
    # card (the plan then says no checkpoint is listed and gives llama.cpp's) rather than "nothing
    # runs" beside a row that fits. Never weights the card can't run (FP8 on a T4).
    on_card = [o for o in out if _kernels_run(o.quant, est, catalog)]
    return [o for o in on_card if _servable(o.quant, est, catalog)] or on_card


def _row_options(
    row: Row, est: Estimate, catalog: Catalog, gpu_only: bool, tight: set[tuple[str, int]]
) -> list[_Option]:
    """The ways to run one row here: as it is, or each of its ways out."""
    remedies: tuple[Remedy | None, ...] = (None,)
    if row.status == "no_fit" and row.remedy is not None:
        remedies = (row.remedy, *row.remedy.alternatives)
    out = []
    for remedy in remedies:
        option = _option(row, remedy, catalog)
        if option is None or (gpu_only and option.place != "gpu"):
            continue
        on_table = remedy is None or remedy.kind in _ON_TABLE
        tight_here = on_table and (option.quant, option.context) in tight
        option = replace(option, tight=tight_here, rich=_rich(option.quant, est, catalog))
        if remedy is None or _host_ok(remedy, est, catalog):
            out.append(option)
    return out


_Key = Callable[[_Option], tuple[float, ...]]
# One step of the rule: its name, the options it may choose from, their order, and the pace at which
# the first of them (best first) is taken over a faster one.
_Step = tuple[ChoiceStep, list[_Option], _Key, float]


def _best(options: list[_Option], r: ChoiceRules, key: _Key, comfortable: float) -> _Option | None:
    """Quality first while usable: the first (by `key`) that reaches `comfortable`, else the fastest
    that is usable; None when none is."""
    ordered = sorted(options, key=key)
    for o in ordered:
        # A rich quant (more bits than buy quality here) is taken only as it is: one that needs a
        # way out to fit (BF16 on 2x H100 with an fp8 KV cache) is not what the spare bits are for.
        if o.rich and o.remedy is not None:
            continue
        if o.tps >= (max(comfortable, r.rich_tps) if o.rich else comfortable):
            return o
    usable = [o for o in ordered if o.tps >= r.usable_tps]
    return max(usable, key=lambda o: o.tps) if usable else None


def _by_quality(o: _Option) -> tuple[float, ...]:
    # A row as it is before a way out that lands on the same quant and context (Q8_0 -> AWQ is the
    # AWQ row): the command is written for the row.
    return (-o.bpw, -o.context, o.remedy is not None)


def _by_context(o: _Option) -> tuple[float, ...]:
    return (-o.context, -o.bpw, o.remedy is not None)


def _step_down(o: _Option, r: ChoiceRules) -> bool:
    """A fit that costs something (`_costly`), or one with little headroom (a longer reply, a browser
    tab or a driver update and it no longer loads): taken after a quant that fits as it is."""
    return o.tight or _costly(o, r)


def _costly(o: _Option, r: ChoiceRules) -> bool:
    """A way out that costs beyond headroom: a KV cache below q8_0 (q4_0), or macOS's GPU memory limit
    raised (a sudo sysctl that leaves the OS little)."""
    if o.remedy is None:
        return False
    if o.remedy.kind == WayOutKind.MAC_WIRED_LIMIT:
        return True
    return o.remedy.kind == WayOutKind.KV_QUANT and o.remedy.kv_type in r.lossy_kv


@dataclass(frozen=True, slots=True)
class _Pools:
    """The options each step of the rule may choose from."""

    full: list[_Option]  # ~4 bits or more, fully on the GPU, at the context
    experts: list[_Option]  # a ~4-5-bit quant with MoE experts in RAM, at the context
    shorter: list[_Option]  # ~4 bits or more, fully on the GPU, at a shorter context
    lower: list[_Option]  # ~3 bits, fully on the GPU, at the context
    offload: list[_Option]  # any other offload of 3 bits or more, at the context
    low_bit: list[_Option]  # 1-2-bit, anywhere up to the context
    slow: list[_Option]  # 3 bits or more, anywhere, from `min_context` up to the context
    lower_shorter: list[_Option]  # ~3 bits, fully on the GPU, from `unasked_min_context` up to the context
    any_shorter: list[_Option]  # 3 bits or more, anywhere, any context up to the context


def _pools(options: list[_Option], ctx: int, r: ChoiceRules) -> _Pools:
    here = [o for o in options if o.context == ctx and o.bpw >= r.low_bit_bpw]
    gpu, off_gpu = _split(here, lambda o: o.place == "gpu")
    full, lower = _split(gpu, lambda o: o.bpw >= r.full_min_bpw)
    return _Pools(
        full=full,
        experts=[o for o in here if _experts_ok(o, r)],
        shorter=[o for o in options if _shorter(o, ctx, r)],
        lower=lower,
        offload=off_gpu,
        low_bit=[o for o in options if o.bpw < r.low_bit_bpw and o.context <= ctx],
        slow=[o for o in options if _slow_ok(o, ctx, r)],
        lower_shorter=[o for o in options if _lower_shorter(o, ctx, r)],
        any_shorter=[o for o in options if o.bpw >= r.low_bit_bpw and o.context <= ctx],
    )


def _split(options: list[_Option], keep: Callable[[_Option], bool]) -> tuple[list[_Option], list[_Option]]:
    """(the options `keep` holds for, the others), each in order."""
    yes = [o for o in options if keep(o)]
    return yes, [o for o in options if not keep(o)]


def _lower_shorter(o: _Option, ctx: int, r: ChoiceRules) -> bool:
    bits = r.low_bit_bpw <= o.bpw < r.full_min_bpw
    return o.place == "gpu" and bits and r.unasked_min_context <= o.context <= ctx


def _experts_ok(o: _Option, r: ChoiceRules) -> bool:
    return o.place == "experts" and r.experts_min_bpw <= o.bpw <= r.experts_max_bpw


def _slow_ok(o: _Option, ctx: int, r: ChoiceRules) -> bool:
    return o.bpw >= r.low_bit_bpw and min(r.min_context, ctx) <= o.context <= ctx


def _shorter(o: _Option, ctx: int, r: ChoiceRules) -> bool:
    return o.place == "gpu" and r.min_context <= o.context < ctx and o.bpw >= r.full_min_bpw


def _steps(options: list[_Option], ctx: int, r: ChoiceRules, moe: bool, asked_ctx: bool) -> list[_Step]:
    """The steps of the rule, in order, each with the options it may choose from."""
    pools = _pools(options, ctx, r)
    return [
        *_on_card_steps(pools, r, moe, asked_ctx),
        *_smaller_steps(pools, r, asked_ctx),
        *_last_steps(pools, r),
    ]


def _plain(pool: list[_Option], r: ChoiceRules) -> list[_Option]:
    """The options of `pool` that cost nothing beyond their quant and context (`_step_down`)."""
    return [o for o in pool if not _step_down(o, r)]


def _on_card_steps(pools: _Pools, r: ChoiceRules, moe: bool, asked_ctx: bool) -> list[_Step]:
    ok = r.comfortable_tps
    steps: list[_Step] = [
        ("gpu", _plain(pools.full, r), _by_quality, ok),
        # Headroom is bought with a smaller quant at the same context, never with the context itself
        ("gpu", [o for o in pools.full if not _costly(o, r)], _by_quality, ok),
    ]
    if not asked_ctx:
        # The context is ours, not the user's: a somewhat shorter one (down to `unasked_min_context`)
        # costs nothing they asked for, a 4-bit KV cache costs answer quality (4070 Laptop, Qwen3-8B:
        # Q4_K_M at 16K with its cache as it is, not at 32K with a q4_0 cache).
        free = [o for o in _plain(pools.shorter, r) if o.context >= r.unasked_min_context]
        steps.append(("shorter", free, _by_context, ok))
    steps += [
        ("gpu", pools.full, _by_quality, ok),
        ("experts", pools.experts if moe else [], _by_quality, ok),
    ]
    return steps


def _smaller_steps(pools: _Pools, r: ChoiceRules, asked_ctx: bool) -> list[_Step]:
    ok = r.comfortable_tps
    step_down: list[_Step] = [
        ("shorter", _plain(pools.shorter, r), _by_context, ok),
        ("lower", pools.lower, _by_quality, ok),
    ]
    if asked_ctx:
        return step_down[::-1]
    # Our default context again: a ~3-bit quant at a somewhat shorter one with its cache as it
    # is (or q8_0) before the same quant at the default with a q4_0 cache.
    step_down.insert(1, ("lower", _plain(pools.lower_shorter, r), _by_context, ok))
    return step_down


def _last_steps(pools: _Pools, r: ChoiceRules) -> list[_Step]:
    ok = r.comfortable_tps
    on_card = [o for o in pools.any_shorter if o.place == "gpu" and not _costly(o, r)]
    return [
        ("shorter", pools.shorter, _by_context, ok),
        # An offload at a comfortable pace; one that only just reads along (~5 tok/s) comes after a
        # 3-bit+ run fully on the GPU at any shorter context, little headroom included but not a
        # q4_0 cache (an 8 GB card and a 14B: IQ3_XXS at 4K at ~30 tok/s, not IQ3_XXS at 32K with
        # 15 of 40 layers in RAM at ~5)
        ("offload", [o for o in pools.offload if o.tps >= ok], _by_quality, ok),
        ("shorter", on_card, _by_context, ok),
        ("offload", pools.offload, _by_quality, ok),
        # Before a crawl or 1-2 bits: a usable 3-bit+ run at any shorter context
        ("shorter", _plain(pools.any_shorter, r), _by_context, ok),
        # 1-2-bit only when nothing else runs: a slow 3-bit+ run (said plainly) up to the context first;
        # 1-2-bit quality first as soon as it is usable (IQ2 over IQ1 whenever IQ2 is usable)
        ("slow", pools.slow, _by_context, r.slow_floor_tps),
        ("low_bit", pools.low_bit, _by_quality, r.usable_tps),
    ]


def _chosen(o: _Option, step: ChoiceStep, r: ChoiceRules) -> Choice:
    row = o.row if o.remedy is None or o.remedy is o.row.remedy else replace(o.row, remedy=o.remedy)
    return Choice(
        row=row,
        step=step,
        quant=o.quant,
        context=o.context,
        place=o.place,
        decode_mid=o.tps,
        low_bit=o.bpw < r.low_bit_bpw,
        slow=o.tps < r.usable_tps,
    )


def _as_is(row: Row, step: ChoiceStep, catalog: Catalog) -> Choice:
    """A row as the estimate has it (the asked quant, or nothing runs here)."""
    r = rules(catalog)
    option = _option(row, None if row.status != "no_fit" else row.remedy, catalog)
    tps = option.tps if option is not None else None
    quant = option.quant if option is not None else row.quant
    return Choice(
        row=row,
        step=step,
        quant=quant,
        context=option.context if option is not None else row.context,
        place=option.place if option is not None else "gpu",
        decode_mid=tps,
        low_bit=_bpw(quant, catalog) < r.low_bit_bpw,
        slow=tps is not None and tps < r.usable_tps,
    )


def _for_users(options: list[_Option], ctx: int, users: int, r: ChoiceRules) -> Choice | None:
    """N users: quality first among the rows that hold every user's cache (the batch runs as
    priced); None for one user, or when no row holds them all (the single-user rule then decides)."""
    if users <= 1:
        return None
    full = [o for o in options if o.remedy is None and o.context == ctx and o.bpw >= r.full_min_bpw]
    best = _best([o for o in full if fits_users(o.row, users)], r, _by_quality, r.usable_tps)
    return _chosen(best, "gpu", r) if best is not None else None


def _framework_first(
    est: Estimate, options: list[_Option], ctx: int, r: ChoiceRules, catalog: Catalog
) -> Choice | None:
    """An MLX plan runs the 4-bit repo when it runs fully at the context ([mac] mlx_quant: mlx-community's
    default, about twice the 8-bit one's pace on a Mac's bandwidth); the 8-bit one only when asked."""
    if est.framework != "mlx":
        return None
    first = sections(catalog).estimator.mac.mlx_quant
    best = next((o for o in options if o.quant == first and o.context == ctx and o.place == "gpu"), None)
    return _chosen(best, "gpu", r) if best is not None and best.tps >= r.usable_tps else None


def fits_users(row: Row, users: int) -> bool:
    """Whether the row's weights and `users` KV caches at its context fit the usable memory."""
    return row.status != "no_fit" and row.total_gib + row.kv_gib * (users - 1) <= row.usable_gib


def _nothing_runs(est: Estimate, ctx: int) -> Row:
    """No way out runs here: the best quant at the context, whose verdict (and way out on other
    hardware) the reply states; a non-1-2-bit row first."""
    column = [r for r in est.rows if r.context == ctx] or list(est.rows)
    fine = [r for r in column if not any(n.code == "row.low_bit" for n in r.notes)]
    return max(fine or column, key=_least_hardware)


def _least_hardware(row: Row) -> tuple[int, float]:
    """The way out that buys the least, then the fastest: 2 cards with a 4-bit checkpoint before 8
    with BF16 (one A100 80GB and Qwen3-235B: GPTQ-Int4 on TP2, not BF16 on a full node)."""
    remedy = row.remedy
    if remedy is None:
        return (-(10**6), 0.0)
    cards = remedy.cards if remedy.kind == WayOutKind.MORE_CARDS else 0
    return (-cards, remedy.decode_mid or 0.0)


def choose(est: Estimate, catalog: Catalog) -> Choice:
    """The row to recommend and why; the quant and context the question asked for are the request's."""
    quants, contexts = est.request.quants, est.request.contexts
    ctx = focus_context([r.context for r in est.rows], contexts, catalog)
    if quants:
        asked = next((r for r in est.rows if r.quant == quants[0] and r.context == ctx), None)
        if asked is not None:
            return _as_is(asked, "asked", catalog)
    r = rules(catalog)
    options = _options(est, catalog)
    served = _for_users(options, ctx, est.request.users or 1, r) or _framework_first(
        est, options, ctx, r, catalog
    )
    if served is not None:
        return served
    for step, pool, key, comfortable in _steps(options, ctx, r, est.request.model.is_moe, bool(contexts)):
        best = _best(pool, r, key, comfortable)
        if best is not None:
            return _chosen(best, step, r)
    if options:
        # Nothing is usable: the fastest that runs, the asked context first, no 1-2-bit when avoidable.
        at = [o for o in options if o.context == ctx] or options
        fine = [o for o in at if o.bpw >= r.low_bit_bpw] or at
        return _chosen(max(fine, key=lambda o: o.tps), "slow", r)
    return _as_is(_nothing_runs(est, ctx), "none", catalog)


__all__ = ["Choice", "choose", "fits_users", "focus_context", "rules"]
