"""Load and validate the data files in `catalogs/` into one immutable `Catalog`.

pydantic validates the TOML against the dataclasses themselves (one definition for schema and
in-memory type), so a bad edit fails with a message naming the entry and the field; cross-entry
checks (ids and aliases unique, numbers plausible, sources cited) are tests over the shipped files
(tests/core/catalog/). The shipped catalog is read once per process, and from the warm cache
(core/cache/warm.py) when an earlier process already validated the same files.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter, ValidationError

from core.cache.warm import SHIPPED_CATALOG_DIR, load_default
from core.catalog.cpu import Cpu
from core.catalog.framework import Framework
from core.catalog.gpu import Gpu
from core.catalog.model import Model
from core.catalog.quant import GgmlType, Quant, QuantTable, TypeTable

CATALOG_DIR = SHIPPED_CATALOG_DIR


class CatalogError(ValueError):
    """A catalog file is missing, malformed or inconsistent."""


# eq=False: a catalog is hashed by identity, so per-catalog caches (functools.cache) work.
@dataclass(frozen=True, eq=False)
class Catalog:
    gpus: dict[str, Gpu]
    models: dict[str, Model]
    ggml_types: dict[str, GgmlType]
    quants: dict[str, Quant]
    frameworks: dict[str, Framework]
    # Free-form tables (OS reserves, host presets, calibration): validated by their own modules.
    tables: dict[str, dict[str, Any]] = field(default_factory=dict)
    # CPUs (catalogs/cpus.toml [[cpu]]); its other sections ([efficiency]) stay in tables["cpus"].
    cpus: dict[str, Cpu] = field(default_factory=dict)

    def gpu(self, gpu_id: str) -> Gpu:
        return self.gpus[gpu_id]

    def model(self, model_id: str) -> Model:
        return self.models[model_id]

    def quant(self, quant_id: str) -> Quant:
        return self.quants[quant_id]


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        with path.open("rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError as exc:
        raise CatalogError(f"catalog file missing: {path}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise CatalogError(f"{path.name}: not valid TOML: {exc}") from exc


def _validate_list(kind: type, items: list[dict[str, Any]], file: str) -> dict[str, Any]:
    adapter: TypeAdapter[Any] = TypeAdapter(kind)
    out: dict[str, Any] = {}
    for index, raw in enumerate(items):
        label = raw.get("id", f"entry #{index + 1}")
        try:
            entry = adapter.validate_python(raw, strict=False)
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in err['loc'])}: {err['msg']}" for err in exc.errors()
            )
            raise CatalogError(f"{file}: {label}: {problems}") from exc
        if entry.id in out:
            raise CatalogError(f"{file}: duplicate id {entry.id!r}")
        out[entry.id] = entry
    return out


def load_catalog(directory: Path = CATALOG_DIR) -> Catalog:
    """Read every catalog file in `directory`; raise CatalogError naming the bad entry."""
    gpus = _validate_list(Gpu, _read_toml(directory / "gpus.toml").get("gpu", []), "gpus.toml")
    models = _validate_list(Model, _read_toml(directory / "models.toml").get("model", []), "models.toml")
    quant_doc = _read_toml(directory / "quants.toml")
    # Tables that also hold the members of free-bpw families ("EXL2-4.25", type "BPW_4.25") unlisted.
    ggml_types = TypeTable(_validate_list(GgmlType, quant_doc.get("ggml_type", []), "quants.toml").items())
    quants = QuantTable(_validate_list(Quant, quant_doc.get("quant", []), "quants.toml").items())
    frameworks = _validate_list(
        Framework, _read_toml(directory / "frameworks.toml").get("framework", []), "frameworks.toml"
    )
    tables = {
        path.stem: _read_toml(path)
        for path in sorted(directory.glob("*.toml"))
        if path.stem not in {"gpus", "models", "quants", "frameworks"}
    }
    cpu_path = directory / "cpus.toml"
    cpus = _validate_list(Cpu, tables["cpus"].get("cpu", []), "cpus.toml") if cpu_path.exists() else {}
    return Catalog(gpus, models, ggml_types, quants, frameworks, tables, cpus)


def default_catalog() -> Catalog:
    """The shipped catalog, loaded once per process (from the warm cache when it is current)."""
    return load_default(CATALOG_DIR, load_catalog)
