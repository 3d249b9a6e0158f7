"""Which language a reply is in: decided once per message, by one rule (`decide_language`)."""

from __future__ import annotations

import re
from functools import cache

from core.catalog.loader import Catalog
from core.i18n import Lang, is_lang
from core.understanding.vocab import vocab_for

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")  # CJK ideographs, compatibility forms included
_WORD = re.compile(r"[a-z]+")
NO_WORDS: frozenset[str] = frozenset()


@cache
def english_words(catalog: Catalog) -> frozenset[str]:
    """Words that only an English sentence has ("how", "run", "fit"), catalogs/understanding.toml;
    names and numbers ("V100 32G 27B") are the same in both languages and don't count."""
    return vocab_for(catalog).english_words


def has_chinese(text: str) -> bool:
    return _CJK.search(text) is not None


def decide_language(text: str, hint: str | None, default: Lang, english: frozenset[str] = NO_WORDS) -> Lang:
    """The one rule for the language of a reply: Chinese characters in what the person wrote, else
    one of the `english` words in it, else the platform's hint when it is one we speak, else the
    bot's default.

    `english`: pass `english_words(catalog)` for a question (its own words outrank the chat's
    setting: "can a 4090 run qwen3 32b" is answered in English in a Chinese chat); commands pass
    none, because their arguments ("audit", "csv", a reason) are typed the same way in both."""
    text = text or ""
    if has_chinese(text):
        return "zh"
    if english and any(w in english for w in _WORD.findall(text.lower())):
        return "en"
    if is_lang(hint):
        return hint
    return default
