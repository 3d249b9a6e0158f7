"""A typed model name searched on the Hub (issue 22): the query forms, the ranking of the hits, and
whether the model read is the one named.

The Hub's search matches the query against repo ids as a substring, so "olmo-2-13b" finds nothing of
"allenai/OLMo-2-1124-13B-Instruct": the name is searched as typed, then as its family ("olmo-2"), at
once (one round trip; ranked together). A hit is the model named only when every family word,
version and size of the typed name is in its repo name; the family's own org (catalogs/hub.toml
[publishers]) ranks first, then catalog publishers, other repos, quantizers'
copies, by downloads within each. A repo whose name adds a variant word the question didn't say
("-Base", "-VL") comes after those that don't. Pure: the command layer does the searching.
"""

from __future__ import annotations

from functools import lru_cache

from core.catalog.loader import Catalog
from core.catalog.model_source import RepoHit, SourcedModel
from core.catalog.sections import sections
from core.understanding.hub_rule import name_parts
from core.understanding.normalize import ACTIVE_TOKEN, SIZE_TOKEN

MAX_FORMS = 2  # searches one question may make (run at once: one round trip)
SIZE_SHARE = 0.15  # a typed size this close to the read model's total or active count is its size


def _words(catalog: Catalog, table: str, key: str) -> frozenset[str]:
    hub = sections(catalog).hub
    return hub.name_words(key) if table == "names" else hub.search_words(key)


def wanted_parts(name: str, catalog: Catalog) -> tuple[str, ...]:
    """The parts of the typed name a hit must carry: "OLMo 2 13B instruct" -> olmo, 2, 13b."""
    ignore = _words(catalog, "names", "ignore") - _words(catalog, "search", "fork_words")
    return tuple(p for p in name_parts(name) if p not in ignore)


def search_forms(name: str, catalog: Catalog) -> tuple[str, ...]:
    """What to search for `name`, most specific first: as typed ("falcon3-10b"), its family with
    version ("olmo-2") -- or, with no size typed, its first family word ("phi-3.5-moe" -> "phi");
    instruct/chat/it and filler left out."""
    ignore = _words(catalog, "names", "ignore") - _words(catalog, "search", "fork_words")
    tokens = [t for t in name.lower().replace("_", "-").split() if t not in ignore]
    pieces = [p for t in tokens for p in t.split("-") if p and p not in ignore]
    forms: list[str] = []
    if pieces:
        forms.append("-".join(pieces))
        family = []
        for piece in pieces:
            if SIZE_TOKEN.match(piece) or ACTIVE_TOKEN.match(piece):
                break
            family.append(piece)
        if family and family != pieces:
            forms.append("-".join(family))
        else:
            first = name_parts(pieces[0])
            if first and first[0].isalpha() and len(first[0]) >= 3:
                forms.append(first[0])
    return tuple(dict.fromkeys(f for f in forms if len(f) >= 3))[:MAX_FORMS]


@lru_cache(maxsize=4)
def _publisher_table(catalog: Catalog) -> dict[str, frozenset[str]]:
    raw = catalog.tables.get("hub", {}).get("publishers", {})
    if not isinstance(raw, dict):
        return {}
    return {
        str(k).lower(): frozenset(str(o).lower() for o in v) for k, v in raw.items() if isinstance(v, list)
    }


def own_orgs(name: str, catalog: Catalog) -> frozenset[str]:
    """The organisations that publish the family the typed name starts with ("falcon3 10b" -> tiiuae)."""
    parts = [p for p in name_parts(name) if p.isalpha()]
    table = _publisher_table(catalog)
    return table.get(parts[0], frozenset()) if parts else frozenset()


@lru_cache(maxsize=4)
def _publishers(catalog: Catalog) -> frozenset[str]:
    """The organisations whose own releases the catalog holds (Qwen, deepseek-ai, mistralai, ...)."""
    return frozenset(m.hf_repo.split("/")[0].lower() for m in catalog.models.values() if "/" in m.hf_repo)


def _carries(parts: set[str], compact: str, wanted: tuple[str, ...]) -> bool:
    return all(p in parts or (len(p) >= 4 and p in compact) for p in wanted)


def rank_hits(hits: tuple[RepoHit, ...], name: str, catalog: Catalog) -> tuple[RepoHit, ...]:
    """The hits that are the model named, best first (see the module docstring); a quantized copy
    or a fine-tune ("gguf", "abliterated") only when the name asks for one, and then first."""
    wanted = wanted_parts(name, catalog)
    forks, fork_words = _words(catalog, "search", "forks"), _words(catalog, "search", "fork_words")
    variant = _words(catalog, "names", "variant")
    asked = {p for p in wanted if p in fork_words}
    own, publishers = own_orgs(name, catalog), _publishers(catalog)
    ranked: dict[str, tuple[int, int, RepoHit]] = {}
    for hit in hits:
        org, _, base = hit.repo.partition("/")
        parts = set(name_parts(base))
        if not _carries(parts, "".join(name_parts(base)), wanted):
            continue
        if {p for p in parts if p in fork_words} - asked:
            continue
        low = org.lower()
        tier = 3 if low in forks else 0 if low in own else 1 if low in publishers else 2
        if {p for p in parts if p in variant} - set(wanted):
            tier += 4  # "Falcon3-10B-Base" for "falcon3 10b": after every repo that adds no variant
        ranked.setdefault(hit.repo.lower(), (tier, -hit.downloads, hit))
    return tuple(r[2] for r in sorted(ranked.values(), key=lambda r: (r[0], r[1])))


def merge_hits(answers: list[tuple[RepoHit, ...]]) -> tuple[RepoHit, ...]:
    """The hits of several searches, each repo once, in the order they came."""
    seen: dict[str, RepoHit] = {}
    for hits in answers:
        for hit in hits:
            seen.setdefault(hit.repo.lower(), hit)
    return tuple(seen.values())


def size_matches(name: str, sourced: SourcedModel) -> bool:
    """Whether each size typed ("13b", "a3b") is the model read: in its repo name, or close to its
    parameter count (total or active) -- a hit named right whose config is another size is not it."""
    repo_parts = set(name_parts(sourced.provenance.repo.split("/")[-1]))
    counts = (sourced.params.total / 1e9, sourced.params.active / 1e9, sourced.model.params_b)
    for part in name_parts(name):
        m = SIZE_TOKEN.match(part) or ACTIVE_TOKEN.match(part)
        if m is None or part in repo_parts:
            continue
        size = float(m.group(1))
        if not any(c > 0 and abs(c - size) <= SIZE_SHARE * size for c in counts):
            return False
    return True
