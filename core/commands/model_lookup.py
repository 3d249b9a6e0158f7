"""Questions about a model the catalog doesn't hold: looked up through the model source, then answered.

Core resolution (core.understanding.resolve.model_need) says what needs a Hub look-up; here, in the
async command layer, the model source port (core.catalog.model_source.ModelSource) is awaited within one
time budget per question, the model found joins an in-memory overlay of the catalog (`HubModels`:
the extra models every later question resolves against) and the question is answered again. The
reply's header names what was answered ("Qwen3-Coder-30B-A3B-Instruct · Hugging Face") and, when a
catalog model has the same architecture, says its numbers are reused. Without a source, or when the
Hub fails, the reply says the model isn't known and why -- never a neighbour in its place.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from core.ask.answer import Reply, ReplyStatus, answer, hub_pending
from core.catalog.from_config import ParamCount, params_check
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.model_source import (
    ModelSource,
    ModelSourceError,
    Provenance,
    RepoFile,
    RepoHit,
    SourcedModel,
)
from core.catalog.published_files import PublishedFile, PublishedRepo, QuantListing, remember_listing
from core.catalog.sections import sections
from core.i18n import Lang, translate
from core.render.doc import Para, render_first_fitting
from core.understanding.hub_rule import HubNeed, name_parts
from core.understanding.query import AskQuery

QUESTION_BUDGET_S = 5.0  # the whole look-up for one question (search + config), issue 9
SEARCH_LIMIT = 20
# The fields that make two models the same network: equal ones price the same.
_ARCH_FIELDS = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "vocab",
    "attention",
    "intermediate_size",
    "experts",
    "experts_active",
    "shared_experts",
    "moe_intermediate_size",
    "kv_lora_rank",
    "sliding_window",
    "global_layers",
)


def same_architecture(model: Model, catalog: Catalog, skip: frozenset[str] = frozenset()) -> Model | None:
    """A catalog model with the same network as `model` (a fine-tune, a re-release), or None."""
    key = tuple(getattr(model, f) for f in _ARCH_FIELDS)
    for mid, other in catalog.models.items():
        if mid != model.id and mid not in skip and tuple(getattr(other, f) for f in _ARCH_FIELDS) == key:
            return other
    return None


@dataclass
class HubModels:
    """The catalog overlay: models read from the Hub, by catalog id, with their provenance."""

    found: dict[str, SourcedModel] = field(default_factory=dict)
    version: int = 0

    def add(self, sourced: SourcedModel, alias: str = "") -> SourcedModel:
        """Keep `sourced`; `alias` (the name as typed) resolves to it exactly from now on."""
        model = sourced.model
        if alias and alias not in model.aliases:
            model = replace(model, aliases=(*model.aliases, alias))
        kept = replace(sourced, model=model)
        # The estimator and the launch commands see only the Model: its published files by its id.
        remember_listing(model, kept.listing)
        self.found[model.id] = kept
        self.version += 1
        return kept

    def apply(self, catalog: Catalog) -> Catalog:
        """`catalog` with every Hub model in it (a new Catalog object: per-catalog caches start cold)."""
        missing = {mid: s.model for mid, s in self.found.items() if catalog.models.get(mid) is not s.model}
        if not missing:
            return catalog
        return replace(catalog, models={**catalog.models, **missing})

    def provenance(self, model_id: str | None) -> SourcedModel | None:
        return self.found.get(model_id) if model_id else None


# --- stored form (the database's resolved_models table, shared by every process) -----------------


def to_payload(sourced: SourcedModel) -> str:
    return json.dumps(
        {
            "model": asdict(sourced.model),
            "params": asdict(sourced.params),
            "provenance": asdict(sourced.provenance),
            "files": [[f.path, f.size] for f in sourced.files],
            "listing": asdict(sourced.listing),
        },
        ensure_ascii=False,
    )


def _tuples(data: dict[str, Any]) -> dict[str, Any]:
    return {k: tuple(v) if isinstance(v, list) else v for k, v in data.items()}


def from_payload(payload: str) -> SourcedModel:
    """The SourcedModel `to_payload` wrote; raises ValueError / TypeError / KeyError on another shape."""
    data = json.loads(payload)
    return SourcedModel(
        model=Model(**_tuples(data["model"])),
        params=ParamCount(**data["params"]),
        provenance=Provenance(**data["provenance"]),
        files=tuple(RepoFile(str(p), s) for p, s in data.get("files", ())),
        cached=True,
        listing=_listing(data.get("listing")),
    )


def _listing(data: dict[str, Any] | None) -> QuantListing:
    """The stored quant listing; a payload stored before listings were kept has none (not read)."""
    if not data:
        return QuantListing()
    return QuantListing(
        files=tuple(PublishedFile(**{**f, "files": tuple(f["files"])}) for f in data.get("files", ())),
        repos=tuple(PublishedRepo(**r) for r in data.get("repos", ())),
        read=bool(data.get("read")),
        tried=tuple(data.get("tried", ())),
        found=tuple(data.get("found", ())),
        error=str(data.get("error", "")),
    )


def storage_key(repo: str) -> str:
    return repo.lower()


# --- choosing a search hit ----------------------------------------------------------------------


def _hub_table(catalog: Catalog, key: str) -> frozenset[str]:
    return sections(catalog).hub.search_words(key)


def _wanted_parts(name: str, catalog: Catalog) -> tuple[str, ...]:
    ignore = sections(catalog).hub.name_words("ignore") - _hub_table(catalog, "fork_words")
    return tuple(p for p in name_parts(name) if p not in ignore)


def _publishers(catalog: Catalog) -> frozenset[str]:
    """The organisations whose own releases the catalog holds (Qwen, deepseek-ai, mistralai, ...)."""
    return frozenset(m.hf_repo.split("/")[0].lower() for m in catalog.models.values() if "/" in m.hf_repo)


def rank_hits(hits: tuple[RepoHit, ...], name: str, catalog: Catalog) -> tuple[RepoHit, ...]:
    """The hits that are the model named: a known publisher's own repo first, then other repos, then
    the quantizers' copies, by downloads within each; a quantized copy or a fine-tune ("gguf",
    "abliterated") only when the name asks for one, and then first."""
    wanted = _wanted_parts(name, catalog)
    forks, fork_words = _hub_table(catalog, "forks"), _hub_table(catalog, "fork_words")
    asked = {p for p in wanted if p in fork_words}
    publishers = _publishers(catalog)
    ranked: list[tuple[int, int, RepoHit]] = []
    for hit in hits:
        org, _, base = hit.repo.partition("/")
        parts = set(name_parts(base))
        compact = "".join(name_parts(base))
        if not all(p in parts or (len(p) >= 4 and p in compact) for p in wanted):
            continue
        if {p for p in parts if p in fork_words} - asked:
            continue
        tier = 2 if org.lower() in forks else 0 if org.lower() in publishers else 1
        ranked.append((tier, -hit.downloads, hit))
    ranked.sort(key=lambda r: (r[0], r[1]))
    return tuple(r[2] for r in ranked)


@dataclass(frozen=True, slots=True)
class Found:
    model: SourcedModel | None  # None: the search found no repo of the name
    query: str  # what was searched (or the repo read)
    others: tuple[str, ...] = ()  # repos the search gave that are not the model named


async def _find(source: ModelSource, need: HubNeed, catalog: Catalog) -> Found:
    if need.kind == "repo":
        return Found(await source.lookup(need.name), need.name)
    query = "-".join(need.name.split())
    found = await source.search(query, SEARCH_LIMIT)
    hits = rank_hits(found, need.name, catalog)
    if not hits:
        return Found(None, query, tuple(h.repo for h in found[:3]))
    return Found(await source.lookup(hits[0].repo), query)


# --- replies ------------------------------------------------------------------------------------


def _endpoint(source: ModelSource) -> str:
    settings = getattr(source, "settings", None)
    try:
        return str(settings().endpoint) if callable(settings) else "huggingface.co"
    except Exception:  # noqa: BLE001 - only a word in a sentence
        return "huggingface.co"


def why_failed(exc: ModelSourceError, source: ModelSource, lang: Lang) -> str:
    budget = getattr(source, "budget_s", QUESTION_BUDGET_S)
    return translate(
        f"hub.why.{exc.kind}",
        lang,
        endpoint=_endpoint(source),
        budget=f"{budget:g}",
        repo=exc.repo,
        detail=exc.detail[:160],
    )


def _line(text: str, target: str) -> str:
    return render_first_fitting([(Para(text),)], target)


def with_provenance(reply: Reply, hub: HubModels, catalog: Catalog) -> Reply:
    """The reply with its header naming the Hub model answered, and the same-architecture note."""
    query = reply.query
    sourced = hub.provenance(query.model_id if query is not None else None)
    if query is None or sourced is None or reply.status != "answer":
        return reply
    model, prov = sourced.model, sourced.provenance
    lines = [translate("hub.header", query.lang, name=model.name, repo=prov.repo, when=prov.read_at[:10])]
    twin = same_architecture(model, catalog, skip=frozenset(hub.found))
    if twin is not None:
        lines.append(translate("hub.same_arch", query.lang, other=twin.name))
    if not sourced.listing.read:  # sizes are computed; say why the published ones are missing
        lines.append(translate("published.listing_unread", query.lang, why=sourced.listing.error or "-"))
    mismatch = params_check(sourced.params.total, prov.published_params)
    if mismatch is not None:
        lines.append(mismatch.text(query.lang))
    head = "\n".join(_line(line, query.target) for line in lines)
    return replace(reply, text=f"{head}\n{reply.text}", model=(model.name, prov.repo))


def _failed(reply: Reply, query: AskQuery, need: HubNeed, why: str, catalog: Catalog) -> Reply:
    status, text = hub_pending(need, query, catalog, why)
    return replace(reply, status=status, text=text)


def _not_found(reply: Reply, query: AskQuery, need: HubNeed, found: Found, endpoint: str) -> Reply:
    """Nothing of that name on the Hub: say what was searched, and offer what the search did give."""
    lines = [translate("hub.not_found", query.lang, name=need.name, query=found.query, endpoint=endpoint)]
    status: ReplyStatus = "error"
    if found.others:
        lines.append(translate("hub.candidates", query.lang, names=", ".join(found.others)))
        status = "clarify"
    text = "\n".join(_line(line, query.target) for line in lines)
    return replace(reply, status=status, text=text)


@dataclass
class AskSettings:
    lang: Lang | None  # None: decided from the question (`python -m bot ask --json` without --lang)
    target: str
    anchors: Any = None
    default_os: str | None = None


async def answer_with_hub(
    catalog: Catalog,
    hub: HubModels,
    source: ModelSource | None,
    text: str,
    how: AskSettings,
    on_found: Any = None,
) -> tuple[Reply, Catalog]:
    """The reply to a question, a model the catalog doesn't hold looked up through `source` first.
    Returns the reply and the catalog to use from now on (with the model found in it). `on_found`:
    an async callable given each newly found SourcedModel (to keep it in the database)."""
    catalog = hub.apply(catalog)

    def ask(cat: Catalog) -> Reply:
        return answer(
            text, cat, lang=how.lang, target=how.target, anchors=how.anchors, default_os=how.default_os
        )

    reply = ask(catalog)
    need, query = reply.hub, reply.query
    if need is None or query is None:
        return with_provenance(reply, hub, catalog), catalog
    if source is None:
        return reply, catalog
    try:
        found = await asyncio.wait_for(_find(source, need, catalog), QUESTION_BUDGET_S)
    except TimeoutError:
        exc = ModelSourceError("timeout", need.name, f"no answer within {QUESTION_BUDGET_S:g} s")
        return _failed(reply, query, need, why_failed(exc, source, query.lang), catalog), catalog
    except ModelSourceError as exc:
        return _failed(reply, query, need, why_failed(exc, source, query.lang), catalog), catalog
    if found.model is None:
        return _not_found(reply, query, need, found, _endpoint(source)), catalog
    kept = hub.add(found.model, alias=need.name if need.kind == "search" else "")
    if on_found is not None:
        await on_found(kept)
    catalog = hub.apply(catalog)
    again = ask(catalog)
    if again.hub is not None:  # still not answerable from what was read: say so, don't loop
        return _failed(reply, query, need, translate("hub.why.server_error", query.lang), catalog), catalog
    return with_provenance(again, hub, catalog), catalog
