"""The complexity gate: no new function or method in core/, bot/ or scripts/ above a cyclomatic
complexity of 20 (radon's count, the one the architecture issue measured with).

The functions that were above 20 when the gate tightened are listed in
scripts/complexity_baseline.txt with their score then: each may shrink but not grow, and must stay
at or below 25; a function not listed must be at or below 20. `--write-baseline` rewrites the list
from the tree (after splitting a listed function, so it leaves the list).

    .venv/bin/python scripts/check_complexity.py [--max 20] [--top 10] [--write-baseline]

Prints the most complex functions and exits 1 when one is above its limit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parents[1]
TREES = ("core", "bot", "scripts")
BASELINE = ROOT / "scripts" / "complexity_baseline.txt"
CEILING = 25  # what a listed function may never exceed


def blocks() -> list[tuple[int, str, str]]:
    """(score, "path:line name" to print, "path name" to match the baseline by), most complex first."""
    out: list[tuple[int, str, str]] = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            rel = path.relative_to(ROOT)
            for block in cc_visit(path.read_text(encoding="utf-8")):
                name = f"{block.classname}.{block.name}" if getattr(block, "classname", None) else block.name
                out.append((block.complexity, f"{rel}:{block.lineno} {name}", f"{rel} {name}"))
                for method in getattr(block, "methods", ()):
                    key = f"{block.name}.{method.name}"
                    out.append((method.complexity, f"{rel}:{method.lineno} {key}", f"{rel} {key}"))
    return sorted(out, reverse=True)


def read_baseline() -> dict[str, int]:
    if not BASELINE.exists():
        return {}
    out: dict[str, int] = {}
    for line in BASELINE.read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            score, key = line.split(" ", 1)
            out[key] = int(score)
    return out


def write_baseline(ranked: list[tuple[int, str, str]], limit: int) -> None:
    lines = ["# Functions above the complexity gate's limit when it tightened: each may shrink, not grow."]
    lines += [f"{score} {key}" for score, _where, key in ranked if score > limit]
    BASELINE.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=20)
    ap.add_argument("--top", type=int, default=5)
    ap.add_argument("--write-baseline", action="store_true")
    args = ap.parse_args()
    ranked = blocks()
    if args.write_baseline:
        write_baseline(ranked, args.max)
    baseline = read_baseline()
    over: list[str] = []
    for score, where, key in ranked:
        allowed = min(baseline.get(key, args.max), CEILING)
        if score > allowed:
            over.append(f"{score:>4}  {where}  <- above {allowed}{' (listed)' if key in baseline else ''}")
    for score, where, _key in ranked[: args.top]:
        print(f"{score:>4}  {where}")
    for line in over:
        print(line)
    listed = sum(1 for score, _w, key in ranked if key in baseline and score > args.max)
    print(
        f"complexity: {len(over)} functions above their limit; new code <= {args.max}, "
        f"{listed} older ones listed; largest {ranked[0][0] if ranked else 0}"
    )
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
