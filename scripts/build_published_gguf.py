"""Build catalogs/published_gguf.csv from ../shared/reference/gguf_sizes.csv (each row cites its source).

Kept: rows whose model_id is a catalog model, whose repo is a GGUF of that very model (the repo's
name is the model's own repo name: no "-Thinking-2507" variant, no "abliterated" fine-tune, no base
model in place of the instruct one), published by the model's own organisation or by ggml-org,
bartowski, unsloth, lmstudio-community or mradermacher, and whose quant name is a catalog GGUF quant
id. One row per model x quant: the first publisher in that order (catalogs/quant_repos.toml).

    .venv/bin/python scripts/build_published_gguf.py [--reference DIR] [--out FILE]
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from core.catalog.loader import Catalog, default_catalog  # noqa: E402
from core.catalog.model import Model  # noqa: E402
from core.catalog.published_files import PUBLISHED_CSV  # noqa: E402

DEFAULT_REFERENCE = REPO.parent / "shared" / "reference"
PUBLISHERS = ("ggml-org", "bartowski", "unsloth", "lmstudio-community", "mradermacher")
_UNIT = {"bytes": 1, "GB": 10**9, "GiB": 2**30, "MB": 10**6}
# The reference's own doubts about a row's unit ("README 'GB' appears to be GiB"): such a size could
# be 7 % off either way, more than the per-tensor figure is, so it is left out.
_UNSURE_UNIT = ("appears to be gib", "likely gib", "consistent with gib")
FIELDS = (
    "model_id",
    "quant",
    "repo",
    "bytes",
    "tolerance_bytes",
    "split_parts",
    "files",
    "source",
    "as_printed",
    "notes",
)


def _rank(repo: str, model: Model) -> int | None:
    """Publisher order: the model's own organisation first, then PUBLISHERS; None for others."""
    org = repo.split("/")[0]
    if model.hf_repo and org == model.hf_repo.split("/")[0]:
        return 0
    if org in PUBLISHERS:
        # mradermacher's imatrix (i1) repo after his static one: same tensors, a second listing.
        return 1 + PUBLISHERS.index(org) * 2 + (1 if repo.endswith("-i1-GGUF") else 0)
    return None


def _names(model: Model) -> set[str]:
    name = model.hf_repo.split("/")[-1].lower()
    # Meta's repos were called Meta-Llama-3.1-* until renamed; the quantizers kept the old name.
    return {name, f"meta-{name}"} if name.startswith("llama-") else {name}


def same_model(repo: str, model: Model) -> bool:
    """The GGUF repo holds `model` itself (its repo name, less org prefix and -GGUF / -i1-GGUF)."""
    org, _, name = repo.partition("/")
    base = re.sub(r"(-i1)?-gguf$", "", name.lower())
    publisher = model.hf_repo.split("/")[0].lower()
    base = base.removeprefix(f"{publisher}_")  # bartowski/Qwen_Qwen3-32B-GGUF
    return bool(model.hf_repo) and base in _names(model)


def build(reference: Path, catalog: Catalog) -> list[dict[str, str]]:
    gguf_ids = {q.id.upper(): q.id for q in catalog.quants.values() if q.format == "gguf"}
    best: dict[tuple[str, str], tuple[int, dict[str, str]]] = {}
    with (reference / "gguf_sizes.csv").open(newline="", encoding="utf-8") as fh:
        for rec in csv.DictReader(fh):
            model = catalog.models.get(rec["model_id"].strip())
            repo = rec["repo"].split(" (")[0].strip()  # "ggml-org/gpt-oss-20b-GGUF (as cited)"
            quant = gguf_ids.get(rec["quant"].strip().upper())
            unit = _UNIT.get(rec["size_unit_as_printed"].strip())
            unsure = any(w in rec["notes"].lower() for w in _UNSURE_UNIT)
            if model is None or quant is None or unit is None or unsure or not same_model(repo, model):
                continue
            rank = _rank(repo, model)
            if rank is None:
                continue
            printed = rec["file_size_gb"].strip()
            size = float(printed)
            decimals = len(printed.partition(".")[2])
            # Half the last printed digit: "12.1" GB may be anything from 12.05 to 12.15 GB.
            tolerance = 0 if unit == 1 else round(unit * 10**-decimals / 2)
            row = {
                "model_id": model.id,
                "quant": quant,
                "repo": repo,
                "bytes": str(round(size * unit)),
                "tolerance_bytes": str(tolerance),
                "split_parts": rec["split_parts"].strip() or "1",
                "files": "",  # the reference gives sizes, not file names: none is guessed
                "source": rec["source"].strip(),
                "as_printed": f"{rec['file_size_gb']} {rec['size_unit_as_printed']}",
                "notes": rec["notes"].strip(),
            }
            key = (model.id, quant)
            if key not in best or rank < best[key][0]:
                best[key] = (rank, row)
    return [best[k][1] for k in sorted(best)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--reference", type=Path, default=DEFAULT_REFERENCE)
    parser.add_argument("--out", type=Path, default=PUBLISHED_CSV)
    args = parser.parse_args(argv)
    rows = build(args.reference, default_catalog())
    with args.out.open("w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=FIELDS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    models = len({r["model_id"] for r in rows})
    print(f"{len(rows)} published files, {models} models -> {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
