"""Questions about a model the catalog doesn't hold: looked up through the model source, then answered.

Core resolution (core.understanding.resolve.model_need) says what needs a Hub look-up; here, in the
async command layer, the model source port (core.catalog.model_source.ModelSource) is awaited within one
time budget per question and the question is answered again with the model found. The reply's
header names what was answered ("Qwen3-Coder-30B-A3B-Instruct · Hugging Face") and, when a catalog
model has the same architecture, says its numbers are reused. Without a source, or when the Hub
fails, the reply says the model isn't known and why -- never a neighbour in its place.

A model read for a question answers that question, and later ones naming its exact repo id, from a
bounded cache (core.commands.hub_cache.AskedModels); it never joins the names everyone's questions
resolve against (issue 24: `mallory/Zeta-9-70B` named once answered everyone's "zeta 9 70b"). Only
`/model add` (moderators) puts a model there: the overlay (`HubModels.found`), capped, oldest out.
Failures are remembered per kind for a while (`Misses`), and the look-ups that reach the Hub are
counted per person and per chat (core.commands.hub_budget).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from dataclasses import asdict, dataclass, field, replace
from typing import Any

from core.ask.answer import Reply, ReplyStatus, answer, hub_pending
from core.catalog.from_config import ParamCount, params_check
from core.catalog.hub_limits import HubLimits
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.model_source import (
    ModelSource,
    ModelSourceError,
    Provenance,
    RepoFile,
    RepoHit,
    SourcedModel,
    public_endpoint,
    scrub_userinfo,
    site_name,
)
from core.catalog.published_files import (
    PublishedFile,
    PublishedRepo,
    QuantListing,
    forget_listing,
    remember_listing,
)
from core.catalog.sections import sections
from core.commands.hub_budget import HubBudget
from core.commands.hub_cache import AskedModels, Misses, Searches
from core.commands.hub_search import merge_hits, rank_hits, search_forms, size_matches
from core.i18n import Lang, translate
from core.render.doc import Para, render_first_fitting
from core.understanding.hub_rule import HubNeed
from core.understanding.query import AskQuery

log = logging.getLogger(__name__)
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
    """The catalog overlay (models added by `/model add`, by catalog id, with their provenance), and
    what is remembered of the Hub between questions: models read for one question, failures, and
    each person's and chat's look-ups. Bounded by catalogs/hub.toml [limits] (`configure`)."""

    found: OrderedDict[str, SourcedModel] = field(default_factory=OrderedDict)
    version: int = 0
    limits: HubLimits = field(default_factory=HubLimits)
    asked: AskedModels = field(init=False)
    misses: Misses = field(init=False)
    searches: Searches = field(init=False)
    budget: HubBudget = field(init=False)
    _configured: bool = False

    def __post_init__(self) -> None:
        self._build()

    def _build(self) -> None:
        self.asked = AskedModels(self.limits.cache)
        self.misses = Misses(self.limits.cache)
        self.searches = Searches(self.limits.cache)
        self.budget = HubBudget(self.limits.budget)

    def configure(self, catalog: Catalog) -> None:
        """Take the limits of `catalog` (once; what is remembered so far starts over)."""
        if not self._configured:
            self._configured = True
            self.limits = sections(catalog).hub.limits
            self._build()

    def add(self, sourced: SourcedModel, alias: str = "") -> SourcedModel:
        """Keep `sourced` in the overlay; `alias` (a name) resolves to it exactly from now on.
        Only `/model add` and the models it stored come here."""
        model = sourced.model
        if alias and alias not in model.aliases:
            model = replace(model, aliases=(*model.aliases, alias))
        kept = replace(sourced, model=model)
        # The estimator and the launch commands see only the Model: its published files by its id.
        remember_listing(model, kept.listing)
        self.found[model.id] = kept
        self.found.move_to_end(model.id)
        while len(self.found) > max(1, self.limits.cache.shared):
            old, _ = self.found.popitem(last=False)
            if old not in self.asked:
                forget_listing(old)
        self.version += 1
        return kept

    def apply(self, catalog: Catalog) -> Catalog:
        """`catalog` with every overlay model in it (a new Catalog object: per-catalog caches start cold)."""
        missing = {mid: s.model for mid, s in self.found.items() if catalog.models.get(mid) is not s.model}
        if not missing:
            return catalog
        return replace(catalog, models={**catalog.models, **missing})

    def provenance(self, model_id: str | None) -> SourcedModel | None:
        if not model_id:
            return None
        return self.found.get(model_id) or self.asked.get(model_id)

    def remember_asked(self, sourced: SourcedModel) -> SourcedModel:
        return self.asked.add(sourced, frozenset(self.found))

    def catalog_for(self, catalog: Catalog, model_id: str | None) -> Catalog:
        """The catalog a query about `model_id` is priced with: `catalog` itself, or -- for a model
        read for one question (a button pressed under its answer) -- `catalog` with that model."""
        if not model_id or model_id in catalog.models or model_id not in self.asked:
            return catalog
        return self.asked.catalog(catalog, model_id)


# --- stored form (the database's resolved_models table, shared by every process) -----------------


# Set in what `/model add` stores. A payload without it was stored by a question before issue 24
# and is not loaded into the overlay (it may be anyone's repo under another model's name).
SHARED_MARK = "added_by_moderator"


def to_payload(sourced: SourcedModel) -> str:
    return json.dumps(
        {
            SHARED_MARK: True,
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


def shared_payload(payload: str) -> bool:
    """Whether a stored payload was added by a moderator (and so joins the overlay at start)."""
    try:
        data = json.loads(payload)
    except ValueError:
        return False
    return isinstance(data, dict) and data.get(SHARED_MARK) is True


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


@dataclass(frozen=True, slots=True)
class Found:
    model: SourcedModel | None  # None: the search found no repo of the name
    query: str  # what was searched (or the repo read)
    others: tuple[str, ...] = ()  # repos the search gave that are not the model named


class _Charge:
    """Counts the question against its asker's Hub budget once, right before it first reaches the
    Hub (an answer from memory costs nothing); raises ModelSourceError("budget") when used up."""

    def __init__(self, hub: HubModels, who: tuple[str, str] | None) -> None:
        self.hub, self.who, self.done = hub, who, False

    def __call__(self, name: str) -> None:
        if self.done or self.who is None:
            return
        if not self.hub.budget.spend(*self.who):
            raise ModelSourceError("budget", name, "the Hub budget for this window is used")
        self.done = True


async def _read(source: ModelSource, repo: str, hub: HubModels, charge: _Charge) -> SourcedModel:
    sourced = hub.asked.get(repo.lower())
    if sourced is not None:
        return sourced
    charge(repo)
    return await source.lookup(repo)


async def _find(
    source: ModelSource, need: HubNeed, catalog: Catalog, hub: HubModels, charge: _Charge
) -> Found:
    if need.kind == "repo":
        return Found(await _read(source, need.name, hub, charge), need.name)
    forms = search_forms(need.name, catalog) or ("-".join(need.name.split()),)
    answers = await asyncio.gather(*(_search(source, q, hub, charge) for q in forms), return_exceptions=True)
    failed = [a for a in answers if isinstance(a, BaseException)]
    if len(failed) == len(answers):
        raise failed[0]
    found = merge_hits([a for a in answers if not isinstance(a, BaseException)])
    query = forms[0]
    hits = rank_hits(found, need.name, catalog)
    if not hits:
        return Found(None, query, tuple(h.repo for h in found[:3]))
    sourced = await _read(source, hits[0].repo, hub, charge)
    if not size_matches(need.name, sourced):  # named right, another size inside: not the model
        return Found(None, query, tuple(h.repo for h in hits[:3]))
    return Found(sourced, query)


async def _search(source: ModelSource, query: str, hub: HubModels, charge: _Charge) -> tuple[RepoHit, ...]:
    """One search, remembered by its query (a failure of a broader form doesn't sink the others'
    hits, unless every form fails: the first form's error is then the question's)."""
    found = hub.searches.get(query)
    if found is None:
        charge(query)
        found = await source.search(query, SEARCH_LIMIT)
        hub.searches.add(query, found)
    return found


# --- replies ------------------------------------------------------------------------------------


def _endpoint(source: ModelSource) -> str:
    """The Hub as a reply names it: its host, never the userinfo HF_ENDPOINT may carry."""
    settings = getattr(source, "settings", None)
    try:
        return public_endpoint(str(settings().endpoint)) if callable(settings) else "huggingface.co"
    except Exception:  # noqa: BLE001 - only a word in a sentence
        return "huggingface.co"


def _raw_endpoint(source: ModelSource) -> str:
    settings = getattr(source, "settings", None)
    try:
        return str(settings().endpoint) if callable(settings) else ""
    except Exception:  # noqa: BLE001 - only used to scrub a sentence
        return ""


def why_failed(exc: ModelSourceError, source: ModelSource, lang: Lang, window_s: float = 0.0) -> str:
    budget = getattr(source, "budget_s", QUESTION_BUDGET_S)
    minutes = max(1, round(window_s / 60)) if window_s else 60
    return translate(
        f"hub.why.{exc.kind}",
        lang,
        endpoint=_endpoint(source),
        budget=f"{budget:g}",
        repo=exc.repo,
        detail=scrub_userinfo(exc.detail, _raw_endpoint(source))[:160],
        window=f"{minutes} min" if lang == "en" else f"{minutes} 分钟",
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
    site = prov.site or site_name(prov.endpoint)
    lines = [
        translate(
            "hub.header", query.lang, name=model.name, site=site, repo=prov.repo, when=prov.read_at[:10]
        )
    ]
    twin = same_architecture(model, catalog, skip=frozenset(hub.found) | {model.id})
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
    site = site_name(endpoint)
    lines = [
        translate(
            "hub.not_found", query.lang, name=need.name, site=site, query=found.query, endpoint=endpoint
        )
    ]
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
    # (person, chat) the question came from, for the Hub budget; None: the operator's own tools
    who: tuple[str, str] | None = None


@dataclass(frozen=True, slots=True)
class _Asked:
    """One question that needs the Hub: its first reply, what to look up, and how to answer."""

    reply: Reply
    query: AskQuery
    need: HubNeed
    catalog: Catalog


def _miss_key(need: HubNeed) -> str:
    return Misses.key(need.kind, need.name)


async def _look_up(asked: _Asked, hub: HubModels, source: ModelSource, how: AskSettings) -> Found | Reply:
    """What the Hub gave for the question, or the reply that says why nothing: a failure
    remembered, the asker's budget used up, or the Hub failing now (then remembered)."""
    reply, query, need, catalog = asked.reply, asked.query, asked.need, asked.catalog
    remembered = hub.misses.get(_miss_key(need))
    if remembered is not None:
        return _failed(reply, query, need, why_failed(remembered, source, query.lang), catalog)
    try:
        found = await asyncio.wait_for(
            _find(source, need, catalog, hub, _Charge(hub, how.who)), QUESTION_BUDGET_S
        )
    except TimeoutError:
        found_exc = ModelSourceError("timeout", need.name, f"no answer within {QUESTION_BUDGET_S:g} s")
        hub.misses.add(_miss_key(need), found_exc)
        return _failed(reply, query, need, why_failed(found_exc, source, query.lang), catalog)
    except ModelSourceError as exc:
        hub.misses.add(_miss_key(need), exc)  # not kept for "budget" or "busy": no time for those
        why = why_failed(exc, source, query.lang, hub.limits.budget.window_s)
        return _failed(reply, query, need, why, catalog)
    if found.model is None:
        hub.misses.add(_miss_key(need), ModelSourceError("not_found", need.name, "no repo of that name"))
    return found


async def answer_with_hub(
    catalog: Catalog,
    hub: HubModels,
    source: ModelSource | None,
    text: str,
    how: AskSettings,
    on_found: Any = None,
) -> tuple[Reply, Catalog]:
    """The reply to a question, a model the catalog doesn't hold looked up through `source` first.
    Returns the reply and the shared catalog (the overlay's models in it; a model read for this
    question is not). `on_found`: an async callable given each model read from the Hub."""
    hub.configure(catalog)
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
    looked = await _look_up(_Asked(reply, query, need, catalog), hub, source, how)
    if isinstance(looked, Reply):
        return looked, catalog
    if looked.model is None:
        return _not_found(reply, query, need, looked, _endpoint(source)), catalog
    sourced = looked.model
    if sourced.model.id not in hub.asked:
        sourced = hub.remember_asked(sourced)
        if on_found is not None:
            await on_found(sourced)
    # This question, and buttons under its answer, see the model; nobody else's names do.
    alias = need.name if need.kind == "search" else ""
    again = ask(hub.asked.catalog(catalog, sourced.model.id, alias))
    if again.hub is not None:  # still not answerable from what was read: say so, don't loop
        return _failed(reply, query, need, translate("hub.why.server_error", query.lang), catalog), catalog
    return with_provenance(again, hub, catalog), catalog
