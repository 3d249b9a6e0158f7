"""The model-source port: what looking a model up outside the catalog returns.

`core` stays offline: an adapter at the edge (bot/hub/: the Hugging Face Hub) implements
`ModelSource`, and core code only sees the same `Model` the catalog holds plus where it was read
(`Provenance`) -- so a reply can say "Qwen3-Coder-30B-A3B-Instruct · Hugging Face", and name the
repo, revision and time it was read. A failed look-up is a `ModelSourceError` whose `kind` says
what went wrong, so the reply can say it calmly ("the Hub did not answer within 5 s").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol
from urllib.parse import urlsplit

from core.catalog.from_config import ParamCount
from core.catalog.model import Model
from core.catalog.published_files import QuantListing

FailureKind = Literal[
    "offline",  # HF_HUB_OFFLINE is set and nothing is cached
    "unreachable",  # connection refused, DNS, TLS
    "timeout",  # no answer within the look-up's time budget
    "rate_limited",  # HTTP 429
    "gated",  # the repo needs accepted terms or a token (HF_TOKEN)
    "not_found",  # no such repo, or no config.json in it
    "malformed",  # config.json is not JSON, truncated, too big or deep, or outside any real model's range
    "unsupported",  # the architecture cannot be read (ConfigError names the model_type / field)
    "no_weights",  # the repo holds no weight files
    "server_error",  # 5xx
    "busy",  # the bot's own Hub pool is full (too many look-ups at once): nothing was asked
    "budget",  # this person or chat used its Hub look-ups for now (catalogs/hub.toml [limits.budget])
]


class ModelSourceError(Exception):
    """A look-up that did not produce a model; `kind` for the reply, the message for details."""

    def __init__(self, kind: FailureKind, repo: str, detail: str) -> None:
        super().__init__(f"{repo}: {kind}: {detail}")
        self.kind: FailureKind = kind
        self.repo = repo
        self.detail = detail


@dataclass(frozen=True, slots=True)
class RepoFile:
    path: str
    size: int | None  # bytes, None when the listing did not say


@dataclass(frozen=True, slots=True)
class Provenance:
    repo: str  # "Qwen/Qwen3-Coder-30B-A3B-Instruct"
    revision: str  # the commit the files were read at
    read_at: str  # ISO 8601 UTC
    endpoint: str  # "https://huggingface.co" or a mirror (HF_ENDPOINT)
    config_url: str  # where config.json was read
    # The Hub's own safetensors parameter total, when it gives one (checked against the count).
    published_params: int | None = None
    site: str = ""  # the model site as replies name it ("ModelScope"); "": told by the endpoint


def site_name(endpoint: str) -> str:
    """The model site an endpoint belongs to, as replies name it: ModelScope (its domains or a mirror
    named after it), else the Hugging Face Hub (huggingface.co or an HF_ENDPOINT mirror)."""
    return "ModelScope" if "modelscope" in endpoint.lower() else "Hugging Face"


@dataclass(frozen=True, slots=True)
class SourcedModel:
    """A model read from its own files: the catalog's Model, its parameter count, provenance."""

    model: Model
    params: ParamCount
    provenance: Provenance
    files: tuple[RepoFile, ...] = ()
    cached: bool = False  # answered from the adapter's cache (the Hub was not asked this time)
    stale: bool = False  # a cached answer used because the Hub failed
    # The model's quantized repos (GGUF file sizes, AWQ / FP8 / MLX repos): bot/hub/quant_listing.py.
    # Default: not read (a source without a listing, or a payload stored before there was one).
    listing: QuantListing = QuantListing()


@dataclass(frozen=True, slots=True)
class RepoHit:
    """One search result."""

    repo: str
    downloads: int = 0


class ModelSource(Protocol):
    async def lookup(self, repo: str) -> SourcedModel:
        """The model in `repo` (config.json read at the current revision); raises ModelSourceError."""
        ...

    async def search(self, query: str, limit: int = 5) -> tuple[RepoHit, ...]:
        """Repos matching `query`, most downloaded first; raises ModelSourceError."""
        ...


# ---------------------------------------------------------------- repo references in text

_REPO = r"[A-Za-z0-9][A-Za-z0-9._-]{0,95}/[A-Za-z0-9][A-Za-z0-9._-]{0,95}"
_URL = re.compile(rf"(?:https?://)?(?:www\.)?(?:huggingface\.co|hf\.co)/({_REPO})(?::([A-Za-z0-9_.-]+))?")
_BARE = re.compile(rf"^({_REPO})(?::([A-Za-z0-9_.-]+))?$")


@dataclass(frozen=True, slots=True)
class RepoRef:
    repo: str
    quant: str = ""  # Ollama's hf.co/ORG/REPO:Q4_K_M tag


def parse_repo_ref(text: str) -> RepoRef | None:
    """A Hub repo named in `text`: a URL (huggingface.co/…, hf.co/…:Q4_K_M) or a bare "org/name"."""
    text = text.strip()
    match = _URL.search(text)
    if match:
        repo = re.sub(r"/(tree|blob|resolve)$", "", match.group(1))
        return RepoRef(repo, match.group(2) or "")
    match = _BARE.match(text)
    if match:
        return RepoRef(match.group(1), match.group(2) or "")
    return None


# ---------------------------------------------------------------- the endpoint as people see it

# "//user:password@" or "//token@" in any URL-shaped text.
_USERINFO = re.compile(r"(?<=//)[^/\s@]+@")
SOME_HUB = "the configured Hub"


def public_endpoint(endpoint: str) -> str:
    """`endpoint` as scheme://host[:port]: no userinfo (HF_ENDPOINT may carry a password), path,
    query or fragment. Replies, provenance and source links name the Hub by this."""
    try:
        parts = urlsplit(endpoint)
        host, port = parts.hostname or "", parts.port
    except ValueError:  # a port that is no number
        return SOME_HUB
    if not host:
        return SOME_HUB
    if ":" in host:  # an IPv6 literal keeps its brackets
        host = f"[{host}]"
    scheme = f"{parts.scheme}://" if parts.scheme else ""
    return f"{scheme}{host}{f':{port}' if port else ''}"


def scrub_userinfo(text: str, endpoint: str = "") -> str:
    """`text` without URL userinfo, the configured `endpoint` named by its public form."""
    if endpoint:
        text = text.replace(endpoint, public_endpoint(endpoint))
    return _USERINFO.sub("", text)
