"""Fit the multi-GPU split terms (core/estimator/multi_gpu.py) and write catalogs/multi_gpu_fit.toml.

    .venv/bin/python scripts/fit_multi_gpu.py            # fit on the train split, report, write
    .venv/bin/python scripts/fit_multi_gpu.py --dry-run  # report only

Rows: the measurement files' single-stream runs fully on 2+ cards (scripts/bench_accuracy_setups.py
reads them and asks the estimator exactly as it scores them, with the split mode and link the rows'
notes say). Fitted on the sources NOT held out (catalogs/measurements/holdout.toml), each term only
where it has `MIN_ROWS` rows, one term at a time on top of the previous ones:
1. per framework whose runs split by tensor (llama.cpp `-sm tensor`, ik_llama.cpp `-sm graph`): its
   sync cost per layer over vLLM's (calibration.toml [multi_gpu] tp_us_per_layer), on decode rows;
2. per framework: the share of each card's prefill rate a tensor split keeps, on prefill rows;
3. per link other than PCIe (NVLink, xGMI, network): its sync cost over PCIe's, on decode rows.
Reported: median |error| in-sample, leave-one-source-out (each source's rows priced by a fit on the
others) and on the held-out rows, before (priors) and after.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "scripts")]

import bench_accuracy_setups as bench  # noqa: E402

from core.catalog.loader import Catalog, default_catalog  # noqa: E402

OUT = REPO / "catalogs" / "multi_gpu_fit.toml"
MIN_ROWS = 3
SYNC_GRID = np.exp(np.linspace(math.log(0.05), math.log(3.0), 36))
PREFILL_GRID = np.linspace(0.1, 1.0, 19)
LINK_GRID = np.exp(np.linspace(math.log(0.1), math.log(6.0), 30))
ESTIMATOR_NAME = {
    "llama.cpp": "llama.cpp",
    "ik_llama.cpp": "ik_llama.cpp",
    "vLLM": "vllm",
    "SGLang": "sglang",
}

Fit = dict[str, dict[str, float]]


def multi_rows() -> tuple[list[bench.Measured], set[str]]:
    rows = [
        r
        for r in bench.load_all(bench.DEFAULT_CSVS)
        if r.gpu_count > 1 and r.setup == "fully on GPU" and r.phase in ("decode", "prefill")
    ]
    return rows, bench.load_holdout(bench.HOLDOUT_PATH)


def with_fit(catalog: Catalog, fit: Fit) -> Catalog:
    """The catalog with `fit` as its multi_gpu_fit.toml (a new identity: per-catalog caches start empty)."""
    return dataclasses.replace(catalog, tables={**catalog.tables, "multi_gpu_fit": {"fit": fit}})


def errors(rows: Sequence[bench.Measured], held: set[str], catalog: Catalog) -> list[float]:
    """log(estimate / measured) of every row the estimator prices."""
    out = []
    for o in bench.run(list(rows), held, catalog):
        if o.scored:
            out.append(math.log(o.mid / o.row.tps))
    return out


def medape(res: Sequence[float]) -> str:
    return f"{np.median([abs(math.exp(r) - 1) for r in res]) * 100:.1f}% (n={len(res)})" if res else "—"


def _loss(res: Sequence[float]) -> float:
    return float(sum(math.sqrt(1 + (r / 0.1) ** 2) - 1 for r in res)) if res else math.inf


def best_value(
    rows: Sequence[bench.Measured],
    held: set[str],
    catalog: Catalog,
    fit: Fit,
    term: str,
    key: str,
    grid: np.ndarray,
) -> float:
    def trial(value: float) -> float:
        f = {**fit, term: {**fit.get(term, {}), key: float(value)}}
        return _loss(errors(rows, held, with_fit(catalog, f)))

    return float(min(grid, key=trial))


Selector = Callable[[bench.Measured], bool]


def _tensor_decode(names: tuple[str, ...]) -> Selector:
    return lambda r: r.framework in names and bench.row_split(r) == "tensor" and r.phase == "decode"


def terms() -> list[tuple[str, str, np.ndarray, tuple[Selector, ...]]]:
    """(term, key, grid, the rows that fit it: the first selector with MIN_ROWS priced rows), in the
    order they are fitted."""
    out: list[tuple[str, str, np.ndarray, tuple[Selector, ...]]] = [
        ("sync_factor", "llama.cpp", SYNC_GRID, (_tensor_decode(("llama.cpp",)),)),
        # ik_llama.cpp's graph split and llama.cpp's tensor split are both ggml graph splits reducing
        # twice a layer: with too few ik rows of its own, ik's factor is fitted on both engines' rows.
        (
            "sync_factor",
            "ik_llama.cpp",
            SYNC_GRID,
            (_tensor_decode(("ik_llama.cpp",)), _tensor_decode(("ik_llama.cpp", "llama.cpp"))),
        ),
    ]
    for framework in ("llama.cpp", "ik_llama.cpp", "vLLM", "SGLang"):
        pick: Selector = lambda r, f=framework: r.framework == f and _tensor(r) and r.phase == "prefill"  # noqa: E731
        out.append(("prefill_eff", ESTIMATOR_NAME[framework], PREFILL_GRID, (pick,)))
    for link in ("nvlink", "xgmi", "network"):
        pick = lambda r, k=link: bench.row_link(r) == k and _tensor(r) and r.phase == "decode"  # noqa: E731
        out.append(("link_sync", link, LINK_GRID, (pick,)))
    return out


def _tensor(r: bench.Measured) -> bool:
    split = bench.row_split(r)
    return split == "tensor" or (split is None and r.framework in ("vLLM", "SGLang"))


def fit_terms(train: Sequence[bench.Measured], held: set[str], catalog: Catalog, verbose: bool) -> Fit:
    fit: Fit = {}
    for term, key, grid, picks in terms():
        rows: list[bench.Measured] = []
        priced: list[float] = []
        for pick in picks:
            rows = [r for r in train if pick(r)]
            priced = errors(rows, held, with_fit(catalog, fit))
            if len(priced) >= MIN_ROWS:
                break
        if len(priced) < MIN_ROWS:
            if verbose:
                print(f"  {term}.{key}: {len(priced)} rows, not fitted (prior stands)")
            continue
        value = best_value(rows, held, catalog, fit, term, key, grid)
        fit = {**fit, term: {**fit.get(term, {}), key: round(value, 3)}}
        if verbose:
            after = errors(rows, held, with_fit(catalog, fit))
            print(f"  {term}.{key} = {value:.3f} on {len(priced)} rows: {medape(priced)} -> {medape(after)}")
    return fit


def loso(train: Sequence[bench.Measured], held: set[str], catalog: Catalog) -> list[float]:
    """Each source's rows priced by a fit on the other sources' rows."""
    out: list[float] = []
    for source in sorted({bench.source_key(r.source) for r in train}):
        inside = [r for r in train if bench.source_key(r.source) == source]
        rest = [r for r in train if bench.source_key(r.source) != source]
        out += errors(inside, held, with_fit(catalog, fit_terms(rest, held, catalog, False)))
    return out


def render(fit: Fit, n_train: int, n_held: int) -> str:
    lines = [
        "# Multi-GPU split terms (core/estimator/multi_gpu.py), written by scripts/fit_multi_gpu.py on",
        "# the train split of the multi-card single-stream rows (catalogs/measurements/holdout.toml).",
        "# Do not edit by hand: rerun the script. Priors are in speed.toml [multi_gpu].",
        "",
        "[meta]",
        f"train_rows = {n_train}",
        f"held_out_rows = {n_held}",
        "",
    ]
    for term in ("sync_factor", "prefill_eff", "link_sync"):
        lines.append(f"[fit.{term}]")
        for key, value in sorted(fit.get(term, {}).items()):
            lines.append(f'"{key}" = {value}')
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--no-loso", action="store_true", help="skip leave-one-source-out (faster)")
    args = parser.parse_args(argv)
    catalog = default_catalog()
    rows, held = multi_rows()
    train = [r for r in rows if bench.source_key(r.source) not in held]
    test = [r for r in rows if bench.source_key(r.source) in held]
    print(f"multi-card single-stream rows: train {len(train)}, held-out {len(test)}")
    prior = with_fit(catalog, {})
    fit = fit_terms(train, held, catalog, True)
    fitted = with_fit(catalog, fit)
    for phase in ("decode", "prefill"):
        tr = [r for r in train if r.phase == phase]
        te = [r for r in test if r.phase == phase]
        before, after = medape(errors(tr, held, prior)), medape(errors(tr, held, fitted))
        held_before, held_after = medape(errors(te, held, prior)), medape(errors(te, held, fitted))
        print(f"{phase}: train in-sample {before} -> {after}; held-out {held_before} -> {held_after}")
        if not args.no_loso:
            print(f"{phase}: train leave-one-source-out {medape(loso(tr, held, catalog))}")
    text = render(fit, len(train), len(test))
    if args.dry_run:
        print(text)
    else:
        OUT.write_text(text, encoding="utf-8")
        print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
