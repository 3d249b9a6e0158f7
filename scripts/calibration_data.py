"""Read ../shared/reference/measured_calibration.csv into rows the speed model can be fitted on.

Shared by `fit_calibration.py` (which writes catalogs/calibration.toml) and `bench_accuracy.py`
(which scores the shipped estimator), so both agree on which rows count and what they mean.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from pathlib import Path

from core.catalog.loader import Catalog  # the scripts put the repository on sys.path first

REPO = Path(__file__).resolve().parents[1]
REFERENCE = REPO.parent / "shared" / "reference"
CALIBRATION_CSV = REFERENCE / "measured_calibration.csv"

# Rows whose number is not a clean single-stream measurement (see MEASURED.md).
EXCLUDE_FLAGS = ("APPROXIMATE", "ANOMALY", "QUESTIONABLE", "CONVERTED", "e2e")


@dataclass(frozen=True)
class Row:
    gpu_id: str
    gpu_query: str
    model_id: str
    model_query: str
    quant: str  # as the user would type it (quant_query)
    backend: str  # cuda / rocm / vulkan / metal / sycl
    test: str  # "tg" or "pp"
    depth: int  # tokens in the cache when the measured phase starts (average depth for tgN)
    prompt: int  # pp: prompt length
    tps: float
    size_gib: float | None  # llama-bench's model size, when printed
    flash_attn: str
    source: str
    date: str
    notes: str


def backend_of(raw: str, gpu_id: str) -> str:
    """The llama.cpp backend named in a source's backend column (Apple rows: Metal)."""
    r = raw.lower()
    for key in ("cuda", "rocm", "vulkan", "metal", "sycl"):
        if key in r:
            return key
    if "hip" in r:
        return "rocm"
    if gpu_id.startswith("apple"):
        return "metal"
    return ""


def _norm(text: str) -> str:
    return text.strip().upper().replace("-", "_").replace(" ", "_")


def resolve_quant_id(text: str, catalog: Catalog) -> str | None:
    """Exact quant id or alias (case-insensitive); None when unknown. The reference tables spell
    quants canonically; free text goes through core.understanding's resolver instead."""
    key = _norm(text)
    for quant in catalog.quants.values():
        if _norm(quant.id) == key or any(_norm(a) == key for a in quant.aliases):
            return quant.id
    return None


def _test_lengths(test: str, notes: str, depth: int) -> tuple[int, int]:
    """(depth, prompt) for the row: tgN averages over N generated tokens, ppN@dD starts at D."""
    m = re.search(r"test=\s*(tg|pp)\s*(\d+)(?:\s*@\s*d(\d+))?", notes)
    if not m:
        return depth, 512
    n = int(m.group(2))
    d = int(m.group(3)) if m.group(3) else depth
    if test == "tg":
        return d + n // 2, 0
    return d, n


def load_rows(include_flagged: bool = False) -> list[Row]:
    rows: list[Row] = []
    with CALIBRATION_CSV.open(newline="", encoding="utf-8") as fh:
        for r in csv.DictReader(fh):
            if r["gpu_count"] != "1" or not r["framework"].startswith("llama.cpp"):
                continue
            if r["test"] not in ("tg", "pp") or not r["gpu_id"] or not r["model_id"]:
                continue
            flagged = any(flag in r["notes"] for flag in EXCLUDE_FLAGS) or "crowd-sourced" in r["notes"]
            if flagged and not include_flagged:
                continue
            backend = backend_of(r["backend"], r["gpu_id"])
            if not backend:
                continue
            depth0 = int(r["context_or_depth"] or 0)
            depth, prompt = _test_lengths(r["test"], r["notes"], depth0)
            rows.append(
                Row(
                    gpu_id=r["gpu_id"],
                    gpu_query=r["gpu_query"],
                    model_id=r["model_id"],
                    model_query=r["model_query"],
                    quant=r["quant_query"] or r["quant"],
                    backend=backend,
                    test=r["test"],
                    depth=depth,
                    prompt=prompt,
                    tps=float(r["tokens_per_s"]),
                    size_gib=float(r["model_size_gib"]) if r["model_size_gib"] else None,
                    flash_attn=r["flash_attn"],
                    source=r["source"],
                    date=r["date"],
                    notes=r["notes"],
                )
            )
    return rows
