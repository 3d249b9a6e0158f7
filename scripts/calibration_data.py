"""Read ../shared/reference/measured_calibration.csv into rows the speed model can be fitted on.

Shared by `fit_calibration.py` (which writes catalogs/calibration.toml) and `bench_accuracy.py`
(which scores the shipped estimator), so both agree on which rows count and what they mean.
"""

from __future__ import annotations

import csv
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

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


# --- every measurement file (issue 11) ------------------------------------------------------------

# The speed model's framework keys: the catalog's framework ids (ik_llama.cpp and ktransformers have
# their own entries; ik's rows fit the "ik_llama.cpp" factors the estimate reads for that id).
FRAMEWORK_KEY = {
    "llama.cpp": "llama.cpp",
    "LM Studio": "lmstudio",
    "Ollama": "ollama",
    "MLX": "mlx",
    "vLLM": "vllm",
    "SGLang": "sglang",
    "ktransformers": "ktransformers",
    "ik_llama.cpp": "ik_llama.cpp",
}
_UBATCH = re.compile(r"(?:-ub|--ubatch-size|ubatch)\s*=?\s*(\d+)")


@dataclass(frozen=True)
class SetupRow:
    """One measurement of any file, mapped onto catalog ids, with what the fit needs to group it."""

    row: Row
    framework: str  # FRAMEWORK_KEY value ("exllamav2"/"exllamav3" too)
    gpu_count: int
    setup: str  # bench_accuracy_setups.SETUPS
    held_out: bool  # its source is in catalogs/measurements/holdout.toml
    ubatch: int  # llama.cpp's -ub (512 unless the row says)
    concurrency: int
    file: str
    # The catalog CPU (cpus.toml) an offloaded row names (bench_accuracy_setups.row_cpu), "" if none.
    cpu: str = ""


def _framework_key(framework: str, raw: str) -> str:
    if framework == "LM Studio" and "mlx" in raw.lower():
        return "mlx"
    if framework == "ExLlama":
        if "v1" in raw.lower():
            # ExLlama v1 (turboderp/exllama, 2023) is another engine than ExLlamaV2 (new kernels, EXL2),
            # and no longer one a user runs: its rows (9 t/s for a 70B GPTQ on an A100) would price V2.
            return ""
        return "exllamav3" if "v3" in raw.lower() else "exllamav2"
    return FRAMEWORK_KEY.get(framework, "")


def load_all_rows(catalog: Catalog) -> tuple[list[SetupRow], dict[str, int]]:
    """Every row of the three measurement files whose card, model and quant the catalog knows,
    and the count of the others by reason. Names are mapped exactly as bench_accuracy_setups.py
    maps them (the curated file by its ids, the others through the resolver with its guards)."""
    import bench_accuracy_setups as setups  # the scripts directory is on sys.path

    held = setups.load_holdout()
    out: list[SetupRow] = []
    skipped: dict[str, int] = {}

    def skip(reason: str) -> None:
        skipped[reason] = skipped.get(reason, 0) + 1

    for m in setups.load_all(setups.DEFAULT_CSVS):
        if m.flagged:
            skip(f"flagged {m.flagged}")
            continue
        if m.phase == "other":
            skip("test kind")
            continue
        curated = m.file == CALIBRATION_CSV.name
        if curated and any(f in m.notes for f in EXCLUDE_FLAGS[:4]) or "crowd-sourced" in m.notes:
            skip("flagged (curated file)")
            continue
        if m.backend in ("other",):
            skip("backend unknown")
            continue
        found = (m.gpu_id, None) if curated else setups.find_gpu(m.gpu.split(" + ")[0], catalog)
        if not found or not found[0] or found[0] not in catalog.gpus:
            skip("card")
            continue
        bare = setups._PARENS.sub("", m.gpu.split(" + ")[0])
        if not curated and not setups._model_numbers_agree(bare, found[0], catalog):
            # "Intel Arc Pro B70 (Battlemage)" resolves by its parentheses to the B60: another chip.
            skip("card (model number differs)")
            continue
        model_id = m.model_id if curated else setups.find_model(m.model, m.params_b, catalog)
        if not model_id or model_id not in catalog.models:
            skip("model")
            continue
        quant_id = resolve_quant_id(m.quant, catalog) or setups.find_quant(m.quant, catalog)
        if quant_id is None:
            skip("quant")
            continue
        framework = _framework_key(m.framework, m.framework_raw)
        if not framework:
            skip("framework")
            continue
        size = None
        ub = _UBATCH.search(m.notes)
        out.append(
            SetupRow(
                row=Row(
                    gpu_id=found[0],
                    gpu_query=m.gpu,
                    model_id=model_id,
                    model_query=m.model,
                    quant=quant_id,
                    backend=m.backend.lower(),
                    test="tg" if m.phase == "decode" else "pp",
                    depth=m.depth,
                    prompt=m.prompt,
                    tps=m.tps,
                    size_gib=size,
                    flash_attn="",
                    source=m.source,
                    date="",
                    notes=m.notes,
                ),
                framework=framework,
                gpu_count=m.gpu_count,
                setup=m.setup,
                held_out=setups.source_key(m.source) in held,
                ubatch=int(ub.group(1)) if ub else 512,
                concurrency=_concurrency(m),
                file=m.file,
                cpu=setups.row_cpu(m) or "",
            )
        )
    return out, skipped


@cache
def _concurrency_column(path: str) -> dict[int, int]:
    """line -> the `concurrency` column (parallel sequences) of a measurement file."""
    out: dict[int, int] = {}
    with Path(path).open(newline="", encoding="utf-8") as fh:
        for line, r in enumerate(csv.DictReader(fh), start=2):
            text = (r.get("concurrency") or "1").strip()
            out[line] = int(text) if text.isdigit() else 1
    return out


def _concurrency(m: Any) -> int:
    import bench_accuracy_setups as setups

    path = next((p for p in setups.DEFAULT_CSVS if p.name == m.file), None)
    return _concurrency_column(str(path)).get(m.line, 1) if path else 1
