"""List the measured rows bench_accuracy_setups.py cannot score because a name is unknown, grouped by
reason (card, model, quant, framework) and name, most rows first: what the catalog should learn next.

    .venv/bin/python scripts/list_unmapped.py
"""

from __future__ import annotations

import sys
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import bench_accuracy_setups as bench  # noqa: E402

from core.catalog.loader import default_catalog  # noqa: E402


def main() -> int:
    catalog = default_catalog()
    by_reason: defaultdict[str, Counter[str]] = defaultdict(Counter)
    for row in bench.load_all(bench.DEFAULT_CSVS):
        if bench._pre_check(row, catalog):
            continue
        try:
            query = bench._query(row, catalog)
        except ValueError as exc:  # a row the request model refuses (pydantic): say so, keep listing
            query = f"request refused: {str(exc).splitlines()[-2].strip()}"
        if not isinstance(query, str):
            continue
        name = {
            "unknown card": row.gpu,
            "unknown model": f"{row.model} ({row.params_b})",
            "unknown quant": row.quant,
            "framework unknown to the estimator": row.framework_raw,
        }.get(query, query)
        by_reason[query][name] += 1
    for reason, names in by_reason.items():
        print(f"== {reason} ({sum(names.values())} rows)")
        for name, n in names.most_common():
            print(f"  {n:3d} {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
