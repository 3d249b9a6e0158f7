"""Fit the batched-decode parameters of core/estimator/concurrency.py on the measured concurrent runs.

    .venv/bin/python scripts/fit_concurrency.py [--dry-run] [--lam 1.0]

Every concurrency>1 row the bench maps (scripts/concurrency_rows.py: card, model, quant, framework,
N, lengths, serving run or steady batch) is priced through `concurrent_for`, the chat's own function,
with trial parameters. The fit minimizes the squared log error of the aggregate (and, at half
weight, of the per-user figure where a row states it: the same run, a second look at its step) over
the TRAIN split only (catalogs/measurements/holdout.toml), plus a ridge toward the prior
values (`PRIOR`: the parameters the code shipped with) so a group with few rows stays near them:

    per framework group (llama.cpp, vllm, sglang): batch_eff (share of the prefill matmul rate a
        decode batch reaches), seq_us (cost per extra sequence per step), and a MoE factor on
        batch_eff (a MoE batch splits over the experts: fewer rows per matmul);
    shared: overlap p of the soft roofline, routing (N tokens touch the experts of N^routing
        independent ones).

It prints median |est/measured - 1| and the share inside the band before (prior) and after, in
sample, leave-one-source-out (each train source refitted without it), leave-one-GPU-out and on the
held-out sources;
the band written is the 5-95 % spread of the leave-one-source-out residuals. Writes
catalogs/concurrency.toml (unless --dry-run).
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_accuracy_setups as bench  # noqa: E402
import concurrency_rows as crows  # noqa: E402

from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.estimator import concurrency, speed  # noqa: E402

OUT = bench.REPO / "catalogs" / "concurrency.toml"
GROUPS = ("llama.cpp", "vllm", "sglang")
BAND_QUANTILES = (0.05, 0.95)
PER_USER_WEIGHT = 0.5
SHIFT = 10.0


@dataclass(frozen=True, slots=True)
class Item:
    case: crows.Case
    split: str  # train / held-out
    source: str  # bench.source_key
    group: str  # concurrency.group_key

    @property
    def moe(self) -> bool:
        return self.case.request.model.is_moe


def load_items(catalog: Catalog) -> tuple[list[Item], dict[str, int]]:
    """The mapped concurrent rows, as the bench maps them, and the others counted by reason."""
    paths = crows.PATHS
    held = bench.load_holdout()
    items: list[Item] = []
    skipped: dict[str, int] = defaultdict(int)
    for row in bench.load_all(paths):
        if row.setup != "concurrency>1":
            continue
        reason = bench._pre_check(row, catalog)
        query = bench._query(row, catalog) if not reason else reason
        case = query if isinstance(query, str) else crows.make_case(row, query, catalog, paths)
        if isinstance(case, str):
            skipped[case] += 1
            continue
        key = bench.source_key(row.source)
        group = concurrency.group_key(case.framework, catalog)
        items.append(Item(case, "held-out" if key in held else "train", key, group))
    return items, dict(skipped)


# --- parameters <-> vector ------------------------------------------------------------------------

# The prior: what the code priced with before this fit (calibration.toml's batch_eff, a serial
# roofline, no per-sequence cost, independent routing, no MoE factor).
NAMES = (
    *(f"{g}:log_batch_eff" for g in GROUPS),
    *(f"{g}:seq_us" for g in GROUPS),
    *(f"{g}:log_moe" for g in GROUPS),
    "log_overlap",
    "routing",
)
# Ridge scale per kind (one sigma): a factor e on batch_eff, 100 us a sequence, a factor 2 on MoE.
SIGMA = {"log_batch_eff": 1.0, "seq_us": 100.0, "log_moe": math.log(2.0), "log_overlap": 1.0, "routing": 0.25}
BOUNDS = {
    "log_batch_eff": (math.log(0.01), math.log(1.5)),
    "seq_us": (0.0, 2000.0),
    "log_moe": (math.log(0.1), math.log(3.0)),
    "log_overlap": (0.0, math.log(16.0)),
    "routing": (0.3, 1.0),
}


def _kind(name: str) -> str:
    return name.split(":")[-1]


def prior(catalog: Catalog) -> np.ndarray:
    base = float(
        speed.calibration(catalog).concurrency.get("batch_eff", concurrency.DEFAULT_PARAMS.batch_eff)
    )
    values = {
        "log_batch_eff": math.log(base),
        "seq_us": 0.0,
        "log_moe": 0.0,
        "log_overlap": 0.0,
        "routing": 1.0,
    }
    return np.array([values[_kind(n)] for n in NAMES])


def params_of(x: np.ndarray, group: str, moe: bool, band: tuple[float, float]) -> concurrency.BatchParams:
    v = dict(zip(NAMES, x, strict=True))
    g = group if group in GROUPS else GROUPS[0]
    eff = math.exp(v[f"{g}:log_batch_eff"] + (v[f"{g}:log_moe"] if moe else 0.0))
    return concurrency.BatchParams(
        batch_eff=eff,
        overlap=math.exp(v["log_overlap"]),
        seq_us=float(v[f"{g}:seq_us"]),
        routing=float(v["routing"]) if moe else 1.0,
        low=band[0],
        high=band[1],
    )


# --- residuals and the fit ------------------------------------------------------------------------

Band = tuple[float, float]
NO_BAND: Band = (1.0, 1.0)


def priced(item: Item, x: np.ndarray, catalog: Catalog, band: Band = NO_BAND) -> concurrency.ConcurrentSpeed:
    return item.case.price(catalog, params_of(x, item.group, item.moe, band))


def residuals(item: Item, x: np.ndarray, catalog: Catalog) -> list[tuple[str, float]]:
    """(measure, log(est / measured)) for the aggregate and, where stated, per user."""
    got = priced(item, x, catalog)
    out = [("aggregate", math.log(max(got.aggregate_tps, 1e-3) / item.case.row.tps))]
    if item.case.work.per_user:
        out.append(("per-user", math.log(max(got.per_user_tps, 1e-3) / item.case.work.per_user)))
    return out


def fit(items: Sequence[Item], catalog: Catalog, x0: np.ndarray, lam: float) -> np.ndarray:
    from scipy.optimize import least_squares  # the fit only: the bench and tests price rows without scipy

    sigma = np.array([SIGMA[_kind(n)] for n in NAMES])
    lo = np.array([BOUNDS[_kind(n)][0] for n in NAMES])
    hi = np.array([BOUNDS[_kind(n)][1] for n in NAMES])

    # In prior-sigma units z, shifted by SHIFT: the ridge is |z|^2, and scipy's finite-difference step
    # is relative to |w| (none at 0), so w = z + SHIFT makes it 0.03 sigma, which moves the
    # (0.1 tok/s rounded) figures visibly.
    def vector(w: np.ndarray) -> np.ndarray:
        z = w - SHIFT
        x = x0 + z * sigma
        res = []
        for item in items:
            for measure, r in residuals(item, x, catalog):
                res.append(r * (math.sqrt(PER_USER_WEIGHT) if measure == "per-user" else 1.0))
        return np.concatenate([np.array(res), math.sqrt(lam) * z])

    zlo, zhi = (lo - x0) / sigma, (hi - x0) / sigma
    start = np.clip(np.zeros_like(x0), zlo + 1e-6, zhi - 1e-6) + SHIFT
    got = least_squares(vector, start, bounds=(zlo + SHIFT, zhi + SHIFT), diff_step=0.03 / SHIFT)
    return np.asarray(x0 + (got.x - SHIFT) * sigma)


# --- figures --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scored:
    item: Item
    measure: str
    r: float  # log(est / measured)


def score(items: Sequence[Item], xs: Callable[[Item], np.ndarray], catalog: Catalog) -> list[Scored]:
    return [Scored(it, m, r) for it in items for m, r in residuals(it, xs(it), catalog)]


def band_of(scored: Sequence[Scored]) -> Band:
    """Multipliers on mid that hold 90 % of the (cross-validated) aggregate residuals: est x low ..
    est x high brackets the measured value when measured/est falls inside."""
    rs = [-s.r for s in scored if s.measure == "aggregate"]
    if len(rs) < 8:
        return (0.7, 1.4)
    lo, hi = np.quantile(rs, BAND_QUANTILES)
    return (round(math.exp(min(float(lo), -0.06)), 3), round(math.exp(max(float(hi), 0.06)), 3))


def summary(scored: Sequence[Scored], band: Band) -> str:
    if not scored:
        return "   —"
    ape = statistics.median(abs(math.exp(s.r) - 1) for s in scored)
    inside = sum(band[0] <= math.exp(-s.r) <= band[1] for s in scored) / len(scored)
    return f"{len(scored):>3} rows {ape * 100:5.1f}% inside {inside * 100:5.1f}%"


def table(title: str, scored: Sequence[Scored], band: Band) -> list[str]:
    lines = [f"  {title}"]
    keys: dict[str, Callable[[Scored], str]] = {
        "all": lambda s: "all",
        "framework": lambda s: s.item.case.row.framework,
        "N": lambda s: crows.n_label(s.item.case.work.users),
        "dense/MoE": lambda s: "MoE" if s.item.moe else "dense",
    }
    for name, key in keys.items():
        by: dict[tuple[str, str], list[Scored]] = defaultdict(list)
        for s in scored:
            by[(key(s), s.measure)].append(s)
        for (group, measure), part in sorted(by.items()):
            label = f"{name}={group} {measure}"
            lines.append(f"    {label:<34}{summary(part, band)}")
    return lines


def leave_one_out(
    train: Sequence[Item], catalog: Catalog, x0: np.ndarray, lam: float, key: Callable[[Item], str]
) -> dict[str, np.ndarray]:
    """key -> parameters fitted without the rows of that key (a source, a card)."""
    out = {}
    for k in sorted({key(it) for it in train}):
        rest = [it for it in train if key(it) != k]
        out[k] = fit(rest, catalog, x0, lam) if rest else x0
    return out


def _card(it: Item) -> str:
    return it.case.request.setup.gpu.id


# --- the TOML -------------------------------------------------------------------------------------


# How each engine sizes its KV pool and running batch (not fitted: the engines' documented defaults,
# written into the TOML beside the fitted terms so core/estimator/concurrency.py reads one file).
SERVING = """# KV pool and running batch per engine (not fitted: documented defaults). paged: the engine
# admits sequences while its pool has room (the rest wait); memory_utilization: share of each card it takes
# (vLLM --gpu-memory-utilization, catalogs/estimator.toml [vllm] 0.92; SGLang --mem-fraction-static
# ~0.88, catalogs/frameworks.toml); reserve_gib per card: activations + CUDA graphs besides weights
# and KV (estimator.toml [vllm] activation 1.3 + cuda_graph 0.5); max_num_seqs: the scheduler's cap
# (vLLM's default 256: dennislee22/vLLM-benchmarking logs 'Running: 256 reqs' on an A100 80GB;
# SGLang sizes max_running_requests from memory). llama.cpp allocates its -np slots up front:
# not paged, its maximum is what the usable memory holds.
[serving.default]
paged = false
memory_utilization = 0.95
reserve_gib = 0.5
max_num_seqs = 0

[serving."vllm"]
paged = true
memory_utilization = 0.92
reserve_gib = 1.8
max_num_seqs = 256

[serving."sglang"]
paged = true
memory_utilization = 0.88
reserve_gib = 1.8
max_num_seqs = 0
"""


def render(x: np.ndarray, band: Band, meta: dict[str, str]) -> str:
    v = dict(zip(NAMES, x, strict=True))
    lines = [
        "# Batched decode (N users at once) for core/estimator/concurrency.py, written by",
        "# scripts/fit_concurrency.py: do not edit by hand, rerun it.",
        "# Source: the measured concurrent runs (concurrency > 1) of ../shared/reference/",
        "# measured_calibration_backends.csv and catalogs/measurements/published_extra.csv (each row cites",
        "# its URL), train split only (catalogs/measurements/holdout.toml), ridge toward the prior values.",
        "# batch_eff: share of the calibrated prefill matmul rate a decode batch reaches; overlap: p of the",
        "# soft roofline (mem^p + compute^p)^(1/p); seq_us: microseconds per extra sequence per step;",
        "# routing: a MoE batch of N routes like N^routing independent tokens; band: multipliers on mid,",
        "# the 5-95 % spread of the leave-one-source-out residuals of the aggregate.",
        "",
        "[default]",
        f"batch_eff = {math.exp(v['llama.cpp:log_batch_eff']):.4f}",
        f"overlap = {math.exp(v['log_overlap']):.3f}",
        f"seq_us = {v['llama.cpp:seq_us']:.1f}",
        f"routing = {v['routing']:.3f}",
        "",
        "[default.band]",
        f"low = {band[0]}",
        f"high = {band[1]}",
        "",
    ]
    for g in GROUPS:
        lines += [
            f'[framework."{g}"]',
            f"batch_eff = {math.exp(v[f'{g}:log_batch_eff']):.4f}",
            f"seq_us = {v[f'{g}:seq_us']:.1f}",
            "",
            f'[framework."{g}".moe]',
            f"batch_eff = {math.exp(v[f'{g}:log_batch_eff'] + v[f'{g}:log_moe']):.4f}",
            f"routing = {v['routing']:.3f}",
            "",
        ]
    lines.append(SERVING)
    lines.append("[fit]")
    lines += [f'{k} = "{val}"' for k, val in meta.items()]
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dry-run", action="store_true", help="print the TOML, write nothing")
    # 0.3: the best leave-one-source-out aggregate error of 0.3 / 1 / 3 on train (14.3 / 15.7 / 20.0 %).
    parser.add_argument("--lam", type=float, default=0.3, help="ridge weight toward the prior")
    args = parser.parse_args(argv)
    catalog = default_catalog()
    items, skipped = load_items(catalog)
    train = [it for it in items if it.split == "train"]
    held = [it for it in items if it.split == "held-out"]
    print(
        f"concurrent rows mapped: {len(items)} (train {len(train)}, held-out {len(held)});"
        f" not mapped: {skipped}"
    )
    x0 = prior(catalog)
    x = fit(train, catalog, x0, args.lam)
    for name, a, b in zip(NAMES, x0, x, strict=True):
        print(f"  {name:<24} prior {a:8.3f}  fitted {b:8.3f}")
    cv = leave_one_out(train, catalog, x0, args.lam, lambda it: it.source)
    cv_after = score(train, lambda it: cv[it.source], catalog)
    by_card = leave_one_out(train, catalog, x0, args.lam, _card)
    card_after = score(train, lambda it: by_card[_card(it)], catalog)
    band = band_of(cv_after)
    prior_band = (concurrency.DEFAULT_PARAMS.low, concurrency.DEFAULT_PARAMS.high)
    print(f"band (LOSO 5-95 %): low {band[0]} high {band[1]}")
    sections = (
        ("BEFORE (prior) in-sample train", score(train, lambda it: x0, catalog), prior_band),
        ("BEFORE (prior) held-out", score(held, lambda it: x0, catalog), prior_band),
        ("AFTER in-sample train", score(train, lambda it: x, catalog), band),
        ("AFTER leave-one-source-out train", cv_after, band),
        ("AFTER leave-one-GPU-out train", card_after, band),
        ("AFTER held-out", score(held, lambda it: x, catalog), band),
    )
    for title, scored, b in sections:
        print("\n".join(table(title, scored, b)))
    meta = {
        "rows": f"{len(train)} train, {len(held)} held-out",
        "in_sample": summary(sections[2][1], band),
        "leave_one_source_out": summary(cv_after, band),
        "leave_one_gpu_out": summary(card_after, band),
        "held_out": summary(sections[5][1], band),
    }
    text = render(x, band, meta)
    if args.dry_run:
        print(text)
    else:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
