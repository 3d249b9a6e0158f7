"""Name completion for command arguments (Discord autocomplete, Telegram inline queries, a console).

`complete(catalog, "gpu", "409")` -> [("GeForce RTX 4090 · 24 GB", "GeForce RTX 4090"), ...]: a label
to show and a value to put in the command. Platform-neutral, so every adapter completes the same
way. Fast enough to run on every keystroke (Discord asks after each one and drops answers slower
than 3 s): every key is normalised once per catalog; a query is a scan of a few hundred short
strings plus one rapidfuzz pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Literal

from core.catalog.loader import Catalog
from core.commands.words import EVERYTHING
from core.understanding import fuzzy
from core.understanding.parse import parse_question

Kind = Literal["gpu", "model", "any"]
LABEL_MAX = 100  # Discord's limit for a choice's name and value; plenty elsewhere
FUZZY_MIN = 60.0  # below this a fuzzy match is noise in a 25-item list

_NOT_WORD = re.compile(r"[\s_\-/.,:()+·]+")
_SIZE_IN_NAME = re.compile(r"\d+(?:\.\d+)?\s*[bB]\b|\d+[bB]-|[xX]\d+[bB]")


def _compact(text: str) -> str:
    return _NOT_WORD.sub("", text.lower())


@dataclass(frozen=True, slots=True)
class _Entry:
    kind: str  # "gpu" | "model"
    id: str
    label: str
    value: str
    keys: tuple[str, ...]  # compact name, id and aliases
    words: tuple[str, ...]  # compact words of the name and aliases (prefix of any word matches)
    rank: tuple[float, ...]  # bigger first when scores tie (and for an empty prefix)


def _value(kind: str, entry_id: str, candidates: list[str], catalog: Catalog) -> str:
    """The first spelling that reads back as this entry wherever a name is read (/submit fields and
    /subscribe / /accuracy, which use the stricter question parser); the id as a last resort: every
    id resolves, but a name reads better if it ever shows up in the chat."""
    for text in candidates:
        if len(text) > LABEL_MAX:
            continue
        res = getattr(parse_question(text, catalog), kind)
        if res is not None and res.best_id == entry_id and res.confident:
            return text
    return entry_id


def _words(*names: str) -> tuple[str, ...]:
    out: list[str] = []
    for name in names:
        for word in _NOT_WORD.split(name.lower()):
            if word and word not in out:
                out.append(word)
    return tuple(out)


@cache
def _entries(catalog: Catalog) -> tuple[_Entry, ...]:
    out: list[_Entry] = []
    for order, gpu in enumerate(catalog.gpus.values()):
        size = f"{gpu.memory_gib:g}"
        label = gpu.name if f"{size}GB" in gpu.name.replace(" ", "") else f"{gpu.name} · {size} GB"
        # No popularity field for cards: people write many aliases for the cards they talk about
        # most (4090, 3090, V100, P40, MI50), so the alias count stands in; newer breaks ties.
        # Laptop rows list every laptop word ("4090 laptop", "笔记本4090", ...) for one name, so their
        # count says nothing about popularity: they rank after the desktop card of the same number.
        popularity = float(len(gpu.aliases)) if gpu.form != "laptop" else 0.0
        rank = (popularity, float(gpu.year or 0), float(-order))
        out.append(
            _Entry(
                "gpu",
                gpu.id,
                label[:LABEL_MAX],
                _value("gpu", gpu.id, [gpu.name, gpu.id, *gpu.aliases], catalog),
                tuple(dict.fromkeys(_compact(k) for k in (gpu.name, gpu.id, *gpu.aliases))),
                _words(gpu.name, *gpu.aliases),
                rank,
            )
        )
    for order, model in enumerate(catalog.models.values()):
        # "Qwen3-32B" says its size already; "gpt-oss-20b" too; "Phi-4-mini-instruct" gets " · 3.8B".
        named = _SIZE_IN_NAME.search(model.name)
        size = f"{model.params_b:.0f}" if model.params_b >= 10 else f"{model.params_b:.2g}"
        label = model.name if named else f"{model.name} · {size}B"
        rank = (float(model.popularity), float(model.release.replace("-", "") or 0), float(-order))
        out.append(
            _Entry(
                "model",
                model.id,
                label[:LABEL_MAX],
                _value("model", model.id, [model.name, model.id, *model.aliases], catalog),
                tuple(dict.fromkeys(_compact(k) for k in (model.name, model.id, *model.aliases))),
                _words(model.name, model.family, *model.aliases),
                rank,
            )
        )
    return tuple(out)


def _score(entry: _Entry, query: str, words: tuple[str, ...]) -> float:
    """300 exact, 200 a key starts with it, 150 every typed word starts a word of the name,
    120 a key contains it; 0 = leave it to the fuzzy pass."""
    best = 0.0
    for key in entry.keys:
        if key == query:
            return 300.0
        if key.startswith(query):
            best = max(best, 200.0)
        elif query in key:
            best = max(best, 120.0)
    if best < 150 and words and all(any(w.startswith(t) for w in entry.words) for t in words):
        best = 150.0
    return best


def _popular(entries: list[_Entry], kind: Kind, limit: int) -> list[_Entry]:
    """Nothing typed yet: the most talked-about first."""
    ranked = sorted(entries, key=lambda e: e.rank, reverse=True)
    if kind == "any":  # alternate cards and models so both show up in the first screen
        gpus = [e for e in ranked if e.kind == "gpu"]
        models = [e for e in ranked if e.kind == "model"]
        ranked = [e for pair in zip(gpus, models, strict=False) for e in pair]
    return ranked[:limit]


def _matches(entries: list[_Entry], prefix: str, query: str, limit: int) -> list[_Entry]:
    """Entries for what was typed, best first: exact / prefix / word matches, then fuzzy ones."""
    words = tuple(w for w in _NOT_WORD.split(prefix.lower()) if w)
    scored: dict[str, tuple[float, _Entry]] = {}
    for e in entries:
        s = _score(e, query, words)
        if s:
            scored[e.kind + e.id] = (s, e)
    if len(scored) < limit:
        _add_fuzzy(scored, entries, query, limit)
    ranked = sorted(scored.values(), key=lambda se: (se[0], se[1].rank), reverse=True)
    return [e for _, e in ranked[:limit]]


def _add_fuzzy(
    scored: dict[str, tuple[float, _Entry]], entries: list[_Entry], query: str, limit: int
) -> None:
    """Typos and other orders ("4090rtx", "qwne3"): rapidfuzz over every key once."""
    keys = [(k, e) for e in entries for k in e.keys]
    hits = fuzzy.extract(query, [k for k, _ in keys], "wratio", limit=limit * 4, score_cutoff=FUZZY_MIN)
    for _key, score, i in hits:
        e = keys[i][1]
        if e.kind + e.id not in scored or scored[e.kind + e.id][0] < score:
            scored[e.kind + e.id] = (float(score), e)


def complete(
    catalog: Catalog, kind: Kind, prefix: str, limit: int = 25, include_all: bool = False
) -> list[tuple[str, str]]:
    """Up to `limit` (label, value) pairs for what the user has typed so far, best first.

    `kind` "any" mixes cards and models (/subscribe, /accuracy); `include_all` offers "all" first
    when it fits what was typed (/subscribe all). An empty prefix lists the most popular ones.
    """
    entries = [e for e in _entries(catalog) if kind == "any" or e.kind == kind]
    query = _compact(prefix)
    out: list[tuple[str, str]] = []
    if include_all and EVERYTHING.startswith(prefix.strip().lower()):
        out.append((EVERYTHING, EVERYTHING))
    room = limit - len(out)
    if room <= 0:
        return out[:limit]
    found = _popular(entries, kind, room) if not query else _matches(entries, prefix, query, room)
    return out + [(e.label, e.value) for e in found]
