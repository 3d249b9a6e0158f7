"""The model a question names: the longest exact name, else the fuzzy resolver over model-like words."""

from __future__ import annotations

from dataclasses import replace

from core.catalog.loader import Catalog
from core.understanding import fuzzy
from core.understanding.name_index import VERSION_WORD, Index
from core.understanding.normalize import (
    ACTIVE_TOKEN,
    MOE_TOKEN,
    SIZE_TOKEN,
)
from core.understanding.parse_patterns import _Patterns, _Piece
from core.understanding.question import _CJK_PIECE, MIN_FUZZY_WORD
from core.understanding.resolution import Resolution, _hub_words
from core.understanding.resolve import resolve_model


def _longest_exact_model(free: list[_Piece], index: Index) -> tuple[int, int, str] | None:
    """(start, end, id) of the longest run of free words that is an exact model name."""
    best: tuple[int, int, str] | None = None
    n = len(free)
    for i in range(n):
        # The longest exact name starting at i, its words added one at a time while they still
        # start some model key (see _longest_model_window).
        end, key = 0, ""
        for j in range(i + 1, min(n, i + 6) + 1):
            key += free[j - 1].text
            if key not in index.model_prefixes:
                break
            if key in index.model_exact:
                end = j
        if end and (best is None or _longer((i, end), best[:2], free)):
            best = (i, end, index.model_exact["".join(p.text for p in free[i:end])])
    return best


def _longer(run: tuple[int, int], than: tuple[int, int], free: list[_Piece]) -> bool:
    """More letters, then fewer (so longer) words: "满血 deepseek v3.2" and "满血 deepseek v3" are
    DeepSeek-V3.2 / V3 (the aliases "deepseek v3.2", "deepseek v3"), not R1 by its alias "满血
    deepseek" that starts first (each CJK character is a word of its own, so counting words would
    prefer the Chinese alias)."""

    def letters(r: tuple[int, int]) -> int:
        return sum(len(p.text) for p in free[r[0] : r[1]])

    return (letters(run), than[1] - than[0]) > (letters(than), run[1] - run[0])


def _model_like(w: str, index: Index, pats: _Patterns) -> bool:
    """A leftover word that belongs to a model name: a size, a name word, or close to one."""
    if SIZE_TOKEN.match(w) or ACTIVE_TOKEN.match(w) or MOE_TOKEN.match(w):
        return True
    if w in index.vocab.full_model_words:
        return True
    if _CJK_PIECE.match(w) or w in index.vocab.noise_words or w.isdigit():
        return False
    if w in index.model_words:
        return True
    # Only a longer word is a misspelt name word: "code" and "min" ("run this code", "Min device that
    # llama 70b require") are everyday words within a letter of "coder" and "mini". A short word with
    # a digit ("4.6v" of GLM-4.6V) is a version and still counts.
    sized = len(w) >= MIN_FUZZY_WORD or (len(w) >= 3 and not w.isalpha())
    if not sized:
        return _one_letter_undoubled(w, index)
    # A misspelling keeps the first letter ("lllama", "Llamma"); an everyday word that sits inside a
    # name word does not count ("still" in "distill": "...8 A100 40 gb, one node, still getting", vllm#5711).
    close = fuzzy.extract(w, pats.model_word_list, "ratio", limit=4, score_cutoff=80)
    return any(name[:1] == w[:1] for name, _score, _pos in close)


def _one_letter_undoubled(w: str, index: Index) -> bool:
    """ "lama", "gema": a short name word typed with one of its double letters single ("llama",
    "gemma"); an everyday short word ("code", "mini", "min") doubles into no name word."""
    return (
        len(w) >= 4 and w.isalpha() and any(w[:k] + w[k] + w[k:] in index.model_words for k in range(len(w)))
    )


def _device_word(ps: list[_Piece], k: int, index: Index) -> bool:
    """ "pro" in "macbook pro": the word finishing a device's name after its vendor word."""
    after = index.vocab.device_suffixes.get(ps[k - 1].text) if k > 0 else None
    return after is not None and ps[k].text in after


def _free_pieces(ps: list[_Piece], index: Index) -> list[_Piece]:
    """The pieces no card, size or device name took: where a model name may stand."""
    return [
        p
        for k, p in enumerate(ps)
        if not p.used and p.memory is None and not p.vendor and not _device_word(ps, k, index)
    ]


def _model_words(
    free: list[_Piece],
    best: tuple[int, int, str] | None,
    index: Index,
    pats: _Patterns,
    swap: frozenset[str] = frozenset(),
) -> list[str]:
    """The free words that belong to a model name. A bare version number right after a name word
    belongs to it: "Llamma 3" is Llama 3 misspelt, not "llamma" alone (any llama)."""
    words: list[str] = []
    previous = False
    last = False  # whether the word before was taken into the name
    for k, p in enumerate(free):
        taken = (best is not None and best[0] <= k < best[1]) or _model_like(p.text, index, pats)
        # "gemma 3n" too: a version with its letter is the name's ("3n" is not Gemma 3 or Gemma 4).
        version = previous and bool(VERSION_WORD.match(p.text)) and not SIZE_TOKEN.match(p.text)
        # "qwen3 30b super": a card keeps its own "super" (not free); one left after a name is the
        # name's, so resolve_model can refuse a reading that lacks it (hub.toml [names] swap).
        if p.text.lower() in swap:
            taken = last  # "super 4090 llama 3 8b": only a swap word after a name is the name's
        last = taken or version
        if last:
            words.append(p.text)
        previous = taken and p.text.isalpha()
    return words


def _whole_name(exact: Resolution, named: list[str], words: list[str], catalog: Catalog) -> Resolution:
    """The exact name "qwen3" inside "Qwen3-VL": when the words around it name another model outright
    (a stem of its own, scored 100), that model is meant, not the exact part."""
    if words == named:
        return exact
    wider = resolve_model(" ".join(words), catalog)
    whole = bool(wider.candidates) and wider.candidates[0][1] >= 100.0
    return wider if whole and wider.best_id != exact.best_id else exact


def _with_plus(free: list[_Piece], text: str) -> list[_Piece]:
    """ "command-r+": the plus joined to a name word (which the word split drops) is its "Plus"
    variant, read as "command rplus" (Command R+), not Command R."""
    return [
        replace(p, text=p.text + "plus")
        if text[p.start : p.end].endswith("+") and p.text[-1:].isalpha()
        else p
        for p in free
    ]


def _find_model(
    ps: list[_Piece], index: Index, catalog: Catalog, pats: _Patterns, text: str = ""
) -> Resolution | None:
    free = _with_plus(_free_pieces(ps, index), text)
    best = _longest_exact_model(free, index)
    swap = _hub_words(catalog, "swap")
    words = _model_words(free, best, index, pats, swap)
    if best is not None:
        named = [p.text for p in free[best[0] : best[1]]]
        if any(w.lower() in swap for w in words[len(named) :] if w not in named):
            return resolve_model(" ".join(words), catalog)  # "qwen3 30b super": not Qwen3-30B itself
        exact = resolve_model(" ".join(named), catalog)
        # "r1 32b": the exact name "r1" is the 671B model; a size next to it asks for the distill.
        sizes = [w for w in words if SIZE_TOKEN.match(w) or ACTIVE_TOKEN.match(w)]
        if not sizes or all(w in named for w in sizes):
            return _whole_name(exact, named, words, catalog)
        wider = resolve_model(" ".join(words), catalog)
        return wider if wider.best_id else exact
    if not words:
        return None
    res = resolve_model(" ".join(words), catalog)
    if res.best_id or res.candidates:
        return res
    # A size or a MoE label with no model of it ("hunyuan a13b"): a model was named, one we don't
    # know; an empty reading says so instead of answering for the card alone.
    return res if any(SIZE_TOKEN.match(w) or ACTIVE_TOKEN.match(w) for w in words) else None
