"""Score the shipped estimator against real measurements (prints figures; never a test).

    .venv/bin/python scripts/bench_accuracy.py [--csv PATH] [--all] [--worst N]

Every row of the calibration CSV (fully-on-GPU llama.cpp, one card, clean rows) is asked exactly
as a user would ask it — by the names in its gpu_query / model_query / quant_query columns,
through the same path as `python -m bot estimate` — at the row's depth and prompt length. Prints:
decode median absolute % error of mid, share of measurements inside [low, high], median band
half-width, prefill error, and two baselines for scale (the seed page's method and a flat 0.55
efficiency on weights alone). `--csv` scores another file with the same columns (e.g. held-out data).
Each row is priced on the backend its `backend` column names (`estimate --backend`);
`--chosen-backend` prices it on the estimator's own choice instead.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import calibration_data  # noqa: E402
from calibration_data import Row, load_rows  # noqa: E402

from core.ask.estimate_request import EstimateQuery, QueryError, resolve_request  # noqa: E402
from core.catalog.loader import default_catalog  # noqa: E402
from core.estimator.estimate import EstimateRequest, estimate  # noqa: E402
from core.estimator.estimate import Row as EstimateRow  # noqa: E402
from core.estimator.memory import GIB  # noqa: E402
from core.estimator.weights import weight_breakdown  # noqa: E402


def ask(row: Row, row_backend: bool = True) -> tuple[EstimateRequest, EstimateRow]:
    """Ask the estimate for one row, on the backend the row was measured on (`row_backend`; the
    estimator's own choice where the row names none or the card check refuses it) or on the
    estimator's choice."""
    ctx = max(4096, row.depth + max(row.prompt, 512))
    query = EstimateQuery(
        gpu=row.gpu_query or row.gpu_id,
        model=row.model_query or row.model_id,
        quant=[row.quant],
        ctx=[ctx],
        depth=row.depth,
        prompt=max(row.prompt, 1),
        os="linux",
        framework="llama.cpp",
        backend=(row.backend or None) if row_backend else None,
    )
    catalog = default_catalog()
    try:
        request = resolve_request(query, catalog)
    except QueryError:
        if query.backend is None:
            raise
        request = resolve_request(query.model_copy(update={"backend": None}), catalog)
    return request, estimate(request, catalog).rows[0]


def pct(x: float) -> str:
    return f"{x * 100:.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--csv", default=None, help="another CSV with the calibration columns")
    parser.add_argument(
        "--all", action="store_true", help="include flagged rows (APPROXIMATE, crowd-sourced)"
    )
    parser.add_argument("--worst", type=int, default=8)
    parser.add_argument(
        "--chosen-backend",
        action="store_true",
        help="price every row on the backend the estimator chooses, not the one it was measured on",
    )
    args = parser.parse_args()
    if args.csv:
        calibration_data.CALIBRATION_CSV = Path(args.csv)
    rows = load_rows(include_flagged=args.all)
    catalog = default_catalog()
    tg_err, tg_in, tg_half, seed_err, seed_in, flat_err, pp_err, unresolved = [], [], [], [], [], [], [], []
    worst = []
    t0 = time.perf_counter()
    for row in rows:
        try:
            request, est = ask(row, row_backend=not args.chosen_backend)
        except QueryError as exc:
            unresolved.append(f"{row.gpu_query}/{row.model_query}/{row.quant}: {exc}")
            continue
        if est.status == "no_fit" or est.decode_tps is None:
            unresolved.append(f"{row.gpu_query}/{row.model_query}/{row.quant}: estimated as not fitting")
            continue
        if row.test == "tg":
            d = est.decode_tps
            err = abs(d.mid / row.tps - 1)
            tg_err.append(err)
            tg_in.append(d.low <= row.tps <= d.high)
            tg_half.append((d.high - d.low) / 2 / d.mid)
            worst.append((err, row, d.mid))
            # Baselines: bandwidth x 0.585..0.835 / (weights + KV) (seed page), flat 0.55 on weights.
            w = weight_breakdown(request.model, catalog.quants[est.quant], catalog).total_bytes
            kv = est.kv_gib * GIB * (row.depth / est.context if est.context else 0)
            bw = request.setup.gpu.bandwidth_gbs * 1e9
            lo, hi = bw * 0.585 / (w + kv), bw * 0.835 / (w + kv)
            seed_err.append(abs((lo + hi) / 2 / row.tps - 1))
            seed_in.append(lo <= row.tps <= hi)
            flat_err.append(abs(bw * 0.55 / w / row.tps - 1))
        elif est.prefill_tps is not None:
            pp_err.append(abs(est.prefill_tps.mid / row.tps - 1))
    elapsed = time.perf_counter() - t0
    print(f"rows: {len(rows)} scored, {len(unresolved)} not scored")
    if tg_err:
        print(
            f"decode  n={len(tg_err)}  median APE {pct(statistics.median(tg_err))}  "
            f"inside [low, high] {pct(sum(tg_in) / len(tg_in))}  "
            f"median half-width {pct(statistics.median(tg_half))}"
        )
        print(
            f"  seed method   median APE {pct(statistics.median(seed_err))}  "
            f"inside its band {pct(sum(seed_in) / len(seed_in))}"
        )
        print(f"  flat 0.55     median APE {pct(statistics.median(flat_err))}")
    if pp_err:
        print(f"prefill n={len(pp_err)}  median APE {pct(statistics.median(pp_err))}")
    print(f"time: {elapsed * 1000 / max(1, len(rows)):.2f} ms per row (cold caches included)")
    worst.sort(key=lambda x: -x[0])
    for err, row, mid in worst[: args.worst]:
        print(
            f"  worst {pct(err):>7} {row.gpu_query} | {row.model_query} | {row.quant} | d={row.depth} "
            f"measured {row.tps:g} est {mid:g} ({row.source[:50]})"
        )
    for line in unresolved[: args.worst]:
        print("  not scored:", line)


if __name__ == "__main__":
    main()
