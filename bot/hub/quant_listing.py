"""The quantized repos of a model on the Hub: every GGUF file's size, and which AWQ / FP8 / MLX repos exist.

Asked beside the config read (bot/hub/hf_source.py), within its own share of the question's time
budget: each candidate repo (catalogs/quant_repos.toml, publisher order: the original publisher's
own `-GGUF` repo, then ggml-org, bartowski, unsloth, lmstudio-community, mradermacher) is one
`model_info(files_metadata=True)` on the Hub pool (bot/hub/pool.py), all at once. A repo that doesn't exist is
simply not there; a repo that failed or didn't answer in time is named in `QuantListing.error`, and
the listing counts as not read (`read=False`): sizes are then computed tensor by tensor, the reply
says the listing was not read, and the next look-up asks again.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, replace
from functools import partial
from typing import Any

from huggingface_hub import HfApi

from bot.hub.hf_read import _HUB_ERRORS, DATA_ERRORS, HubSettings, _kind_of
from core.catalog.loader import Catalog, default_catalog
from core.catalog.model_source import RepoFile
from core.catalog.published_files import (
    PublishedFile,
    PublishedRepo,
    QuantListing,
    files_from_listing,
    gguf_repo_names,
    preferred,
    serving_repo_names,
)

LISTING_BUDGET_S = 3.0  # the listing's share of the 5 s look-up (it runs beside the config read)


@dataclass(frozen=True, slots=True)
class ListingAnswer:
    asked: str
    repo: str = ""  # the repo's own id as the Hub spells it ("" when it does not exist)
    files: tuple[PublishedFile, ...] = ()
    error: str = ""  # a failure other than "no such repo"


def _read(asked: str, settings: HubSettings, quant_ids: tuple[str, ...], with_files: bool) -> ListingAnswer:
    """One candidate repo: its GGUF files (sizes summed per quant), or only whether it exists."""
    api = HfApi(endpoint=settings.endpoint, token=settings.token)
    try:
        info = api.model_info(asked, files_metadata=with_files, timeout=settings.timeout_s)
        repo = str(info.id or asked)
        if not with_files:
            return ListingAnswer(asked, repo)
        siblings = list(info.siblings or ())[: settings.reads.max_siblings]
        entries = [(str(s.rfilename), s.size if isinstance(s.size, int) else None) for s in siblings]
        url = f"{settings.public}/{repo}/tree/{info.sha or 'main'}"
        return ListingAnswer(asked, repo, files_from_listing(repo, entries, quant_ids, source=url))
    except _HUB_ERRORS as exc:
        kind = _kind_of(exc)
        return ListingAnswer(asked) if kind == "not_found" else ListingAnswer(asked, error=f"{asked}: {kind}")
    except DATA_ERRORS:  # the Hub's answer about this repo is odd: the repo counts as not read
        return ListingAnswer(asked, error=f"{asked}: malformed")


Runner = Callable[[str, Callable[[], ListingAnswer]], Awaitable[ListingAnswer]]
# One candidate repo read (blocking): the Hub's `_read` here, ModelScope's in bot/hub/ms_read.py.
RepoReader = Callable[[str, HubSettings, tuple[str, ...], bool], ListingAnswer]


async def _in_thread(what: str, call: Callable[[], ListingAnswer]) -> ListingAnswer:
    return await asyncio.to_thread(call)  # only where no pool is given (a script, a test)


def gguf_quant_ids(catalog: Catalog) -> tuple[str, ...]:
    return tuple(q.id for q in catalog.quants.values() if q.format == "gguf")


async def read_listing(
    base_repo: str,
    settings: HubSettings,
    *,
    budget_s: float = LISTING_BUDGET_S,
    catalog: Catalog | None = None,
    run: Runner | None = None,
    reader: RepoReader | None = None,
) -> QuantListing:
    """What quantized repos of `base_repo` exist and what their GGUF files weigh; never raises.
    `run` puts each read on the Hub pool (HubPool.run)."""
    runner: Runner = run or _in_thread
    read_one: RepoReader = reader or _read
    catalog = catalog or default_catalog()
    table = catalog.tables.get("quant_repos", {})
    quant_ids = gguf_quant_ids(catalog)
    gguf = gguf_repo_names(base_repo, table)
    serving = serving_repo_names(base_repo, table)
    jobs: list[asyncio.Future[ListingAnswer]] = [
        asyncio.ensure_future(_guarded(runner, name, partial(read_one, name, settings, quant_ids, True)))
        for name in gguf
    ]
    jobs += [
        asyncio.ensure_future(_guarded(runner, name, partial(read_one, name, settings, quant_ids, False)))
        for _, name in serving
    ]
    tried = (*gguf, *(name for _, name in serving))
    if not jobs:
        return QuantListing(read=True)
    try:
        done, pending = await asyncio.wait(jobs, timeout=budget_s)
    finally:
        for job in jobs:
            job.cancel()  # its thread finishes on its own; the answer is not waited for
    answers = [_answer(job, name, done) for job, name in zip(jobs, tried, strict=True)]
    errors = [a.error for a in answers if a.error]
    gguf_answers = answers[: len(gguf)]
    files = preferred([a.files for a in gguf_answers])
    repos = tuple(
        PublishedRepo(quant, a.repo)
        for (quant, _), a in zip(serving, answers[len(gguf) :], strict=True)
        if a.repo
    )
    return QuantListing(
        files=files,
        repos=repos,
        read=not errors,
        tried=tried,
        found=tuple(a.repo for a in gguf_answers if a.repo),
        error="; ".join(errors),
    )


async def _guarded(run: Runner, name: str, call: Callable[[], ListingAnswer]) -> ListingAnswer:
    """One read that never raises: a full pool ("busy") or an error no read expected is an answer
    naming it, so no job is left holding an exception nobody retrieves."""
    try:
        return await run(name, call)
    except Exception as exc:  # noqa: BLE001 - the listing never fails the look-up
        return ListingAnswer(name, error=f"{name}: {getattr(exc, 'kind', type(exc).__name__)}")


def _answer(job: asyncio.Future[ListingAnswer], name: str, done: set[Any]) -> ListingAnswer:
    return job.result() if job in done else ListingAnswer(name, error=f"{name}: timeout")


def with_own_files(
    listing: QuantListing, repo: str, own_files: Iterable[RepoFile], catalog: Catalog | None = None
) -> QuantListing:
    """`listing` with the GGUF files the model's own repo holds first (some publishers ship them)."""
    own = files_from_listing(
        repo, ((f.path, f.size) for f in own_files), gguf_quant_ids(catalog or default_catalog())
    )
    if not own:
        return listing
    return replace(listing, files=preferred([own, listing.files]))
