"""Time the estimator's own CPU work (prints figures; never a test).

    .venv/bin/python scripts/bench_estimate_speed.py

One full default grid (every ladder quant × every default context, with framework commands) for a
spread of setups, timed after a warm-up: p50 / p99 per grid, and per row. Then two of its parts:
every framework judged for one setup (`framework_options`, with commands) and a cached
`weight_breakdown` (the estimator asks it tens of times per grid).
"""

from __future__ import annotations

import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.ask.estimate_request import EstimateQuery, resolve_request  # noqa: E402
from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.estimator.estimate import estimate  # noqa: E402
from core.estimator.frameworks import FrameworkQuery, framework_options  # noqa: E402
from core.estimator.weights import weight_breakdown  # noqa: E402

SETUPS = [
    ("V100 32G", "gemma 3 27b", 1),
    ("4090", "llama 3.3 70b", 1),
    ("3090", "qwen3 32b", 2),
    ("M2 Ultra", "deepseek r1", 1),
    ("4060 Ti 16G", "qwen3 30b a3b", 1),
    ("H100", "gpt-oss 120b", 1),
    ("P40", "qwq 32b", 1),
    ("Strix Halo", "glm 4.5 air", 1),
    ("A100 80G", "llama 3.1 8b", 4),
]


def main() -> None:
    catalog = default_catalog()
    requests = [resolve_request(EstimateQuery(gpu=g, model=m, count=c), catalog) for g, m, c in SETUPS]
    for r in requests:  # warm caches (weights, indexes) as a running bot has them
        estimate(r, catalog)
    grid_ms, rows = [], 0
    for _ in range(60):
        for r in requests:
            t0 = time.perf_counter()
            est = estimate(r, catalog)
            grid_ms.append((time.perf_counter() - t0) * 1000)
            rows += len(est.rows)
    grid_ms.sort()
    p99 = grid_ms[int(len(grid_ms) * 0.99) - 1]
    per_row = sum(grid_ms) / rows * 1000
    print(f"grids timed: {len(grid_ms)}  rows per grid (mean): {rows / len(grid_ms):.1f}")
    p50 = statistics.median(grid_ms)
    print(f"full default grid: p50 {p50:.3f} ms  p99 {p99:.3f} ms  ({per_row:.1f} µs per row)")
    _parts(catalog)


def _per_call_us(call: Callable[[], object], runs: int) -> float:
    call()  # warm
    start = time.perf_counter()
    for _ in range(runs):
        call()
    return (time.perf_counter() - start) / runs * 1e6


def _parts(catalog: Catalog) -> None:
    gpu, model = catalog.gpus["tesla-v100-32g-sxm2"], catalog.models["gemma-3-27b"]
    q = FrameworkQuery(gpu=gpu, model=model, quant=catalog.quants["Q4_K_M"], context=32768, kv_cache="q8_0")
    options_ms = _per_call_us(lambda: framework_options(q, catalog), 200) / 1000
    print(f"framework_options (all {len(catalog.frameworks)} frameworks): {options_ms:.3f} ms per call")
    r1, q4 = catalog.models["deepseek-r1"], catalog.quants["Q4_K_M"]
    print(f"weight_breakdown, cached: {_per_call_us(lambda: weight_breakdown(r1, q4, catalog), 1000):.1f} µs")


if __name__ == "__main__":
    main()
