"""Card counts and mixes written into a GPU name: "2x 3090", "2×4090", "3090 x2", "双3090", "3090+3060".

People write the number of cards with the card (the guided `/submit` even suggests "2x 3090"); the
name resolver only knows card names. This splits the text into the card's words and the count, and
a mix ("3090+3060", "4090 + 2x 3090") into each card's words, so nothing typed is lost. Number
words and measure words come from catalogs/understanding.toml ([count]).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from core.catalog.loader import Catalog
from core.understanding.vocab import vocab_for


@dataclass(frozen=True, slots=True)
class Cards:
    name: str  # the (first) card's words, count removed: "3090"
    count: int  # cards in the box, every card of a mix counted
    mix: tuple[str, ...] = ()  # each card's words, in the order typed, when they differ

    @property
    def label(self) -> str:
        """The mix as a person reads it: "3090 + 3060"."""
        return " + ".join(self.mix) if self.mix else self.name


@dataclass(frozen=True, slots=True)
class _Patterns:
    before: re.Pattern[str]  # "2x 3090", "2 × 3090", "2*3090", "2张3090", "双3090", "dual 3090"
    after: re.Pattern[str]  # "3090x2", "3090 x 2", "3090 *2", "3090 ×2"
    words: dict[str, int]


_JOIN = re.compile(r"\s*(?:\+|＋|&)\s*")
_X = r"[x×*✕]"


@cache
def _patterns(catalog: Catalog) -> _Patterns:
    vocab = vocab_for(catalog)
    words = dict(vocab.count_words)
    names = "|".join(re.escape(w) for w in sorted(words, key=len, reverse=True)) or "dual"
    classifiers = "|".join(re.escape(c) for c in vocab.count_classifiers) or "张"
    # A number word must be a whole word in Latin script ("dual 3090", not "one" in "phone"); CJK
    # words stand glued to the card ("双3090").
    # The "x" of a count stands apart from letters: "2x 3090", "2x3090", "3090 x2", "H100x8", but
    # not the X of "RTX 3060", "RX 5700 XT" or "MI300X".
    before = re.compile(
        rf"^(?:(\d{{1,5}})[ \t]*(?:{_X}(?![a-z])|{classifiers})[ \t]*"
        rf"|((?:{names}))(?:[ \t]*(?:{classifiers}))?"
        r"(?:(?<=[a-z])[ \t]+|(?<![a-z])[ \t]*))(\S.*)$",
        re.I,
    )
    after = re.compile(rf"^(.*?\S)(?:[ \t]+|(?<=\d)){_X}[ \t]*(\d{{1,5}})$", re.I)
    return _Patterns(before, after, {k.lower(): v for k, v in words.items()})


def _one(part: str, pats: _Patterns) -> tuple[str, int]:
    readings: list[tuple[str, int]] = []
    if m := pats.before.match(part):
        n = int(m.group(1)) if m.group(1) else pats.words.get(m.group(2).lower(), 1)
        readings.append((m.group(3).strip(), n))
    if m := pats.after.match(part):
        readings.append((m.group(1).strip(), int(m.group(2))))
    # "4090 x 1000" reads both ways: the smaller number is the count, the card keeps its number.
    return min(readings, key=lambda r: r[1]) if readings else (part.strip(), 1)


def read_cards(text: str, catalog: Catalog) -> Cards | None:
    """The count and mix in a GPU name, or None when it names one card without a count."""
    text = " ".join(text.split())
    if not text or len(text) > 200:
        return None
    pats = _patterns(catalog)
    parts = [p for p in _JOIN.split(text) if p]
    read = [_one(p, pats) for p in parts]
    if any(not name or not re.search(r"\d|[a-z]{2}", name, re.I) for name, _ in read):
        return None  # "2x" alone: not a card
    if len(read) == 1 and read[0][1] == 1:
        return None
    count = sum(n for _, n in read)
    if len({name.lower() for name, _ in read}) == 1:
        return Cards(read[0][0], count)
    mix = tuple(f"{n}x {name}" if n > 1 else name for name, n in read)
    return Cards(read[0][0], count, mix)
