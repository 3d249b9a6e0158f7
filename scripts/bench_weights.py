"""Benchmark per-tensor weight sizes against real file sizes.

(a) published GGUF file sizes, ../shared/reference/gguf_sizes.csv (column size_gib) vs `file_bytes`;
(b) llama-bench's "size" column, measured_calibration.csv model_size_gib vs `total_bytes`.
Each is also scored for the plain bpw table (params_b x Quant.bpw) for comparison. The per-tensor
figure is scored as computed (before a published file replaces it: `computed_total_bytes`), and
"in use" scores what the estimator now uses (the published file where catalogs/published_gguf.csv
has one -- in-sample for the rows that file was built from).
(c) catalogs/published_gguf.csv: GPU weights (the weights column) before / after the published size.

    .venv/bin/python scripts/bench_weights.py [--worst N] [--reference DIR] [--bpw-table]
"""

from __future__ import annotations

import argparse
import csv
import statistics
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.catalog.published_files import catalog_files  # noqa: E402
from core.catalog.quant import Quant  # noqa: E402
from core.estimator.weights import bpw_bytes, gguf_meta_bytes, weight_breakdown  # noqa: E402

DEFAULT_REFERENCE = REPO.parent / "shared" / "reference"
GIB = 2**30

# Names in the reference files that are the same bytes as a catalog quant (ARM repacks of Q4_0).
_SAME_AS = {"q4044": "Q4_0", "q4088": "Q4_0", "q4048": "Q4_0"}


def _norm(name: str) -> str:
    return "".join(ch for ch in name.lower() if ch not in "-_ .")


def quant_index(catalog: Catalog) -> dict[str, Quant]:
    index: dict[str, Quant] = {}
    for quant in catalog.quants.values():
        for name in (quant.id, *quant.aliases):
            index.setdefault(_norm(name), quant)
    for name, qid in _SAME_AS.items():
        index[name] = catalog.quants[qid]
    return index


@dataclass(frozen=True)
class Row:
    label: str
    actual_gib: float
    estimate_gib: float
    bpw_gib: float
    used_gib: float = 0.0  # what the estimator uses now (a published file where there is one)

    @property
    def err(self) -> float:
        return (self.estimate_gib - self.actual_gib) / self.actual_gib * 100

    @property
    def used_err(self) -> float:
        return (self.used_gib - self.actual_gib) / self.actual_gib * 100

    @property
    def bpw_err(self) -> float:
        return (self.bpw_gib - self.actual_gib) / self.actual_gib * 100


def _rows(
    path: Path, catalog: Catalog, size_col: str, quant_col: str, use_file_bytes: bool
) -> tuple[list[Row], int]:
    index = quant_index(catalog)
    rows: list[Row] = []
    skipped = 0
    with path.open(newline="") as fh:
        for rec in csv.DictReader(fh):
            size = (rec.get(size_col) or "").strip()
            model = catalog.models.get((rec.get("model_id") or "").strip())
            quant = index.get(_norm(rec.get(quant_col) or ""))
            if not size or model is None or quant is None or quant.format != "gguf":
                skipped += 1
                continue
            wb = weight_breakdown(model, quant, catalog)
            computed = wb.computed_total_bytes or wb.total_bytes
            meta = wb.file_bytes - wb.total_bytes if wb.published is None else gguf_meta_bytes(model.vocab)
            est = (computed + meta if use_file_bytes else computed) / GIB
            used = (wb.file_bytes if use_file_bytes else wb.total_bytes) / GIB
            label = f"{model.id} {quant.id} ({rec.get('repo') or rec.get('gpu') or ''})"
            rows.append(Row(label, float(size), est, bpw_bytes(model, quant) / GIB, used))
    return rows, skipped


def gguf_rows(reference: Path, catalog: Catalog) -> tuple[list[Row], int]:
    return _rows(reference / "gguf_sizes.csv", catalog, "size_gib", "quant", use_file_bytes=True)


def calibration_rows(reference: Path, catalog: Catalog) -> tuple[list[Row], int]:
    rows, skipped = _rows(
        reference / "measured_calibration.csv", catalog, "model_size_gib", "quant_query", False
    )
    # One row per distinct (model, quant, size): the same llama-bench size repeats per GPU.
    unique: dict[tuple[str, float], Row] = {}
    for row in rows:
        unique.setdefault((row.label.split(" (")[0], row.actual_gib), row)
    return list(unique.values()), skipped


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(int(q * len(ordered)), len(ordered) - 1)]


def summarize(rows: Iterable[Row]) -> dict[str, float]:
    rows = list(rows)
    errs = [abs(r.err) for r in rows]
    bpw = [abs(r.bpw_err) for r in rows]
    used = [abs(r.used_err) for r in rows]
    return {
        "used_median": statistics.median(used),
        "used_p90": _pct(used, 0.9),
        "n": len(rows),
        "median": statistics.median(errs),
        "p90": _pct(errs, 0.9),
        "mean_signed": statistics.fmean(r.err for r in rows),
        "bpw_median": statistics.median(bpw),
        "bpw_p90": _pct(bpw, 0.9),
    }


def _report(title: str, rows: list[Row], skipped: int, worst: int) -> None:
    s = summarize(rows)
    print(f"\n== {title}: {s['n']} rows compared, {skipped} skipped (unknown model/quant or no size)")
    print(
        f"per-tensor: median |err| {s['median']:.2f} %  p90 {s['p90']:.2f} %  "
        f"mean signed {s['mean_signed']:+.2f} %"
    )
    print(f"bpw table : median |err| {s['bpw_median']:.2f} %  p90 {s['bpw_p90']:.2f} %")
    print(f"in use    : median |err| {s['used_median']:.2f} %  p90 {s['used_p90']:.2f} %")
    print(f"worst {worst}:")
    for r in sorted(rows, key=lambda r: -abs(r.err))[:worst]:
        print(
            f"  {r.err:+7.2f} %  est {r.estimate_gib:8.2f}  actual {r.actual_gib:8.2f} GiB"
            f"  (bpw {r.bpw_err:+6.1f} %)  {r.label}"
        )


def published_report(catalog: Catalog, worst: int) -> None:
    """The weights column (GPU bytes with -ngl 99) before and after each curated published file."""
    changes: list[tuple[float, float, float, str]] = []
    unused: list[str] = []
    for model_id, files in sorted(catalog_files().items()):
        model = catalog.models.get(model_id)
        for quant_id, found in sorted(files.items()):
            quant = catalog.quants.get(quant_id)
            if model is None or quant is None:
                unused.append(f"{model_id} {quant_id} (not in the catalog)")
                continue
            wb = weight_breakdown(model, quant, catalog)
            if wb.published is None:
                unused.append(
                    f"{model_id} {quant_id} {found.bytes / GIB:.2f} GiB ({found.repo}): implausible"
                )
                continue
            before = wb.computed_total_bytes - wb.host_bytes_full_offload
            before += wb.output_bytes if wb.output_tied else 0
            after = wb.gpu_bytes_full_offload
            changes.append(
                ((after - before) / before * 100, before / GIB, after / GIB, f"{model_id} {quant_id}")
            )
    deltas = [abs(c[0]) for c in changes]
    print(f"\n== published_gguf.csv: {len(changes)} files in use, {len(unused)} not used")
    if deltas:
        print(
            f"GPU weights after vs before: median |change| {statistics.median(deltas):.2f} %  "
            f"p90 {_pct(deltas, 0.9):.2f} %  mean signed {statistics.fmean(c[0] for c in changes):+.2f} %"
        )
    for c in sorted(changes, key=lambda c: -abs(c[0]))[:worst]:
        print(f"  {c[0]:+7.2f} %  before {c[1]:8.2f}  after {c[2]:8.2f} GiB  {c[3]}")
    for line in unused:
        print(f"  not used: {line}")


def bpw_table(catalog: Catalog, models: tuple[str, ...]) -> None:
    """Effective bpw per gguf quant averaged over reference models: the `bpw` fallback values."""
    for quant in catalog.quants.values():
        vals = []
        for mid in models:
            wb = weight_breakdown(catalog.models[mid], quant, catalog)
            vals.append(wb.total_bytes * 8 / (catalog.models[mid].params_b * 1e9))
        print(f"{quant.id:12s} {statistics.fmean(vals):6.2f}  " + " ".join(f"{v:6.2f}" for v in vals))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--worst", type=int, default=12)
    parser.add_argument("--bpw-table", action="store_true", help="print per-tensor effective bpw")
    args = parser.parse_args(argv)
    catalog = default_catalog()
    if args.bpw_table:
        bpw_table(catalog, ("llama-3.1-8b", "qwen2.5-32b", "llama-3.1-70b"))
        return 0
    rows, skipped = gguf_rows(args.reference, catalog)
    _report("gguf_sizes.csv (file size vs file_bytes)", rows, skipped, args.worst)
    rows, skipped = calibration_rows(args.reference, catalog)
    _report("measured_calibration.csv model_size_gib (vs total_bytes)", rows, skipped, args.worst)
    published_report(catalog, args.worst)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
