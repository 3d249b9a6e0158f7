"""Write catalogs/published_anchors.csv: published measurements shown as anchors beside estimates.

    .venv/bin/python scripts/build_published_anchors.py            # write
    .venv/bin/python scripts/build_published_anchors.py --check    # exit 1 when the file is stale

Reads ../shared/reference/measured_calibration.csv (every row cites a public source; see MEASURED.md)
and keeps the decode (tg) rows that map to catalog ids: the card and model are in the catalog and
the quant resolves to a catalog quant id. A tg row is paired with the pp row of the same source and
setup (same prompt length preferred, else pp512), so one anchor carries both speeds. Rows flagged
in catalogs/anchors.toml [published].skip_flags, end-to-end rows and rows without a citable URL are
left out. The output is a data file in the repo because CI has no ../shared; core/anchors/seed.py
turns it into submissions with origin "published".
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

from calibration_data import backend_of, resolve_quant_id  # noqa: E402  (scripts/ is on the path when run)

from core.catalog.loader import Catalog, default_catalog  # noqa: E402

SOURCE_CSV = REPO.parent / "shared" / "reference" / "measured_calibration.csv"
OUT_CSV = REPO / "catalogs" / "published_anchors.csv"

COLUMNS = (
    "key", "gpu_id", "gpu_count", "model_id", "quant", "decode_tps", "prefill_tps", "prompt_tokens",
    "depth", "test", "framework", "backend", "flash_attn", "source_url", "source_label", "source_host",
    "date", "gpu_label", "flags",
)  # fmt: skip

_URL = re.compile(r"https?://[^\s()]+")
_TEST = re.compile(r"test=\s*(tg|pp)(\d+)?(?:\s*@\s*d(\d+))?")
_PROMPT = re.compile(r"(\d+)-token prompt")
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
    if "mlx" in r:
        return "mlx"
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


def _flags(notes: str) -> str:
    return ";".join(f for f in _KEEP_FLAGS if f in notes)


def _num(text: str) -> str:
    return f"{float(text):g}"


def build(rows: list[dict[str, str]], catalog: Catalog, skip_flags: tuple[str, ...]) -> list[dict[str, str]]:
    usable = _usable(rows, catalog, skip_flags)
    prefill: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for r, quant in usable:
        if r["test"] == "pp":
            prefill[_setup_key(r, quant)].append(r)
    out = [
        _anchor(r, quant, _paired_prefill(r, prefill.get(_setup_key(r, quant), [])))
        for r, quant in usable
        if r["test"] == "tg"
    ]
    out.sort(key=lambda x: (x["gpu_id"], x["model_id"], x["quant"], x["test"], x["key"]))
    return out


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
        rows = list(csv.DictReader(fh))
    text = render(build(rows, catalog, skip))
    if args.check:
        same = OUT_CSV.exists() and OUT_CSV.read_text(encoding="utf-8") == text
        print("up to date" if same else f"{OUT_CSV} is stale: run the script")
        return 0 if same else 1
    OUT_CSV.write_text(text, encoding="utf-8")
    n = text.count("\n") - 1
    with_pp = sum(1 for line in csv.DictReader(io.StringIO(text)) if line["prefill_tps"])
    print(f"wrote {n} anchors ({with_pp} with prefill) to {OUT_CSV.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
