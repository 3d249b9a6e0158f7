"""Share of the understanding corpus read right (per field and overall), the misses, and timing.

.venv/bin/python scripts/bench_understanding.py [corpus.jsonl ...] [--repeat N] [--regex]

Several corpora are scored one after the other (the issue-21 train and held-out splits:
tests/core/understanding/corpus_issue21*.jsonl); each gets its table by field and language, then
the share read right by intent and by language, and by the class of miss a line tests ("class").

--regex also counts the regular-expression calls one parse makes (searches, matches, subs, finditers
run by the engine; a gated pattern whose words are not in the question costs none: gate.py).
Last, name completion (core/commands/complete.py, the slash-command autocomplete): ms per keystroke
over a typed-name sequence, after the index is built (Discord asks on every keystroke, 3 s to answer).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.understanding.corpus import FIELDS, CaseResult, language_of, load_corpus, score_case  # noqa: E402
from core.understanding.parse import parse_question  # noqa: E402

DEFAULT = Path(__file__).resolve().parents[1] / "tests/core/understanding/corpus.jsonl"


def _share(results: list[CaseResult], name: str) -> str:
    """Right / scored for one field ("-" where no line of this group is scored on it)."""
    scored = [r for r in results if name in r.checked]
    if not scored:
        return f"{'-':>14}"
    right = sum(1 for r in scored if name not in r.wrong)
    return f"{right / len(scored):7.1%} {right:>3}/{len(scored):<3}"


def _table(results: list[CaseResult]) -> None:
    """Share right by field, for all lines and by the question's language."""
    groups = {"all": results}
    for lang in ("en", "zh"):
        groups[lang] = [r for r in results if language_of(r.question) == lang]
    print(f"  {'field':<10} " + " ".join(f"{g + f' ({len(rs)})':>14}" for g, rs in groups.items()))
    for name in FIELDS:
        print(f"  {name:<10} " + " ".join(_share(rs, name) for rs in groups.values()))
    cells = []
    for rs in groups.values():
        right = sum(1 for r in rs if r.right)
        cells.append(f"{right / max(1, len(rs)):7.1%} {right:>3}/{len(rs):<3}")
    print(f"  {'overall':<10} " + " ".join(cells))
    _by(results, "intent")
    _by(results, "class")


def _by(results: list[CaseResult], key: str) -> None:
    """Share right per value of one key of the lines (their expected intent, their class), by language."""
    values = sorted({str(r.case.get(key, "general" if key == "intent" else "-")) for r in results})
    if key == "class" and values == ["-"]:
        return
    print(f"  by {key}:")
    for value in values:
        group = [r for r in results if str(r.case.get(key, "general" if key == "intent" else "-")) == value]
        cells = []
        for lang in ("all", "en", "zh"):
            rs = [r for r in group if lang == "all" or language_of(r.question) == lang]
            right = sum(1 for r in rs if r.right)
            cells.append(f"{right:>3}/{len(rs):<3}" if rs else f"{'-':>7}")
        langs = ("all", "en", "zh")
        print(f"    {value:<14} " + "   ".join(f"{lang} {c}" for lang, c in zip(langs, cells, strict=True)))


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("corpus", nargs="*", type=Path, default=[DEFAULT])
    ap.add_argument("--repeat", type=int, default=20, help="timing passes over the corpus")
    ap.add_argument("--regex", action="store_true", help="count regex calls per parse (cProfile)")
    args = ap.parse_args()

    catalog = default_catalog()
    t0 = time.perf_counter()
    parse_question("warm up 4090 qwen3 32b", catalog)  # builds the indexes once
    build_ms = (time.perf_counter() - t0) * 1e3
    cases: list[dict[str, object]] = []
    results: list[CaseResult] = []
    for path in args.corpus:
        these = load_corpus(path)
        scored = [score_case(case, catalog) for case in these]
        print(f"corpus: {path} ({len(scored)} questions); index build {build_ms:.1f} ms")
        _table(scored)
        cases += these
        results += scored

    misses = [r for r in results if not r.right]
    if misses:
        print("\nmisses:")
        for r in misses:
            detail = "; ".join(f"{k}: want {want!r} got {got!r}" for k, (want, got) in r.wrong.items())
            print(f"  {r.question}\n      {detail}")

    if args.regex:
        _count_regex(cases, catalog)
    times: list[float] = []
    for _ in range(args.repeat):
        for case in cases:
            start = time.perf_counter()
            parse_question(case["q"], catalog)
            times.append(time.perf_counter() - start)
    times.sort()
    p50 = statistics.median(times) * 1e3
    p99 = times[min(len(times) - 1, int(len(times) * 0.99))] * 1e3
    print(
        f"\nparse time over {len(times)} parses: p50 {p50:.3f} ms, p99 {p99:.3f} ms, "
        f"max {times[-1] * 1e3:.3f} ms"
    )
    _completion(catalog, args.repeat)
    return 0


_KEYSTROKES = ("r", "rt", "rtx", "rtx 4", "rtx 40", "qw", "qwen3", "deepsek", "m3 max", "")


def _completion(catalog: Catalog, repeat: int) -> None:
    from core.commands.complete import complete

    complete(catalog, "any", "warm up")  # builds the name index once per catalog
    times: list[float] = []
    for _ in range(repeat):
        for prefix in _KEYSTROKES:
            start = time.perf_counter()
            complete(catalog, "any", prefix)
            times.append(time.perf_counter() - start)
    times.sort()
    print(
        f"name completion over {len(times)} keystrokes: p50 {statistics.median(times) * 1e3:.3f} ms, "
        f"max {times[-1] * 1e3:.3f} ms"
    )


_ENGINE = ("search", "match", "fullmatch", "sub", "finditer", "findall", "split")


def _count_regex(cases: list[dict[str, object]], catalog: object) -> None:
    """Regex engine calls per parse, by method, over one pass of the corpus."""
    import cProfile
    import pstats

    prof = cProfile.Profile()
    prof.enable()
    for case in cases:
        parse_question(str(case["q"]), catalog)  # type: ignore[arg-type]
    prof.disable()
    stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
    counts = {m: 0 for m in _ENGINE}
    for (_file, _line, name), (calls, *_rest) in stats.items():
        for m in _ENGINE:
            if name == f"<method '{m}' of 're.Pattern' objects>":
                counts[m] += calls
    n = max(1, len(cases))
    per = ", ".join(f"{m} {c / n:.1f}" for m, c in counts.items() if c)
    print(f"\nregex calls per parse: {sum(counts.values()) / n:.1f} ({per})")


if __name__ == "__main__":
    raise SystemExit(main())
