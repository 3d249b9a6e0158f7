"""The backend a question names: "on vulkan", "用vulkan跑", "llama.cpp rocm", "hip", "纯CPU".

The words are data (catalogs/backends.toml [words]); this module only reads them. The first backend
named wins and every backend word is blanked, so "vulkan" never joins a model or card name. "CPU
only" phrases live here too: a backend of "cpu" is the one way a question says that the CPU does all
the work (the estimate runs it as offload = cpu); a bare "cpu" ("cpu ram", "cpu offload") is no
backend.
"""

from __future__ import annotations

import re

from core.cache.warm import per_catalog
from core.catalog.loader import Catalog
from core.catalog.sections import sections

_SEP = re.compile(r"[\s-]+")


def _body(word: str) -> str:
    """A phrase as a regex: spaces and hyphens inside it may be either or both ("cpu-only")."""
    return r"[\s-]*".join(re.escape(part) for part in _SEP.split(word))


@per_catalog("understanding.backend")
def _pattern(catalog: Catalog) -> tuple[re.Pattern[str] | None, dict[str, str], tuple[str, ...]]:
    """One alternation of every backend word, longest first; the word (spaces and hyphens dropped) ->
    backend id; and the substrings one of which any hit contains (a question without any of them is
    not searched: most questions name no backend, and a plain `in` is far cheaper than the regex)."""
    words = sections(catalog).backends.words
    by_word = {_SEP.sub("", str(w).lower()): b for b, ws in words.items() for w in ws}
    if not by_word:
        return None, {}, ()
    raw = sorted({str(w).lower() for ws in words.values() for w in ws}, key=len, reverse=True)
    latin = [_body(w) for w in raw if w[:1].isascii() and w[-1:].isascii()]
    other = [_body(w) for w in raw if not (w[:1].isascii() and w[-1:].isascii())]
    # Latin words stand alone ("hip" is not in "chip", "metal" not in "metallica"); a phrase that
    # starts or ends in CJK ("用vulkan跑" is read by "vulkan"; "纯cpu") needs no boundary there.
    parts = [f"(?<![a-z0-9_])(?:{'|'.join(latin)})(?![a-z0-9_])"] if latin else []
    parts += other
    keys = tuple(sorted({_SEP.split(w)[0][:3] for w in raw}))
    return re.compile("|".join(f"(?:{p})" for p in sorted(parts, key=len, reverse=True))), by_word, keys


def read_backend(t: str, catalog: Catalog) -> tuple[str, str | None]:
    """(the cleaned question with backend words blanked, the first backend id named or None)."""
    out, named = read_backends(t, catalog)
    return out, named[0][0] if named else None


def read_backends(t: str, catalog: Catalog) -> tuple[str, tuple[tuple[str, int, int], ...]]:
    """(the cleaned question with backend words blanked, each backend named the first time: its id
    and where it stands): "ROCm vs Vulkan on 7900 XTX" names two, which a comparison sets side by
    side (the words between them say whether they are compared)."""
    pattern, by_word, keys = _pattern(catalog)
    if pattern is None or not any(k in t for k in keys):
        return t, ()
    named: list[tuple[str, int, int]] = []
    out = t
    for m in pattern.finditer(t):
        backend = by_word.get(_SEP.sub("", m.group(0)))
        if backend is not None and all(backend != b for b, _s, _e in named):
            named.append((backend, m.start(), m.end()))
        out = out[: m.start()] + " " * (m.end() - m.start()) + out[m.end() :]
    return out, tuple(named)
