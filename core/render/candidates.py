"""The "did you mean" list: candidate ids as the names people know, one way everywhere (/ask asking
back, /submit, /subscribe, /accuracy)."""

from __future__ import annotations

from collections.abc import Iterable

from core.catalog.loader import Catalog
from core.i18n import Lang

SHOWN = 3  # more than three names is a list to read, not a question to answer


def candidate_names(ids: Iterable[str], catalog: Catalog, lang: Lang, kind: str, limit: int = SHOWN) -> str:
    """The first `limit` candidates of `kind` ("gpu" | "model" | "framework" | ...) by name, joined;
    an id the catalog doesn't name shows as itself; "" for none."""
    del lang  # names are the catalog's, the same in both languages; the separator too
    return ", ".join(_name(i, catalog, kind) for i in list(ids)[:limit])


def _name(entry_id: str, catalog: Catalog, kind: str) -> str:
    if kind == "gpu" and entry_id in catalog.gpus:
        return catalog.gpus[entry_id].name
    if kind == "model" and entry_id in catalog.models:
        return catalog.models[entry_id].name
    return entry_id
