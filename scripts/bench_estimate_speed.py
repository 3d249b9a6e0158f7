"""Time the estimator's own CPU work (prints figures; never a test).

    .venv/bin/python scripts/bench_estimate_speed.py

One full default grid (every ladder quant × every default context, with framework commands) for a
spread of setups, timed after a warm-up: p50 / p99 per grid, and per row.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.catalog.loader import default_catalog  # noqa: E402
from core.estimate_request import EstimateQuery, resolve_request  # noqa: E402
from core.estimator.estimate import estimate  # noqa: E402

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


if __name__ == "__main__":
    main()
