"""N users on a named card: the plan that serves them, headlined with what a concurrency question
asks (issue 20). One estimate with the users in its request prices every row (so the framework is the
serving one on a serving setup: vLLM / SGLang for 4+ cards, a datacenter card or N users); `choose`
takes the best quant whose weights and N users' KV caches fit; `plan_for` writes the command that
serves them (`-np N`, `--max-num-seqs N`, ...). The headline, the `$` line and `ask --json`'s plan
are that one plan, so they can't disagree.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.estimator.choice import Choice, choose, fits_users
from core.estimator.concurrency import Batch, ConcurrentSpeed, as_json, concurrent_for
from core.estimator.estimate import Estimate, EstimateRequest, Setup, estimate
from core.estimator.plan import Plan, plan_for
from core.estimator.ways_out.kind import WayOutKind
from core.i18n import Lang
from core.render import ttft
from core.render.advice import advise, note_texts
from core.render.doc import Doc, Para, Pre
from core.render.intent_rows import runs
from core.understanding.query import AskQuery

# The KV cache a serving plan falls back to when N users' caches don't fit at 16 bits (vLLM /
# SGLang --kv-cache-dtype fp8, llama.cpp q8_0: the same bytes per element).
_EIGHT_BIT_KV: KvCacheType = "q8_0"


@dataclass(frozen=True, slots=True)
class ServingPlan:
    """What serves N users: the estimate it was priced from, the chosen row, its plan and the batched
    figures."""

    est: Estimate
    choice: Choice
    plan: Plan
    speed: ConcurrentSpeed
    depth: int  # the tokens each user's sequence was priced holding (`chat_depth`)

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
    """The plan that serves the query's N users on `setup`, or None when nothing runs there."""
    users = query.users or 1
    est = _priced(query, setup, model, ctx, catalog)
    choice = choose(est, catalog)
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
    users = query.users or 1
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
    return (
        ttft.serving_headline(serving, title, model.name, lang),
        ttft.serving_ttft(serving, lang),
        *ttft.ttft_doc(sp.rows, title, model.name, query.prompt, lang, query.model_id is None),
        *ttft.serving_kv(serving, lang),
        *tail,
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
]
