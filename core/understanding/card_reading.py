"""Cards in a question: several kinds, their counts, memory sizes said next to them, comparisons."""

from __future__ import annotations

import re
from dataclasses import replace

from core.catalog.loader import Catalog
from core.understanding.card_names import _count_near, _exact_gpu, _find_gpu, mac_chip
from core.understanding.name_index import Index, index_for
from core.understanding.normalize import (
    SIZE_TOKEN,
)
from core.understanding.parse_fields import _Classified
from core.understanding.parse_patterns import _Patterns, _Piece
from core.understanding.query import Intent
from core.understanding.question import MAX_CARD_MEMORY_GIB, ParsedCard
from core.understanding.resolution import Resolution
from core.understanding.setup_words import (
    Note,
)


def _unified_ram(
    cards: list[ParsedCard], host_gib: float | None, catalog: Catalog
) -> tuple[list[ParsedCard], float | None]:
    """On a unified-memory machine the "RAM" is the chip's memory: "M4 Max 128GB RAM", "Apple M1 chip
    with 8GB of RAM" (lmstudio-bug-tracker#258, ollama#5680) name a 128 GB / 8 GB M-series, not a
    host beside a card. Only for one chip whose memory was not given, at a size it comes in."""
    if host_gib is None or len(cards) != 1 or cards[0].res.memory_gib is not None:
        return cards, host_gib
    card = cards[0]
    gpu = catalog.gpus.get(card.res.best_id or "")
    if gpu is None or not gpu.unified_memory:
        return cards, host_gib
    sized = _with_memory(card.res, host_gib, catalog)  # "m4 max 128g ram": the 40-core row
    if sized.best_id == card.res.best_id and host_gib not in {float(m) for m in gpu.memory_options_gib}:
        return cards, host_gib
    return [ParsedCard(sized, card.count, card.joiner)], None


def _mac_by_its_ram(
    cards: list[ParsedCard], host_gib: float | None, catalog: Catalog
) -> tuple[list[ParsedCard], float | None]:
    """ "mac studio 512gb ram": a Mac product read with no chip and the size said as its RAM is the
    chip sold with that memory (`mac_chip`), not a host beside no card."""
    if host_gib is None or len(cards) != 1 or not cards[0].res.product:
        return cards, host_gib
    # The product was read with no chip (`mac_product_only`): its memory said as RAM names the chip.
    res = mac_chip(cards[0].res.product, host_gib, index_for(catalog), catalog)
    if res is None:
        return cards, host_gib
    return [ParsedCard(res, 1, "")], None


MAX_MOD_FACTOR = 4.0  # the largest memory mod sold doubles a card ("2080 Ti 22G", "4090 48G"); 4x is none


def _total_memory(cards: list[ParsedCard], ps: list[_Piece], catalog: Catalog) -> list[ParsedCard]:
    """ "3 x RTX 3090 (72GB vram)" (Open-Assistant#2904), "8卡A100 640G": the cards' memory added up;
    each card is the row of that share (24 GB, 80 GB). Unless the question also gives the total:
    "Dual RTX 4090 48GB ... a total VRAM of 96GB" is two modded 48 GB cards."""
    if not cards or cards[0].count < 2:
        return cards
    card = cards[0]
    gpu = catalog.gpus.get(card.res.best_id or "")
    memory = card.res.memory_gib
    if gpu is None or memory is None or gpu.unified_memory or memory <= gpu.memory_gib:
        return cards
    if any(p.memory == memory * card.count and not p.used for p in ps):
        return cards
    share = memory / card.count
    sized = _with_memory(replace(card.res, memory_gib=None), share, catalog)
    row = catalog.gpus.get(sized.best_id or "")
    if row is not None and abs(share - gpu.memory_gib) <= TOTAL_SLACK * gpu.memory_gib:
        # "2xH100 NVL 196GB" (issue 21): the total as the box's spec sheet rounds it (2 × 96 GB HBM,
        # 94 GB usable each) is still the cards' total, not 196 GB per card.
        return [
            ParsedCard(_with_memory(card.res, gpu.memory_gib, catalog), card.count, card.joiner),
            *cards[1:],
        ]
    if row is None or row.memory_gib != share:
        return cards
    return [ParsedCard(sized, card.count, card.joiner), *cards[1:]]


TOTAL_SLACK = 0.05  # a total within 5 % of count × the card's memory is that total, rounded


def _mixed_total(cards: list[ParsedCard], catalog: Catalog) -> list[ParsedCard]:
    """ "4090 + 3090 (48GB total)": a size after the last of several cards that adds up all of their
    memory is the machine's total, not a 48 GB 3090."""
    if len(cards) < 2 or any(c.joiner != "+" for c in cards[1:]):
        return cards
    *rest, last = cards
    total = 0.0
    for k, card in enumerate(cards):
        gpu = catalog.gpus.get(card.res.best_id or "")
        if gpu is None:
            return cards
        # The others as read; the last at its catalog size (its read size is the one in question).
        own = gpu.memory_gib if k == len(rest) else (card.res.memory_gib or gpu.memory_gib)
        total += own * card.count
    last_gpu = catalog.gpus[last.res.best_id or ""]
    # A size the card is sold in ("m4 pro 24g, m4 pro 48g") is its own, whatever the sum.
    if last.res.memory_gib != total or last_gpu.unified_memory or total in last_gpu.memory_options_gib:
        return cards
    return [*rest, ParsedCard(replace(last.res, memory_gib=None), last.count, last.joiner)]


def _ram_read_as_card(
    cards: list[ParsedCard], host_gib: float | None, catalog: Catalog
) -> tuple[list[ParsedCard], float | None]:
    """A size by a discrete card that no card of that name carries, even modded, is the host's RAM:
    "8 * 4090,256G memory" (ktransformers#188) is eight 4090s in a 256 GB box."""
    if host_gib is not None or not cards:
        return cards, host_gib
    card = cards[0]
    gpu = catalog.gpus.get(card.res.best_id or "")
    memory = card.res.memory_gib
    if gpu is None or gpu.unified_memory or memory is None or memory <= MAX_MOD_FACTOR * gpu.memory_gib:
        return cards, host_gib
    if memory == card.count * gpu.memory_gib:  # "8卡A100 640G": the cards' memory added up
        return cards, host_gib
    return [ParsedCard(replace(card.res, memory_gib=None), card.count, card.joiner), *cards[1:]], memory


def _size_typed(ps: list[_Piece]) -> float | None:
    """The first model size the question typed ("72b", "140亿" -> 14b), whatever model it names."""
    for p in ps:
        m = SIZE_TOKEN.match(p.text)
        if m and not p.used:
            return float(m.group(1))
    return None


def _is_laptop(res: Resolution, catalog: Catalog) -> bool:
    gpu = catalog.gpus.get(res.best_id or "")
    return gpu is not None and gpu.form == "laptop"


MAX_CARD_KINDS = 4  # "5090 + 4090 + 3090 + 3060" is as mixed as a chat box gets


def _find_cards(
    t: str, ps: list[_Piece], pats: _Patterns, catalog: Catalog
) -> list[tuple[Resolution, tuple[int, int], str]]:
    """Every card named, with its piece span and how it joins the one before ("+", "/", "vs")."""
    index = pats.index
    gpu, span = _find_gpu(ps, index, catalog)
    if gpu is None or span is None:
        return []
    found = [_with_cores(gpu, span, ps, index, catalog) + ("",)]
    while len(found) < MAX_CARD_KINDS:
        after = found[-1][1][1]  # cards are read left to right: the next one starts after this one
        if not any(_may_name_card(p.text, pats) for p in ps[after:] if not p.used):
            break  # no word left that starts a card name ("a100", "titan", "spark"): no card left
        more, more_span = _exact_gpu(ps, index, catalog, after)
        if more is None or more_span is None:
            break
        more, more_span = _with_cores(more, more_span, ps, index, catalog)
        found.append((more, more_span, _joiner(_between(t, ps, found[-1][1], more_span), index)))
    return found


_CORES = re.compile(r"^(\d{1,3})(c|cores?|核)?$")
_CORE_WORDS = frozenset({"c", "core", "cores", "核"})
_CHIP_BASE = re.compile(r"\(.*\)|^apple\s+|[^a-z0-9]")


def _core_words(ps: list[_Piece], j: int) -> tuple[int, int] | None:
    """(count, pieces taken) of a core count at ps[j]: "80-core", "38核", "40c", "60 core gpu"."""
    m = _CORES.match(ps[j].text) if j < len(ps) and not ps[j].used else None
    if m is None:
        return None
    took = 1
    if m.group(2) is None:
        if j + 1 >= len(ps) or ps[j + 1].used or ps[j + 1].text not in _CORE_WORDS:
            return None
        took = 2
    if j + took < len(ps) and not ps[j + took].used and ps[j + took].text in ("gpu", "cpu"):
        took += 1
    return int(m.group(1)), took


def _with_cores(
    res: Resolution, span: tuple[int, int], ps: list[_Piece], index: Index, catalog: Catalog
) -> tuple[Resolution, tuple[int, int]]:
    """An Apple chip with its core count ("M3 Ultra 80-core", "M2 Max 38核", "M4 Max 32核gpu"): the
    catalog's row of that count (its "32c" alias: GPU or CPU cores, the chips' counts never clash),
    else the chip as read; the count's words are the chip's, never a model's."""
    gpu = catalog.gpus.get(res.best_id or "")
    if gpu is None or gpu.vendor != "Apple":
        return res, span
    said = _core_words(ps, span[1])
    if said is None:
        return res, span
    count, took = said
    for p in ps[span[1] : span[1] + took]:
        p.used = True
    base = _CHIP_BASE.sub("", gpu.name.lower())
    gid = index.gpu_exact.get(f"{base}{count}c")
    if gid is not None and gid != res.best_id:
        res = replace(res, best_id=gid, candidates=((gid, 100.0),), confident=True)
    return res, (span[0], span[1] + took)


def _between(t: str, ps: list[_Piece], prev: tuple[int, int], nxt: tuple[int, int]) -> str:
    """The text between two cards, from the last word of the first that is not a vendor word: "titan
    v vs radeon vii" gives "radeon" to the Titan V's span, and the "vs" before it still joins them."""
    words = [p for p in ps[prev[0] : prev[1]] if not p.vendor] or [ps[prev[1] - 1]]
    return t[words[-1].end : ps[nxt[0]].start]


_COMPARED_FROM = frozenset({"general", "speed", "fit", "memory"})


def _compared(
    t: str,
    ps: list[_Piece],
    found: list[tuple[Resolution, tuple[int, int], str]],
    cards: list[ParsedCard],
    intent: Intent,
    catalog: Catalog,
) -> Intent:
    """Two cards set against each other are a comparison whatever else was asked: "Radeon VII 还是
    P40", "P40 还是 3090 跑 70b 快"; and "A6000 or Titan V for 70b" when the two are different cards
    ("A100 or A800 80G" is one card under two names: either, not compared; so is "A100/A800")."""
    if intent not in _COMPARED_FROM or len(found) < 2:
        return intent
    if any(joiner == "vs" for _res, _span, joiner in found[1:]):
        return "compare"
    if intent not in ("general", "speed"):
        return intent
    first, second = cards[0].res, cards[1].res  # read fully: "A100 or A800 80G" are both 80 GB
    if cards[1].joiner != "/" or "/" in _between(t, ps, found[0][1], found[1][1]):
        return intent
    a, b = catalog.gpus.get(first.best_id or ""), catalog.gpus.get(second.best_id or "")
    if a is None or b is None:
        return intent
    same = (
        a.vendor == b.vendor
        and (first.memory_gib or a.memory_gib) == (second.memory_gib or b.memory_gib)
        and abs(a.bandwidth_gbs - b.bandwidth_gbs) <= 0.1 * a.bandwidth_gbs
    )
    return intent if same else "compare"


def _backends_compared(
    t: str, backends: tuple[tuple[str, int, int], ...], intent: Intent, index: Index
) -> Intent:
    """Two backends set against each other ("rocm还是vulkan快", "vulkan or rocm for llama 3.1 8b") are
    a comparison of the two on the card, whatever speed or fit words are around them."""
    if intent not in _COMPARED_FROM or len(backends) < 2:
        return intent
    between = t[backends[0][2] : backends[1][1]]
    return "compare" if _joiner(between, index) != "+" else intent


def _may_name_card(word: str, pats: _Patterns) -> bool:
    """A word that can start a card name: one with a digit ("a100", "m4", "5090"), or the first word
    of a name without one ("titan rtx", "radeon vii", "dgx spark")."""
    return any(ch.isdigit() for ch in word) or word in pats.digitless_starts


def _joiner(between: str, index: Index) -> str:
    """How a card joins the one before it: "/" (either one), "vs" (compared) or "+" (together)."""
    words = set(re.findall(r"[a-z]+|[\u3400-\u9fff]+|/", between))
    vocab = index.vocab
    if words & vocab.card_either_words or "/" in between:
        return "/"
    if words & vocab.card_versus_words or any(
        w in between for w in vocab.card_versus_words if not w.isascii() or " " in w
    ):
        return "vs"
    return "+"


def _cards_with_counts(
    t: str,
    ps: list[_Piece],
    found: list[tuple[Resolution, tuple[int, int], str]],
    classified: list[_Classified],
    pats: _Patterns,
    notes: list[Note],
    said: str,
) -> tuple[_Found, list[ParsedCard]]:
    """Each card with its count: a classifier count right before it ("两张3090"), else the words
    around it ("2x", "双", "x8", "two ... 4090s"); the first card also takes a classifier count
    standing elsewhere ("h200 8卡")."""
    counts: list[int | None] = []
    spare = [c for c in classified if c.n is not None]
    starts = [ps[span[0]].start for _res, span, _joiner in found]
    # A classifier count right before a card is that card's, whichever card comes first.
    adjacent = {
        k: next((c for c in spare if c.end <= start and not t[c.end : start].strip()), None)
        for k, start in enumerate(starts)
    }
    spare = [c for c in spare if c not in adjacent.values()]
    for k, (_res, span, _joiner) in enumerate(found):
        mine = adjacent[k]
        count = mine.n if mine else None
        if count is None:
            count, note = _count_near(t, ps, span, pats)
            if note is not None:
                notes.append(note)
        if count is None and k == 0 and spare:
            count = spare.pop(0).n
        counts.append(count)
    if adjacent.get(0) is None:
        counts = _said_once_for_both(found, counts, classified)
    found, counts = _said_again(said, ps, found, counts, pats.index)
    return found, [
        ParsedCard(res, count or 1, joiner) for (res, _span, joiner), count in zip(found, counts, strict=True)
    ]


_Found = list[tuple[Resolution, tuple[int, int], str]]


def _said_once_for_both(
    found: _Found, counts: list[int | None], classified: list[_Classified]
) -> list[int | None]:
    """ "is 7900xtx or 3090 faster ... 2 cards": a classifier count said after two cards set against
    each other (not added together) is each side's, not the first card's alone."""
    if len(found) != 2 or found[1][2] not in ("vs", "/") or counts[0] is None or counts[1] is not None:
        return counts
    return [counts[0], counts[0]] if any(c.n == counts[0] for c in classified) else counts


def _said_again(
    t: str, ps: list[_Piece], found: _Found, counts: list[int | None], index: Index
) -> tuple[_Found, list[int | None]]:
    """A card named again with only words between ("buy a Mac mini M4 ... 2 M4 16GB is the same as",
    exo#587; "一张4090 ... 而用两张4090卡") is the one card said twice: the first mention keeps what
    it said and takes from the later one only what it lacked (the count, the memory). "3090 + 3090"
    (a together word between) stays two cards; a card compared or offered as the other ("vs", "/")
    stays too."""
    keep_found: _Found = []
    keep_counts: list[int | None] = []
    for k, (res, span, joiner) in enumerate(found):
        first = (
            next(
                (n for n, (r, _s, _j) in enumerate(keep_found) if _same_card(r, res, index)),
                None,
            )
            if k and joiner == "+"
            else None
        )
        if first is not None and not _together(_between(t, ps, keep_found[-1][1], span), index):
            old_res, old_span, old_joiner = keep_found[first]
            if old_res.memory_gib is None and res.memory_gib is not None:
                old_res = res
            keep_found[first] = (old_res, old_span, old_joiner)
            keep_counts[first] = keep_counts[first] if keep_counts[first] is not None else counts[k]
            continue
        keep_found.append((res, span, joiner))
        keep_counts.append(counts[k])
    return keep_found, keep_counts


def _same_card(a: Resolution, b: Resolution, index: Index) -> bool:
    """One card under the same or a sibling row ("4060 ti" and "4060ti 16g"); two sizes said
    ("4060ti 8g, 4060ti 16g, which is better") are two cards."""
    if a.best_id is None or b.best_id is None:
        return False
    if a.memory_gib is not None and b.memory_gib is not None and a.memory_gib != b.memory_gib:
        return False
    return a.best_id == b.best_id or b.best_id in index.gpu_siblings.get(a.best_id, ())


def _together(between: str, index: Index) -> bool:
    """A together word between two cards: a latin word stands alone ("and" is not in "band")."""
    words = set(re.findall(r"[a-z]+", between))
    return any(
        w in words if w.isascii() and w.isalpha() else w in between for w in index.vocab.card_together_words
    )


def _cards_read_fully(
    cards: list[ParsedCard],
    ps: list[_Piece],
    index: Index,
    catalog: Catalog,
    laptop: bool,
    notes: list[Note],
) -> list[ParsedCard]:
    """Each card's memory where it stands apart from the name ("A100的80G", "A100/A800 80G", "4060ti,
    can 16G run"), out-of-range sizes dropped with a note, and the row that size or a laptop word
    points to ("5090 24G": the laptop 5090 or the 5090 D V2, asked back)."""
    out: list[ParsedCard] = []
    for k, card in enumerate(cards):
        res = _memory_in_range(card.res, notes)
        if res.memory_gib is None and k + 1 < len(cards) and cards[k + 1].joiner == "/":
            res = _with_memory(res, cards[k + 1].res.memory_gib, catalog)
        if res.memory_gib is None:
            res = _memory_elsewhere(res, ps, index, catalog)
        res = _variant_for(res, index, catalog, laptop)
        out.append(ParsedCard(res, card.count, card.joiner))
    return out


def _memory_in_range(res: Resolution, notes: list[Note]) -> Resolution:
    if res.memory_gib is not None and not 0 < res.memory_gib <= MAX_CARD_MEMORY_GIB:
        notes.append(("memory_out_of_range", f"{res.memory_gib:g} GB"))
        return replace(res, memory_gib=None)
    return res


def _with_memory(res: Resolution, memory: float | None, catalog: Catalog) -> Resolution:
    """The card at `memory`: its sibling row of that size when there is one."""
    gid = res.best_id
    if memory is None or gid is None:
        return res
    index = index_for(catalog)
    # The shortest name of the card with that size is what "A100 80G" reads as.
    for base in sorted((b for b, ids in index.gpu_base.items() if gid in ids), key=len):
        sized = index.gpu_exact.get(f"{base}{memory:g}g")
        if sized is not None:
            return replace(res, best_id=sized, candidates=((sized, 100.0),), memory_gib=memory)
    return replace(res, memory_gib=memory)


def _memory_elsewhere(res: Resolution, ps: list[_Piece], index: Index, catalog: Catalog) -> Resolution:
    """A memory size elsewhere in the question that one of the card's sibling rows has ("My card is
    4060ti, can 16G run" -> the 16 GB row); sizes that match no sibling are left alone."""
    gid = res.best_id
    siblings = index.gpu_siblings.get(gid or "", ())
    gpu = catalog.gpus.get(gid or "")
    # A unified-memory chip sold in several sizes ("m1 max with 64G", "M2 ultra with 64G vRam"): a size
    # it comes in, standing apart from the name, is its memory.
    options = gpu.memory_options_gib if gpu is not None and gpu.unified_memory else ()
    if not siblings and not options:
        return res
    sizes = {catalog.gpus[s].memory_gib: s for s in (*siblings, gid) if s in catalog.gpus}
    sizes.update({float(m): gid for m in options if float(m) not in sizes and gid})
    for p in ps:
        if p.memory is not None and not p.used and p.memory in sizes:
            p.used = True
            return replace(
                res, best_id=sizes[p.memory], candidates=((sizes[p.memory], 100.0),), memory_gib=p.memory
            )
    return res


def _variant_for(res: Resolution, index: Index, catalog: Catalog, laptop: bool) -> Resolution:
    """The row a laptop word or a smaller memory size points to: "笔记本 4090" is the laptop 4090;
    "4090 16G" is the laptop one (the only 4090 row of 16 GB); "5090 24G" could be the laptop 5090
    or the 5090 D V2: both are offered, none is taken. A larger size ("2080 Ti 22G") is a modded
    card and stays as read."""
    gid = res.best_id
    if gid is None or gid not in catalog.gpus or not res.confident:
        return res
    gpu = catalog.gpus[gid]
    variants = [v for v in index.gpu_variants.get(gid, ()) if v in catalog.gpus]
    if laptop and gpu.form != "laptop":
        rows = [v for v in variants if catalog.gpus[v].form == "laptop"]
        return replace(res, best_id=rows[0], candidates=((rows[0], 100.0),)) if rows else res
    memory = res.memory_gib
    if memory is None or memory >= gpu.memory_gib:
        return res
    rows = [v for v in variants if catalog.gpus[v].memory_gib == memory]
    if len(rows) == 1:
        return replace(res, best_id=rows[0], candidates=((rows[0], 100.0),))
    if rows:
        return Resolution(rows[0], tuple((v, 90.0) for v in rows), False, memory, tuple(rows[1:3]))
    return res
