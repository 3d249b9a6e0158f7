"""`ModelScopeSource`: ModelScope behind core.catalog.model_source.ModelSource, for people who
can't reach the Hugging Face Hub (selected by TOKBOT_MODEL_SOURCE=modelscope: bot/hub/select.py).

The Hub source's machinery unchanged -- the bounded pool of threads, one look-up in flight per repo,
the 5 s budget (the listing's 3 s share beside it), the least-recently-used cache with its fresh and
stale rules, catalogs/hub.toml [limits] -- with ModelScope's reads (bot/hub/ms_read.py) in place
of huggingface_hub's. The site comes from MODELSCOPE_ENDPOINT / MODELSCOPE_DOMAIN, the token from
MODELSCOPE_API_TOKEN, config.json files are kept under the source's cache folder (MODELSCOPE_CACHE
when none is given).
"""

from __future__ import annotations

import os
from pathlib import Path

from bot.hub import ms_read
from bot.hub.hf_read import Deadline, HubSettings
from bot.hub.hf_source import HuggingFaceSource
from bot.hub.ms_read import modelscope_endpoint
from bot.hub.quant_listing import RepoReader
from core.catalog.model_source import RepoHit, SourcedModel

__all__ = ["ModelScopeSource", "modelscope_endpoint"]


class ModelScopeSource(HuggingFaceSource):
    listing_reader: RepoReader | None = staticmethod(ms_read.read_quant_repo)

    def settings(self) -> HubSettings:
        cache = self.cache_dir or (
            Path(os.environ["MODELSCOPE_CACHE"]) if os.environ.get("MODELSCOPE_CACHE") else None
        )
        return HubSettings(
            endpoint=modelscope_endpoint(),
            token=os.environ.get("MODELSCOPE_API_TOKEN") or None,
            timeout_s=self.budget_s,
            cache_dir=cache,
            config=self.limits.config,
            reads=self.limits.reads,
        )

    @staticmethod
    def offline() -> bool:
        # ModelScope has no switch of HF_HUB_OFFLINE's kind; a cached model still answers a failure.
        return False

    def read_blocking(self, repo: str, settings: HubSettings, deadline: Deadline) -> SourcedModel:
        return ms_read.read_repo(repo, settings, deadline)

    def search_blocking(self, query: str, limit: int, settings: HubSettings) -> tuple[RepoHit, ...]:
        return ms_read.search_repos(query, limit, settings)
