"""Published quantized files of a model: the GGUF files (and AWQ / FP8 / MLX repos) that really exist.

The weights column prices a quant tensor by tensor (core/estimator/weights.py); where a quantizer
published that quant, its file size is the truth people download, and a launch command should name
that repo, not a guessed file name. Two places know published files:

* curated catalog models: catalogs/published_gguf.csv (built from ../shared/reference/gguf_sizes.csv,
  one preferred repo per model x quant, each row citing its source);
* models read from the Hub: the listing bot/hub/quant_listing.py made, kept with the model
  (`SourcedModel.listing`) and registered here by model id when the model joins the catalog overlay
  (`remember_listing`): the estimator and the launch commands only see a `Model`, so they look the
  files up by its id (`published_file`, `published_repo`).

Pure: file names in, `PublishedFile`s out (`files_from_listing` maps names to catalog quant ids and
sums split parts); the network lives in bot/hub.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from core.catalog.loader import CATALOG_DIR
from core.catalog.model import Model

PUBLISHED_CSV = CATALOG_DIR / "published_gguf.csv"


@dataclass(frozen=True, slots=True)
class PublishedFile:
    """One quant as published: every part of it, and their bytes summed."""

    quant_id: str  # catalog quant id ("Q4_K_M", "UD-Q4_K_XL")
    repo: str  # "bartowski/Qwen_Qwen3-30B-A3B-GGUF"
    files: tuple[str, ...]  # the parts in order ("Q8_0/X-Q8_0-00001-of-00002.gguf", ...)
    bytes: int  # all parts together
    source: str = ""  # where the size was read (the repo's file listing, a cited page)
    # How far off `bytes` may be: 0 for a listing's exact bytes; half the last printed digit for a
    # size a page printed rounded ("12.1 GB": 0.05 GB).
    tolerance: int = 0

    @property
    def url(self) -> str:
        return f"https://huggingface.co/{self.repo}"


@dataclass(frozen=True, slots=True)
class PublishedRepo:
    """A serving-format repo that exists (FP8, AWQ, MLX): what vLLM / SGLang / mlx_lm can load."""

    quant_id: str  # catalog quant id ("FP8", "AWQ", "MLX-4BIT")
    repo: str


@dataclass(frozen=True, slots=True)
class QuantListing:
    """What listing a model's quantized repos found (kept with the model in the cache)."""

    files: tuple[PublishedFile, ...] = ()  # one per quant, the preferred publisher's
    repos: tuple[PublishedRepo, ...] = ()
    read: bool = False  # False: the listing was not read (Hub failure, budget) -- sizes are computed
    tried: tuple[str, ...] = ()  # the repo names asked for
    found: tuple[str, ...] = ()  # the GGUF repos that exist
    error: str = ""  # why the listing was not (fully) read


# --------------------------------------------------------------------------------------------
# repo names


def _base(repo: str) -> tuple[str, str] | None:
    org, _, name = repo.partition("/")
    return (org, name) if org and name and "/" not in name else None


def _patterns(table: dict[str, object], key: str) -> list[dict[str, str]]:
    rows = table.get(key, [])
    return [r for r in rows if isinstance(r, dict)] if isinstance(rows, list) else []


def gguf_repo_names(repo: str, table: dict[str, object]) -> tuple[str, ...]:
    """The GGUF repos to look for, publisher order (catalogs/quant_repos.toml [[gguf]])."""
    base = _base(repo)
    if base is None:
        return ()
    org, name = base
    names = [str(r.get("pattern", "")).format(org=org, name=name) for r in _patterns(table, "gguf")]
    return tuple(dict.fromkeys(n for n in names if n))


def serving_repo_names(repo: str, table: dict[str, object]) -> tuple[tuple[str, str], ...]:
    """(quant id, repo) of the serving-format repos to look for ([[serving]])."""
    base = _base(repo)
    if base is None:
        return ()
    org, name = base
    return tuple(
        (str(r.get("quant", "")), str(r.get("pattern", "")).format(org=org, name=name))
        for r in _patterns(table, "serving")
        if r.get("quant") and r.get("pattern")
    )


# --------------------------------------------------------------------------------------------
# file names -> quants

_SPLIT = re.compile(r"-(\d{5})-of-(\d{5})$")
_SKIP = ("mmproj", "imatrix")  # the vision projector and importance matrices are no model quant


@dataclass(frozen=True, slots=True)
class _Part:
    path: str
    size: int
    index: int  # 1-based part number (1 for a single file)
    count: int  # parts in the set (1 for a single file)


def quant_of_filename(path: str, quant_ids: Iterable[str]) -> str | None:
    """The catalog quant a GGUF file is, from its name ("X-Q4_K_M.gguf", "X.i1-IQ4_XS.gguf",
    "UD-Q4_K_XL/X-UD-Q4_K_XL-00001-of-00003.gguf"); None when the name is no quant we price.

    A quant id counts only between separators (start, "-", "_", "." before it; end, "-" or "."
    after it): "Q4_0_4_4" (an ARM repack) is no Q4_0 and "IQ4_XS" no "Q4_XS". The longest id wins
    ("UD-Q4_K_XL" over "Q4_K_XL"), then the last one in the name (the quant follows the model)."""
    file = path.rsplit("/", 1)[-1]
    if not file.lower().endswith(".gguf") or any(s in file.lower() for s in _SKIP):
        return None
    stem = _SPLIT.sub("", file[: -len(".gguf")])
    upper = stem.upper()
    best: tuple[int, int, str] | None = None
    for qid in quant_ids:
        q = qid.upper()
        for match in re.finditer(rf"(?:^|(?<=[-_.])){re.escape(q)}(?=$|[-.])", upper):
            key = (len(q), match.start(), qid)
            if best is None or key[:2] > best[:2]:
                best = key
    return best[2] if best else None


def _part(path: str, size: int) -> _Part:
    stem = path.rsplit("/", 1)[-1][: -len(".gguf")]
    match = _SPLIT.search(stem)
    if match is None:
        return _Part(path, size, 1, 1)
    return _Part(path, size, int(match.group(1)), int(match.group(2)))


def _set_key(path: str) -> str:
    """The name every part of one split set shares."""
    return _SPLIT.sub("", path[: -len(".gguf")])


def files_from_listing(
    repo: str, entries: Iterable[tuple[str, int | None]], quant_ids: Iterable[str], source: str = ""
) -> tuple[PublishedFile, ...]:
    """One `PublishedFile` per quant found in a repo's (path, size) listing: split parts summed
    (`-00001-of-00003.gguf`, also inside folders such as `Q8_0/`), a set missing a part or a size
    left out (an incomplete listing says nothing about the file). Two sets of one quant (rare: a
    re-upload beside the old name): the first by path."""
    ids = tuple(quant_ids)
    sets: dict[str, list[_Part]] = {}
    for path, size in entries:
        if size is None or quant_of_filename(path, ids) is None:
            continue
        sets.setdefault(_set_key(path), []).append(_part(path, int(size)))
    out: dict[str, PublishedFile] = {}
    for key in sorted(sets):
        parts = sorted(sets[key], key=lambda p: p.index)
        count = parts[0].count
        if len(parts) != count or [p.index for p in parts] != list(range(1, count + 1)):
            continue
        quant = quant_of_filename(parts[0].path, ids)
        if quant is None or quant in out:
            continue
        out[quant] = PublishedFile(
            quant_id=quant,
            repo=repo,
            files=tuple(p.path for p in parts),
            bytes=sum(p.size for p in parts),
            source=source or f"https://huggingface.co/{repo}/tree/main",
        )
    return tuple(out.values())


def preferred(listings: Iterable[tuple[PublishedFile, ...]]) -> tuple[PublishedFile, ...]:
    """One file per quant across repos given in publisher order: the first publisher's wins."""
    out: dict[str, PublishedFile] = {}
    for files in listings:
        for f in files:
            out.setdefault(f.quant_id, f)
    return tuple(out.values())


# --------------------------------------------------------------------------------------------
# lookup by model


# Hub models by catalog id: the listing each was read with (registered by the catalog overlay).
# Keyed by id because the estimator and the launch commands see only the Model; the model's own
# repo is kept beside it so an id reused for another repo never borrows its files.
_hub: dict[str, tuple[str, QuantListing]] = {}


def remember_listing(model: Model, listing: QuantListing) -> None:
    """Make `listing` the published files of `model` (a Hub model joining the catalog overlay)."""
    _hub[model.id] = (model.hf_repo, listing)


def forget_listing(model_id: str) -> None:
    """Drop what `remember_listing` kept for `model_id` (a Hub model the overlay no longer holds)."""
    _hub.pop(model_id, None)


def listing_for(model: Model) -> QuantListing | None:
    """The Hub listing kept for `model`; None for a catalog model or a model never listed."""
    hit = _hub.get(model.id)
    return hit[1] if hit is not None and hit[0] == model.hf_repo else None


@cache
def catalog_files(path: Path = PUBLISHED_CSV) -> dict[str, dict[str, PublishedFile]]:
    """catalogs/published_gguf.csv by model id and quant id."""
    out: dict[str, dict[str, PublishedFile]] = {}
    if not path.exists():
        return out
    with path.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            files = tuple(f for f in (row.get("files") or "").split(";") if f)
            entry = PublishedFile(
                quant_id=row["quant"],
                repo=row["repo"],
                files=files,
                bytes=int(row["bytes"]),
                source=row.get("source", ""),
                tolerance=int(row.get("tolerance_bytes") or 0),
            )
            out.setdefault(row["model_id"], {}).setdefault(entry.quant_id, entry)
    return out


def published_file(model: Model, quant_id: str) -> PublishedFile | None:
    """The published file of `model` stored as `quant_id`: the Hub listing kept for the model, else
    the curated catalog file; None when nobody published that quant (or it is not known)."""
    listing = listing_for(model)
    if listing is not None:
        hit = next((f for f in listing.files if f.quant_id == quant_id), None)
        if hit is not None:
            return hit
    return catalog_files().get(model.id, {}).get(quant_id)


def published_repo(model: Model, quant_id: str) -> str:
    """A serving-format repo of `model` (FP8, AWQ, MLX) the listing found, else ""."""
    listing = listing_for(model)
    if listing is None:
        return ""
    return next((r.repo for r in listing.repos if r.quant_id == quant_id), "")
