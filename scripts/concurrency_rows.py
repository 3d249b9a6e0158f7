"""The measured concurrent runs (concurrency > 1), priced the way the chat prices N users (issue 11).

scripts/bench_accuracy_setups.py hands every `concurrency>1` row here (`outcome`) once its card, model,
quant and framework are mapped; the row is priced through `core.estimator.concurrency.concurrent_for`,
the very function the chat's concurrency line calls, and scored on what it measures:

- the aggregate (the row's `tokens_per_s`): llama-batched-bench S_TG is the steady decode of B
  sequences; a serving benchmark (vllm bench serve, sglang.bench_serving, N streaming requests to
  llama-server) divides its output by the whole run, so it is priced as that run (`ServingRun`:
  its prompt and output lengths and request count, read from the row);
- per user, where the notes state it (mean TPOT, "per-request N tok/s"): 1 / the decode step.

`report_lines` prints median |est/measured - 1| and the share inside the fitted band, by framework,
by N, by dense/MoE and by split; scripts/fit_concurrency.py fits the parameters on `cases`.
"""

from __future__ import annotations

import csv
import re
import statistics
from collections import defaultdict
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Protocol

from core.ask.estimate_request import EstimateQuery, QueryError, resolve_request
from core.catalog.loader import Catalog
from core.estimator.concurrency import Batch, BatchParams, ConcurrentSpeed, ServingRun, concurrent_for
from core.estimator.estimate import EstimateRequest

# How a row names its N when the `concurrency` column does not (llama-batched-bench "B=8",
# llama-server "-np 4", vLLM "c=16", "batch 32", "8 concurrent").
_USERS = (
    re.compile(r"\bB=(\d+)"),
    re.compile(r"-np (\d+)"),
    re.compile(r"\bc=(\d+)"),
    re.compile(r"\bbatch (\d+)"),
    re.compile(r"\b(\d+) concurrent"),
)
_ISL_OSL = re.compile(r"^(\d+(?:\.\d+)?[kK]?)\s*(?:/|->|→|in\s*/)\s*(\d+(?:\.\d+)?[kK]?)(?:\s*out)?$")
# Lengths as serving benchmarks print them in the notes: "--random-input-len 1024 --random-output-len
# 128", "input 1024 / output 128", "ISL/OSL 1024/1024", "1024 in / 128 out", "ISL 8K OSL 1K".
_LEN = r"(\d+(?:\.\d+)?[kK]?)"
_NOTE_LENGTHS = (
    re.compile(rf"input[-_ ]len(?:gth)?[= ]{_LEN}.*?output[-_ ]len(?:gth)?[= ]{_LEN}", re.I),
    re.compile(rf"ISL\s*/\s*OSL[ :=]+{_LEN}\s*/\s*{_LEN}", re.I),
    re.compile(rf"ISL[ :=]+{_LEN}[ ,;/]+OSL[ :=]+{_LEN}", re.I),
    re.compile(rf"\binput {_LEN}(?: tokens)? ?/ ?output {_LEN}", re.I),
    re.compile(rf"\b{_LEN} in ?/ ?{_LEN} out\b", re.I),
)
# vllm bench serve's defaults where a run names its dataset but not the lengths: random 1024 in /
# 128 out (vllm PR 23867's printed Namespace); ShareGPT averages ~215 in / ~200 out per prompt.
_DEFAULT_LENGTHS = (
    (re.compile(r"sharegpt", re.I), (215, 200)),
    (re.compile(r"bench serve|benchmark_serving|random", re.I), (1024, 128)),
)
_KV_POOL = re.compile(r"KV cache memory:? (\d+(?:\.\d+)?) ?GiB", re.I)
_UTIL = re.compile(r"gpu[-_]memory[-_]utilization[= ](\d?\.\d+)", re.I)
_PP_TG = re.compile(r"PP (\d+), TG (\d+)")
_NPP_NTG = re.compile(r"^(\d+)\+(\d+)$")
_REQUESTS = re.compile(r"\b(\d+) (?:req|requests|prompts)\b|num[-_]prompts[= ](\d+)")
_X_TOKENS = re.compile(r"requests x (\d+) tokens")
_TPOT = re.compile(r"TPOT(?: mean)? (\d+(?:\.\d+)?) ?ms")
_PER_REQUEST = re.compile(r"per-request (\d+(?:\.\d+)?) tok/s")
# A serving benchmark: its throughput is output over the whole run (prefills and tail included).
_SERVING = re.compile(r"bench serve|bench_serving|benchmark_serving|Output token throughput|"
                      r"Throughput \(tok/s\)|Output tput|output throughput|Output Tok/s|streaming|"
                      r"incl\. TTFT|max[- ]concurrency|genai-perf|llmperf|aiperf|guidellm|evalscope",
                      re.I)  # fmt: skip
# The measurement files a bench run reads (bench_accuracy_setups.main sets its --csv list here):
# the columns its Measured rows do not keep are read back from them by file name and line.
REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference"
PATHS: tuple[Path, ...] = (
    REFERENCE / "measured_calibration.csv",
    REFERENCE / "measured_calibration_backends.csv",
    Path(__file__).resolve().parents[1] / "catalogs" / "measurements" / "published_extra.csv",
)
# What a row depth is when a steady-state batch names no lengths (SGLang's blog batch runs).
UNSTATED_DEPTH = 1024


class MeasuredRow(Protocol):
    """What is read of bench_accuracy_setups.Measured (duck-typed: the bench runs as __main__)."""

    file: str
    line: int
    gpu: str
    gpu_count: int
    model: str
    framework: str
    backend: str
    phase: str
    tps: float
    source: str
    notes: str


@dataclass(frozen=True, slots=True)
class Workload:
    users: int
    depth: int  # tokens in each user's cache at the average decoded token
    run: ServingRun | None  # a serving benchmark's whole run; None: the steady decode
    per_user: float | None  # measured tok/s each user saw, where the row states it
    kv_pool_gib: float | None = None  # the KV pool the run logged, all cards
    memory_utilization: float | None = None  # --gpu-memory-utilization the run set


@dataclass(frozen=True, slots=True)
class Case:
    """One mapped concurrent row, ready to price with any parameters."""

    row: Any  # MeasuredRow
    request: EstimateRequest
    quant: str
    framework: str
    backend: str | None
    work: Workload

    def price(self, catalog: Catalog, params: BatchParams | None = None) -> ConcurrentSpeed:
        req, work = self.request, self.work
        batch = Batch(
            req.setup,
            req.model,
            self.quant,
            work.users,
            work.depth,
            self.framework,
            req.kv_type,
            self.backend,
            work.kv_pool_gib,
            work.memory_utilization,
        )
        return concurrent_for(batch, catalog, run=work.run, params=params)


@cache
def _column(path: str, name: str) -> dict[int, str]:
    """line -> one column of a measurement file (the bench's Measured does not keep it)."""
    with Path(path).open(newline="", encoding="utf-8") as fh:
        return {line: (r.get(name) or "").strip() for line, r in enumerate(csv.DictReader(fh), start=2)}


def column(row: MeasuredRow, name: str, paths: Iterable[Path]) -> str:
    path = next((p for p in paths if p.name == row.file), None)
    return _column(str(path), name).get(row.line, "") if path else ""


def users_of(row: MeasuredRow, paths: Iterable[Path]) -> int:
    """N: the `concurrency` column (parallel sequences) where it says more than 1, else the notes."""
    text = column(row, "concurrency", paths)
    if text.isdigit() and int(text) > 1:
        return int(text)
    for pattern in _USERS:
        if (m := pattern.search(row.notes)) is not None and int(m.group(1)) > 1:
            return int(m.group(1))
    return 1


def _tokens(text: str) -> int:
    """1024 from "1024", 8192 from "8K"."""
    t = text.strip().lower()
    return int(float(t[:-1]) * 1024) if t.endswith("k") else int(float(t))


def lengths(context: str, notes: str) -> tuple[int, int]:
    """(prompt, output) tokens of each request: the `context_or_depth` column, else the notes' own
    words, else the default lengths of the benchmark they name; (0, 0) when nothing says."""
    if (io := _ISL_OSL.match(context.strip())) is not None:
        return _tokens(io.group(1)), _tokens(io.group(2))
    if (pt := _PP_TG.search(notes) or _NPP_NTG.match(context.strip())) is not None:
        return int(pt.group(1)), int(pt.group(2))
    for pattern in _NOTE_LENGTHS:
        if (m := pattern.search(notes)) is not None:
            return _tokens(m.group(1)), _tokens(m.group(2))
    if (x := _X_TOKENS.search(notes)) is not None:
        return 0, int(x.group(1))
    for pattern, default in _DEFAULT_LENGTHS:
        if pattern.search(notes):
            return default
    return 0, 0


def workload(row: MeasuredRow, context: str, users: int) -> Workload:
    """Lengths, request count, the KV pool and the per-user figure of a concurrent row, from its
    `context_or_depth` and notes."""
    notes = row.notes
    per_user = None
    if (t := _TPOT.search(notes)) is not None:
        per_user = 1000.0 / float(t.group(1))
    elif (q := _PER_REQUEST.search(notes)) is not None:
        per_user = float(q.group(1))
    prompt, output = lengths(context, notes)
    serving = bool(_SERVING.search(notes)) and output > 0
    depth = prompt + output // 2 if output else UNSTATED_DEPTH
    run = None
    if serving:
        req = _REQUESTS.search(notes)
        # No count stated: one wave of `users` requests (no partly filled last wave).
        count = int(req.group(1) or req.group(2)) if req else users
        run = ServingRun(prompt, output, count)
    pool = _KV_POOL.search(notes)
    util = _UTIL.search(notes)
    return Workload(
        users,
        depth,
        run,
        per_user,
        float(pool.group(1)) * row.gpu_count if pool else None,
        float(util.group(1)) if util else None,
    )


def make_case(row: MeasuredRow, query: EstimateQuery, catalog: Catalog, paths: Sequence[Path]) -> Case | str:
    """The row as a priceable case, or why it is not one."""
    if row.phase != "decode":
        return "unsupported setup: prefill under concurrency"
    if query.offload or column(row, "offload", paths) or row.framework == "ktransformers":
        # The batched model prices weights on the card(s); experts in system RAM are another roofline.
        return "unsupported setup: concurrency with offload"
    users = users_of(row, paths)
    if users < 2:
        return "unsupported setup: concurrency not stated"
    try:
        request = resolve_request(query, catalog)
    except QueryError as exc:
        if query.backend is None:
            return f"request refused: {str(exc).split(':')[0]}"
        # As the bench does: a backend the framework entry lacks is priced on the card's usual one.
        request = resolve_request(query.model_copy(update={"backend": None}), catalog)
    quant = request.quants[0]
    framework = request.framework or "llama.cpp"
    work = workload(row, column(row, "context_or_depth", paths), users)
    return Case(row, request, quant, framework, request.backend, work)


@dataclass(frozen=True, slots=True)
class Priced:
    case: Case
    speed: ConcurrentSpeed

    @property
    def low(self) -> float:
        return self.speed.aggregate_low

    @property
    def mid(self) -> float:
        return self.speed.aggregate_tps

    @property
    def high(self) -> float:
        return self.speed.aggregate_high


_PRICED: dict[tuple[str, int], Priced] = {}


def price(row: MeasuredRow, query: EstimateQuery, catalog: Catalog, paths: Sequence[Path]) -> Priced | str:
    """The row priced as the chat prices it (kept for `report_lines`), or why it is not."""
    case = make_case(row, query, catalog, paths)
    if isinstance(case, str):
        return case
    got = Priced(case, case.price(catalog))
    _PRICED[(row.file, row.line)] = got
    return got


# --- the report -----------------------------------------------------------------------------------


class ScoredOutcome(Protocol):
    row: Any
    split: str
    reason: str


def moe_label(case: Case) -> str:
    return "MoE" if case.request.model.is_moe else "dense"


N_GROUPS = ((2, "N=2"), (4, "N=3-4"), (8, "N=5-8"), (16, "N=9-16"), (32, "N=17-32"), (128, "N=33-128"))


def n_label(users: int) -> str:
    return next((label for top, label in N_GROUPS if users <= top), "N>128")


@dataclass(frozen=True, slots=True)
class Score:
    measure: str  # aggregate / per-user
    ratio: float  # est / measured
    inside: bool


def scores(p: Priced) -> list[Score]:
    s, row = p.speed, p.case.row
    out = [Score("aggregate", s.aggregate_tps / row.tps, s.aggregate_low <= row.tps <= s.aggregate_high)]
    each = p.case.work.per_user
    if each:
        out.append(Score("per-user", s.per_user_tps / each, s.per_user_low <= each <= s.per_user_high))
    return out


def _line(label: str, items: Sequence[Score]) -> str:
    if not items:
        return f"  {label:<26}{0:>5}       —       —"
    med = statistics.median(abs(x.ratio - 1) for x in items)
    bias = statistics.median(x.ratio for x in items)
    inside = sum(x.inside for x in items) / len(items)
    return f"  {label:<26}{len(items):>5}{med * 100:>7.1f}%{inside * 100:>7.1f}%{bias:>7.2f}x"


def grouped(title: str, priced: Sequence[tuple[str, Priced]], key: Callable[[str, Priced], str]) -> list[str]:
    by: dict[tuple[str, str], list[Score]] = defaultdict(list)
    for split, p in priced:
        for s in scores(p):
            by[(key(split, p), s.measure)].append(s)
    lines = [f"-- by {title}", f"  {'':<26}{'n':>5}{'medAPE':>8}{'inside':>8}{'median':>8}"]
    for group, measure in sorted(by):
        lines.append(_line(f"{group} {measure}", by[(group, measure)]))
    return lines


def report_lines(outcomes: Sequence[ScoredOutcome]) -> list[str]:
    """The concurrency section of the bench: every concurrent row scored, grouped."""
    conc = [o for o in outcomes if o.row.setup == "concurrency>1"]
    priced = [(o.split, _PRICED[(o.row.file, o.row.line)]) for o in conc if not o.reason]
    lines = [
        "== concurrency > 1 (scripts/concurrency_rows.py: priced by core.estimator.concurrency"
        ".concurrent_for, the chat's concurrency line; band from catalogs/concurrency.toml)",
        f"  rows {len(conc)}, scored {len(priced)}; not scored: "
        + ", ".join(f"{r} {n}" for r, n in _reasons(conc)),
        "  columns: n | medAPE = median |est/measured - 1| | inside = share in [low, high]"
        " | median est/measured",
    ]
    lines += grouped("split", priced, lambda s, p: s)
    lines += grouped("framework", priced, lambda s, p: p.case.row.framework)
    lines += grouped("N", priced, lambda s, p: n_label(p.case.work.users))
    lines += grouped(
        "framework × dense/MoE", priced, lambda s, p: f"{p.case.row.framework} {moe_label(p.case)}"
    )
    lines += grouped("run kind", priced, lambda s, p: "serving run" if p.case.work.run else "steady batch")
    lines.append("-- rows (est/measured aggregate; per-user where stated)")
    for split, p in sorted(priced, key=lambda sp: -abs(sp[1].mid / sp[1].case.row.tps - 1)):
        r, w, s = p.case.row, p.case.work, p.speed
        each = f" each {s.per_user_tps:g} vs {w.per_user:.1f}" if w.per_user else ""
        lines.append(
            f"  {s.aggregate_tps / r.tps:5.2f}x {split:<8} {r.framework:<10} N={w.users:<5} "
            f"{r.gpu[:28]} ×{r.gpu_count}"
            f" | {r.model[:28]} | measured {r.tps:g} est {s.aggregate_tps:g} [{s.aggregate_low:g}, "
            f"{s.aggregate_high:g}]{each}{' (run)' if w.run else ''}"
        )
    return lines


def _reasons(outcomes: Sequence[ScoredOutcome]) -> list[tuple[str, int]]:
    counts: dict[str, int] = defaultdict(int)
    for o in outcomes:
        if o.reason:
            counts[o.reason] += 1
    return sorted(counts.items(), key=lambda kv: -kv[1])
