"""The words of a question that describe the machine rather than name a card or a model.

Host RAM ("4090 + 64gb ram", "内存 128G"), the KV cache type ("q8 kv", "-ctk q8_0"), machines
("3台8*L20", "2 nodes x 8 H100"), laptop words and Chinese size numerals ("140亿" = 14B). Each reader
takes the cleaned question and returns it with what it read blanked out, so that the card reader
never takes 64 GB of RAM for the card's memory and the quant reader never takes "q8 kv" for Q8_0
weights. The words are data (catalogs/understanding.toml); values out of range become notes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.catalog.kv_cache import KvCacheType, is_kv_cache_type
from core.understanding.vocab import Vocab

MAX_RAM_GIB = 65536.0  # what the estimate request accepts (core/ask/estimate_request.py)
MAX_MACHINES = 64
Note = tuple[str, str]  # (code, what the question said): catalogs/messages/reply.toml reply.note.<code>


@dataclass(frozen=True, slots=True)
class SetupPatterns:
    ram_tight: re.Pattern[str]  # "内存64g", "ram:64g": the word glued to the size wins ("24g 内存64g")
    ram_after: re.Pattern[str]  # "64g ram", "128g ddr5", "256g内存"
    ram_before: re.Pattern[str]  # "内存 128g", "dram is 64g", "ddr5 128g"
    ram_type: re.Pattern[str]  # a DDR type on its own ("with ddr5")
    dimms: tuple[re.Pattern[str], ...]  # "2x32gb", "32gb x2", "128g (4x32)": need a RAM word next to them
    dimm_sticks: tuple[re.Pattern[str], ...]  # "4根32g", "32g x 4条": the stick word says it is RAM
    ram_next: re.Pattern[str]  # a RAM word or DDR type right after a DIMM phrase
    ram_last: re.Pattern[str]  # a RAM word, DDR type or channel word right before one
    channels: re.Pattern[str]  # "双通道", "quad channel", "8-channel", "12通道"
    kv_before: re.Pattern[str]  # "kv q8", "--cache-type-k q8_0", "kv缓存用q4"
    kv_after: re.Pattern[str]  # "q8 kv", "8-bit kv cache"
    # The other side of a KV comparison ("kv cache q8 vs f16", "f16 or q8 kv"): a cache type too,
    # never the weights' quant (the table was priced with F16 weights).
    kv_pair_after: re.Pattern[str]
    kv_pair_before: re.Pattern[str]
    machines_en: re.Pattern[str]  # "2 nodes x", "3 machines with"
    machines_zh: re.Pattern[str]  # "3台" before another count of cards
    laptop: re.Pattern[str] | None
    size_yi: re.Pattern[str]  # "140亿", "1.5万亿"


# The speed after a DDR type: "ddr5 6000", "ddr5-6000", "ddr4 3200mhz", "ddr5@6400". DIMM speeds end
# in 00, 33 or 66 (2133, 2666, 3200, 4800, 6000, 8533), so the card in "ddr5 4090" is no speed.
_SPEED = r"[\s@-]*([1-9]\d(?:00|33|66))(?![0-9])(?!\s*(?:xt|ti|super|gre))"


def _alt(words: list[str] | tuple[str, ...]) -> str:
    return "|".join(re.escape(w) for w in sorted(set(words), key=len, reverse=True))


def build_setup_patterns(vocab: Vocab, number_words: str) -> SetupPatterns:
    ram_words = _alt(vocab.host_ram_words) or "ram"
    types = _alt(list(vocab.ram_types)) or "ddr5"
    kv_words = _alt(vocab.kv_words) or "kv"
    kv_types = _alt(list(vocab.kv_types)) or "q8_0"
    number = rf"(?:\d{{1,3}}|{number_words})" if number_words else r"\d{1,3}"
    size = r"(?<![a-z0-9.\-])(-?\d+(?:\.\d+)?)g(?![a-z0-9])"
    laptop = _alt(vocab.laptop_words)
    speed = f"(?:{_SPEED}(?:\\s*(?:mhz|mt/s|mts))?)?"
    unit = r"(?:gib|gb|g)"
    count = rf"(\d{{1,2}}|{number_words})" if number_words else r"(\d{1,2})"
    sticks = _alt(vocab.dimm_words) or "sticks"
    channel_words = _alt(list(vocab.ram_channel_words)) or "dual channel"
    return SetupPatterns(
        ram_tight=re.compile(rf"(?<![a-z])(?:{ram_words})(?:是|有|为|:)?(-?\d+(?:\.\d+)?)g(?![a-z0-9])"),
        ram_after=re.compile(
            # "100GB+ of system memory" (llm-sagemaker-sample#9): a "+" after the size is "or more".
            rf"{size}\s*(?:\+\s*)?(?:of\s+)?(?:({types}){speed}\s*)?(?:{ram_words})(?![a-z])"
            rf"|{size}\s*(?:of\s+)?({types}){speed}(?![a-z0-9])"
        ),
        ram_before=re.compile(
            # "my memory is only 256GB", "内存只有16G": "only" between the word and the size.
            rf"(?<![a-z])(?:{ram_words}|({types})){speed}\s*(?:is|are|=|:|是|有|为|大小|总共|共)?\s*(?:only|只有)?\s*"
            rf"(?:({types})\s*)?(-?\d+(?:\.\d+)?)g(?![a-z0-9])"
        ),
        ram_type=re.compile(rf"(?<![a-z])({types}){speed}(?![a-z0-9])"),
        dimms=(
            # "128g (4x32) ram", "64gb (2x32gb) ddr5": the total, then the sticks in brackets.
            re.compile(
                rf"(?<![a-z0-9.])(\d{{1,4}})\s*{unit}\s*\(\s*{count}\s*[x*]\s*(\d{{1,3}})\s*{unit}?\s*\)"
            ),
            re.compile(rf"(?<![a-z0-9.]){count}\s*[x*]\s*(\d{{1,3}}(?:\.\d+)?)\s*{unit}(?![a-z0-9])"),
            re.compile(rf"(?<![a-z0-9.])(\d{{1,3}}(?:\.\d+)?)\s*{unit}\s*[x*]\s*(\d{{1,2}})(?![a-z0-9.])"),
        ),
        dimm_sticks=(
            re.compile(rf"(?<![a-z0-9.]){count}\s*(?:{sticks})\s*(?:of\s+)?(\d{{1,3}})\s*{unit}(?![a-z0-9])"),
            re.compile(rf"(?<![a-z0-9.])(\d{{1,3}})\s*{unit}\s*[x*]?\s*{count}\s*(?:{sticks})(?![a-z])"),
        ),
        ram_next=re.compile(
            rf"^\s*(?:of\s+)?(?:(?:{types}){speed}\s*)?(?:{ram_words})(?![a-z])|^\s*(?:of\s+)?({types}){speed}(?![a-z0-9])"
        ),
        ram_last=re.compile(
            rf"(?:(?<![a-z])(?:{ram_words})|(?<![a-z])(?:{types}){speed}|{channel_words})\s*(?:is|are|=|:|是|有|为|用的?)?\s*$"
        ),
        channels=re.compile(
            rf"(?<![a-z0-9])({channel_words})(?![a-z])|(?<![a-z0-9.])(\d{{1,2}})[\s-]*(?:(?:channels?|ch)(?![a-z])|通道)"
        ),
        kv_before=re.compile(
            rf"(?<![a-z0-9])(?:{kv_words})[\s=:_-]*(?:cache[\s_-]*)?(?:type[\s_-]*)?(?:用|为|是|to|at|in|of)?\s*"
            rf"({kv_types})(?![a-z0-9_])"
        ),
        kv_after=re.compile(rf"(?<![a-z0-9_])({kv_types})[\s_-]*(?:kv|k/v)(?:[\s_-]*cache)?(?![a-z])"),
        kv_pair_after=re.compile(rf"\s*(?:vs\.?|versus|or|还是|和|对比|比)\s*({kv_types})(?![a-z0-9_])"),
        kv_pair_before=re.compile(rf"(?<![a-z0-9_])({kv_types})\s*(?:vs\.?|versus|or|还是|和|对比|比)\s*$"),
        machines_en=re.compile(
            rf"(?<![a-z0-9.])({number})\s*(?:{_alt(vocab.machine_words) or 'nodes'})(?![a-z])"
            r"\s*(?:x|\*|with|each with|of|,)?"
        ),
        machines_zh=re.compile(
            rf"(?<![a-z0-9.])({number})\s*(?:{_alt(vocab.machine_zh_words) or '台'})\s*(?:每台|各)?"
            # ... or a card with its count after it: "2台 H100*8", "两台 A800 x8" (issue 21).
            rf"(?=\s*(?:\d{{1,3}}|{number_words or '两'})\s*(?:[x*]|张|卡|块|片|个)"
            r"|\s*[a-z][a-z0-9 -]{0,24}?\s*[x*]\s*\d{1,2}(?![0-9.]))"
        ),
        laptop=re.compile(rf"(?<![a-z])(?:{laptop})(?![a-z])") if laptop else None,
        size_yi=re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*(万亿|千亿|亿)"),
    )


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


def _number(word: str, vocab: Vocab) -> int | None:
    if word.lstrip("-").isdigit():
        return int(word)
    return vocab.count_words.get(word)


@dataclass(frozen=True, slots=True)
class HostRam:
    gib: float | None = None
    ram_type: str | None = None
    notes: tuple[Note, ...] = ()
    channels: int | None = None  # memory channels, only when the question says ("双通道")


MAX_CHANNELS = 24  # per socket: what core/estimator/setup.py accepts


def _dimm_total(m: re.Match[str], order: str, vocab: Vocab) -> float | None:
    """GiB in all of a DIMM phrase: "2x32g" -> 64, "128g (4x32)" -> 128, "32g x2" -> 64. `order`
    says what the groups hold: "total" (total, count, size), "cs" (count, size), "sc" (size, count)."""
    g = m.groups()
    if order == "total":
        return float(g[0])
    count_word, size = (g[0], g[1]) if order == "cs" else (g[1], g[0])
    count = _number(count_word, vocab)
    return count * float(size) if count is not None and count >= 1 else None


def _read_dimms(t: str, said: str, pats: SetupPatterns, vocab: Vocab) -> tuple[str, float | None, str]:
    """ "2x32GB DDR5", "4x16G DDR4 3200", "128GB (4x32) ram", "4根32G内存": the sticks' total. A
    count x size reads as RAM only with a RAM word or DDR type next to it, so "2x32GB V100" stays two
    32 GB cards; the stick words ("根", "sticks") need none. Blanked with the words around it (so a
    leftover "内存" is no memory-intent word); returns the blanked span for its DDR type."""
    total_re, count_size_re, size_count_re = pats.dimms
    sticks_cs, sticks_sc = pats.dimm_sticks
    readers = (
        (total_re, "total", True),
        (sticks_cs, "cs", False),
        (sticks_sc, "sc", False),
        (count_size_re, "cs", True),
        (size_count_re, "sc", True),
    )
    for pat, order, needs_word in readers:
        for m in pat.finditer(t):
            start, end = m.start(), m.end()
            after = pats.ram_next.match(t[end:])
            before = pats.ram_last.search(said[max(0, start - 24) : start])
            if needs_word and after is None and before is None:
                continue
            total = _dimm_total(m, order, vocab)
            if total is None:
                continue
            end += after.end() if after is not None else 0
            start -= len(before.group(0)) if before is not None else 0
            return _blank(t, start, end), total, t[start:end]
    return t, None, ""


def _read_channels(t: str, pats: SetupPatterns, vocab: Vocab) -> tuple[str, int | None]:
    channels: int | None = None
    for m in pats.channels.finditer(t):
        n = vocab.ram_channel_words.get(m.group(1)) if m.group(1) else int(m.group(2))
        if channels is None and n is not None and 1 <= n <= MAX_CHANNELS:
            channels = n
        t = _blank(t, m.start(), m.end())
    return t, channels


def read_host_ram(t: str, pats: SetupPatterns, vocab: Vocab) -> tuple[str, HostRam]:
    """System RAM, its type and channels; the size is blanked so no card takes it for its own memory."""
    # Channels first; the DIMM reader still sees their words ("双通道 2*48G": RAM) in `said`.
    said = t
    t, channels = _read_channels(t, pats, vocab)
    t, dimm_gib, dimm_span = _read_dimms(t, said, pats, vocab)
    gib: float | None = None
    ram_type: str | None = _ram_type_in(dimm_span, vocab) if dimm_span else None
    notes: list[Note] = []
    if dimm_gib is not None and 0 < dimm_gib <= MAX_RAM_GIB:
        gib = dimm_gib
    elif dimm_gib is not None:
        notes.append(("ram_out_of_range", f"{dimm_gib:g} GB"))
    for pat in (pats.ram_tight, pats.ram_after, pats.ram_before):
        for m in pat.finditer(t):
            sized = _SIZE_IN.search(m.group(0))
            if sized is None:
                continue
            value = sized.group(1)
            start = m.start()
            if pat is pats.ram_after and _word_has_its_own_size(t, m, pats):
                continue  # "4060 8g 内存 16g": 内存 is 16g's, the 8g the card's (ram_before reads it)
            if pat is pats.ram_after:  # "内存 192G ddr5": the RAM word before goes too (no memory intent)
                before = pats.ram_last.search(t[max(0, start - 24) : start])
                start -= len(before.group(0)) if before else 0
            ram_type = ram_type or _ram_type_in(t[start : m.end()], vocab)
            t = _blank(t, start, m.end())
            size = float(value)
            if gib is None and 0 < size <= MAX_RAM_GIB:
                gib = size
            elif gib is None:
                notes.append(("ram_out_of_range", f"{value} GB"))
    alone = pats.ram_type.search(t) if ram_type is None else None
    if alone:
        ram_type = _ram_type_in(alone.group(0), vocab)
        t = _blank(t, alone.start(), alone.end())
    return t, HostRam(gib, ram_type, tuple(notes), channels)


# A size right after a Chinese RAM word ("内存 16g"), unless a VRAM word follows it ("16g内存 8g显存").
_OWN_SIZE = re.compile(r"^\s*(?:是|有|为|:)?\s*\d+(?:\.\d+)?g(?![a-z0-9])(?!\s*(?:显存|vram|gpu|的?显卡))")


def _word_has_its_own_size(t: str, m: re.Match[str], pats: SetupPatterns) -> bool:
    """Whether the RAM word a "size + word" match ends on is a Chinese word with its own size after it:
    Chinese says the word first ("内存 16g"), so the size before it belongs to what stands before."""
    word = m.group(0).rstrip()
    return not word[-1:].isascii() and _OWN_SIZE.match(t[m.end() :]) is not None


_SIZE_IN = re.compile(r"(-?\d+(?:\.\d+)?)g(?![a-z0-9])")  # the size in a RAM phrase (not "ddr5-6000")
_TYPE_IN = re.compile(rf"((?:lp)?ddr\dx?)(?:{_SPEED})?")


def _ram_type_in(text: str, vocab: Vocab) -> str | None:
    """ "DDR5" or "DDR5-6000" (the speed when typed), as core/estimator/setup.py reads a RAM type."""
    m = _TYPE_IN.search(text)
    kind = vocab.ram_types.get(m.group(1)) if m else None
    if m is None or kind is None:
        return None
    return f"{kind}-{m.group(2)}" if m.group(2) else kind


def read_kv_type(t: str, pats: SetupPatterns, vocab: Vocab) -> tuple[str, KvCacheType | None]:
    """The KV cache type ("kv q8" -> q8_0), blanked with its words so it is not a weights quant."""
    kv: KvCacheType | None = None
    for pat in (pats.kv_before, pats.kv_after):
        for m in pat.finditer(t):
            value = vocab.kv_types.get(m.group(1))
            if kv is None and is_kv_cache_type(value):
                kv = value
            t = _blank(t, m.start(), m.end())
            after = pats.kv_pair_after.match(t, m.end())
            if after is not None:
                t = _blank(t, after.start(), after.end())
            before = pats.kv_pair_before.search(t, 0, m.start())
            if before is not None:
                t = _blank(t, before.start(), before.end())
    return t, kv


def read_machines(t: str, pats: SetupPatterns, vocab: Vocab) -> tuple[str, int, tuple[Note, ...]]:
    """How many machines ("3台8*L20" -> 3); the words are blanked, "x"/"with" after them become
    "with" so the card count that follows still reads ("2 nodes x 8 H100")."""
    for pat, keep_with in ((pats.machines_en, True), (pats.machines_zh, False)):
        m = pat.search(t)
        if not m:
            continue
        n = _number(m.group(1), vocab)
        filler = " with " if keep_with else " "
        t = t[: m.start()] + filler.ljust(m.end() - m.start()) + t[m.end() :]
        if n is None or not 1 <= n <= MAX_MACHINES:
            return t, 1, (("machines_out_of_range", m.group(1)),)
        return t, n, ()
    return t, 1, ()


def read_laptop(t: str, pats: SetupPatterns) -> bool:
    """A laptop word anywhere ("我的笔记本是4090", "on my laptop ... 4070"); read, not blanked: the
    laptop rows' own aliases ("笔记本4090") still match as names."""
    return bool(pats.laptop and pats.laptop.search(t))


def read_chinese_sizes(t: str, pats: SetupPatterns) -> str:
    """ "140亿" -> "14b", "6710亿" -> "671b", "1.5万亿" -> "1500b": the size the model reader knows."""

    def as_b(m: re.Match[str]) -> str:
        scale = {"亿": 0.1, "千亿": 100.0, "万亿": 1000.0}[m.group(2)]
        return f" {float(m.group(1)) * scale:g}b "

    return pats.size_yi.sub(as_b, t)
