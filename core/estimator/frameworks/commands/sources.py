"""Where a command's model comes from: the published GGUF file of a quant, its file name, a
published quantized checkpoint of a base repo, the base repo's short name."""

from __future__ import annotations

import re
import shlex
from functools import cache

from core.catalog.loader import Catalog, default_catalog
from core.catalog.model import Model
from core.catalog.published_files import PublishedFile, published_file
from core.catalog.quant import Quant
from core.catalog.sections import sections


def published_gguf(model: Model, quant: Quant) -> PublishedFile | None:
    """The published GGUF file of this quant (the Hub listing or catalogs/published_gguf.csv), for a
    model whose catalog entry names no GGUF repo of its own (a Hub model): a curated repo stays the
    one its commands name."""
    if quant.format != "gguf" or model.gguf_repo or model.gguf_file_stem:
        return None
    return published_file(model, quant.id)


def gguf_file(model: Model, quant: Quant) -> str:
    """The GGUF file name a command loads: the published one when there is a single file, else the
    catalog's stem (or the model name) and the quant id."""
    published = published_gguf(model, quant)
    if published is not None and len(published.files) == 1:
        return shell_word(published.files[0].rsplit("/", 1)[-1])  # the file's real name, not a guess
    # Never the display name: a label ("... (text decoder)") is no file name, the repo name is.
    stem = model.gguf_file_stem or base_repo_name(model)
    return shell_word(f"{stem}-{quant.id}.gguf")


# What a command may carry unquoted: letters, digits and . _ - / : + = , @ (repo ids, tags, files).
_SHELL_SAFE = re.compile(r"^[\w.\-/:+=,@]+$")


def shell_word(text: str) -> str:
    """`text` as one shell word: unchanged when it holds only safe characters, else quoted."""
    return text if _SHELL_SAFE.match(text) else shlex.quote(text)


@cache
def _checkpoints() -> dict[str, dict[str, str]]:
    """Published quantized checkpoints by base repo and quant: catalogs/estimator.toml [checkpoints]
    and catalogs/quant_repos.toml [checkpoints] (where the newer rows live; a test keeps each
    (repo, quant) in one file, so the merge order never decides)."""
    catalog = default_catalog()
    newer = catalog.tables.get("quant_repos", {}).get("checkpoints", {})
    merged: dict[str, dict[str, str]] = {}
    for table in (sections(catalog).estimator.checkpoints, newer):
        for repo, row in table.items():
            listed = {k: str(v) for k, v in row.items() if k != "source"}
            merged[repo] = {**merged.get(repo, {}), **listed}
    return merged


def published_checkpoint(repo: str, quant_id: str) -> str:
    """The listed checkpoint of `repo` in this quant, "" when none is listed."""
    return _checkpoints().get(repo, {}).get(quant_id, "")


def listed_checkpoints(repo: str, catalog: Catalog) -> tuple[tuple[str, str], ...]:
    """Every (quant id, checkpoint) listed for `repo`, the smallest quant first (the one most likely
    to fit a card the others don't)."""
    row = _checkpoints().get(repo, {})
    bpw = {q: catalog.quants[q].bpw for q in row if q in catalog.quants}
    return tuple((q, row[q]) for q in sorted(bpw, key=lambda q: bpw[q]))


def base_repo_name(model: Model) -> str:
    """The model's repo name without its owner (the name people give local folders and quants); a
    model with no repo: its name with what no repo name holds (spaces, brackets) dropped."""
    if model.hf_repo:
        return model.hf_repo.rsplit("/", 1)[-1]
    label = re.sub(r"\s*[(\[].*?[)\]]", "", model.name).strip()
    return re.sub(r"[^\w.\-]+", "-", label).strip("-") or model.id
