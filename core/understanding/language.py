"""Which language a question is in, when it says so at all."""

from __future__ import annotations

import re
from functools import cache

from core.catalog.loader import Catalog

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")  # CJK ideographs, compatibility forms included
_WORD = re.compile(r"[a-z]+")


@cache
def _english_words(catalog: Catalog) -> frozenset[str]:
    return frozenset(catalog.tables.get("understanding", {}).get("language", {}).get("en_words", ()))


def has_chinese(text: str) -> bool:
    return _CJK.search(text) is not None


def question_language(text: str, catalog: Catalog, fallback: str = "en") -> str:
    """ "zh" with Chinese characters, "en" with an English word, else `fallback` (names and numbers
    alone, like "V100 32G 27B", don't tell)."""
    if has_chinese(text):
        return "zh"
    words = _english_words(catalog)
    if any(w in words for w in _WORD.findall(text.lower())):
        return "en"
    return fallback if fallback in ("en", "zh") else "en"
