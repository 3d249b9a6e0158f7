"""N users on a named card: the plan that serves them, headlined with what a concurrency question
asks (issue 20). One estimate with the users in its request prices every row (so the framework is the
serving one on a serving setup: vLLM / SGLang for 4+ cards, a datacenter card or N users); `choose`
takes the best quant whose weights and N users' KV caches fit; `plan_for` writes the command that
serves them (`-np N`, `--max-num-seqs N`, ...). The headline, the `$` line and `ask --json`'s plan
are that one plan, so they can't disagree.

With no quant named, the row for N users is the one that holds them (`_for_users`): FP8 first on a
card with FP8 kernels, else the row holding most of them (a 4-bit AWQ on an A100), never BF16
holding 5 of 100. "How many users can it serve?" (no number: `AskQuery.capacity`) is the same plan run
backwards: the row that holds the most users at the context, its KV-bound maximum of sequences,
then the N-user plan at that many (`_capacity_plan`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.estimator.choice import Choice, choose, fits_users
from core.estimator.concurrency import Batch, ConcurrentSpeed, as_json, concurrent_for, serving_limits
from core.estimator.estimate import Estimate, EstimateRequest, Row, Setup, estimate
from core.estimator.plan import Plan, plan_for
from core.estimator.ways_out.kind import WayOutKind
from core.i18n import Lang, translate
from core.render import ttft
from core.render.advice import advise, note_texts
from core.render.doc import Doc, Para, Pre
from core.render.fmt import ctx_label
from core.render.intent_rows import config, runs
from core.understanding.query import AskQuery

# The KV cache a serving plan falls back to when N users' caches don't fit at 16 bits (vLLM /
# SGLang --kv-cache-dtype fp8, llama.cpp q8_0: the same bytes per element).
_EIGHT_BIT_KV: KvCacheType = "q8_0"
# A capacity answer on an engine with no scheduler cap (llama-server's slots): the KV alone counts.
_UNCAPPED = 1 << 20


@dataclass(frozen=True, slots=True)
class ServingPlan:
    """What serves N users: the estimate it was priced from, the chosen row, its plan and the batched
    figures."""

    est: Estimate
    choice: Choice
    plan: Plan
    speed: ConcurrentSpeed
    depth: int  # the tokens each user's sequence was priced holding (`chat_depth`)
    # A capacity answer ("how many users"): the users are the KV-bound maximum found, not asked;
    # `knee` the batched figures where per-user speed halves, when that comes before the maximum.
    capacity: bool = False
    knee: ConcurrentSpeed | None = None
    capped: int = 0  # the scheduler's cap (vLLM --max-num-seqs 256) when it, not the KV, set the count
    # The quant asked that doesn't fit the cards (R1 FP8 on 8x H100), this plan serving another,
    # and that row's (need, usable) GiB, said before the headline.
    instead_of: str = ""
    instead_need: tuple[float, float] = (0.0, 0.0)

    @property
    def kv_type(self) -> KvCacheType:
        return self.plan.placement.kv_cache

    @property
    def rows(self) -> tuple[ttft.TtftRow, ...]:
        """The TTFT table's rows: every quant the estimate priced."""
        return tuple(ttft.TtftRow(r.quant, r) for r in self.est.rows if not r.unsupported)


def _request(query: AskQuery, setup: Setup, model: Model, ctx: int, kv: KvCacheType) -> EstimateRequest:
    return EstimateRequest(
        setup,
        model,
        query.quants,
        (ctx,),
        prompt=query.prompt,
        framework=query.framework,
        backend=query.backend,
        kv_type=kv,
        users=query.users,
        ollama_tag=query.ollama_tag,
    )


def _priced(query: AskQuery, setup: Setup, model: Model, ctx: int, catalog: Catalog) -> Estimate:
    """The estimate the plan is taken from: at the asked KV type; when no row holds one user's
    cache but an 8-bit cache does (the estimate's own way out), or none holds N users' caches at 16
    bits, again with an 8-bit cache when that serves more of them."""
    users = query.users or 1
    est = estimate(_request(query, setup, model, ctx, query.kv_type), catalog)
    if query.kv_type != FULL_PRECISION_KV:
        return est
    row = choose(est, catalog).row
    remedy = row.remedy
    if remedy is not None and remedy.kind == WayOutKind.KV_QUANT and remedy.kv_type:
        return estimate(_request(query, setup, model, ctx, remedy.kv_type), catalog)
    if fits_users(row, users):
        return est
    eight = estimate(_request(query, setup, model, ctx, _EIGHT_BIT_KV), catalog)
    return eight if fits_users(choose(eight, catalog).row, users) else est


def serving_plan(
    query: AskQuery, setup: Setup, model: Model, ctx: int, catalog: Catalog
) -> ServingPlan | None:
    """The plan that serves the query's N users on `setup` (as many as fit when it asks how many),
    or None when nothing runs there."""
    if query.capacity:
        return _capacity_plan(query, setup, model, ctx, catalog)
    return _users_plan(query, setup, model, ctx, catalog) or _instead_of_asked(
        query, setup, model, ctx, catalog
    )


def _instead_of_asked(
    query: AskQuery, setup: Setup, model: Model, ctx: int, catalog: Catalog
) -> ServingPlan | None:
    """The asked quants don't fit even one user's cache beside their weights (R1 FP8 on 8x H100):
    the plan for N users with none named (`_for_users`: the row holding the most of them, FP8 first
    where native), said as taken instead; None when nothing smaller serves them either."""
    if not query.quants:
        return None
    est = _priced(query, setup, model, ctx, catalog)
    asked = choose(est, catalog).row
    if runs(asked) and asked.remedy is None:
        return None  # it runs: its own plan had no command for another reason, kept as it is
    sp = _users_plan(replace(query, quants=()), setup, model, ctx, catalog)
    if sp is None or sp.plan.quant in query.quants:
        return None
    return replace(sp, instead_of=asked.quant, instead_need=(asked.total_gib, asked.usable_gib))


def _users_plan(
    query: AskQuery, setup: Setup, model: Model, ctx: int, catalog: Catalog, quant: str | None = None
) -> ServingPlan | None:
    """N users' plan; `quant`: the row a capacity answer counted on (kept, so that the count and the
    plan are one row's)."""
    users = query.users or 1
    est = _priced(query, setup, model, ctx, catalog)
    choice = _for_users(est, choose(est, catalog), users, query, catalog, quant)
    if not runs(choice.row) or choice.row.remedy is not None:
        return None  # nothing holds even one user's cache as it is: the TTFT table says what does
    plan = plan_for(est, choice.row, catalog, query.framework)
    if not plan.command and choice.step != "asked":
        choice, plan = _with_command(est, choice, plan, users, catalog, query.framework)
    framework = plan.framework or est.framework
    depth = chat_depth(query.prompt, plan.context, catalog)
    kv = plan.placement.kv_cache
    batch = Batch(setup, model, plan.quant, users, depth, framework, kv, est.backend)
    return ServingPlan(est, choice, plan, concurrent_for(batch, catalog), depth)


def room(row: Row) -> int:
    """Users whose KV caches at the row's context fit beside its weights: the N-user answer's "room
    for ~K users", the count `fits_users` holds; 0 when not even one does."""
    if row.status == "no_fit" or row.kv_gib <= 0:
        return 0
    return max(int((row.usable_gib - (row.total_gib - row.kv_gib)) // row.kv_gib), 0)


def _native_kernels(row: Row, setup: Setup, catalog: Catalog) -> bool:
    """FP8 on a card with FP8 tensor cores (compute 8.9+: Ada, Hopper, Blackwell): a quant that needs
    a compute capability, on a card that has it. Such a row runs a batch's matmuls at full rate."""
    if row.quant not in config(catalog, "concurrency").get("native_first", ()):
        return False
    q = catalog.quants.get(row.quant)
    cc = setup.gpu.compute_capability
    if q is None or q.min_compute_capability is None or cc is None:
        return False
    return cc >= q.min_compute_capability


def _for_users(
    est: Estimate, choice: Choice, users: int, query: AskQuery, catalog: Catalog, quant: str | None = None
) -> Choice:
    """The row for N users when no quant was named: the rows holding all N first, then those with
    the card's native FP8 kernels, then the one holding the most of them, then the ladder's order
    (quality first), then speed. `choose` ranks quality first among the rows holding N and falls
    back to the single-user rule when none does (BF16 holding 5 of 100); this keeps users first."""
    if query.quants or (users <= 1 and quant is None):
        return choice
    if not serving_limits(catalog, est.framework).paged:
        # llama-server / Ollama slots: the GGUF ladder's smallest quant holds the most users, not a
        # plan anyone serves; `choose`'s own rule (quality first among those holding N) stands.
        return choice
    ctx = choice.row.context
    rows = [r for r in est.rows if r.context == ctx and r.remedy is None and runs(r)]
    if quant is not None:
        rows = [r for r in rows if r.quant == quant] or rows
    if not rows:
        return choice
    setup = est.request.setup
    order = {r.quant: -i for i, r in enumerate(est.rows)}

    def key(r: Row) -> tuple[bool, bool, int, int, float]:
        held = min(room(r), users)
        tps = r.decode_tps.mid if r.decode_tps else 0.0
        return (held >= users, _native_kernels(r, setup, catalog), held, order[r.quant], tps)

    best = max(rows, key=key)
    if best is choice.row:
        return choice
    tps = best.decode_tps.mid if best.decode_tps else None
    return replace(choice, row=best, quant=best.quant, decode_mid=tps)


def _capacity_plan(
    query: AskQuery, setup: Setup, model: Model, ctx: int, catalog: Catalog
) -> ServingPlan | None:
    """ "How many users can it serve": the row holding the most sequences at the context (FP8 first
    where the card runs it natively), at most the scheduler's cap; then the N-user plan at that many,
    with the figures at the knee where each user's speed halves. None when not even one user's
    cache fits as it is (the TTFT table then says what does)."""
    est = _priced(replace(query, users=1), setup, model, ctx, catalog)
    cap = serving_limits(catalog, est.framework).max_num_seqs or _UNCAPPED
    pick = _for_users(est, choose(est, catalog), cap, query, catalog)
    held = min(room(pick.row), cap)
    if held < 1 or pick.row.remedy is not None:
        return None
    sp = _users_plan(replace(query, users=held), setup, model, ctx, catalog, pick.row.quant)
    if sp is None:
        return None
    knee, at_knee = sp.speed.knee_users, None
    if knee is not None and 1 < knee < held:
        fw = sp.plan.framework or est.framework
        at_knee = concurrent_for(
            Batch(setup, model, sp.plan.quant, knee, sp.depth, fw, sp.kv_type, est.backend), catalog
        )
    return replace(sp, capacity=True, knee=at_knee, capped=cap if room(pick.row) > cap else 0)


def cards_for_all(sp: ServingPlan, users: int, catalog: Catalog) -> int | None:
    """Cards of this kind that would hold all N users' caches at the context, rounded up to a tensor-
    parallel size (intents.toml [concurrency] tensor_parallel); None past the largest (more nodes)."""
    row = sp.choice.row
    count = sp.est.request.setup.count
    per_card = row.usable_gib / max(count, 1)
    need = row.total_gib + row.kv_gib * (users - 1)
    if per_card <= 0:
        return None
    least = math.ceil(need / per_card)
    sizes = sorted(int(n) for n in config(catalog, "concurrency").get("tensor_parallel", (1, 2, 4, 8)))
    return next((n for n in sizes if n >= least and n > count), None)


def chat_depth(prompt: int, context: int, catalog: Catalog) -> int:
    """The tokens each of N chatting users holds in the KV cache: the prompt and a reply
    (catalogs/estimator.toml [serving] chat_reply_tokens), at most the context."""
    return min(context, prompt + sections(catalog).estimator.serving.chat_reply_tokens)


def _with_command(
    est: Estimate, choice: Choice, plan: Plan, users: int, catalog: Catalog, asked: str | None
) -> tuple[Choice, Plan]:
    """A pick with no command (no published checkpoint of that quant): the next row that holds the
    N users' caches and has one, quality first, rather than a dead end; the pick itself when none has."""
    ordered = sorted(
        est.rows, key=lambda r: -catalog.quants[r.quant].bpw if r.quant in catalog.quants else 0.0
    )
    # Those that hold every user's cache first; then any that runs here (fewer users at once, said by
    # the KV line) rather than no command at all.
    for holds in (lambda r: fits_users(r, users), runs):
        for row in ordered:
            if row is choice.row or row.context != choice.context or row.remedy is not None or not holds(row):
                continue
            other = plan_for(est, row, catalog, asked)
            if other.command:
                tps = row.decode_tps.mid if row.decode_tps else None
                return replace(choice, row=row, quant=row.quant, decode_mid=tps), other
    return choice, plan


def framework_words(plan: Plan, users: int, catalog: Catalog) -> str:
    """How the headline names what serves the N users: llama.cpp as `llama-server -np N` (its
    parallel slots), other frameworks by name."""
    fw = catalog.frameworks.get(plan.framework)
    if fw is None:
        return plan.framework
    if fw.id in ("llama.cpp", "ik_llama.cpp"):
        return f"llama-server -np {users}"
    return fw.name


def serving_doc(sp: ServingPlan, query: AskQuery, title: str, catalog: Catalog) -> Doc:
    """The headline (aggregate and per-user tok/s), the time to first token, the table, the N caches
    against memory, then the plan's framework line and its command."""
    lang: Lang = query.lang
    users = sp.speed.users  # the N asked, or the capacity found
    row = sp.choice.row
    words = framework_words(sp.plan, users, catalog)
    kv_quantized = sp.kv_type != FULL_PRECISION_KV
    serving = ttft.Serving(row, users, sp.plan.context, query.prompt, words, sp.speed, kv_quantized, sp.depth)
    model = sp.est.request.model
    advice = advise(sp.plan, catalog, lang)
    tail: tuple[Para | Pre, ...] = ()
    if advice.line:
        tail += (Para(advice.line),)
    if advice.command:
        tail += (Pre((f"$ {advice.command}",)),)
    else:
        # No command: why (no published checkpoint of that quant, ...), never a bare framework line.
        tail += tuple(Para(text) for text in note_texts(sp.plan.notes, lang))
    if sp.capacity:
        asked_ctx = bool(query.contexts)
        head: tuple[Para, ...] = ttft.capacity_lines(
            serving, sp.knee, sp.capped, asked_ctx, title, model.name, lang
        )
    else:
        head = (ttft.serving_headline(serving, title, model.name, lang),)
    if sp.instead_of:
        need, usable = sp.instead_need
        said = {"asked": sp.instead_of, "quant": sp.plan.quant, "need": need, "usable": usable}
        head = (*head, Para(translate("intent.concurrency.instead_of_asked", lang, **said)))
    return (
        *head,
        ttft.serving_ttft(serving, lang),
        *ttft.ttft_doc(sp.rows, title, model.name, query.prompt, lang, query.model_id is None),
        *ttft.serving_kv(serving, lang),
        *_short_of(sp, users, catalog, lang),
        *tail,
    )


def _short_of(sp: ServingPlan, users: int, catalog: Catalog, lang: Lang) -> tuple[Para, ...]:
    """N users the plan can't hold at the context: the cards of this kind that would (the KV line
    above says how many it holds, and what context all N get)."""
    row = sp.choice.row
    if sp.capacity or fits_users(row, users) or row.kv_gib <= 0:
        return ()
    cards = cards_for_all(sp, users, catalog)
    gpu = sp.est.request.setup.gpu.name
    ctx = ctx_label(sp.plan.context)
    if cards is None:
        return (Para(translate("intent.concurrency.more_nodes", lang, users=users, ctx=ctx, gpu=gpu)),)
    return (
        Para(translate("intent.concurrency.more_cards", lang, users=users, ctx=ctx, gpu=gpu, cards=cards)),
    )


def serving_rows(sp: ServingPlan) -> tuple[dict[str, Any], ...]:
    """`ask --json`'s rows: the TTFT rows, the planned one with its N users' figures."""
    figures = as_json(sp.speed, sp.plan.quant)
    return tuple(
        {**r, "concurrency": figures} if r.get("quant") == sp.plan.quant else r
        for r in ttft.ttft_json(sp.rows)
    )


def serving_plan_dict(sp: ServingPlan, catalog: Catalog, lang: Lang) -> dict[str, Any]:
    """`ask --json`'s plan: the estimate's plan (the same `choose` and `plan_for`) with the N users'
    figures beside its single-user ones."""
    from core.estimator.serialize import plan_dict

    chosen = (sp.choice, sp.plan)
    return {**plan_dict(sp.est, catalog, lang, chosen), "concurrency": as_json(sp.speed, sp.plan.quant)}


__all__ = [
    "ServingPlan",
    "framework_words",
    "serving_doc",
    "serving_plan",
    "serving_plan_dict",
    "serving_rows",
    "cards_for_all",
    "room",
]
