"""Blocking reads from the Hub: a repo's file listing and config.json -> a SourcedModel.

Run on the Hub pool's threads by `HuggingFaceSource` (bot/hub/pool.py); every huggingface_hub /
network failure leaves as a ModelSourceError whose kind the reply can name, and so does anything
else the Hub's data makes go wrong (issue 24): a config.json larger than [limits.config] max_bytes
is never downloaded, one nested too deep, outside any real model's range or that makes a reader
raise is "malformed", a model info whose dates aren't dates too -- never the generic "went wrong".
A read checks its `Deadline` between steps, so one the question has given up on stops at the next
step instead of running on. Nothing here caches: a half-read repo raises.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
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

from bot.hub.endpoint import public_endpoint, scrub
from core.catalog.config_bounds import check_json_depth
from core.catalog.from_config import ConfigError, ConfigRangeError, read_config
from core.catalog.hub_limits import ConfigLimits, ReadLimits
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
    config: ConfigLimits = field(default_factory=ConfigLimits)
    reads: ReadLimits = field(default_factory=ReadLimits)

    @property
    def public(self) -> str:
        """The endpoint as replies and links name it: no userinfo (bot/hub/endpoint.py)."""
        return public_endpoint(self.endpoint)


@dataclass
class Deadline:
    """A cooperative bound on one read: checked between its steps (a thread can't be stopped from
    outside). `clock` is injectable so a test can count steps instead of timing them."""

    seconds: float
    clock: Callable[[], float] = time.monotonic
    start: float = -1.0

    def __post_init__(self) -> None:
        if self.start < 0:
            self.start = self.clock()

    def check(self, repo: str, step: str) -> None:
        if self.clock() - self.start > self.seconds:
            raise ModelSourceError("timeout", repo, f"gave up before {step} ({self.seconds:g} s)")


def status_kind(status: int) -> FailureKind:
    """What an HTTP status from a model site says went wrong (the Hub's and ModelScope's alike)."""
    if status == 429:
        return "rate_limited"
    if status in {401, 403}:
        return "gated"
    if status == 404:
        return "not_found"
    return "server_error" if status >= 500 else "unreachable"


def _kind_of(exc: BaseException) -> FailureKind:
    """What a huggingface_hub / httpx exception means for the reply."""
    if isinstance(exc, GatedRepoError):
        return "gated"
    if isinstance(exc, LocalEntryNotFoundError):  # the download could not reach the Hub
        return "unreachable"
    if isinstance(exc, RepositoryNotFoundError | RevisionNotFoundError | EntryNotFoundError):
        return "not_found"
    if isinstance(exc, HfHubHTTPError):
        return status_kind(exc.response.status_code if exc.response is not None else 0)
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
# What the Hub's own data can make go wrong in the client or a reader: a field of the wrong type,
# a date that isn't one, a nesting deeper than the parser's stack, an absurd number.
DATA_ERRORS: tuple[type[BaseException], ...] = (
    ValueError,
    TypeError,
    KeyError,
    AttributeError,
    IndexError,
    ArithmeticError,
    RecursionError,
    MemoryError,
)


_CONFIG_FILE_ERRORS: tuple[type[BaseException], ...] = (OSError, ConfigError, *DATA_ERRORS)


def _failure(exc: BaseException, repo: str, settings: HubSettings) -> ModelSourceError:
    """A client exception as the error a reply names; its text never carries the endpoint's userinfo."""
    detail = scrub(f"{type(exc).__name__}: {exc}", settings.endpoint)
    kind: FailureKind = _kind_of(exc) if isinstance(exc, _HUB_ERRORS) else "malformed"
    return ModelSourceError(kind, repo, detail)


def _month(created: Any) -> str:
    return created.strftime("%Y-%m") if isinstance(created, datetime) else ""


def _files(info: Any, repo: str, settings: HubSettings) -> tuple[RepoFile, ...]:
    siblings = list(info.siblings or ())[: settings.reads.max_siblings]
    files = tuple(RepoFile(str(s.rfilename), s.size if isinstance(s.size, int) else None) for s in siblings)
    return check_files(files, repo, settings)


def check_files(files: tuple[RepoFile, ...], repo: str, settings: HubSettings) -> tuple[RepoFile, ...]:
    """`files` when the repo can be read: a config.json within [limits.config] and some weights
    (shared with the ModelScope source, whose listing has its own shape)."""
    if not any(f.path == "config.json" for f in files):
        raise ModelSourceError("not_found", repo, "the repo has no config.json")
    if not any(f.path.endswith(WEIGHT_SUFFIXES) for f in files):
        raise ModelSourceError("no_weights", repo, "the repo holds no weight files")
    size = next(f.size for f in files if f.path == "config.json")
    if size is not None and size > settings.config.max_bytes:
        raise ModelSourceError("malformed", repo, f"config.json is {size} bytes")
    return files


def _fetch(repo: str, settings: HubSettings, deadline: Deadline) -> tuple[Any, tuple[RepoFile, ...], str]:
    """(model info, files, local path of config.json): the network part of a read."""
    api = HfApi(endpoint=settings.endpoint, token=settings.token)
    try:
        info = api.model_info(repo, files_metadata=True, timeout=settings.timeout_s)
        files = _files(info, repo, settings)
        deadline.check(repo, "config.json")
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
    except (*_HUB_ERRORS, *DATA_ERRORS) as exc:
        raise _failure(exc, repo, settings) from exc
    return info, files, path


def _config(path: str, repo: str, limits: ConfigLimits) -> dict[str, Any]:
    try:
        local = Path(path)
        if local.stat().st_size > limits.max_bytes:  # the listing may not have said its size
            raise ValueError(f"{local.stat().st_size} bytes")
        text = local.read_text(encoding="utf-8")
    except _CONFIG_FILE_ERRORS as exc:
        raise ModelSourceError("malformed", repo, f"config.json: {type(exc).__name__}: {exc}"[:300]) from exc
    return config_from_text(text, repo, limits)


def config_from_text(text: str, repo: str, limits: ConfigLimits) -> dict[str, Any]:
    """config.json's text as a dict, or "malformed" (too deep, not JSON, not an object)."""
    try:
        check_json_depth(text, limits.max_depth)  # before the parser recurses once per level
        config = json.loads(text)
        if not isinstance(config, dict):
            raise ValueError("not a JSON object")
    except _CONFIG_FILE_ERRORS as exc:
        raise ModelSourceError("malformed", repo, f"config.json: {type(exc).__name__}: {exc}"[:300]) from exc
    return config


def read_repo(repo: str, settings: HubSettings, deadline: Deadline | None = None) -> SourcedModel:
    """The model in `repo` at its current revision; raises ModelSourceError."""
    deadline = deadline or Deadline(settings.timeout_s)
    info, files, path = _fetch(repo, settings, deadline)
    deadline.check(repo, "reading config.json")
    revision = str(info.sha or "")
    repo_id = str(info.id or repo)
    config_url = f"{settings.public}/{repo_id}/blob/{revision}/config.json"
    config = _config(path, repo, settings.config)
    published = info.safetensors.total if info.safetensors else None
    return sourced_model(
        repo,
        config,
        files,
        settings,
        Provenance(
            repo=repo_id,
            revision=revision,
            read_at=datetime.now(UTC).isoformat(timespec="seconds"),
            endpoint=settings.public,
            config_url=config_url,
            published_params=published if isinstance(published, int) else None,
        ),
        release=_month(info.created_at),
    )


def sourced_model(
    repo: str,
    config: dict[str, Any],
    files: tuple[RepoFile, ...],
    settings: HubSettings,
    provenance: Provenance,
    release: str = "",
) -> SourcedModel:
    """config.json read into the catalog's Model, whichever site served it (Hub or ModelScope)."""
    repo_id = provenance.repo
    try:
        reading = read_config(
            config,
            model_id=repo_id.lower(),
            repo=repo_id,
            source=provenance.config_url,
            limits=settings.config,
        )
    except ConfigRangeError as exc:
        raise ModelSourceError("malformed", repo, str(exc)[:300]) from exc
    except ConfigError as exc:
        raise ModelSourceError("unsupported", repo, str(exc)[:300]) from exc
    except DATA_ERRORS as exc:  # a reader tripped over a value of a shape no real config has
        raise ModelSourceError("malformed", repo, f"{type(exc).__name__}: {exc}"[:300]) from exc
    model = replace(reading.model, family=reading.model_type, aliases=(repo_id,), release=release)
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
            RepoHit(str(m.get("id") or m.get("modelId"))[:200], int(m.get("downloads") or 0))
            for m in found[: min(limit, settings.reads.search_hits)]
            if isinstance(m, dict) and (m.get("id") or m.get("modelId"))
        )
    except ModelSourceError:
        raise
    except (*_HUB_ERRORS, *DATA_ERRORS) as exc:  # not JSON, odd fields, a refused connection
        raise _failure(exc, query, settings) from exc
