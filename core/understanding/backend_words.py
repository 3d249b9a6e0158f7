"""The backend a question names: "on vulkan", "用vulkan跑", "llama.cpp rocm", "hip", "纯CPU".

The words are data (catalogs/backends.toml [words]); this module only reads them. The first backend
named wins and every backend word is blanked, so "vulkan" never joins a model or card name. "CPU
only" phrases live here too: a backend of "cpu" is the one way a question says that the CPU does all
the work (the estimate runs it as offload = cpu); a bare "cpu" ("cpu ram", "cpu offload") is no
backend.
"""

from __future__ import annotations

import re
from functools import cache

from core.catalog.loader import Catalog


def _word(word: str) -> str:
    """A latin word stands alone ("hip" is not in "chip", "metal" not in "metallica"); CJK needs no
    boundary ("用vulkan跑"). Spaces and hyphens inside a phrase may be either or both."""
    body = r"[\s-]*".join(re.escape(part) for part in re.split(r"[\s-]+", word))
    if word[:1].isascii() and word[:1].isalnum():
        body = r"(?<![a-z0-9_])" + body
    if word[-1:].isascii() and word[-1:].isalnum():
        body += r"(?![a-z0-9_])"
    return body


@cache
def _pattern(catalog: Catalog) -> tuple[re.Pattern[str] | None, dict[str, str]]:
    """One alternation of every backend word, longest first, and word -> backend id."""
    words = catalog.tables.get("backends", {}).get("words", {})
    by_word = {str(w).lower(): backend for backend, ws in words.items() for w in ws}
    if not by_word:
        return None, {}
    ordered = sorted(by_word, key=len, reverse=True)
    return re.compile("|".join(f"({_word(w)})" for w in ordered)), {
        str(i): by_word[w] for i, w in enumerate(ordered, 1)
    }


def read_backend(t: str, catalog: Catalog) -> tuple[str, str | None]:
    """(the cleaned question with backend words blanked, the first backend id named or None)."""
    pattern, by_group = _pattern(catalog)
    if pattern is None:
        return t, None
    backend: str | None = None
    out = t
    for m in pattern.finditer(t):
        if backend is None and m.lastindex is not None:
            backend = by_group[str(m.lastindex)]
        out = out[: m.start()] + " " * (m.end() - m.start()) + out[m.end() :]
    return out, backend
