"""Benchmark the whole ask path (parse, resolve, estimate, render) and a cold `python -m bot ask`.

    .venv/bin/python scripts/bench_ask.py [--rounds 5] [--cold-runs 5] [--profile]

Per question over tests/core/understanding/corpus.jsonl (or a few built-in questions):
- "first time": the estimate and reply caches and the question's own reading (parse_question's
  memo by text) are cleared before each call, as for a question never seen before (names typed in
  earlier questions are still remembered, as in a running bot);
- "no word seen": also every reading remembered by text (core.understanding.resolve.forget_texts);
- "reading only": parse, the Hub rule, the query and the intent details, no estimate or reply;
- "repeated": the same question again (chat groups repeat combinations), estimate served from cache.
`--clock cpu` times the thread's CPU (time.thread_time), steadier than wall time on a busy machine.
Goals (issue 19): first time p50 <= 0.7 ms, p99 <= 2.5 ms, repeated <= 0.1 ms; cold process <= 0.3 s.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from core.ask.answer import _model_step, answer, clear_caches, query_of  # noqa: E402
from core.ask.intent_answer import with_intent  # noqa: E402
from core.catalog.loader import default_catalog  # noqa: E402
from core.understanding.hub_rule import forget_texts  # noqa: E402
from core.understanding.parse import forget_text_readings, parse_question  # noqa: E402

CLOCK = time.perf_counter

CORPUS = ROOT / "tests" / "core" / "understanding" / "corpus.jsonl"
FALLBACK = [
    "V100 32G 27B 多少 token",
    "双3090 跑 llama3 70b q4 速度",
    "4张4090 跑 qwen3 235b a22b",
    "mac mini m4 pro 64g 跑 llama 3.3 70b",
    "will qwen2.5-coder-32b fit on a 24gb 3090 with 32k ctx",
]


def questions() -> list[str]:
    if CORPUS.exists():
        out = []
        for line in CORPUS.read_text(encoding="utf-8").splitlines():
            if line.strip():
                out.append(json.loads(line)["q"])
        return out
    return FALLBACK


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    k = min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))
    return ordered[k]


def bench(
    qs: list[str],
    rounds: int,
    cached: bool,
    target: str,
    anchors=None,
    forget: bool = False,  # noqa: ANN001
) -> list[float]:
    catalog = default_catalog()
    times: list[float] = []
    for _ in range(rounds):
        for q in qs:
            if not cached:
                clear_caches()
                forget_text_readings()
            if forget:
                forget_texts()
            t0 = CLOCK()
            answer(q, catalog, target=target, anchors=anchors)
            times.append((CLOCK() - t0) * 1000)
    return times


def bench_reading(qs: list[str], rounds: int, target: str) -> list[float]:
    """The question read into its query, nothing estimated or rendered: the understanding's share."""
    catalog = default_catalog()
    times: list[float] = []
    for _ in range(rounds):
        for q in qs:
            t0 = CLOCK()
            parsed, _need = _model_step(parse_question(q, catalog), catalog)
            with_intent(parsed, query_of(parsed, "en", target, catalog), catalog)
            times.append((CLOCK() - t0) * 1000)
    return times


def cold(runs: int) -> list[float]:
    out = []
    cmd = [sys.executable, "-m", "bot", "ask", "V100 32G 27B 多少 token"]
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
        out.append(time.perf_counter() - t0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cold-runs", type=int, default=5)
    ap.add_argument("--target", default="discord")
    ap.add_argument("--profile", action="store_true", help="cProfile one uncached round")
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall", help="wall time or thread CPU time")
    ap.add_argument(
        "--anchors",
        action="store_true",
        help="answer as the bot does: with the published anchors (nearest / measured lines)",
    )
    args = ap.parse_args()
    global CLOCK
    CLOCK = time.thread_time if args.clock == "cpu" else time.perf_counter
    qs = questions()
    catalog = default_catalog()
    anchors = None
    if args.anchors:
        from core.anchors.anchor_index import AnchorIndex
        from core.anchors.seed import as_approved, published_anchors

        anchors = AnchorIndex.from_submissions(as_approved(published_anchors(catalog)), catalog)
    for q in qs:  # warm the per-catalog indexes and caches once, as a running bot has them
        answer(q, catalog, target=args.target, anchors=anchors)
    if args.profile:
        import cProfile
        import pstats

        prof = cProfile.Profile()
        prof.enable()
        bench(qs, 1, False, args.target)
        prof.disable()
        pstats.Stats(prof).sort_stats("cumulative").print_stats(25)
    print(
        f"questions: {len(qs)} ({'corpus' if CORPUS.exists() else 'built-in'}), rounds: {args.rounds}, "
        f"target: {args.target}, anchors: {len(anchors) if anchors is not None else 'none'}"
    )
    runs = (
        ("first time", lambda: bench(qs, args.rounds, False, args.target, anchors)),
        ("no word seen", lambda: bench(qs, args.rounds, False, args.target, anchors, forget=True)),
        ("reading only", lambda: bench_reading(qs, args.rounds, args.target)),
        ("repeated", lambda: bench(qs, args.rounds, True, args.target, anchors)),
    )
    for label, run in runs:
        if label == "repeated":
            bench(qs, 1, True, args.target, anchors)  # seen once, so the caches hold every question
        t = run()
        print(
            f"{label:>18}: p50 {pct(t, 50):.2f} ms  p90 {pct(t, 90):.2f} ms  p99 {pct(t, 99):.2f} ms  "
            f"max {max(t):.2f} ms  ({args.clock})"
        )
    c = cold(args.cold_runs)
    if c:  # --cold-runs 0: only the in-process figures
        print(
            f"cold `python -m bot ask`: median {statistics.median(c):.3f} s "
            f"(min {min(c):.3f}, max {max(c):.3f}, {len(c)} runs)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
