"""A model's name for a table cell a phone can show: the display name less what every release
carries ("-Instruct", "-it"), shortened further only as far as the cell needs and never into a
string that names another model or none (a practitioner audit: a cut "qwen2.5-coder-1" named
neither Qwen2.5-Coder-1.5B nor -14B). The words it may drop are data ([which_model.names] in
catalogs/intents.toml).

Each shortening is tried in order of what it costs the reader, the cheapest first: a trailing date
or version ("-2503", "-v0.1"), "Small-3.1" written "Small3.1", a maker abbreviated ("DeepSeek-" ->
"DS-") or left off ("NVIDIA-"), the MoE active size ("-A3B", when the total size stays); then the
model's own aliases. A label is kept only when no other model is called by it and no other model
of the catalog got it first (the more popular one keeps the plainer label)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import combinations

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.render.intent_rows import config

_PAREN = re.compile(r"\s*\((.*?)\)")
# A size token: "14B", "1.5B", "270m", "8x7B", "E4B" (Gemma's effective size), "A3B" (MoE active).
_SIZE = re.compile(r"^(?:\d+x)?[ea]?\d+(?:\.\d+)?[bm]$", re.IGNORECASE)
_ACTIVE = re.compile(r"^a\d+(?:\.\d+)?b$", re.IGNORECASE)
_DATED = re.compile(r"^(?:\d{2}|\d{4}|v\d+(?:\.\d+)*)$", re.IGNORECASE)
_WORD_VERSION = re.compile(r"([A-Za-z]{2,})-(\d+(?:\.\d+)?)(?=-|$)")
# What each shortening costs the reader; combinations are tried cheapest first.
_STEPS = (("undated", 1), ("joined", 1), ("abbreviated", 2), ("makerless", 3), ("no_active", 3))


@dataclass(frozen=True, slots=True)
class _Words:
    filler: frozenset[str]
    abbreviations: tuple[tuple[str, str], ...]
    makers: tuple[str, ...]


def _words(catalog: Catalog) -> _Words:
    section = config(catalog, "which_model").get("names", {})
    return _Words(
        filler=frozenset(str(w).lower() for w in section.get("filler", ())),
        abbreviations=tuple((str(k), str(v)) for k, v in section.get("short_makers", {}).items()),
        makers=tuple(str(m) for m in section.get("drop_makers", ())),
    )


def _key(label: str) -> str:
    return re.sub(r"[-_ .:/]", "", label.lower())


def base_name(model: Model) -> str:
    """The display name without its parenthesis ("(text decoder)"), a size held only there put
    after it ("phi-4 (14B)" -> "phi-4-14B")."""
    # "DeepSeek-V3 / V3-0324": one row for two releases of one name; the first names it.
    base = _PAREN.sub("", model.name).split(" / ")[0].strip()
    inner = _PAREN.search(model.name)
    if inner and not any(_SIZE.match(t) for t in base.split("-")) and _SIZE.match(inner.group(1)):
        base = f"{base}-{inner.group(1)}"
    return base


def _tokens(model: Model, words: _Words) -> list[str]:
    tokens = [t for t in base_name(model).split("-") if t.lower() not in words.filler]
    return tokens or [model.id]


def _undated(tokens: list[str]) -> list[str]:
    """Without the date / version tokens after the last size token ("Mistral-Small-3.1-24B-2503")."""
    sizes = [i for i, t in enumerate(tokens) if _SIZE.match(t)]
    start = sizes[-1] + 1 if sizes else 1
    out = list(tokens)
    while len(out) > start and _DATED.match(out[-1]):
        out.pop()
    return out


def _no_active(tokens: list[str]) -> list[str]:
    rest = [t for t in tokens if not _ACTIVE.match(t)]
    return rest if any(_SIZE.match(t) for t in rest) else tokens


def _maker(label: str, words: _Words, drop: bool) -> str:
    if drop:
        for maker in words.makers:
            rest = label[len(maker) + 1 :]
            # Never down to a bare size or version ("Llama-3.3-70B" is no "70B").
            if label.startswith(maker + "-") and rest[:1].isalpha() and not _SIZE.match(rest.split("-")[0]):
                return rest
        return label
    for long, short in words.abbreviations:
        if label.startswith(long + "-"):
            return short + label[len(long) :]
    return label


def _shortened(tokens: list[str], steps: frozenset[str], words: _Words) -> str:
    if "undated" in steps:
        tokens = _undated(tokens)
    if "no_active" in steps:
        tokens = _no_active(tokens)
    label = "-".join(tokens)
    if "abbreviated" in steps:
        label = _maker(label, words, drop=False)
    if "makerless" in steps:
        label = _maker(label, words, drop=True)
    if "joined" in steps:
        label = _WORD_VERSION.sub(r"\1\2", label)
    return label


def _candidates(model: Model, words: _Words) -> Iterator[str]:
    tokens = _tokens(model, words)
    subsets = [frozenset(c) for n in range(len(_STEPS) + 1) for c in combinations(_STEPS, n)]
    subsets.sort(key=lambda s: sum(cost for _, cost in s))
    for subset in subsets:
        yield _shortened(tokens, frozenset(name for name, _ in subset), words)
    # An alias only where it keeps the size the name shows ("llama-4-maverick" names no size; a size
    # only in the name's parenthesis, "c4ai-command-r-plus-08-2024 (104B)", is not shown by it).
    sized = any(_SIZE.match(t) for t in _PAREN.sub("", model.name).split("-"))
    for alias in sorted(model.aliases, key=len, reverse=True):
        label = re.sub(r"[ :]+", "-", alias)
        if (
            alias.isascii()
            and "/" not in alias
            and (not sized or any(_SIZE.match(t) for t in label.split("-")))
        ):
            yield label


def _cut(model: Model, width: int, words: _Words, free: Callable[[str], bool] = lambda _: True) -> str:
    """The last resort: the most of the name's words that fit, its first word and its size always
    among them, in their order, and `free` (no other model's name) where any such label is."""
    tokens = _undated(_tokens(model, words))
    size = next((t for t in reversed(tokens) if _SIZE.match(t) and not _ACTIVE.match(t)), "")
    keep = {0, tokens.index(size)} if size else {0}
    optional = [i for i in range(len(tokens)) if i not in keep]
    labels = [
        "-".join(tokens[i] for i in sorted(keep | set(chosen)))
        for n in range(len(optional), -1, -1)
        for chosen in combinations(optional, n)
    ]
    fitting = sorted((label for label in labels if len(label) <= width), key=len, reverse=True)
    return next((label for label in fitting if free(label)), fitting[0] if fitting else model.id[:width])


@lru_cache(maxsize=32)
def _labels(catalog: Catalog, width: int) -> dict[str, str]:
    """Every model's label at `width`, assigned most popular first so that two models never share one."""
    words = _words(catalog)
    owners: dict[str, set[str]] = {}
    for model in catalog.models.values():
        for name in (model.name, base_name(model), model.id, *model.aliases, "-".join(_tokens(model, words))):
            owners.setdefault(_key(name), set()).add(model.id)
    given: dict[str, str] = {}
    out: dict[str, str] = {}
    for model in sorted(catalog.models.values(), key=lambda m: (-m.popularity, m.id)):

        def free(label: str, model_id: str = model.id) -> bool:
            key = _key(label)
            return owners.get(key, {model_id}) <= {model_id} and key not in given

        label = next((c for c in _candidates(model, words) if len(c) <= width and free(c)), None)
        out[model.id] = label if label is not None else _cut(model, width, words, free)
        given.setdefault(_key(out[model.id]), model.id)
    return out


def short_name(model: Model, catalog: Catalog, width: int) -> str:
    """The model's label for a cell of `width` characters (a model not in `catalog`: its name cut)."""
    labels = _labels(catalog, width)
    if model.id in labels:
        return labels[model.id]
    return _cut(model, width, _words(catalog))


def is_whole(model: Model, catalog: Catalog, width: int) -> bool:
    """Whether the model's label at `width` is one of its own names or shortenings, not a cut."""
    words = _words(catalog)
    return short_name(model, catalog, width) in set(_candidates(model, words))
