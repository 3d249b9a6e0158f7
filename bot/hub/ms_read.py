"""Blocking reads from ModelScope: a repo's file listing and config.json -> a SourcedModel.

ModelScope (www.modelscope.cn, modelscope.ai) serves the same repos as the Hub for people who can't
reach huggingface.co. Its `modelscope` client can be pointed at any site by MODELSCOPE_DOMAIN (tried:
it asks a local stand-in exactly as it asks the real site), but it is not what runs here: every
call retries transient failures with back-off up to 16 s a step (modelscope_hub/_openapi.py) -- past
a question's 5 s budget, in a pool thread that can't be stopped -- and it pulls requests and
cryptography into the process. So the three calls the bot needs go to ModelScope's HTTP API on the
HTTP client the Hub adapter already uses (huggingface_hub's session), one request each with the
per-request timeout, in the shapes the `modelscope` client reads:

- `GET /api/v1/models/{repo}/repo/files?Revision=master&Recursive=true` -> `Data.Files[{Path, Size,
  Revision}]`: the listing (weights and GGUF sizes) and the revision it was read at;
- `GET /api/v1/models/{repo}/repo?Revision=REV&FilePath=config.json` -> the file itself, read up to
  [limits.config] max_bytes and kept on disk per revision (the source's cache folder);
- `GET /openapi/v1/models?search=&sort=downloads&page_size=` -> `data.models[{id, downloads}]`.

The site is named as ModelScope's users name it: MODELSCOPE_ENDPOINT, else MODELSCOPE_DOMAIN (a bare
domain gets https://), else https://www.modelscope.cn; MODELSCOPE_API_TOKEN is sent as a bearer
token. Failures leave as the ModelSourceError kinds the Hub's do (bot/hub/hf_read.py).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import quote

from huggingface_hub.utils._http import get_session

from bot.hub.endpoint import scrub
from bot.hub.hf_read import (
    _HUB_ERRORS,
    DATA_ERRORS,
    Deadline,
    HubSettings,
    check_files,
    config_from_text,
    sourced_model,
    status_kind,
)
from bot.hub.quant_listing import ListingAnswer
from core.catalog.model_source import (
    ModelSourceError,
    Provenance,
    RepoFile,
    RepoHit,
    SourcedModel,
)
from core.catalog.published_files import files_from_listing

DEFAULT_ENDPOINT = "https://www.modelscope.cn"


def modelscope_endpoint(environ: Mapping[str, str] | None = None) -> str:
    """The ModelScope site, by the precedence its own client uses (modelscope_hub/config.py)."""
    env = os.environ if environ is None else environ
    site = (env.get("MODELSCOPE_ENDPOINT") or "").strip() or (env.get("MODELSCOPE_DOMAIN") or "").strip()
    if not site:
        return DEFAULT_ENDPOINT
    if not site.lower().startswith(("http://", "https://")):
        site = f"https://{site}"
    return site.rstrip("/")


class _Status(Exception):
    """A non-2xx answer, kept apart so its status names the failure."""

    def __init__(self, status: int, text: str) -> None:
        super().__init__(f"HTTP {status}: {text[:200]}")
        self.status = status


# What a read may raise that names a failure: an HTTP status, the client's own errors, odd data.
_READ_ERRORS: tuple[type[BaseException], ...] = (_Status, *_HUB_ERRORS, *DATA_ERRORS)


def _headers(settings: HubSettings) -> dict[str, str]:
    return {"Authorization": f"Bearer {settings.token}"} if settings.token else {}


def _get_json(url: str, params: dict[str, str | int], settings: HubSettings) -> Any:
    response = get_session().get(url, params=params, headers=_headers(settings), timeout=settings.timeout_s)
    if response.status_code >= 400:
        raise _Status(response.status_code, response.text)
    return response.json()


def _failure(exc: BaseException, what: str, settings: HubSettings) -> ModelSourceError:
    detail = scrub(f"{type(exc).__name__}: {exc}", settings.endpoint)
    if isinstance(exc, _Status):
        return ModelSourceError(status_kind(exc.status), what, detail)
    if isinstance(exc, TimeoutError) or "Timeout" in type(exc).__name__:
        return ModelSourceError("timeout", what, detail)
    if isinstance(exc, _HUB_ERRORS):
        return ModelSourceError("unreachable", what, detail)
    return ModelSourceError("malformed", what, detail[:300])


def _repo_url(settings: HubSettings, repo: str) -> str:
    return f"{settings.endpoint}/api/v1/models/{quote(repo, safe='/')}"


def list_files(repo: str, settings: HubSettings) -> tuple[tuple[RepoFile, ...], str]:
    """(the repo's files with sizes, the revision they were listed at); raises ModelSourceError."""
    try:
        body = _get_json(
            f"{_repo_url(settings, repo)}/repo/files", {"Revision": "master", "Recursive": "true"}, settings
        )
        data = body.get("Data") or body.get("data") or {}
        entries = [e for e in (data.get("Files") or [])[: settings.reads.max_siblings] if isinstance(e, dict)]
        files = tuple(
            RepoFile(str(e["Path"]), e["Size"] if isinstance(e.get("Size"), int) else None)
            for e in entries
            if e.get("Type", "blob") != "tree" and e.get("Path")
        )
        revision = next((str(e["Revision"]) for e in entries if e.get("Revision")), "master")
    except ModelSourceError:
        raise
    except _READ_ERRORS as exc:
        raise _failure(exc, repo, settings) from exc
    return files, revision


def _download_config(repo: str, revision: str, settings: HubSettings) -> str:
    """config.json's text, read no further than max_bytes; kept per revision when a folder is set
    (a revision's files never change, so a kept one is never asked again)."""
    kept = settings.cache_dir / "modelscope" / repo / revision / "config.json" if settings.cache_dir else None
    if kept is not None and kept.is_file():
        return kept.read_text(encoding="utf-8")
    limit = settings.config.max_bytes
    params = {"Revision": revision, "FilePath": "config.json"}
    with get_session().stream(
        "GET",
        f"{_repo_url(settings, repo)}/repo",
        params=params,
        headers=_headers(settings),
        timeout=settings.timeout_s,
    ) as response:
        if response.status_code >= 400:
            raise _Status(response.status_code, response.read().decode("utf-8", "replace"))
        data = b""
        for chunk in response.iter_bytes():
            data += chunk
            if len(data) > limit:
                raise ValueError(f"config.json is over {limit} bytes")
    text = data.decode("utf-8")
    if kept is not None:
        kept.parent.mkdir(parents=True, exist_ok=True)
        kept.write_text(text, encoding="utf-8")
    return text


def read_repo(repo: str, settings: HubSettings, deadline: Deadline | None = None) -> SourcedModel:
    """The model in `repo` on ModelScope at its current revision; raises ModelSourceError."""
    deadline = deadline or Deadline(settings.timeout_s)
    files, revision = list_files(repo, settings)
    check_files(files, repo, settings)
    deadline.check(repo, "config.json")
    try:
        text = _download_config(repo, revision, settings)
    except _READ_ERRORS as exc:
        raise _failure(exc, repo, settings) from exc
    deadline.check(repo, "reading config.json")
    config = config_from_text(text, repo, settings.config)
    provenance = Provenance(
        repo=repo,
        revision=revision,
        read_at=datetime.now(UTC).isoformat(timespec="seconds"),
        endpoint=settings.public,
        config_url=f"{settings.public}/models/{repo}/file/view/{revision}/config.json",
        site="ModelScope",
    )
    return sourced_model(repo, config, files, settings, provenance)


def read_quant_repo(
    asked: str, settings: HubSettings, quant_ids: tuple[str, ...], with_files: bool
) -> ListingAnswer:
    """One candidate quantized repo (bot/hub/quant_listing.py's reader for ModelScope); never raises."""
    try:
        files, revision = list_files(asked, settings)
    except ModelSourceError as exc:
        return (
            ListingAnswer(asked)
            if exc.kind == "not_found"
            else ListingAnswer(asked, error=f"{asked}: {exc.kind}")
        )
    if not with_files:
        return ListingAnswer(asked, asked)
    url = f"{settings.public}/models/{asked}/files?Revision={revision}"
    entries = ((f.path, f.size) for f in files)
    return ListingAnswer(asked, asked, files_from_listing(asked, entries, quant_ids, source=url))


def _hit(entry: dict[str, Any]) -> RepoHit | None:
    repo = entry.get("id") or entry.get("model_id")
    if not repo and (entry.get("owner") or entry.get("Path")) and (entry.get("name") or entry.get("Name")):
        repo = f"{entry.get('owner') or entry.get('Path')}/{entry.get('name') or entry.get('Name')}"
    if not isinstance(repo, str) or "/" not in repo:
        return None
    return RepoHit(repo[:200], int(entry.get("downloads") or entry.get("Downloads") or 0))


def search_repos(query: str, limit: int, settings: HubSettings) -> tuple[RepoHit, ...]:
    """Repos matching `query`, most downloaded first (one page of `limit`)."""
    size = min(limit, settings.reads.search_hits)
    try:
        body = _get_json(
            f"{settings.endpoint}/openapi/v1/models",
            {"search": query, "sort": "downloads", "page_number": 1, "page_size": size},
            settings,
        )
        data = body.get("data") or body.get("Data") or {}
        models = data.get("models") or data.get("Models") or data.get("items") or []
        if not isinstance(models, list):
            raise ModelSourceError("malformed", query, "the search answer holds no list")
        hits = [h for h in (_hit(m) for m in models[:size] if isinstance(m, dict)) if h is not None]
    except ModelSourceError:
        raise
    except _READ_ERRORS as exc:
        raise _failure(exc, query, settings) from exc
    return tuple(sorted(hits, key=lambda h: -h.downloads))


__all__ = [
    "DEFAULT_ENDPOINT",
    "list_files",
    "modelscope_endpoint",
    "read_quant_repo",
    "read_repo",
    "search_repos",
]
