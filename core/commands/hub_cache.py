"""What is remembered of the Hub between questions, all of it bounded (issue 24).

- `AskedModels`: a model read for one question answers that question and, by its exact repo id,
  later questions naming that repo -- but it never joins the names every question resolves against
  (only `/model add` does that: core.commands.model_lookup.HubModels). A question about it is
  answered with a catalog of its own (the shared catalog plus that one model), kept for the few
  models asked about most recently; least recently used out.
- `Searches`: the hits of a Hub search, for a few minutes (they are ranked again per question).
- `Misses`: a look-up that failed (no such repo, an architecture that can't be read, a timeout)
  is answered from memory for a while per failure kind, instead of costing the Hub ~13 requests
  again on every repeat.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from core.catalog.hub_limits import CacheLimits
from core.catalog.loader import Catalog
from core.catalog.model_source import ModelSourceError, RepoHit, SourcedModel
from core.catalog.published_files import forget_listing, remember_listing


class AskedModels:
    def __init__(self, limits: CacheLimits) -> None:
        self.limits = limits
        self._models: OrderedDict[str, SourcedModel] = OrderedDict()  # by model id (= repo, lower)
        self._catalogs: OrderedDict[tuple[int, str, str], Catalog] = OrderedDict()

    def __contains__(self, model_id: object) -> bool:
        return model_id in self._models

    def __len__(self) -> int:
        return len(self._models)

    def get(self, model_id: str | None) -> SourcedModel | None:
        found = self._models.get(model_id) if model_id else None
        if found is not None and model_id is not None:
            self._models.move_to_end(model_id)
        return found

    def add(self, sourced: SourcedModel, shared: frozenset[str]) -> SourcedModel:
        """Keep `sourced` (by its id); the least recently asked past the cap are forgotten, with
        their published files unless the shared overlay holds that id too."""
        mid = sourced.model.id
        self._models[mid] = sourced
        self._models.move_to_end(mid)
        # The estimator and the launch commands see only the Model: its published files by its id.
        remember_listing(sourced.model, sourced.listing)
        while len(self._models) > max(1, self.limits.asked):
            old, _ = self._models.popitem(last=False)
            if old not in shared:
                forget_listing(old)
            for key in [k for k in self._catalogs if k[1] == old]:
                del self._catalogs[key]
        return sourced

    def catalog(self, base: Catalog, model_id: str, alias: str = "") -> Catalog:
        """`base` with the asked model `model_id` in it (and `alias`, the name as typed, resolving to
        it exactly), for one question or a button under its answer."""
        sourced = self._models[model_id]
        key = (id(base), model_id, alias.lower())
        hit = self._catalogs.get(key)
        if hit is not None and hit.models.get(model_id) is not None:
            self._catalogs.move_to_end(key)
            return hit
        model = sourced.model
        if alias and alias not in model.aliases:
            model = replace(model, aliases=(*model.aliases, alias))
        made = replace(base, models={**base.models, model_id: model})
        self._catalogs[key] = made
        while len(self._catalogs) > max(1, self.limits.catalogs):
            self._catalogs.popitem(last=False)
        return made


@dataclass(frozen=True, slots=True)
class _Miss:
    until: float
    error: ModelSourceError


class Misses:
    def __init__(self, limits: CacheLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._seen: OrderedDict[str, _Miss] = OrderedDict()

    @staticmethod
    def key(kind: str, name: str) -> str:
        return f"{kind}:{name.strip().lower()}"

    def get(self, key: str) -> ModelSourceError | None:
        miss = self._seen.get(key)
        if miss is None:
            return None
        if self._clock() >= miss.until:
            del self._seen[key]
            return None
        return miss.error

    def forget(self, name: str) -> None:
        """Forget every failure remembered for `name` (a moderator added it: it is answered now)."""
        for kind in ("repo", "search"):
            self._seen.pop(self.key(kind, name), None)

    def add(self, key: str, error: ModelSourceError) -> None:
        """Remember `error` for its kind's time (a kind with none, such as "busy", is not kept)."""
        ttl = self.limits.negative_ttl_s.get(error.kind, 0.0)
        if ttl <= 0:
            return
        self._seen[key] = _Miss(self._clock() + ttl, error)
        self._seen.move_to_end(key)
        while len(self._seen) > max(1, self.limits.negative):
            self._seen.popitem(last=False)


class Searches:
    def __init__(self, limits: CacheLimits, clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._seen: OrderedDict[str, tuple[float, tuple[RepoHit, ...]]] = OrderedDict()

    def get(self, query: str) -> tuple[RepoHit, ...] | None:
        hit = self._seen.get(query.lower())
        if hit is None:
            return None
        if self._clock() >= hit[0]:
            del self._seen[query.lower()]
            return None
        return hit[1]

    def add(self, query: str, hits: tuple[RepoHit, ...]) -> None:
        if self.limits.search_ttl_s <= 0:
            return
        self._seen[query.lower()] = (self._clock() + self.limits.search_ttl_s, hits)
        self._seen.move_to_end(query.lower())
        while len(self._seen) > max(1, self.limits.searches):
            self._seen.popitem(last=False)
