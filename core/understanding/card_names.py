"""A card's name in the question's words: the longest exact window, the fuzzy fallback, its memory."""

from __future__ import annotations

import re

from core.catalog.loader import Catalog
from core.understanding.name_index import Index
from core.understanding.normalize import (
    ACTIVE_TOKEN,
    MOE_TOKEN,
    SIZE_TOKEN,
    split_fused_memory,
)
from core.understanding.parse_patterns import _number, _Patterns, _Piece
from core.understanding.question import MAX_COUNT
from core.understanding.resolution import Resolution
from core.understanding.resolve import resolve_gpu
from core.understanding.setup_words import (
    Note,
)


def _longest_gpu_window(ps: list[_Piece], i: int, stop: int, index: Index) -> tuple[int, str] | None:
    """(end, id) of the longest window ps[i:end] (end <= stop) that is an exact card name: its words
    less vendor words ("nvidia rtx 4090"), with a memory size among them ("v100 32g"); a window must
    not start on a size nor end on a vendor word. Windows grow one word at a time, and growing stops
    once the words so far start no card key (a longer window only adds to them) or take a used word
    (every longer window would hold it)."""
    if ps[i].memory is not None:
        return None
    best: tuple[int, str] | None = None
    base = ""
    memory: float | None = None
    for j in range(i + 1, stop + 1):
        p = ps[j - 1]
        if p.used:
            break
        if p.memory is not None:
            memory = p.memory
        elif not p.vendor:
            base += p.text
            compact = base.replace("+", "")
            if compact and compact not in index.gpu_prefixes:
                break
        if p.vendor or not base:
            continue
        compact = base.replace("+", "")
        gid = index.gpu_exact.get(f"{compact}{memory:g}g") if memory is not None else None
        gid = gid or index.gpu_exact.get(compact)
        if gid is not None:
            best = (j, gid)
    return best


def _longest_model_window(ps: list[_Piece], i: int, stop: int, index: Index) -> int:
    """The end of the longest window ps[i:end] that is an exact model name (0: none), grown as above."""
    best = 0
    key = ""
    for j in range(i + 1, stop + 1):
        p = ps[j - 1]
        if p.used:
            break
        key += p.text
        if key not in index.model_prefixes:
            break
        if key in index.model_exact:
            best = j
    return best


def _find_gpu(
    ps: list[_Piece], index: Index, catalog: Catalog
) -> tuple[Resolution | None, tuple[int, int] | None]:
    res, span = _exact_gpu(ps, index, catalog)
    if res is not None:
        return res, span
    res, span = _mac_by_product(ps, index, catalog)
    if res is not None:
        return res, span
    return _fuzzy_gpu(ps, index, catalog)


MAC_SIZE_REACH = 3  # "Mac Studio (512 GB unified memory)", "Mac Mini with 32GB": the size a few words on


def _mac_by_product(
    ps: list[_Piece], index: Index, catalog: Catalog
) -> tuple[Resolution | None, tuple[int, int] | None]:
    """ "512gb mac studio", "mac mini 64gb": a Mac named by product and memory, no chip, is the newest
    chip that product is sold with at that size (`mac_chip`)."""
    found = mac_product(ps, index)
    if found is None:
        return None, None
    i, width, name = found
    size = _mac_size(ps, i, i + width)
    res = mac_chip(name, ps[size].memory or 0.0, index, catalog) if size is not None else None
    if res is None or size is None:
        # No chip can be told: the product is still the card named (its words are no model's), read
        # as no chip with the ones it ships with as candidates, and the reply asks which.
        for p in ps[i : i + width]:
            p.used = True
        return mac_product_only(name, index, catalog), (i, i + width)
    for p in (*ps[i : i + width], ps[size]):
        p.used = True
    return res, (min(i, size), max(i + width, size + 1))


MAC_PRODUCT_SCORE = 80.0  # a product's chips are candidates, none of them read: below CONFIDENT_SCORE


def mac_product_only(product: str, index: Index, catalog: Catalog) -> Resolution:
    """ "mac studio" and no size it comes in: no chip read, the chips it ships with (one per chip,
    newest first) as candidates to ask between."""
    chips: dict[str, str] = {}
    for c in index.vocab.mac_products.get(product, ()):
        if c in catalog.gpus:
            chips.setdefault(_chip_of(c), c)
    ranked = tuple((c, MAC_PRODUCT_SCORE) for c in chips.values())
    return Resolution(None, ranked, False, None, product=product)


def mac_product(ps: list[_Piece], index: Index) -> tuple[int, int, str] | None:
    """(first piece, pieces, name) of the first free Mac product name ("mac studio", "imac")."""
    products = index.vocab.mac_products
    for i in range(len(ps)):
        for width in (2, 1):
            window = ps[i : i + width]
            name = " ".join(p.text for p in window)
            if len(window) == width and name in products and not any(p.used for p in window):
                return i, width, name
    return None


def mac_chip(product: str, memory: float, index: Index, catalog: Catalog) -> Resolution | None:
    """The first chip of `product`'s list sold at `memory`, the other chips sold so as its "also";
    None when no chip of that product comes in that size."""
    ids = index.vocab.mac_products.get(product, ())
    chips = [c for c in ids if c in catalog.gpus and memory in catalog.gpus[c].memory_options_gib]
    if not chips:
        return None
    also = tuple(dict.fromkeys(c for c in chips[1:] if _chip_of(c) != _chip_of(chips[0])))[:2]
    return Resolution(chips[0], ((chips[0], 100.0),), True, memory, also)


def _mac_size(ps: list[_Piece], start: int, end: int) -> int | None:
    """The piece of the memory size said with a Mac product: right before it, or a few words on."""
    if start > 0 and ps[start - 1].memory is not None and not ps[start - 1].used:
        return start - 1
    for j in range(end, min(len(ps), end + MAC_SIZE_REACH)):
        if ps[j].memory is not None and not ps[j].used:
            return j
    return None


def _chip_of(gpu_id: str) -> str:
    """ "apple-m4-max-40c" -> "apple-m4-max": one chip's GPU-core bins are one chip to name beside."""
    return re.sub(r"-\d+c$", "", gpu_id)


def _exact_gpu(
    ps: list[_Piece], index: Index, catalog: Catalog, start: int = 0
) -> tuple[Resolution | None, tuple[int, int] | None]:
    """The first free run of pieces from `start` that is an exact card name (with the memory next
    to it)."""
    n = len(ps)
    i = start
    while i < n:
        if ps[i].used:
            i += 1
            continue
        best_gpu = _longest_gpu_window(ps, i, min(n, i + 6), index)
        best_model = _longest_model_window(ps, i, min(n, i + 6), index)
        # A model name that swallows a card alias wins ("minimax m2" is not an Apple M2).
        if best_gpu is None or best_model > best_gpu[0]:
            i = best_model if best_model > i else i + 1
            continue
        return _gpu_resolution(ps, i, best_gpu[0], index, catalog)
    return None, None


def _gpu_resolution(
    ps: list[_Piece], i: int, j: int, index: Index, catalog: Catalog
) -> tuple[Resolution, tuple[int, int]]:
    # A memory size right after ("m4 pro 64g") or right before ("a 24gb 3090") belongs to the card.
    while j < len(ps) and ps[j].vendor:
        j += 1
    words = [p.text for p in ps[i:j]]
    if not any(p.memory is not None for p in ps[i:j]):
        # "A100的80G", "3080的12G版": a size after "的" is the card's too.
        if j + 1 < len(ps) and ps[j].text in index.vocab.card_memory_joiners and ps[j + 1].memory is not None:
            ps[j].used = True
            j += 1
        if j < len(ps) and ps[j].memory is not None and not ps[j].used:
            words.append(ps[j].text)
            j += 1
        elif i > 0 and ps[i - 1].memory is not None and not ps[i - 1].used:
            words.insert(0, ps[i - 1].text)
            ps[i - 1].used = True
        elif (
            j + 1 < len(ps)
            and _X_COUNT.match(ps[j].text)
            and ps[j + 1].memory is not None
            and not ps[j + 1].used
        ):
            # "p40 x4 96g total": the size after the count is the cards' too (the count stays to be read
            # after the name, so the span ends before it).
            words.append(ps[j + 1].text)
            ps[j + 1].used = True
    for p in ps[i:j]:
        p.used = True
    res = resolve_gpu(" ".join(words), catalog)
    if res.memory_gib is None and j < len(ps) and _bare_size_of(res, ps, j, catalog):
        ps[j].used = True
        return resolve_gpu(" ".join((*words, f"{ps[j].text}g")), catalog), (i, j + 1)
    return res, (i, j)


_X_COUNT = re.compile(r"^[x*]\d{1,2}$")  # "x4" typed against a card name's end
_NOT_A_SIZE_AFTER = frozenset({"core", "cores", "c", "核", "gpu", "cpu", "tops", "w"})


def _bare_size_of(res: Resolution, ps: list[_Piece], j: int, catalog: Catalog) -> bool:
    """ "m4 max 128", "M2 Ultra 192": a bare number right after a unified-memory chip that is one of
    the sizes it is sold in is its memory (not "m1 max 32 core": a core count)."""
    gpu = catalog.gpus.get(res.best_id or "")
    word = ps[j].text
    if gpu is None or not gpu.unified_memory or ps[j].used or not word.isdigit():
        return False
    if j + 1 < len(ps) and ps[j + 1].text in _NOT_A_SIZE_AFTER:
        return False
    return float(word) in {float(m) for m in gpu.memory_options_gib}


def _fuzzy_gpu(
    ps: list[_Piece], index: Index, catalog: Catalog
) -> tuple[Resolution | None, tuple[int, int] | None]:
    """No exact card name: try card-like words ("4o90", "3090ti24g", "4090s") and keep a sure hit."""
    for i, p in enumerate(ps):
        word = p.text
        if p.used or p.memory is not None or not any(ch.isdigit() for ch in word) or len(word) < 3:
            continue
        if (
            SIZE_TOKEN.match(word)
            or ACTIVE_TOKEN.match(word)
            or MOE_TOKEN.match(word)
            or word.isdigit()
            and len(word) > 5
        ):
            continue
        if word in index.model_words:
            continue
        fused = split_fused_memory(word)
        if fused and fused[0] in index.gpu_exact:
            p.used = True
            return resolve_gpu(f"{fused[0]} {fused[1]:g}g", catalog), (i, i + 1)
        zeroed = _O_FOR_ZERO.sub("0", word)
        if zeroed != word and zeroed in index.gpu_exact:  # "4o90": an o typed for the zero
            p.text = zeroed
            return _gpu_resolution(ps, i, i + 1, index, catalog)
        if word.endswith("s") and word[:-1] in index.gpu_exact:  # "two 4090s"
            p.text = word[:-1]
            return _gpu_resolution(ps, i, i + 1, index, catalog)
        res = resolve_gpu(word, catalog)
        if res.confident:
            p.used = True
            return _sized_after(res, word, ps, i, catalog)
    return None, None


def _sized_after(
    res: Resolution, word: str, ps: list[_Piece], i: int, catalog: Catalog
) -> tuple[Resolution, tuple[int, int]]:
    """A card read by its nearest name takes the memory right after it too: "RTX 4050 6gb" (the
    laptop 4050, koboldcpp#1294) is the 6 GB card, as an exact name would be."""
    nxt = ps[i + 1] if i + 1 < len(ps) else None
    if nxt is None or nxt.memory is None or nxt.used:
        return res, (i, i + 1)
    sized = resolve_gpu(f"{word} {nxt.text}", catalog)
    if not sized.confident or sized.best_id != res.best_id:
        return res, (i, i + 1)
    nxt.used = True
    return sized, (i, i + 2)


_O_FOR_ZERO = re.compile(r"(?<=\d)o(?=\d|$)")


def _count_near(
    t: str, ps: list[_Piece], span: tuple[int, int], pats: _Patterns
) -> tuple[int | None, Note | None]:
    """The count standing next to a card, and a note when that count is out of range ("1000x",
    "0 cards", "-2x", "x999": read, said, not used)."""
    i, j = span
    before = t[: ps[i].start]
    after = t[ps[j - 1].end :]
    wide = pats.count_wide_before.search(before) or pats.count_wide_after.search(after)
    if wide:
        n = int(wide.group(1))
        if 1 <= n <= MAX_COUNT:
            return n, None
        return None, ("count_out_of_range", wide.group(0).strip())
    listed = _count_listed(before, pats)
    if listed is not None:
        return listed, None
    plural = after.startswith("s") or ps[j - 1].text.endswith("s")
    m = pats.count_word_before.search(before)
    word = _number(m.group(1), pats) if m else None
    if word is not None and 1 <= word <= MAX_COUNT:
        return word, None
    m = pats.count_digit_before.search(before)
    if m and plural and 1 <= int(m.group(1)) <= MAX_COUNT:
        return int(m.group(1)), None
    m = pats.count_lead.search(before)
    if m and 1 <= int(m.group(1)) <= 16:
        return int(m.group(1)), None
    return None, None


def _count_listed(before: str, pats: _Patterns) -> int | None:
    """ "GPU 0-7: Tesla V100" (nvidia-smi numbers the cards: 8 of them), "8-A100" (a count joined to
    the name by a dash): the count, or None."""
    m = pats.count_range_before.search(before)
    if m:
        low, high = int(m.group(1)), int(m.group(2))
        return high - low + 1 if low < high and high - low + 1 <= MAX_COUNT else None
    m = pats.count_dash_before.search(before)
    return int(m.group(1)) if m and 1 <= int(m.group(1)) <= MAX_COUNT else None
