"""Write catalogs/published_anchors.csv: published measurements shown as anchors beside estimates.

    .venv/bin/python scripts/build_published_anchors.py            # write
    .venv/bin/python scripts/build_published_anchors.py --check    # exit 1 when the file is stale

Reads ../shared/reference/measured_calibration.csv (every row cites a public source; see MEASURED.md)
and keeps the decode (tg) rows that map to catalog ids: the card and model are in the catalog and
the quant resolves to a catalog quant id. A tg row is paired with the pp row of the same source and
setup (same prompt length preferred, else pp512), so one anchor carries both speeds. Rows flagged
in catalogs/anchors.toml [published].skip_flags, end-to-end rows and rows without a citable URL are
left out. Then the same for ../shared/reference/measured_calibration_backends.csv and
catalogs/measurements/published_extra.csv, whose names calibration_data.load_all_rows maps to catalog
ids with its guards: only rows run fully on the cards by one stream (no offload, no concurrency),
with an https source, and no number a curated anchor already carries. The output is a data file in
the repo because CI has no ../shared; core/anchors/seed.py turns it into submissions with origin
"published".
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import re
import sys
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlparse

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from calibration_data import (  # noqa: E402  (scripts/ is on the path when run)
    CALIBRATION_CSV,
    SetupRow,
    backend_of,
    load_all_rows,
    resolve_quant_id,
)

from core.catalog.loader import Catalog, default_catalog  # noqa: E402

SOURCE_CSV = REPO.parent / "shared" / "reference" / "measured_calibration.csv"
# The other measurement files (catalogs/measurements/README.md); calibration_data maps their names.
EXTRA_CSVS = (
    REPO.parent / "shared" / "reference" / "measured_calibration_backends.csv",
    REPO / "catalogs" / "measurements" / "published_extra.csv",
)
OUT_CSV = REPO / "catalogs" / "published_anchors.csv"
# Rows of the read-only curated file whose gpu_id is not the card their label names (issue 20).
REFILED_CSV = REPO / "catalogs" / "measurements" / "refiled.csv"

COLUMNS = (
    "key", "gpu_id", "gpu_count", "model_id", "quant", "decode_tps", "prefill_tps", "prompt_tokens",
    "depth", "test", "framework", "backend", "flash_attn", "source_url", "source_label", "source_host",
    "date", "gpu_label", "flags", "gpu_memory_gib",
)  # fmt: skip

_URL = re.compile(r"https?://[^\s()]+")
_TEST = re.compile(r"test=\s*(tg|pp)(\d+)?(?:\s*@\s*d(\d+))?")
_PROMPT = re.compile(r"(\d+)-token prompt")
# The per-card memory a source's device label names: "RTX 4090 48GB (modded)", "M2 Ultra ... 192GB".
_LABEL_MEMORY = re.compile(r"(\d+(?:\.\d+)?)\s*GB", re.I)
# Flags that stay visible on a shown anchor (the number is real but was converted or crowd-sourced).
_KEEP_FLAGS = ("CONVERTED", "crowd-sourced")
# Framework-benchmark labels that name one catalog quant without doubt (AutoAWQ/TinyChat "AWQ 4-bit",
# TheBloke "GPTQ 4-bit g128", mlx-community 4-bit). Unstated methods, EXL2, MLC and torchao schemes
# have no catalog quant and are skipped.
_QUANT_LABELS = (("AWQ", "AWQ"), ("GPTQ 4-bit", "GPTQ-INT4"), ("MLX 4-bit", "MLX-4BIT"))


def _quant(row: dict[str, str], catalog: Catalog) -> str | None:
    text = row["quant_query"] or row["quant"]
    if not text:
        return None
    found = resolve_quant_id(text, catalog)
    if found is None:
        found = next((qid for prefix, qid in _QUANT_LABELS if text.startswith(prefix)), None)
    return found if found in catalog.quants else None


def _framework(raw: str) -> str:
    """The catalog framework id where the source's engine is one; else the source's own name."""
    r = raw.lower()
    if r.startswith("llama.cpp"):
        return "llama.cpp"
    if r.startswith("vllm"):
        return "vllm"
    if r.startswith("ollama"):
        return "ollama"
    if r.startswith("exllamav2"):
        return "exllamav2"
    if r.startswith("exllamav3"):
        return "exllamav3"
    if "mlx" in r:
        return "mlx"
    if r.startswith("lm studio"):
        return "lmstudio"
    if r.startswith("sglang"):
        return "sglang"
    return raw.strip()


def source_label(url: str, text: str) -> tuple[str, str]:
    """(label, host): "XiongjieDai" for a repo, "llama.cpp#17505" for a thread, the site otherwise."""
    first = text.split()[0] if text.split() else ""
    if first and not first.startswith("http"):
        return first, first  # e.g. "localmaxxing.com leaderboard row ..." (its copy is the URL)
    parsed = urlparse(url)
    host = parsed.netloc
    parts = [p for p in parsed.path.split("/") if p]
    if host == "github.com" and len(parts) >= 2:
        if len(parts) >= 4 and parts[2] in ("pull", "issues"):
            return f"{parts[1]}#{parts[3]}", host
        return parts[0], host
    return host, host


def _test(row: dict[str, str]) -> tuple[str, int | None]:
    """(test name, pp prompt length) from the notes: "tg512", "pp2048@d32768"; "tg"/"pp" otherwise."""
    m = _TEST.search(row["notes"])
    if m:
        name = m.group(1) + (m.group(2) or "") + (f"@d{m.group(3)}" if m.group(3) else "")
        n = int(m.group(2)) if m.group(2) else None
        return name, n if m.group(1) == "pp" else None
    p = _PROMPT.search(row["notes"])
    return row["test"], int(p.group(1)) if p and row["test"] == "pp" else None


def _setup_key(row: dict[str, str], quant: str) -> tuple[str, ...]:
    return (row["source"], row["gpu"], row["gpu_id"], row["gpu_count"], row["model_id"], quant,
            row["framework"], row["backend"], row["flash_attn"], row["context_or_depth"])  # fmt: skip


def label_memory(label: str) -> str:
    """The memory size the device label names ("48" for "RTX 4090 48GB (modded)"), "" when none: the
    card a row ran on, which a catalog id alone does not say for modded or unified-memory sizes."""
    m = _LABEL_MEMORY.search(label)
    return f"{float(m.group(1)):g}" if m else ""


def refiled() -> dict[tuple[str, str], str]:
    """(file name, device label) -> the catalog card the row ran on (catalogs/measurements/refiled.csv)."""
    with REFILED_CSV.open(newline="", encoding="utf-8") as fh:
        return {(r["file"], r["gpu"]): r["gpu_id"] for r in csv.DictReader(fh)}


def _refile(rows: list[dict[str, str]], file: str) -> list[dict[str, str]]:
    fixes = refiled()
    return [{**r, "gpu_id": fixes.get((file, r["gpu"]), r["gpu_id"])} for r in rows]


def _flags(notes: str) -> str:
    return ";".join(f for f in _KEEP_FLAGS if f in notes)


def _num(text: str) -> str:
    return f"{float(text):g}"


def build(
    rows: list[dict[str, str]],
    catalog: Catalog,
    skip_flags: tuple[str, ...],
    extra: list[tuple[dict[str, str], str]] | None = None,
) -> list[dict[str, str]]:
    """Anchors of the curated rows, then those of `extra` (rows of the other files, already mapped)
    that do not repeat a number already kept."""
    out = _anchors(_usable(rows, catalog, skip_flags))
    seen = {_identity(a) for a in out}
    for anchor in _anchors(extra or []):
        if _identity(anchor) not in seen:
            seen.add(_identity(anchor))
            out.append(anchor)
    out.sort(key=lambda x: (x["gpu_id"], x["model_id"], x["quant"], x["test"], x["key"]))
    return out


def _anchors(usable: list[tuple[dict[str, str], str]]) -> list[dict[str, str]]:
    prefill: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for r, quant in usable:
        if r["test"] == "pp":
            prefill[_setup_key(r, quant)].append(r)
    return [
        _anchor(r, quant, _paired_prefill(r, prefill.get(_setup_key(r, quant), [])))
        for r, quant in usable
        if r["test"] == "tg"
    ]


def _identity(anchor: dict[str, str]) -> tuple[str, ...]:
    """One published decode number: the other files repeat some curated rows (with another URL form
    or label), and the same number on the same card, model, quant and backend is the same run."""
    return tuple(anchor[k] for k in ("gpu_id", "gpu_count", "model_id", "quant", "backend", "decode_tps"))


def _usable(
    rows: list[dict[str, str]], catalog: Catalog, skip_flags: tuple[str, ...]
) -> list[tuple[dict[str, str], str]]:
    """Rows of a catalog card, model and quant, with a source link and no skipped flag, with their quant."""
    usable: list[tuple[dict[str, str], str]] = []
    for r in rows:
        if r["test"] not in ("tg", "pp") or r["gpu_id"] not in catalog.gpus:
            continue
        if r["model_id"] not in catalog.models or any(f in r["notes"] for f in skip_flags):
            continue
        quant = _quant(r, catalog)
        if quant is None or not _URL.search(r["source"]):
            continue
        usable.append((r, quant))
    return usable


def _paired_prefill(tg: dict[str, str], candidates: list[dict[str, str]]) -> dict[str, str] | None:
    """The pp run of the same length as the tg run (tg4096 with pp4096), else pp512, else any."""
    n = re.sub(r"\D", "", _test(tg)[0].split("@")[0])
    pp = next((p for p in candidates if _test(p)[0].split("@")[0] == f"pp{n}"), None)
    pp = pp or next((p for p in candidates if _test(p)[0].split("@")[0] == "pp512"), None)
    return pp or (candidates[0] if candidates else None)


def _anchor(r: dict[str, str], quant: str, pp: dict[str, str] | None) -> dict[str, str]:
    """One published decode number (with its paired prefill) as a row of the anchors file."""
    test, _ = _test(r)
    pp_test, prompt = _test(pp) if pp else ("", None)
    url = _URL.search(r["source"]).group(0).rstrip(".,;")  # type: ignore[union-attr]
    label, host = source_label(url, r["source"])
    row = {
        "gpu_id": r["gpu_id"],
        "gpu_count": r["gpu_count"] or "1",
        "model_id": r["model_id"],
        "quant": quant,
        "decode_tps": _num(r["tokens_per_s"]),
        "prefill_tps": _num(pp["tokens_per_s"]) if pp else "",
        "prompt_tokens": str(prompt) if prompt else "",
        "depth": r["context_or_depth"],
        "test": test + (f"+{pp_test}" if pp_test else ""),
        "framework": _framework(r["framework"]),
        "backend": backend_of(r["backend"], r["gpu_id"]),
        "flash_attn": r["flash_attn"],
        "source_url": url,
        "source_label": label,
        "source_host": host,
        "date": r["date"],
        "gpu_label": r["gpu"],
        "flags": _flags(r["notes"] + (pp["notes"] if pp else "")),
        "gpu_memory_gib": label_memory(r["gpu"]),
    }
    row["key"] = _key(row, r)
    return row


def _key(row: dict[str, str], r: dict[str, str]) -> str:
    """Stable per published number: re-running the script (or re-seeding) never duplicates it."""
    ident = "|".join(
        (
            row["source_url"],
            r["source"],
            r["gpu"],
            row["gpu_count"],
            row["model_id"],
            row["quant"],
            row["test"],
            row["depth"],
            row["framework"],
            row["backend"],
            row["decode_tps"],
        )
    )
    return hashlib.sha256(ident.encode()).hexdigest()[:16]


# --- the other measurement files -------------------------------------------------------------------

_AT_DEPTH = re.compile(r"^(\d+)\s*@\s*d(\d+)$")
_ISL_OSL = re.compile(r"^(\d+)\s*/\s*\d+$")
_NOT_BENCH = re.compile(r"server|completion|cli\b")


def extra_rows(catalog: Catalog, skip_flags: tuple[str, ...]) -> list[tuple[dict[str, str], str]]:
    """The rows of EXTRA_CSVS that calibration_data.load_all_rows maps to a catalog card, model and
    quant (its guards: model numbers, family word and size agree; doubtful rows dropped), run fully
    on the cards by one stream (offload and concurrency rows left out), with an https source link and
    no skipped flag, shaped like curated rows."""
    raw = _raw_rows()
    out: list[tuple[dict[str, str], str]] = []
    for s in load_all_rows(catalog)[0]:
        if s.file == CALIBRATION_CSV.name or s.setup != "fully on GPU" or s.concurrency != 1:
            continue
        r = raw.get(
            _raw_key(s.file, s.row.source, s.row.gpu_query, s.row.model_query, s.row.notes, s.row.tps)
        )
        # A plain-http link is a mirror site (webkkk.net for a GitHub thread): not shown as a source.
        url = _URL.search(r["source"]) if r is not None else None
        if r is None or r["test"] not in ("tg", "pp") or url is None or not url.group(0).startswith("https"):
            continue
        if any(f in r["notes"] for f in skip_flags):
            continue
        out.append((_as_curated(r, s), s.row.quant))
    return out


def _raw_key(file: str, source: str, gpu: str, model: str, notes: str, tps: float) -> tuple[str, ...]:
    return (file, source, gpu, model, notes, f"{tps:g}")


def _raw_rows() -> dict[tuple[str, ...], dict[str, str]]:
    """The CSV rows of EXTRA_CSVS by what a SetupRow keeps of them (it drops date and flash_attn)."""
    out: dict[tuple[str, ...], dict[str, str]] = {}
    for path in EXTRA_CSVS:
        with path.open(newline="", encoding="utf-8") as fh:
            for r in csv.DictReader(fh):
                try:
                    tps = float(r["tokens_per_s"])
                except ValueError:
                    continue
                key = _raw_key(path.name, r["source"], r["gpu"], r["model"], r["notes"], tps)
                out.setdefault(key, r)
    return out


def _as_curated(r: dict[str, str], s: SetupRow) -> dict[str, str]:
    """The row with the curated file's columns: catalog ids, the start depth as context_or_depth (a tg
    and its pp of the same setup share it) and the test name in the notes where only the context says it."""
    # llama-server / llama-completion print a run after a prompt, not llama-bench's tgN from empty.
    llama_bench = s.framework in ("llama.cpp", "ik_llama.cpp") and not _NOT_BENCH.search(r["framework"])
    depth, name = _depth_and_test(r["test"], r["context_or_depth"].strip(), llama_bench)
    notes = r["notes"] if _TEST.search(r["notes"]) or not name else f"test={name}; {r['notes']}"
    return {
        **r,
        "gpu_id": s.row.gpu_id,
        "gpu_count": str(s.gpu_count),
        "model_id": s.row.model_id,
        "quant_query": s.row.quant,
        "context_or_depth": depth,
        "notes": notes,
    }


def _depth_and_test(test: str, ctx: str, llama_bench: bool) -> tuple[str, str]:
    """(depth when the measured phase starts, test name) from the context column: "2048@d32768" is
    ppN at depth D, llama-bench's bare number its test length, a framework's bare number (or ISL/OSL)
    the prompt before decoding; "" where the source does not say."""
    if (at := _AT_DEPTH.match(ctx)) is not None:
        return at.group(2), f"{test}{at.group(1)}@d{at.group(2)}"
    if ctx.isdigit():
        return ("0", f"{test}{ctx}") if llama_bench else (ctx, f"pp{ctx}" if test == "pp" else "")
    if (io := _ISL_OSL.match(ctx)) is not None:
        return io.group(1), f"pp{io.group(1)}" if test == "pp" else ""
    return "", ""


def render(rows: list[dict[str, str]]) -> str:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when the output would change")
    parser.add_argument("--source", type=Path, default=SOURCE_CSV)
    args = parser.parse_args()
    catalog = default_catalog()
    skip = tuple(catalog.tables.get("anchors", {}).get("published", {}).get("skip_flags", ()))
    with args.source.open(newline="", encoding="utf-8") as fh:
        rows = _refile(list(csv.DictReader(fh)), args.source.name)
    text = render(build(rows, catalog, skip, extra_rows(catalog, skip)))
    if args.check:
        same = OUT_CSV.exists() and OUT_CSV.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT_CSV} is stale: run the script")
        return 0 if same else 1
    OUT_CSV.write_text(text, encoding="utf-8")
    n = text.count("\n") - 1
    with_pp = sum(1 for line in csv.DictReader(io.StringIO(text)) if line["prefill_tps"])
    print(f"wrote {n} anchors ({with_pp} with prefill) to {OUT_CSV.relative_to(REPO)}")
    by_source: dict[str, int] = defaultdict(int)
    for line in csv.DictReader(io.StringIO(text)):
        by_source[line["source_label"]] += 1
    print(f"{len(by_source)} sources")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
