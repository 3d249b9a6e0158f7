"""Decode speed for N users at once (vLLM / SGLang serving, `llama-server -np N`), from the roofline.

One decode step serves every user. Its time is a roofline of two sides plus the framework's own cost:
    memory: the weights once per step (MoE: each user routes to its own k of E experts per layer, so
        the share of expert bytes read is 1 - (1 - k/E)^N, not k/E) plus one KV cache per user, over
        the calibrated single-stream bandwidth and per-layer launch cost (`speed.token_seconds`);
    compute: each user's 2 x active params FLOPs and attention at its depth, on the matrix units at
        the calibrated prefill rate of the same kernels times a batch efficiency (the small-M matmuls
        of a decode batch reach less than a prefill's 512-token ones; MoE splits the batch over the
        experts, so fewer rows per expert matmul);
    the two overlap: step = (mem^p + compute^p)^(1/p), p -> infinity a hard roofline, p = 1 serial;
    plus a cost per extra sequence per step (scheduling, sampling, per-sequence attention launches).
aggregate tok/s = N / step, per-user tok/s = 1 / step. One user is exactly the single-stream speed.

The KV cache caps the running batch: a paged engine (vLLM, SGLang) holds as many sequences as its
KV pool (the cards' memory x the engine's memory share, less the weights and its activation reserve,
catalogs/concurrency.toml [serving]) has room for at their depth, and at most its scheduler's
max_num_seqs; the other users wait their turn, so past that the aggregate stays flat and each user's
share of it falls as 1/N. `ConcurrentSpeed` says the KV-bound maximum (`max_seqs`) and the knee: the
users at which per-user speed is half the single-stream one (`knee_users`).

A serving benchmark's "output token throughput" (vllm bench serve, sglang.bench_serving) is not that
steady state: its duration also holds each request's prefill and the last, partly filled wave of
requests. `ServingRun` prices that run through the same step parts, each wave's prefills chunked
into its decode steps (vLLM, SGLang and llama-server -cb batch them together: the prefill matmuls
add to the compute side, the weight reads are shared), which is what scripts/concurrency_rows.py
scores such rows with; the chat answers the steady state.

The parameters (per framework, dense / MoE) and the band live in catalogs/concurrency.toml, fitted by
scripts/fit_concurrency.py on the train split of the measured concurrent runs.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from core.catalog.gpu import Gpu
from core.catalog.kv_cache import FULL_PRECISION_KV, KvCacheType
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.pricing_sections import BatchTerms, FrameworkBatchTerms, PartialBand
from core.catalog.sections import sections
from core.estimator import multi_gpu, speed
from core.estimator.estimate import Estimate, Setup, offloaded
from core.estimator.memory import kv_read_bytes
from core.estimator.weights import weight_breakdown

GIB = 2**30
# The knee search stops here: a batch past it is no longer a question of users at one box.
KNEE_SEARCH_MAX = 1 << 16


@dataclass(frozen=True, slots=True)
class BatchParams:
    """The fitted terms of one framework (and dense / MoE) group."""

    batch_eff: float  # share of the prefill matmul rate a batched decode step reaches
    overlap: float  # p of the soft roofline (mem^p + compute^p)^(1/p)
    seq_us: float  # microseconds per extra sequence per step
    routing: (
        float  # MoE: N tokens route like N^routing independent ones (1: independent; < 1: they share experts)
    )
    low: float  # band: multipliers on mid (cross-validated residual quantiles)
    high: float


DEFAULT_PARAMS = BatchParams(batch_eff=0.3, overlap=1.0, seq_us=0.0, routing=1.0, low=0.75, high=1.25)


@dataclass(frozen=True, slots=True)
class ConcurrentSpeed:
    users: int
    aggregate_tps: float  # tokens/s summed over all users
    per_user_tps: float  # what each user sees
    aggregate_low: float = 0.0  # the band (0.0 where no band was priced)
    aggregate_high: float = 0.0
    per_user_low: float = 0.0
    per_user_high: float = 0.0
    max_seqs: int | None = None  # sequences the KV pool holds at once (None: not priced)
    knee_users: int | None = None  # users at which per-user speed halves (None: beyond the search)


@dataclass(frozen=True, slots=True)
class ServingRun:
    """A serving benchmark's workload: `requests` requests of `prompt` tokens in and `output` out,
    at most `users` at once (the run's concurrency)."""

    prompt: int
    output: int
    requests: int


def expert_share_read(model: Model, users: float) -> float:
    """Share of the routed-expert bytes one step reads when `users` tokens route independently."""
    if not model.is_moe or not model.experts:
        return 1.0
    k_over_e = (model.experts_active or 1) / model.experts
    return 1.0 - math.pow(1.0 - k_over_e, users)


@dataclass(frozen=True, slots=True)
class StepReads:
    """What one decode step reads per user: `active_bytes` the weights one token reads (routed experts
    pro rata, `WeightBreakdown.active_bytes_per_token`), `expert_bytes` all routed-expert bytes
    (`WeightBreakdown.expert_bytes`, 0 for dense), `kv_bytes_per_user` each user's cache at `depth`."""

    active_bytes: float
    expert_bytes: float
    kv_bytes_per_user: float
    depth: int = 0


@dataclass(frozen=True, slots=True)
class Batch:
    """N users decoding at once on a setup as the chat knows it: the model at one quant, each user's
    cache at `depth` tokens, the framework and its KV cache type, the backend the question named
    (None: the card's usual one)."""

    setup: Setup
    model: Model
    quant: str
    users: int
    depth: int
    framework: str = "llama.cpp"
    kv_type: KvCacheType = FULL_PRECISION_KV
    backend: str | None = None
    kv_pool_gib: float | None = None  # the KV pool a run logged (vLLM "Available KV cache memory", all cards)
    memory_utilization: float | None = None  # --gpu-memory-utilization a run set (None: the engine's)


@dataclass(frozen=True, slots=True)
class ServingLimits:
    """How a serving engine sizes its KV pool and running batch (concurrency.toml [serving.<group>])."""

    paged: bool  # the engine admits sequences while its KV pool has room (vLLM, SGLang); else slots
    memory_utilization: float  # share of each card's memory the engine takes
    reserve_gib: float  # per card: activations, CUDA graphs, buffers besides the weights and KV
    max_num_seqs: int  # the scheduler's cap on running sequences (0: none)


NO_LIMITS = ServingLimits(paged=False, memory_utilization=0.95, reserve_gib=0.5, max_num_seqs=0)


def serving_limits(catalog: Catalog, framework: str) -> ServingLimits:
    """catalogs/concurrency.toml [serving.<group>] over [serving.default] (none: `NO_LIMITS`)."""
    table = catalog.tables.get("concurrency", {}).get("serving", {})
    raw = dict(table.get("default", {})) | dict(table.get(group_key(framework, catalog), {}))
    return ServingLimits(
        paged=bool(raw.get("paged", NO_LIMITS.paged)),
        memory_utilization=float(raw.get("memory_utilization", NO_LIMITS.memory_utilization)),
        reserve_gib=float(raw.get("reserve_gib", NO_LIMITS.reserve_gib)),
        max_num_seqs=int(raw.get("max_num_seqs", NO_LIMITS.max_num_seqs)),
    )


def kv_pool_bytes(batch: Batch, weight_bytes: float, limits: ServingLimits) -> float:
    """Bytes the engine keeps for KV caches on all the cards: the logged pool where a run gave it,
    else memory x utilization less the weights and the per-card reserve."""
    if batch.kv_pool_gib is not None:
        return batch.kv_pool_gib * GIB
    setup = batch.setup
    util = batch.memory_utilization or limits.memory_utilization
    total = setup.memory_gib * setup.count * util * GIB
    return max(total - weight_bytes - limits.reserve_gib * setup.count * GIB, 0.0)


def max_sequences(pool_bytes: float, seq_bytes: float, limits: ServingLimits) -> int:
    """Sequences a pool holds at `seq_bytes` each, within the scheduler's cap (at least one)."""
    fit = int(pool_bytes // seq_bytes) if seq_bytes > 0 else 1 << 20
    if limits.max_num_seqs:
        fit = min(fit, limits.max_num_seqs)
    return max(fit, 1)


def _over(base: BatchParams, terms: BatchTerms | FrameworkBatchTerms) -> BatchParams:
    """`base` with the terms one level of catalogs/concurrency.toml gives (None: not given there)."""

    def pick(value: float | None, fallback: float) -> float:
        return fallback if value is None else value

    return BatchParams(
        batch_eff=pick(terms.batch_eff, base.batch_eff),
        overlap=pick(terms.overlap, base.overlap),
        seq_us=pick(terms.seq_us, base.seq_us),
        routing=pick(terms.routing, base.routing),
        low=pick(terms.band.low, base.low),
        high=pick(terms.band.high, base.high),
    )


def group_key(framework: str, catalog: Catalog) -> str:
    """The framework group a concurrency parameter is fitted per: the engine it runs (LM Studio and
    llama-server are llama.cpp; ik_llama.cpp is priced as llama.cpp)."""
    fw = catalog.frameworks.get(framework)
    engine = fw.engine if fw else framework
    return "llama.cpp" if engine in ("ik_llama.cpp", "lmstudio") else engine


def params_for(catalog: Catalog, framework: str, moe: bool) -> BatchParams:
    """catalogs/concurrency.toml: [default], over it [framework.<group>], over that
    [framework.<group>.moe] for a mixture of experts: a group the fit had no rows for is the default."""
    table = sections(catalog).concurrency
    params = _over(DEFAULT_PARAMS, table.default)
    group = table.framework.get(group_key(framework, catalog))
    if group is None:
        return params
    params = _over(params, group)
    if moe and group.moe is not None:
        params = _over(params, group.moe)
    return params


def _legacy_params(cal: speed.Calibration) -> BatchParams:
    """The parameters of a caller that passes none (calibration.toml [concurrency], the default else)."""
    raw = cal.concurrency

    def given(key: str) -> float | None:
        return float(raw[key]) if key in raw else None

    band = raw.get("band", {})
    terms = BatchTerms(
        batch_eff=given("batch_eff"),
        overlap=given("overlap"),
        seq_us=given("seq_us"),
        routing=given("routing"),
        band=PartialBand(
            low=float(band["low"]) if "low" in band else None,
            high=float(band["high"]) if "high" in band else None,
        ),
    )
    return _over(DEFAULT_PARAMS, terms)


def matmul_flops_per_s(rt: speed.Runtime, quant_id: str, moe: bool) -> float:
    """The calibrated prefill matmul rate of these kernels (as `speed.prefill_seconds` prices it):
    a decode batch runs the same matmuls with fewer rows."""
    gpu, backend, cal = rt.gpu, rt.backend, rt.cal
    keys = speed.efficiency_keys(
        backend,
        gpu.arch_family,
        speed.quant_kind(quant_id),
        moe,
        speed.is_hbm(gpu),
        rt.framework,
        speed.is_full_rate_gddr(gpu),
    )
    rate = speed.matrix_tflops(gpu, cal) * 1e12 * cal.prefill.efficiency(backend, keys)
    if rt.count > 1 and rt.split != "layer":
        rate *= rt.count * cal.tp_eff
    return rate


def concurrent_speed(
    rt: speed.Runtime,
    model: Model,
    quant_id: str,
    users: int,
    reads: StepReads,
    *,
    params: BatchParams | None = None,
    run: ServingRun | None = None,
    running_cap: int | None = None,
    max_seqs: int | None = None,
) -> ConcurrentSpeed:
    """Aggregate and per-user decode tok/s for `users` parallel streams on `rt`, from the seconds of
    one decode step reading `reads`. `run`: price a serving benchmark's whole run (prefills and the
    last wave) instead of the steady state. `running_cap`: the most sequences that decode at once
    (a paged engine's KV pool; None: all users); `max_seqs` is reported as the KV-bound maximum."""
    users = max(1, users)
    p = params or _legacy_params(rt.cal)
    cap = max(1, min(users, running_cap)) if running_cap else users

    def parts(n: int) -> tuple[float, float, float]:
        return step_parts(rt, model, quant_id, n, reads, p)

    prefill = speed.prefill_seconds(rt, model, quant_id, max(run.prompt, 1), 0) if run else 0.0
    prefills = (prefill, run.output) if run else None

    def per_user_at(n: int) -> float:
        return _per_user(n, running_cap, parts, p.overlap, prefills)

    per_user = per_user_at(users)
    memory, compute, extra = parts(cap)
    aggregate = cap / (roofline(memory, compute, p.overlap) + extra)
    if run is not None:
        aggregate = _serving_aggregate(cap, run, prefill, parts, p.overlap)
    ratio = per_user / aggregate if aggregate > 0 else 0.0
    return ConcurrentSpeed(
        users,
        round(aggregate, 1),
        round(per_user, 1),
        round(aggregate * p.low, 1),
        round(aggregate * p.high, 1),
        round(aggregate * p.low * ratio, 1),
        round(aggregate * p.high * ratio, 1),
        max_seqs,
        knee(per_user_at),
    )


def _per_user(
    n: int,
    cap: int | None,
    parts: Callable[[int], tuple[float, float, float]],
    p: float,
    prefills: tuple[float, int] | None = None,
) -> float:
    """Per-user tok/s at `n` users. Steady state: 1 / step while all decode, the share of the capped
    batch's aggregate once the KV pool holds fewer than `n`. A serving run (`prefills`: one
    request's prefill seconds and its output tokens): 1 / step of the running batch with the other
    users' prefill chunks riding in every step (continuous batching: TPOT holds them; the queued
    requests wait before their first token, not between tokens)."""
    running = min(n, cap) if cap else n
    memory, compute, extra = parts(running)
    if prefills is None:
        return running / (roofline(memory, compute, p) + extra) / n
    prefill, output = prefills
    return 1.0 / (roofline(memory, compute + running * prefill / max(output, 1), p) + extra)


def knee(per_user: Callable[[int], float]) -> int | None:
    """The fewest users at which per-user speed is at most half the single-stream one (it falls
    monotonically with users): doubling, then bisection; None past `KNEE_SEARCH_MAX`."""
    half = per_user(1) / 2.0
    low, high = 1, 2
    while per_user(high) > half:
        low, high = high, high * 2
        if high > KNEE_SEARCH_MAX:
            return None
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (mid, high) if per_user(mid) > half else (low, mid)
    return high


def roofline(memory: float, compute: float, overlap: float) -> float:
    """The soft roofline (memory^p + compute^p)^(1/p): p = 1 the two one after the other, large p the
    longer of the two (they overlap)."""
    if compute <= 0.0:
        return memory
    p = max(overlap, 1.0)
    big, small = max(memory, compute), min(memory, compute)
    return math.exp(math.log(big) + math.log1p((small / big) ** p) / p)


def step_parts(
    rt: speed.Runtime, model: Model, quant_id: str, users: int, reads: StepReads, params: BatchParams
) -> tuple[float, float, float]:
    """(memory, compute, per-sequence) seconds of one decode step for `users` sequences (the module
    docstring's roofline); one user is the single-stream step, all memory."""
    active_bytes, expert_bytes = reads.active_bytes, reads.expert_bytes
    # The part every token reads whatever it routes to, plus the experts the whole batch touches.
    # One user reads exactly what the single-stream row prices (the same float).
    shared = active_bytes - expert_bytes * expert_share_read(model, 1)
    # Real batches share experts (similar text routes alike): they route like fewer independent tokens.
    routed = expert_share_read(model, users**params.routing)
    weights_read = active_bytes if users == 1 else shared + expert_bytes * routed
    memory = speed.token_seconds(
        rt, model.layers, weights_read + users * reads.kv_bytes_per_user, 0.0, model.is_moe, quant_id
    )
    if users == 1:
        return memory, 0.0, 0.0
    flops = users * (2.0 * model.active_params_b * 1e9 + speed.attention_flops_per_token(model, reads.depth))
    rate = matmul_flops_per_s(rt, quant_id, model.is_moe)
    compute = flops / (rate * max(params.batch_eff, 1e-6))
    return memory, compute, (users - 1) * params.seq_us * 1e-6


def _serving_aggregate(
    users: int,
    run: ServingRun,
    prefill: float,
    parts: Callable[[int], tuple[float, float, float]],
    overlap: float,
) -> float:
    """Output tokens over the run's duration: waves of `users` requests (the last one holds what is
    left), each its `output` decode steps at the wave's batch with the wave's prefills chunked into
    them (vLLM, SGLang, llama-server -cb): their matmuls add to the compute side, the weights the
    decode steps read anyway serve them too."""
    left, seconds = max(run.requests, 1), 0.0
    while left > 0:
        n = min(users, left)
        memory, compute, extra = parts(n)
        seconds += (
            roofline(run.output * memory, run.output * compute + n * prefill, overlap) + run.output * extra
        )
        left -= n
    return max(run.requests, 1) * run.output / seconds


def split_and_link(framework: str, gpu: Gpu, count: int, catalog: Catalog) -> tuple[str, str]:
    """A serving run's split and link: the framework's default split, the cards' own link."""
    fw = catalog.frameworks.get(framework)
    engine = fw.engine if fw else framework
    table = sections(catalog).split_modes
    return multi_gpu.layout(framework, engine, (None, None), False, gpu, count, table)


def concurrent_for(
    batch: Batch, catalog: Catalog, *, run: ServingRun | None = None, params: BatchParams | None = None
) -> ConcurrentSpeed:
    """`concurrent_speed` for a setup as the chat knows it: the backend the question named (checked
    against the card) or the card's usual one, the quant's weight breakdown and each user's KV cache
    read at `depth` tokens, the framework's fitted parameters and band (catalogs/concurrency.toml),
    and its KV pool: how many sequences fit at that depth (a paged engine runs no more at once).
    The chat and scripts/concurrency_rows.py both price through here: one figure per cell;
    `params` overrides the catalog's (scripts/fit_concurrency.py trying values)."""
    setup, model, framework = batch.setup, batch.model, batch.framework
    weights = weight_breakdown(model, catalog.quants[batch.quant], catalog)
    rt = speed.Runtime(
        setup.gpu,
        speed.choose_backend(setup.gpu, setup.os, catalog, batch.backend),
        speed.calibration(catalog),
        framework,
        setup.count,
        *split_and_link(framework, setup.gpu, setup.count, catalog),
    )
    kv_per_user = kv_read_bytes(model, batch.depth, batch.kv_type, catalog)
    reads = StepReads(
        float(weights.active_bytes_per_token), float(weights.expert_bytes), kv_per_user, batch.depth
    )
    params = params or params_for(catalog, framework, model.is_moe)
    limits = serving_limits(catalog, framework)
    seqs = max_sequences(kv_pool_bytes(batch, float(weights.total_bytes), limits), kv_per_user, limits)
    return concurrent_speed(
        rt,
        model,
        batch.quant,
        batch.users,
        reads,
        params=params,
        run=run,
        running_cap=seqs if limits.paged else None,
        max_seqs=seqs,
    )


def as_json(got: ConcurrentSpeed, quant: str) -> dict[str, Any]:
    """The figures of one concurrency cell, as `ask --json` and `estimate --json` give them."""
    return {
        "users": got.users,
        "quant": quant,
        "aggregate_tps": got.aggregate_tps,
        "per_user_tps": got.per_user_tps,
        "aggregate_range": [got.aggregate_low, got.aggregate_high],
        "per_user_range": [got.per_user_low, got.per_user_high],
        "max_seqs": got.max_seqs,
        "knee_users": got.knee_users,
    }


def estimate_concurrency(est: Estimate, users: int, catalog: Catalog) -> tuple[dict[str, Any] | None, ...]:
    """Per row of an estimate (`estimate --users N`): N users' figures at the row's own decode depth,
    framework and backend (one user is the row's decode mid), with the N caches against usable memory
    as the chat's KV line counts them; None where the row does not fit or runs offloaded (the batched
    model prices weights on the cards only)."""
    req = est.request
    out: list[dict[str, Any] | None] = []
    for row in est.rows:
        if row.status == "no_fit" or offloaded(req, row) or est.backend == "cpu":
            out.append(None)
            continue
        batch = Batch(
            req.setup, req.model, row.quant, users, row.depth, est.framework, req.kv_type, est.backend
        )
        got = concurrent_for(batch, catalog)
        total = row.total_gib + row.kv_gib * (users - 1)
        out.append(
            as_json(got, row.quant)
            | {
                "kv_gib": round(row.kv_gib * users, 2),
                "total_gib": round(total, 2),
                "fits": total <= row.usable_gib,
            }
        )
    return tuple(out)
