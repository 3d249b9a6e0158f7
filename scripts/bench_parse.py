"""The worst time to read a `/submit` over pathological shapes: ms and ms per KB, as a table.

.venv/bin/python scripts/bench_parse.py [--kb 60] [--repeat 1] [--only NAME] [--max-ms-per-kb X]

Each shape is built to about `--kb` kilobytes and read the way the bot reads a `/submit` (the full
`read_submission`: fields, paste, sentence, checks). A linear parser keeps ms/KB flat across shapes;
one quadratic pattern shows up as a row hundreds of times slower than the rest. With
--max-ms-per-kb the exit status is 1 when the worst shape is slower than that (for CI).
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.community.validate import read_submission  # noqa: E402

_BENCH_ROW = "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 150.12 ± 0.50 |\n"
_BENCH_HEAD = "| model | size | params | backend | ngl | test | t/s |\n|---|---:|---:|---|--:|---:|---:|\n"


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _noise(size: int) -> str:
    rng = random.Random(13)
    alphabet = "abcxyz0123456789 =|:.,-_()[]{}<>'\"\n\t@#*`~/\\雙跑每秒"
    return "".join(rng.choice(alphabet) for _ in range(size))


def _wide_table(size: int) -> str:
    cols = max(8, size // 8)
    header = "| model | test | t/s |" + " c |" * cols + "\n"
    return (header + "|" + "---|" * (cols + 3) + "\n" + "| x | tg128 | 1 |" + " 1 |" * cols + "\n")[:size]


SHAPES: dict[str, Callable[[int], str]] = {
    "blank lines": lambda n: "\n" * n,
    "spaces then newline": lambda n: _repeat(" \n", n),
    "spaces": lambda n: " " * n,
    "tabs and CR": lambda n: _repeat("\t\r\n", n),
    "= run": lambda n: "=" * n,
    "= and spaces": lambda n: _repeat("= ", n),
    "= lines": lambda n: _repeat("=" * 50 + "\n", n),
    "serving header, no end": lambda n: _repeat("==== Serving Benchmark Result ", n),
    "| many columns": _wide_table,
    "| run": lambda n: "|" * n,
    "bench rows": lambda n: _BENCH_HEAD + _repeat(_BENCH_ROW, n - len(_BENCH_HEAD)),
    "bench, huge model cell": lambda n: (
        _BENCH_HEAD + _BENCH_ROW.replace("llama 8B", "llama 8B" + " x" * (n // 2))
    ),
    "card counts in gpu=": lambda n: "gpu=" + _repeat("2x", n) + " model=" + _repeat("+3090", n // 2),
    "digit run": lambda n: "1" * n,
    "digits and dots": lambda n: _repeat("1.", n),
    "nested ( )": lambda n: "(" * (n // 2) + ")" * (n // 2),
    "nested [ ]": lambda n: "[" * (n // 2) + "]" * (n // 2),
    "mixed CJK": lambda n: _repeat("双3090 跑 llama3 70b q4 每秒 17 token ", n),
    "key= run": lambda n: _repeat("gpu=", n),
    "unclosed quote": lambda n: 'gpu="' + "x " * (n // 2),
    "log prefixes": lambda n: _repeat("ggml_cuda_init", n),
    "eval time, no end": lambda n: _repeat("eval time =   1.0 ms /  1 tokens (", n),
    "eval rate lines": lambda n: _repeat("eval rate: 1", n),
    "Device lines": lambda n: _repeat("  Device 0: NVIDIA GeForce RTX 4090", n),
    "ollama run": lambda n: _repeat("ollama run ", n),
    "--model": lambda n: _repeat("--model ", n),
    "noise": _noise,
    # The shapes tests/core/community/test_pasted.py reads (quadratic patterns took 20-50 s on them).
    "= run then a title": lambda n: "=" * n + " Serving Benchmark Result",
    "blank lines after a title": lambda n: "=== Serving Benchmark Result ===" + "\n" * n,
    "blanks after eval time": lambda n: "eval time" + "\n" * n,
    "vulkan line of spaces": lambda n: "ggml_vulkan: 0 = " + " " * n,
    "file type of spaces": lambda n: "file type = x" + " " * n + "y",
}


def _time(text: str, catalog: object, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        read_submission(text, catalog)  # type: ignore[arg-type]
        best = min(best, time.perf_counter() - t0)
    return best * 1e3


def _one_line(catalog: Catalog, runs: int = 200) -> None:
    """A one-line `/submit` (the common case), after a warm-up: the per-read figure."""
    line = 'gpu="RTX 4090" model="llama 3 8b" quant=Q4_K_M ctx=4096 decode=128.5 framework=llama.cpp'
    read_submission(line, catalog)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        read_submission(line, catalog)
        times.append((time.perf_counter() - start) * 1000)
    times.sort()
    print(f"one-line /submit: p50 {times[len(times) // 2]:.2f} ms  p99 {times[int(runs * 0.99) - 1]:.2f} ms")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--kb", type=float, default=60.0, help="size of each input in KB")
    ap.add_argument("--repeat", type=int, default=1, help="runs per shape (the fastest counts)")
    ap.add_argument("--only", default="", help="run the shapes whose name contains this")
    ap.add_argument("--max-ms-per-kb", type=float, default=None, help="fail when the worst is above this")
    args = ap.parse_args()
    catalog = default_catalog()
    read_submission("4090 qwen3 8b q4_k_m 100 t/s", catalog)  # a sentence: builds the name indexes
    size = int(args.kb * 1000)
    print(f"{'shape':<26} {'KB':>6} {'ms':>10} {'ms/KB':>8}")
    worst = ("", 0.0)
    for name, build in SHAPES.items():
        if args.only and args.only not in name:
            continue
        text = build(size)
        kb = len(text.encode()) / 1000
        ms = _time(text, catalog, args.repeat)
        per_kb = ms / kb if kb else 0.0
        print(f"{name:<26} {kb:6.1f} {ms:10.1f} {per_kb:8.2f}", flush=True)
        if per_kb > worst[1]:
            worst = (name, per_kb)
    print(f"worst: {worst[0]} at {worst[1]:.2f} ms/KB")
    _one_line(catalog)
    return 1 if args.max_ms_per_kb is not None and worst[1] > args.max_ms_per_kb else 0


if __name__ == "__main__":
    raise SystemExit(main())
