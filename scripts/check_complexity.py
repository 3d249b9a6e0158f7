"""The complexity gate: no function or method in core/, bot/ or scripts/ above a cyclomatic
complexity of 25 (radon's count, the one the architecture issue measured with).

    .venv/bin/python scripts/check_complexity.py [--max 25] [--top 10]

Prints the most complex functions and exits 1 when one is above the limit.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parents[1]
TREES = ("core", "bot", "scripts")


def blocks() -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    for tree in TREES:
        for path in sorted((ROOT / tree).rglob("*.py")):
            rel = path.relative_to(ROOT)
            for block in cc_visit(path.read_text(encoding="utf-8")):
                name = f"{block.classname}.{block.name}" if getattr(block, "classname", None) else block.name
                out.append((block.complexity, f"{rel}:{block.lineno} {name}"))
                for method in getattr(block, "methods", ()):
                    out.append((method.complexity, f"{rel}:{method.lineno} {block.name}.{method.name}"))
    return sorted(out, reverse=True)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--max", type=int, default=25)
    ap.add_argument("--top", type=int, default=5)
    args = ap.parse_args()
    ranked = blocks()
    over = [b for b in ranked if b[0] > args.max]
    for score, where in ranked[: max(args.top, len(over))]:
        print(f"{score:>4}  {where}{'  <- above ' + str(args.max) if score > args.max else ''}")
    print(f"complexity: {len(over)} functions above {args.max}; largest {ranked[0][0] if ranked else 0}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
