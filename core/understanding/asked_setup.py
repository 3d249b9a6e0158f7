"""Which of several named setups a question asks about, and card names that name a server instead.

"A100国内很难买到，只能买4090，8张4090的卡能不能行？" names two cards but asks about one. The reading is
structural (issue 21): the clause with the last asking word ("能不能行", "would … work") holds exactly
one card and the others stand in clauses of their own, so that card is the machine and the others are
mentioned in a note, not priced together with it as one box. Their words need not say why ("H100 租不到，
改用 4张 L40S 能不能行", "A800 is out of budget, so would 4x RTX 6000 Ada work"): a list of reasons would
always miss the next one. What keeps one machine of several cards:
- the cards stand together, in one clause without the asking word ("3090 + 3060, would qwen 72b fit?");
- the asked card is said to be added ("I have a 3090, would adding a 3060 help?", "再加一张 3060 能行吗").
When the asked clause names no card ("A100 买不到，只能买 8张 4090。能不能行？"), a given-up word decides:
the one card whose clause has none is the one asked.

"A2服务器" (a server line's name) is no NVIDIA A2 unless a card word stands beside it.
The words are data: catalogs/understanding.toml [cards].
"""

from __future__ import annotations

import re

from core.understanding.parse_patterns import _Piece
from core.understanding.question import ParsedCard
from core.understanding.resolution import Resolution
from core.understanding.setup_words import Note
from core.understanding.vocab import Vocab

_CLAUSE_END = re.compile(r"[,，。.;；?？!！]")
_Found = list[tuple[Resolution, tuple[int, int], str]]


def _clause_of(t: str, at: int) -> tuple[int, int]:
    """The span of the clause holding position `at` (between punctuation marks)."""
    start = max((m.end() for m in _CLAUSE_END.finditer(t, 0, at)), default=0)
    m = _CLAUSE_END.search(t, at)
    return start, m.start() if m else len(t)


def _word(word: str) -> str:
    """The pattern of a word as typed; a latin word must stand alone ("add" is not in "address")."""
    body = re.escape(word)
    return rf"(?<![a-z]){body}(?![a-z])" if word[:1].isascii() and word[:1].isalpha() else body


def _has_any(text: str, words: tuple[str, ...]) -> bool:
    return any(re.search(_word(w), text) for w in words)


def _last_marker(t: str, vocab: Vocab) -> int | None:
    """Where the last asking word stands (a latin word must stand alone), or None."""
    best: int | None = None
    for word in vocab.asked_markers:
        for m in re.finditer(_word(word), t):
            best = m.start() if best is None else max(best, m.start())
    return best


def _said_at(t: str, low: int, high: int, typed: str, start: int) -> int | None:
    """Where a card stands in the clause t[low:high]: where it was read, or where it is said again
    there ("只能买4090，8张4090的卡能不能行": the second mention was folded into the first); a name
    inside a longer one is not it ("4090" in "4090d")."""
    if low <= start < high:
        return start
    m = re.compile(rf"(?<![a-z0-9]){re.escape(typed)}(?![a-z0-9])").search(t, low, high)
    return m.start() if m else None


def _added(t: str, low: int, high: int, at: int, vocab: Vocab) -> bool:
    """Whether the card at `at` is said to join the cards had: a together word before it in its clause
    ("再加一张 3060", "plus a 3060"), or an adding word anywhere in that clause ("would adding a 3060")."""
    return _has_any(t[low:at], vocab.card_together_words) or _has_any(t[low:high], vocab.added_words)


def _kept_by_given_up(t: str, starts: list[int], vocab: Vocab) -> int | None:
    """The one card whose clause has no given-up word while every other card's has one ("A100 买不到，
    只能买 8张 4090。能不能行？" -> the 4090s), or None."""
    clauses = [_clause_of(t, s) for s in starts]
    kept = [k for k, (lo, hi) in enumerate(clauses) if not any(w in t[lo:hi] for w in vocab.given_up_words)]
    if len(kept) != 1 or clauses.count(clauses[kept[0]]) != 1:
        return None
    return kept[0]


def _asked_index(t: str, ps: list[_Piece], found: _Found, typed: list[str], vocab: Vocab) -> int | None:
    """Which of the cards found the question asks about, or None when it asks about all of them."""
    marker = _last_marker(t, vocab)
    if marker is None:
        return None
    low, high = _clause_of(t, marker)
    starts = [ps[span[0]].start for _r, span, _j in found]
    at = [_said_at(t, low, high, typed[k], starts[k]) for k in range(len(found))]
    inside = [k for k, where in enumerate(at) if where is not None]
    if not inside:
        asked = _kept_by_given_up(t, starts, vocab)
        if asked is None:
            return None
        low, high = _clause_of(t, starts[asked])
        where: int | None = starts[asked]
    elif len(inside) == 1:
        asked, where = inside[0], at[inside[0]]
    else:
        return None  # several cards in the asked clause: they are asked about together
    if where is None or _added(t, low, high, where, vocab):
        return None
    return asked


def asked_cards(
    t: str, ps: list[_Piece], found: _Found, cards: list[ParsedCard], vocab: Vocab
) -> tuple[list[ParsedCard], Note | None]:
    """The cards the question asks about, first, and a note naming the others; unchanged when it is
    not a question of several setups (one kind of card, cards compared or offered as either, all of
    them standing together or added to each other)."""
    if len(found) < 2 or len(found) != len(cards) or any(j in ("vs", "/") for _r, _s, j in found):
        return cards, None
    typed = [t[ps[span[0]].start : ps[span[1] - 1].end] for _r, span, _j in found]
    k = _asked_index(t, ps, found, typed, vocab)
    if k is None:
        return cards, None
    asked = cards[k]
    if all(c.res.best_id == asked.res.best_id for c in cards):
        return cards, None
    said = " + ".join(typed[j] for j in range(len(found)) if j != k)
    return [ParsedCard(asked.res, asked.count, "")], ("other_setup", said.strip())


def without_server_names(t: str, ps: list[_Piece], found: _Found, vocab: Vocab) -> _Found:
    """The cards found less a server's name read as a card: "A2服务器" with no card word beside it."""
    if not vocab.server_names:
        return found
    keep: _Found = []
    for res, span, joiner in found:
        i, j = span
        typed = "".join(p.text for p in ps[i:j])
        after = t[ps[j - 1].end : ps[j - 1].end + 12].lstrip()
        before = t[max(0, ps[i].start - 12) : ps[i].start]
        card_word = any(w in before or w in after[:6] for w in vocab.server_card_words)
        if typed in vocab.server_names and after.startswith(vocab.server_words) and not card_word:
            continue
        keep.append((res, span, joiner))
    return keep
