"""`HuggingFaceSource`: the Hub behind core.catalog.model_source.ModelSource.

huggingface_hub is blocking, so each look-up runs on the Hub's own small pool of threads
(bot/hub/pool.py: never the event loop's default executor, never joined at shutdown) and never
blocks the event loop; the whole look-up (listing + config.json) has one time budget (5 s by
default), which the read itself also checks between its steps. One look-up is in flight per repo
(a second asker awaits the first), and what was read is cached, least recently used out past
catalogs/hub.toml [limits.cache] source: a fresh entry answers without asking the Hub, a stale one
answers when the Hub fails. Failures are remembered by the command layer (core.commands.hub_cache).

The library's own settings are honoured, read at each look-up (so a test or an operator can set
them late): HF_ENDPOINT (a mirror such as hf-mirror.com), HF_TOKEN (gated repos), HF_HUB_OFFLINE
(only the cache answers), HF_HUB_CACHE (where config.json files are kept).
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

from bot.hub.hf_read import Deadline, HubSettings, read_repo, search_repos
from bot.hub.pool import HubPool
from bot.hub.quant_listing import LISTING_BUDGET_S, RepoReader, read_listing, with_own_files
from core.catalog.hub_limits import HubLimits
from core.catalog.model_source import ModelSourceError, RepoHit, SourcedModel

DEFAULT_ENDPOINT = "https://huggingface.co"
BUDGET_S = 5.0  # total time one look-up may take
FRESH_S = 24 * 3600.0  # a cached model older than this is read again (and kept if the Hub fails)


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in {"1", "true", "yes", "on"}


class HuggingFaceSource:
    # The blocking reads this source runs on its pool (`read_blocking`, `search_blocking`,
    # `listing_reader`): the ModelScope source (bot/hub/ms_source.py) swaps them and `settings`, and
    # keeps the caching, the budgets and the pool.
    listing_reader: RepoReader | None = None  # None: the Hub's own (bot/hub/quant_listing.py)

    def __init__(
        self,
        *,
        budget_s: float = BUDGET_S,
        listing_budget_s: float = LISTING_BUDGET_S,
        fresh_s: float = FRESH_S,
        cache_dir: Path | None = None,
        clock: Callable[[], float] = time.monotonic,
        limits: HubLimits | None = None,
    ) -> None:
        self.budget_s = budget_s
        self.listing_budget_s = min(listing_budget_s, budget_s)
        self.fresh_s = fresh_s
        self.cache_dir = cache_dir
        self._clock = clock
        self.limits = limits or _shipped_limits()
        self.pool = HubPool(self.limits.reads.workers, self.limits.reads.queue)
        self._cache: OrderedDict[str, tuple[float, SourcedModel]] = OrderedDict()
        self._inflight: dict[str, asyncio.Task[SourcedModel]] = {}

    def settings(self) -> HubSettings:
        endpoint = (os.environ.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")
        token = os.environ.get("HF_TOKEN") or None
        cache = self.cache_dir or (
            Path(os.environ["HF_HUB_CACHE"]) if os.environ.get("HF_HUB_CACHE") else None
        )
        return HubSettings(
            endpoint=endpoint,
            token=token,
            timeout_s=self.budget_s,
            cache_dir=cache,
            config=self.limits.config,
            reads=self.limits.reads,
        )

    def read_blocking(self, repo: str, settings: HubSettings, deadline: Deadline) -> SourcedModel:
        return read_repo(repo, settings, deadline)

    def search_blocking(self, query: str, limit: int, settings: HubSettings) -> tuple[RepoHit, ...]:
        return search_repos(query, limit, settings)

    def close(self) -> None:
        """No new reads; those in flight are not waited for (their threads are daemons)."""
        self.pool.close()

    @staticmethod
    def offline() -> bool:
        return _truthy(os.environ.get("HF_HUB_OFFLINE"))

    def cached(self, repo: str) -> SourcedModel | None:
        entry = self._cache.get(repo.lower())
        return replace(entry[1], cached=True) if entry else None

    async def lookup(self, repo: str) -> SourcedModel:
        key = repo.lower()
        entry = self._cache.get(key)
        # An entry whose quant listing was not read is asked again (only the Hub failing keeps it).
        if entry and self._clock() - entry[0] < self.fresh_s and entry[1].listing.read:
            return replace(entry[1], cached=True)
        if self.offline():
            if entry:
                return replace(entry[1], cached=True, stale=True)
            raise ModelSourceError("offline", repo, "HF_HUB_OFFLINE is set and the model is not cached")
        task = self._inflight.get(key)
        if task is None:
            task = asyncio.ensure_future(self._read(repo))
            self._inflight[key] = task
            task.add_done_callback(lambda _t: self._inflight.pop(key, None))
        try:
            found = await asyncio.shield(task)
        except ModelSourceError:
            if entry:
                return replace(entry[1], cached=True, stale=True)
            raise
        if key not in self._cache or self._cache[key][1] is not found:
            self._keep(key, found)
        return found

    def _keep(self, key: str, found: SourcedModel) -> None:
        self._cache[key] = (self._clock(), found)
        self._cache.move_to_end(key)
        while len(self._cache) > max(1, self.limits.cache.source):
            self._cache.popitem(last=False)

    async def _read(self, repo: str) -> SourcedModel:
        """config.json and the quant listing at once; the listing never fails the look-up."""
        settings = self.settings()
        listing = asyncio.ensure_future(
            read_listing(
                repo, settings, budget_s=self.listing_budget_s, run=self.pool.run, reader=self.listing_reader
            )
        )
        deadline = Deadline(self.budget_s)
        try:
            found = await asyncio.wait_for(
                self.pool.run(repo, partial(self.read_blocking, repo, settings, deadline)), self.budget_s
            )
        except TimeoutError as exc:
            listing.cancel()
            raise ModelSourceError(
                "timeout", repo, f"{settings.public} did not answer within {self.budget_s:g} s"
            ) from exc
        except BaseException:
            listing.cancel()
            raise
        # The repo's own GGUF files count too (listed with the config read), ahead of the others.
        quants = with_own_files(await listing, found.provenance.repo, found.files)
        return replace(found, listing=quants)

    async def search(self, query: str, limit: int = 5) -> tuple[RepoHit, ...]:
        if self.offline():
            raise ModelSourceError("offline", query, "HF_HUB_OFFLINE is set")
        settings = self.settings()
        try:
            return await asyncio.wait_for(
                self.pool.run(query, partial(self.search_blocking, query, limit, settings)), self.budget_s
            )
        except TimeoutError as exc:
            raise ModelSourceError(
                "timeout", query, f"{settings.public} did not answer within {self.budget_s:g} s"
            ) from exc


def _shipped_limits() -> HubLimits:
    from core.catalog.loader import default_catalog
    from core.catalog.sections import sections

    return sections(default_catalog()).hub.limits
