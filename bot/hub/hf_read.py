"""Blocking reads from the Hub: a repo's file listing and config.json -> a SourcedModel.

Run in a worker thread by `HuggingFaceSource`; every huggingface_hub / network failure leaves as a
ModelSourceError whose kind the reply can name. Nothing here caches: a half-read repo raises.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from huggingface_hub import HfApi, hf_hub_download
from huggingface_hub.errors import (
    EntryNotFoundError,
    GatedRepoError,
    HfHubHTTPError,
    LocalEntryNotFoundError,
    RepositoryNotFoundError,
    RevisionNotFoundError,
)
from huggingface_hub.utils._headers import build_hf_headers
from huggingface_hub.utils._http import get_session, hf_raise_for_status

from core.catalog.from_config import ConfigError, read_config
from core.catalog.model_source import (
    FailureKind,
    ModelSourceError,
    Provenance,
    RepoFile,
    RepoHit,
    SourcedModel,
)


def _http_errors() -> tuple[type[BaseException], ...]:
    """The HTTP client's own exception base(s): huggingface_hub 1.x uses httpx, 2.x httpx2."""
    found: list[type[BaseException]] = []
    for name in ("httpx2", "httpx"):
        try:
            module = __import__(name)
        except ImportError:
            continue
        found.append(module.HTTPError)
    return tuple(found)


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".gguf", ".pt", ".pth", ".npz")


@dataclass(frozen=True, slots=True)
class HubSettings:
    endpoint: str  # "https://huggingface.co" or a mirror
    token: str | None
    timeout_s: float  # per request
    cache_dir: Path | None = None  # where config.json is kept (None: huggingface_hub's own cache)


def _kind_of(exc: BaseException) -> FailureKind:
    """What a huggingface_hub / httpx exception means for the reply."""
    if isinstance(exc, GatedRepoError):
        return "gated"
    if isinstance(exc, LocalEntryNotFoundError):  # the download could not reach the Hub
        return "unreachable"
    if isinstance(exc, RepositoryNotFoundError | RevisionNotFoundError | EntryNotFoundError):
        return "not_found"
    if isinstance(exc, HfHubHTTPError):
        status = exc.response.status_code if exc.response is not None else 0
        if status == 429:
            return "rate_limited"
        if status in {401, 403}:
            return "gated"
        if status == 404:
            return "not_found"
        return "server_error" if status >= 500 else "unreachable"
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return "timeout"
    return "unreachable"


_HUB_ERRORS: tuple[type[BaseException], ...] = (
    HfHubHTTPError,
    EntryNotFoundError,
    OSError,
    TimeoutError,
    *_http_errors(),
)


def _month(created: Any) -> str:
    return created.strftime("%Y-%m") if isinstance(created, datetime) else ""


def read_repo(repo: str, settings: HubSettings) -> SourcedModel:
    """The model in `repo` at its current revision; raises ModelSourceError."""
    api = HfApi(endpoint=settings.endpoint, token=settings.token)
    try:
        info = api.model_info(repo, files_metadata=True, timeout=settings.timeout_s)
        files = tuple(RepoFile(s.rfilename, s.size) for s in info.siblings or ())
        if not any(f.path == "config.json" for f in files):
            raise ModelSourceError("not_found", repo, "the repo has no config.json")
        if not any(f.path.endswith(WEIGHT_SUFFIXES) for f in files):
            raise ModelSourceError("no_weights", repo, "the repo holds no weight files")
        path = hf_hub_download(
            repo,
            "config.json",
            revision=info.sha,
            endpoint=settings.endpoint,
            token=settings.token,
            cache_dir=settings.cache_dir,
            etag_timeout=settings.timeout_s,
        )
    except ModelSourceError:
        raise
    except _HUB_ERRORS as exc:
        raise ModelSourceError(_kind_of(exc), repo, f"{type(exc).__name__}: {exc}") from exc
    revision = info.sha or ""
    config_url = f"{settings.endpoint}/{info.id}/blob/{revision}/config.json"
    try:
        config = json.loads(Path(path).read_text(encoding="utf-8"))
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
    except (OSError, ValueError) as exc:
        raise ModelSourceError("malformed", repo, f"config.json: {exc}") from exc
    try:
        reading = read_config(config, model_id=info.id.lower(), repo=info.id, source=config_url)
    except ConfigError as exc:
        raise ModelSourceError("unsupported", repo, str(exc)) from exc
    published = info.safetensors.total if info.safetensors else None
    model = replace(
        reading.model, family=reading.model_type, aliases=(info.id,), release=_month(info.created_at)
    )
    provenance = Provenance(
        repo=info.id,
        revision=revision,
        read_at=datetime.now(UTC).isoformat(timespec="seconds"),
        endpoint=settings.endpoint,
        config_url=config_url,
        published_params=published,
    )
    return SourcedModel(model=model, params=reading.params, provenance=provenance, files=files)


def search_repos(query: str, limit: int, settings: HubSettings) -> tuple[RepoHit, ...]:
    """Repos whose id matches `query`, most downloaded first.

    One GET of the listing huggingface_hub's `list_models(search=, sort="downloads")` reads, on the
    library's own session and headers: `list_models` pages through `http_backoff`, which retries a
    refused connection five times over ~23 s -- far past the question's budget, in a thread that
    can't be stopped. One page of `limit` hits is all a question needs."""
    url = f"{settings.endpoint}/api/models"
    params: dict[str, str | int] = {"search": query, "sort": "downloads", "direction": -1, "limit": limit}
    try:
        response = get_session().get(
            url, params=params, headers=build_hf_headers(token=settings.token), timeout=settings.timeout_s
        )
        hf_raise_for_status(response)
        found = response.json()
        if not isinstance(found, list):
            raise ModelSourceError("malformed", query, "the search answer is not a list")
        return tuple(
            RepoHit(str(m.get("id") or m.get("modelId")), int(m.get("downloads") or 0))
            for m in found[:limit]
            if isinstance(m, dict) and (m.get("id") or m.get("modelId"))
        )
    except ModelSourceError:
        raise
    except ValueError as exc:  # not JSON
        raise ModelSourceError("malformed", query, f"the search answer: {exc}") from exc
    except _HUB_ERRORS as exc:
        raise ModelSourceError(_kind_of(exc), query, f"{type(exc).__name__}: {exc}") from exc
