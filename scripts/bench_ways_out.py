"""Do the ways out come from the same engine as the table? (issue 20: "way-out figures come from the
same engine as the table"). For every row of a set of questions whose way out runs here (a quantized
KV cache, a shorter context, a lower quant, MoE experts in RAM, layers offloaded, more cards), the
configuration the way out describes is priced again as a plain request (`estimate` with that KV type,
context, quant, `offload="experts"` + its layer count, `offload="layers"` + its GPU layers, or that many
cards) and its decode mid compared with the way out's own figure.

    .venv/bin/python scripts/bench_ways_out.py

Prints, per kind, how many ways out were re-priced and how many agree within 1 % (the rest listed).
"""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.ask.answer import answer, estimate_for  # noqa: E402
from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.estimator.estimate import EstimateRequest, Row, estimate  # noqa: E402
from core.estimator.ways_out.remedy import Remedy  # noqa: E402
from core.estimator.ways_out.reprice import as_request  # noqa: E402

QUESTIONS = [
    "4090 qwen3 32b q4 32k",
    "3060 12g 能跑 qwen3 30b a3b 吗 内存 32g",
    "glm 4.5 air 4090 128g ddr5",
    "4070 laptop qwen3 8b",
    "qwen 3 32b on 4090 at 128k context with q8 kv",
    "3090 llama 3.3 70b 64gb ram",
    "4060 8g qwen3-235b-a22b 128g内存",
    "3090+3060 qwen2.5 32b q4",
    "4080 16g gemma 3 27b 128k",
    "5090 gpt-oss-120b 96gb ram",
    "m3 max 64gb qwen3 32b",
    "2x 3090 llama 3.1 70b q8",
    "3060 12g qwen3 14b 128k",
    "rx 7900 xtx qwen3 32b 64k",
    "a100 80g deepseek r1",
]


def _repriced(request: EstimateRequest, row: Row, remedy: Remedy, catalog: Catalog) -> float | None:
    """The decode mid of the configuration `remedy` describes, priced as a plain request."""
    one = as_request(request, row, remedy, catalog)
    if one is None:
        return None
    got = estimate(one, catalog).rows[0]
    return got.decode_tps.mid if got.decode_tps is not None else None


def main() -> None:
    catalog = default_catalog()
    seen: dict[str, int] = defaultdict(int)
    agree: dict[str, int] = defaultdict(int)
    off: list[str] = []
    for q in QUESTIONS:
        reply = answer(q, catalog)
        if reply.query is None or not reply.query.complete:
            continue
        est = estimate_for(reply.query, catalog)
        for row in est.rows:
            if row.status != "no_fit" or row.remedy is None:
                continue
            for remedy in (row.remedy, *row.remedy.alternatives):
                if not remedy.decode_mid:
                    continue
                try:
                    again = _repriced(est.request, row, remedy, catalog)
                except Exception as exc:  # noqa: BLE001 - a benchmark reports, it doesn't stop
                    off.append(f"{q} | {row.quant} {row.context} {remedy.kind}: {exc}")
                    continue
                if again is None:
                    continue
                seen[remedy.kind] += 1
                if abs(again / remedy.decode_mid - 1) <= 0.01:
                    agree[remedy.kind] += 1
                else:
                    off.append(
                        f"{q} | {row.quant} {row.context} {remedy.kind}: way out {remedy.decode_mid:.1f}"
                        f" vs re-priced {again:.1f}"
                    )
    total = sum(seen.values())
    print(f"ways out re-priced: {total}, agreeing within 1 %: {sum(agree.values())}")
    for kind in sorted(seen):
        print(f"  {kind:15} {agree[kind]:4}/{seen[kind]:<4}")
    for line in off[:40]:
        print("  off:", line)


if __name__ == "__main__":
    main()
