"""Score the measured rows the ik_llama.cpp / ik-quant / EXL2-EXL3 work touches, one line each.

    .venv/bin/python scripts/bench_ik_exl.py [--worst N]

Rows: every measurement whose framework is ik_llama.cpp, or whose quant names an ik_llama.cpp type
(IQ2_K_R4, IQ3_K, IQ5_K, Q2_K_R4, ...) or an EXL2/EXL3 bpw. Each is asked exactly as
scripts/bench_accuracy_setups.py asks it (`ask`), so the figures are that benchmark's, restricted to
these rows; run it on a checkout of another commit to compare before / after. Printed per group
(ik framework rows, ik-quant rows, EXL rows) and phase: rows, mapped, median |mid / measured - 1|,
share inside [low, high], split by the holdout file (train = in the calibration fit's sample,
held-out = not in the fit).
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_accuracy_setups as setups  # noqa: E402

from core.catalog.loader import default_catalog  # noqa: E402

_IK_QUANT = re.compile(r"\b(?:IQ\d_K[A-Z]*(?:_R4)?|Q\d_K_R4|IQ\d_[A-Z]+_R\d|IQ1_S_R4)\b")
_EXL = re.compile(r"(?i)\bexl[23]\b[\s_-]*\d")


def group_of(row: setups.Measured) -> str:
    if _EXL.search(row.quant):
        return "EXL2/EXL3 bpw"
    if _IK_QUANT.search(row.quant):
        return "ik-only quant"
    if row.framework == "ik_llama.cpp":
        return "ik_llama.cpp, mainline quant"
    return ""


def _summary(label: str, outcomes: Sequence[setups.Outcome]) -> str:
    scored = [o for o in outcomes if o.scored]
    if not scored:
        return f"{label:48} rows {len(outcomes):3}  mapped   0"
    err = statistics.median(o.error for o in scored) * 100
    inside = sum(o.inside for o in scored) / len(scored) * 100
    return (
        f"{label:48} rows {len(outcomes):3}  mapped {len(scored):3}  "
        f"median |err| {err:5.1f}%  inside {inside:5.1f}%"
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every row")
    args = parser.parse_args(argv)
    rows = [r for r in setups.load_all(setups.DEFAULT_CSVS) if group_of(r)]
    held = setups.load_holdout()
    outcomes = setups.run(rows, held, default_catalog())
    groups: dict[tuple[str, str, str], list[setups.Outcome]] = {}
    for o in outcomes:
        groups.setdefault((group_of(o.row), o.row.phase, o.split), []).append(o)
        groups.setdefault((group_of(o.row), o.row.phase, "all"), []).append(o)
    for key in sorted(groups):
        print(_summary(" / ".join(key), groups[key]))
    reasons: dict[str, int] = {}
    for o in outcomes:
        if not o.scored:
            reasons[o.reason] = reasons.get(o.reason, 0) + 1
    for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
        print(f"  not scored ({n}): {reason}")
    if args.rows:
        for o in outcomes:
            r = o.row
            fig = f"{o.low:8.1f} {o.mid:8.1f} {o.high:8.1f}" if o.scored else o.reason
            print(f"{o.split:8} {r.phase:7} {r.gpu[:40]:40} {r.model[:22]:22} {r.quant[:26]:26} "
                  f"{r.framework[:12]:12} {r.tps:8.1f} | {fig}")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
