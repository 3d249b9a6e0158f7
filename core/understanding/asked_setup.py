"""Which of several named setups a question asks about, and card names that name a server instead.

"A100国内很难买到，只能买4090，8张4090的卡能不能行？" names two cards but asks about one: the clause
with the asking words ("能不能行", "would … work") holds the card asked about, and a word such as
"很难买" / "tried" / "太慢" says another card is given up. Then the asked card is the machine and the
others are mentioned in a note, not priced together with it as one box (issue 21). Without a given-up
word the reading stays as it was: "3090 + 3060, would qwen 72b fit?" is one machine of both.

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


def _last_marker(t: str, vocab: Vocab) -> int | None:
    """Where the last asking word stands (a latin word must stand alone), or None."""
    best: int | None = None
    for word in vocab.asked_markers:
        body = re.escape(word)
        if word[:1].isascii():
            body = rf"(?<![a-z]){body}(?![a-z])"
        for m in re.finditer(body, t):
            best = m.start() if best is None else max(best, m.start())
    return best


def asked_cards(
    t: str, ps: list[_Piece], found: _Found, cards: list[ParsedCard], vocab: Vocab
) -> tuple[list[ParsedCard], Note | None]:
    """The cards the question asks about, first, and a note naming the others; unchanged when it is
    not a question of several setups (one kind of card, no given-up word, no card in the asked clause)."""
    if len(found) < 2 or len(found) != len(cards) or any(j in ("vs", "/") for _r, _s, j in found):
        return cards, None
    if not any(word in t for word in vocab.given_up_words):
        return cards, None
    marker = _last_marker(t, vocab)
    if marker is None:
        return cards, None
    low, high = _clause_of(t, marker)
    clause = t[low:high]
    # A card said again in the asked clause counts there too ("只能买4090，8张4090的卡能不能行": the
    # second mention was folded into the first).
    typed = [t[ps[span[0]].start : ps[span[1] - 1].end] for _r, span, _j in found]
    inside = [
        k for k, (_r, span, _j) in enumerate(found) if low <= ps[span[0]].start < high or typed[k] in clause
    ]
    if len(inside) != 1:
        return cards, None
    asked = cards[inside[0]]
    others = [c for k, c in enumerate(cards) if k != inside[0] and c.res.best_id != asked.res.best_id]
    if not others:
        return cards, None
    said = " + ".join(typed[k] for k in range(len(found)) if k != inside[0])
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
