"""Read a chat question ("双3090 跑 llama3 70b q4 速度") into a `ParsedQuestion`.

The parser peels off what has a fixed shape first (context lengths, quant codes, OS and framework
words, intent phrases, card counts), blanking each match so it cannot be misread later ("32k" is a
context, never a model size). What remains is scanned once, left to right, for the longest run of
words that is an exact card or model name; a card name takes a memory size glued to it ("V100 32G")
and a count standing next to it ("双", "2x", "x2", "two ... 4090s"). Leftover model-like words go
to the fuzzy model resolver. Nothing here raises on odd input.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from functools import lru_cache

from rapidfuzz import fuzz, process

from core.ask_query import Intent
from core.cache.warm import per_catalog
from core.catalog.kv_cache import KvCacheType
from core.catalog.loader import Catalog
from core.catalog.platforms import OsFamily, family_from_word
from core.catalog.quant import QuantTable, free_bpw_mentions
from core.understanding.backend_words import read_backends
from core.understanding.cpu_words import read_cpu
from core.understanding.intent import read_intent, with_card
from core.understanding.name_index import Index, index_for
from core.understanding.normalize import (
    ACTIVE_TOKEN,
    MOE_TOKEN,
    SIZE_TOKEN,
    clean,
    memory_of,
    pieces,
    split_fused_memory,
)
from core.understanding.resolve import (
    TEXTS_REMEMBERED,
    Resolution,
    resolve_framework,
    resolve_gpu,
    resolve_model,
    resolve_quant,
)
from core.understanding.setup_words import (
    HostRam,
    Note,
    SetupPatterns,
    build_setup_patterns,
    read_chinese_sizes,
    read_host_ram,
    read_kv_type,
    read_laptop,
    read_machines,
)

MIN_FUZZY_WORD = 5  # letters a leftover word needs before it may be read as a misspelt model word
MAX_COUNT = 64  # "128卡" is a cluster question, not a count we can estimate; larger numbers are noise
MIN_CONTEXT, MAX_CONTEXT = 256, 16 * 1024 * 1024  # tokens; outside this a "context" is a typo or a joke
MAX_CARD_MEMORY_GIB = 4096.0  # what an estimate accepts (core/estimator/setup.py)
_CJK_PIECE = re.compile(r"^[\u3400-\u9fff\uf900-\ufaff]$")


@dataclass(frozen=True, slots=True)
class ParsedCard:
    """One kind of card the question names, how many, and how it joins the one before it: "+" (in
    the same machine: "5090 + 4090"), "/" (either: "A100/A800 80G"), "vs" (compared), "" (first)."""

    res: Resolution
    count: int = 1
    joiner: str = ""


@dataclass(frozen=True, slots=True)
class ParsedQuestion:
    raw: str
    gpu: Resolution | None = None
    gpu_count: int = 1
    model: Resolution | None = None
    quants: tuple[str, ...] = ()  # quant ids the user asked for, in the order given
    contexts: tuple[int, ...] = ()  # context lengths in tokens ("32k" -> 32768)
    os: OsFamily | None = None
    framework: str | None = None
    intent: Intent = "general"
    cards: tuple[ParsedCard, ...] = ()  # every card named, the first is `gpu` x `gpu_count`
    machines: int = 1  # "3台8*L20": machines, each with the cards
    host_ram_gib: float | None = None  # system RAM ("+ 64gb ram", "内存 128G"), never the card's
    host_ram_type: str | None = None  # "DDR4" / "DDR5" / "LPDDR5X" when said
    host_ram_channels: int | None = None  # "双通道", "8-channel": memory channels when said
    kv_type: KvCacheType | None = None  # "q8 kv", "-ctk q8_0": the KV cache, not the weights
    laptop: bool = False  # a laptop word, or a laptop card
    size_b: float | None = None  # a model size as typed ("72B", "140亿" -> 14.0)
    notes: tuple[tuple[str, str], ...] = ()  # (code, what was typed): values read but not used
    backend: str | None = None  # "on vulkan", "用rocm", "纯CPU" -> vulkan / rocm / cpu (backend_words.py)
    backends: tuple[str, ...] = ()  # every backend named, in order ("ROCm vs Vulkan": rocm, vulkan)
    cpu: str | None = None  # host CPU id (catalogs/cpus.toml): "7950X", "双路 Xeon Gold 6138" (cpu_words.py)
    cpu_sockets: int | None = None  # "2x EPYC 7763", "双路": sockets said next to the CPU


@dataclass(frozen=True, slots=True)
class _Patterns:
    index: Index
    context_k: re.Pattern[str]
    context_m: re.Pattern[str]
    context_word_number: re.Pattern[str]
    context_number_word: re.Pattern[str]  # "2048 context tokens": the number before the word
    fused_size: re.Pattern[str]  # "qwen72b": a family word glued to its size
    context_words: re.Pattern[str] | None
    quant: re.Pattern[str] | None
    framework: re.Pattern[str] | None
    os: re.Pattern[str] | None
    count_classifier: re.Pattern[str]
    count_word_before: re.Pattern[str]
    count_x_before: re.Pattern[str]
    count_x_after: re.Pattern[str]
    count_digit_before: re.Pattern[str]
    count_lead: re.Pattern[str]
    split_x: re.Pattern[str]
    split_x_after: re.Pattern[str]
    model_word_list: tuple[str, ...]
    setup: SetupPatterns
    count_wide_before: re.Pattern[str]  # "1000x", "-2x", "0 cards", "4 gpu" right before a card
    count_wide_after: re.Pattern[str]  # "x1000" right after a card
    split_plus: re.Pattern[str]  # "3090+3060" -> "3090 + 3060" ("max+ 395" keeps its plus)
    digitless_cards: tuple[str, ...]  # card names without a digit ("titanrtx", "vii", "dgxspark")
    digitless_starts: frozenset[str] = frozenset()  # every prefix of those: the words that may start one


def _form_pattern(form: str) -> str:
    """A surface form as a regex: separators inside it may be "-", "_", " " or nothing."""
    escaped = re.escape(form)
    return re.sub(r"(?:\\-|_|\\ )", "[-_ ]?", escaped)


def _alternation(forms: list[str]) -> str:
    forms = sorted({f for f in forms if f}, key=len, reverse=True)
    return "|".join(_form_pattern(f) for f in forms)


def _bounded(alternation: str) -> re.Pattern[str] | None:
    """Whole words only; CJK characters count as boundaries so `128k上下文` and `跑ollama` work."""
    if not alternation:
        return None
    return re.compile(rf"(?<![a-z0-9])(?:{alternation})(?![a-z0-9])")


def _build_patterns(index: Index, catalog: Catalog) -> _Patterns:
    vocab = index.vocab
    quant_forms = list(vocab.quant_synonyms)
    for quant in catalog.quants.values():
        quant_forms.extend(a.lower() for a in (quant.id, *quant.aliases))
    fw_forms = list(vocab.framework_synonyms)
    for fw in catalog.frameworks.values():
        fw_forms.extend(a.lower() for a in (fw.id, fw.name, *fw.aliases))
    number_words = _alternation(list(vocab.count_words))
    classifiers = "|".join(re.escape(c) for c in vocab.count_classifiers) or "张"
    not_cards = "|".join(re.escape(w) for w in vocab.count_not_before)
    ctx_words = _alternation(list(vocab.context_words))
    return _Patterns(
        index=index,
        context_k=re.compile(
            rf"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*k(?![a-z0-9])(?:\s*(?:{ctx_words or 'ctx'}))?"
        ),
        context_m=re.compile(rf"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*m\s*(?:{ctx_words or 'ctx'})"),
        context_word_number=re.compile(rf"(?:{ctx_words or 'ctx'})\s*[=:]?\s*(\d{{1,15}})(?![0-9k.])"),
        # "accepts up to 2048 context tokens" (meta-llama/llama#79); three digits at least, so a
        # count ("2 context") is not a length.
        context_number_word=re.compile(
            rf"(?<![a-z0-9.])(\d{{3,7}})\s*(?:tokens?\s*(?:of\s*)?)?(?:{ctx_words or 'ctx'})(?![a-z])"
        ),
        fused_size=re.compile(r"(?<![a-z0-9.])([a-z]{3,})(\d+(?:\.\d+)?b)(?![a-z0-9])"),
        context_words=_bounded(ctx_words),
        quant=_bounded(_alternation(quant_forms)),
        framework=_bounded(_alternation(fw_forms)),
        # "Ubuntu22.04", "fedora43" (vLLM-2080Ti-Definitive#48): a version glued to the name is still it.
        os=re.compile(
            rf"(?<![a-z0-9])({_alternation(list(vocab.os_words)) or '(?!)'})(?:\d+(?:\.\d+)*)?(?![a-z0-9])"
        ),
        count_classifier=re.compile(
            rf"(?<![a-z0-9.])(-?\d{{1,6}}|{number_words})\s*(?:{classifiers})(?!\s*(?:{not_cards or '(?!)'}))"
        ),
        count_word_before=re.compile(rf"(?<![a-z])({number_words})\s*(?:{classifiers})?\s*$"),
        count_x_before=re.compile(r"(?<![a-z0-9.\-])(\d{1,2})\s*[x*]\s*$"),
        count_x_after=re.compile(r"^\s*[x*]\s*(\d{1,2})(?![0-9a-z])"),
        count_digit_before=re.compile(r"(?<![a-z0-9.])(\d{1,2})\s+$"),
        # "on 4 h100": a bare number before a card counts only after words like these (or plural "4090s"),
        # after a comparison word ("vs 1 mac mini m4", "same as 1 M4 32GB") or after a comma or a spaced
        # dash ("exo performance - 2 Mac mini M4", exo#587); "llama-3 4090" is no count (no space).
        count_lead=re.compile(
            r"(?:^|\b(?:on|with|have|got|using|use|own|run|vs|versus|than|as|用|有|上)|\s[-(]|[,;，；(（])"
            r"\s*(\d{1,2})\s+$"
        ),
        # "2x3090" -> "2 x 3090", "h100x8" -> "h100 x 8"; "8x7b" (Mixtral) is a model size and stays.
        split_x=re.compile(r"(?<![a-z0-9.])(\d{1,2})\s*([x*])\s*(?=[a-z0-9])(?!\d+(?:\.\d+)?b(?![a-z0-9]))"),
        split_x_after=re.compile(r"(?<=\d)([x*])(\d{1,2})(?![0-9a-z.])"),
        model_word_list=tuple(sorted(index.model_words)),
        setup=build_setup_patterns(vocab, number_words),
        # "2x 32g v100": the card's memory may stand between the count and the name.
        count_wide_before=re.compile(
            r"(?<![a-z0-9.])(-?\d+)\s*(?:[x*]|cards?|gpus?)\s*(?:of\s+)?(?:\d+(?:\.\d+)?g\s*)?$"
        ),
        count_wide_after=re.compile(r"^\s*[x*]\s*(-?\d+)(?![0-9a-z.])"),
        split_plus=re.compile(r"(?<=\d)\s*\+\s*(?=[0-9a-z])"),
        digitless_cards=tuple(sorted(k for k in index.gpu_exact if not any(ch.isdigit() for ch in k))),
        digitless_starts=frozenset(
            k[:n] for k in index.gpu_exact if not any(ch.isdigit() for ch in k) for n in range(1, len(k) + 1)
        ),
    )


@per_catalog("understanding.parse")
def _patterns_for(catalog: Catalog) -> _Patterns:
    return _build_patterns(index_for(catalog), catalog)


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


# A desktop CPU's model name ("i5-7600K", "i5 7600", "Ryzen 5 7600"), in cpus.toml or not: its number
# is no card's ("7600" alone is the RX 7600), so a CPU reading wins over a bare-number card reading.
_CPU_MODEL = re.compile(
    r"(?<![a-z0-9])(?:core\s*)?(?:i[3579]|ryzen\s*[3579](?:\s*pro)?)[\s-]*\d{4,5}[a-z]{0,2}\d?(?![a-z0-9])"
)


def _without_cpu_models(t: str, index: Index) -> str:
    """CPU model names blanked before cards are read, except a name that is itself a card's (an iGPU
    named by its CPU: "Ryzen 7 7840HS" is the Radeon 780M)."""
    for m in _CPU_MODEL.finditer(t):
        key = "".join(ch for ch in m.group(0) if ch.isalnum())
        if key not in index.gpu_exact:
            t = _blank(t, m.start(), m.end())
    return t


def _number(word: str, pats: _Patterns) -> int | None:
    if word.isdigit():
        return int(word)
    return pats.index.vocab.count_words.get(word)


@dataclass(slots=True)
class _Piece:
    text: str
    start: int
    end: int
    vendor: bool
    memory: float | None
    used: bool = False


def _piece(w: str, start: int, end: int, index: Index) -> _Piece:
    """One word; a card's plural ("3 3090s faster than one a6000") is the card, its "s" left out of the
    span so the count reader still sees it."""
    if (
        w.endswith("s")
        and w not in index.gpu_exact
        and w[:-1] in index.gpu_exact
        and any(ch.isdigit() for ch in w)
    ):
        return _Piece(w[:-1], start, end - 1, False, None)
    return _Piece(w, start, end, w in index.vocab.vendor_words, memory_of(w))


# Chat questions repeat ("4090 qwen3 32b"), and a reading is a pure function of the text and the
# catalog (a frozen value): the same text is read once. Long pastes are read each time rather than
# kept as keys.
REMEMBERED_TEXT_CHARS = 1000


def parse_question(text: str, catalog: Catalog) -> ParsedQuestion:
    raw = text if isinstance(text, str) else str(text)
    if len(raw) <= REMEMBERED_TEXT_CHARS:
        return _remembered(raw, catalog)
    return _read(raw, catalog)


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _remembered(raw: str, catalog: Catalog) -> ParsedQuestion:
    return _read(raw, catalog)


def _read(raw: str, catalog: Catalog) -> ParsedQuestion:
    try:
        return _with_cpu(_parse(raw, catalog), catalog)
    except Exception:  # noqa: BLE001 - a question we cannot read is answered with help, not a crash
        return ParsedQuestion(raw=raw[:500])


def _with_cpu(parsed: ParsedQuestion, catalog: Catalog) -> ParsedQuestion:
    """The host CPU the question names (cpu_words.py); with no card, a bare size is its RAM."""
    got = read_cpu(parsed.raw, catalog, parsed.gpu is not None)
    if got.cpu_id is None:
        return parsed
    ram = parsed.host_ram_gib if parsed.host_ram_gib is not None else got.ram_gib
    return replace(parsed, cpu=got.cpu_id, cpu_sockets=got.sockets, host_ram_gib=ram)


def _read_contexts(t: str, pats: _Patterns) -> tuple[str, tuple[int, ...], tuple[Note, ...]]:
    """Context lengths: "32k", "128k上下文", "1m context", "ctx 8192"; blanked with their words. A
    length no model takes ("ctx 999999999999", "0k") is a note, not a silent default."""
    contexts: list[int] = []
    notes: list[Note] = []
    scaled = (
        (pats.context_k, 1024),
        (pats.context_m, 1024 * 1024),
        (pats.context_word_number, 1),
        (pats.context_number_word, 1),
    )
    for pat, scale in scaled:
        for m in pat.finditer(t):
            if pat is pats.context_k and _cpu_like(m):
                continue
            value = int(float(m.group(1)) * scale)
            if MIN_CONTEXT <= value <= MAX_CONTEXT and value not in contexts:
                contexts.append(value)
            elif not MIN_CONTEXT <= value <= MAX_CONTEXT:
                notes.append(("context_out_of_range", m.group(0).strip()))
            if pat is pats.context_k and _names_a_release(t, m, pats.index):
                continue  # "chatglm3-6b-128k": the context is read, and stays in the model's name
            t = _blank(t, m.start(), m.end())
    if pats.context_words:
        t = pats.context_words.sub(lambda m: " " * len(m.group(0)), t)
    return t, tuple(contexts), tuple(notes)


_NAME_BEFORE = re.compile(r"[a-z0-9.]+(?:-[a-z0-9.]+)*-$")


def _names_a_release(t: str, m: re.Match[str], index: Index) -> bool:
    """A context glued to a model name with "-" that together are a catalog model's own name
    ("chatglm3-6b-128k", "chatglm3-6b-32k"): a release of its own, not the base model at that context."""
    before = _NAME_BEFORE.search(t[max(0, m.start() - 60) : m.start()])
    if before is None:
        return False
    key = "".join(ch for ch in before.group(0) + m.group(0).split()[0] if ch.isalnum() or ch == ".")
    return key in index.model_exact


MAX_K_CONTEXT = 2048  # "2048k" (2M tokens) is the longest context typed in k; a larger "NNNNk" is a CPU


def _cpu_like(m: re.Match[str]) -> bool:
    """ "12600K + 64GB RAM", "i5-7600K CPU" (ollama#2894, llama.cpp#13): an Intel CPU's number, not a
    context of millions of tokens; said with a context word ("9000k context") it is still read."""
    return float(m.group(1)) > MAX_K_CONTEXT and m.group(0).rstrip().endswith("k")


def _read_framework_and_quants(
    t: str, pats: _Patterns, catalog: Catalog
) -> tuple[str, str | None, tuple[str, ...]]:
    """Framework words are read before quant codes are blanked: "mlx 4bit" names both."""
    framework: str | None = None
    spans: list[tuple[int, int]] = []
    if pats.framework:
        for m in pats.framework.finditer(t):
            # A word for a framework the catalog lacks ("transformers", "tgi") is blanked but names
            # none: its nearest catalog spelling ("ktransformers") is another framework.
            read = resolve_framework(m.group(0), catalog)
            exact = bool(read.candidates) and read.candidates[0][1] >= 100.0
            framework = framework or (read.best_id if exact else None)
            spans.append(m.span())
    found: list[tuple[str, str | None]] = []  # (quant id, the bit width when only that was said)
    t = _read_free_bpw(t, framework, catalog, found, spans)
    if pats.quant:
        for m in pats.quant.finditer(t):
            qid = resolve_quant(m.group(0), catalog).best_id
            word = m.group(0).strip()
            bits = _BIT_WORD.fullmatch(word)
            if qid:
                found.append((qid, _QAT if word == _QAT else bits.group(1) if bits else None))
            spans.append(m.span())
    for start, end in spans:
        t = _blank(t, start, end)
    # "exl2 … 4.0bpw": the family word is the member at that bpw, not a second quant asked for.
    made = [catalog.quants.get(qid) for qid, _ in found]
    members = {q.family for q in made if q is not None and q.family and q.family != q.id}
    found = [(qid, bits) for qid, bits in found if qid not in members]
    return t, framework, _named_quants(found, catalog)


# A bare "4.65bpw" is the family of the ExLlama the question names.
_EXL_FAMILY = {"exllamav2": "EXL2", "exllamav3": "EXL3"}


def _read_free_bpw(
    t: str,
    framework: str | None,
    catalog: Catalog,
    found: list[tuple[str, str | None]],
    spans: list[tuple[int, int]],
) -> str:
    """ "exl2 4.25bpw", "EXL3-3.0bpw", "4.65bpw exl2": an EXL2/EXL3 member at that bpw, blanked at
    once so the quant codes don't read "exl2" again (the framework words already have)."""
    if not isinstance(catalog.quants, QuantTable):
        return t
    for mention in free_bpw_mentions(t):
        family = mention.family or _EXL_FAMILY.get(framework or "", "")
        made = catalog.quants.member(family, mention.bpw) if family else None
        if made is not None:
            found.append((made.id, None))
            spans.append(mention.span)
            t = _blank(t, *mention.span)
    return t


_BIT_WORD = re.compile(r"(?i)(?:int\s*)?(\d{1,2})\s*-?\s*(?:bits?|位|比特)?")  # "4-bit", "int4": a width only
_FIRST_NUMBER = re.compile(r"\d+")
# "gemma3 27b qat" alone is the QAT Q4_0 GGUF (catalogs/understanding.toml); with a quant said beside it
# ("gemma3-27b-it-qat q4") that quant is the one asked for.
_QAT = "qat"


def _width(qid: str, catalog: Catalog) -> str | None:
    """The nominal width of a quant, from its main storage type ("INT4_G128" -> "4", "Q8_0" -> "8")."""
    quant = catalog.quants.get(qid)
    m = _FIRST_NUMBER.search(quant.recipe.get("default", qid) if quant else qid)
    return m.group(0) if m else None


def _named_quants(found: list[tuple[str, str | None]], catalog: Catalog) -> tuple[str, ...]:
    """The quants said, in order. A bare width next to a format of that width is the format's:
    "a Llama-2-7b 4-bit GPTQ model" (TGI#757) is GPTQ-INT4 alone, not also the GGUF default Q4_K_M."""
    widths = {_width(qid, catalog) for qid, bits in found if bits is None}
    quants: list[str] = []
    alone = all(bits == _QAT for _qid, bits in found)
    for qid, bits in found:
        if bits is not None and bits in widths or bits == _QAT and not alone:
            continue
        if qid not in quants:
            quants.append(qid)
    return tuple(quants)


def _read_os(t: str, pats: _Patterns) -> OsFamily | None:
    """The first OS word, read only (not blanked: "mac mini" is also a card)."""
    if pats.os:
        for m in pats.os.finditer(t):
            named = family_from_word(m.group(1), pats.index.vocab.os_words)
            if named is not None:
                return named
    return None


@dataclass(frozen=True, slots=True)
class _Classified:
    """A count with a classifier ("4张", "两块", "200张"): where it ends, and its number (None when
    out of range, then `note` says so)."""

    end: int
    n: int | None
    note: Note | None


def _read_classified_counts(t: str, pats: _Patterns) -> tuple[str, list[_Classified]]:
    """Every count with a classifier, blanked; each is given to the card right after it, or else the
    first one to the first card ("h200 8卡")."""
    found: list[_Classified] = []
    for m in pats.count_classifier.finditer(t):
        n = _number(m.group(1), pats)
        ok = n is not None and 1 <= n <= MAX_COUNT
        if not ok and m.group(1) in pats.index.gpu_base:
            continue  # "两张4090卡": the card's name before "卡", not 4090 cards (LlamaFactory#4870)
        note = None if ok else ("count_out_of_range", m.group(0).strip())
        found.append(_Classified(m.end(), n if ok else None, note))
        t = _blank(t, m.start(), m.end())
    return t, found


@dataclass(frozen=True, slots=True)
class _Setup:
    """What `_read_setup` took out of the question before the names are read."""

    contexts: tuple[int, ...]
    framework: str | None
    quants: tuple[str, ...]
    kv_type: KvCacheType | None
    host: HostRam
    machines: int
    laptop: bool
    notes: tuple[Note, ...]
    unblanked: str  # the question before anything was blanked (intent words say "vs")


def _unglued(m: re.Match[str], index: Index) -> str:
    word, size = m.group(1), m.group(2)
    return f"{word} {size}" if word in index.model_words else m.group(0)


def _read_setup(t: str, pats: _Patterns, catalog: Catalog) -> tuple[str, _Setup]:
    """The fixed-shape parts, each blanked once read: contexts, KV cache type (before the quants, so
    "q8 kv" is not Q8_0 weights), framework and quants, host RAM (before the cards, so "64gb ram" is
    not the card's memory), machines."""
    vocab = pats.index.vocab
    t = pats.split_plus.sub(" + ", t)
    t = read_chinese_sizes(t, pats.setup)
    t = pats.split_x.sub(r"\1 \2 ", t)
    t = pats.split_x_after.sub(r" \1\2", t)
    # "qwen72b-int4" (QwenLM/Qwen3#179): the family word and the size read apart, as "qwen 72b".
    t = pats.fused_size.sub(lambda m: _unglued(m, pats.index), t)
    unblanked = t  # the same positions as what is read below: joiners between cards are read here
    t, contexts, context_notes = _read_contexts(t, pats)
    t, kv_type = read_kv_type(t, pats.setup, vocab)
    t, framework, quants = _read_framework_and_quants(t, pats, catalog)
    t, host = read_host_ram(t, pats.setup, vocab)
    t, machines, machine_notes = read_machines(t, pats.setup, vocab)
    laptop = read_laptop(t, pats.setup)
    notes = (*context_notes, *host.notes, *machine_notes)
    return t, _Setup(contexts, framework, quants, kv_type, host, machines, laptop, notes, unblanked)


def _parse(raw: str, catalog: Catalog) -> ParsedQuestion:
    pats = _patterns_for(catalog)
    index = pats.index
    vocab = index.vocab
    # Backend words first, blanked, so "vulkan" / "hip" never join a card or model name.
    cleaned = clean(raw)
    t, backends = read_backends(cleaned, catalog)
    t, setup = _read_setup(t, pats, catalog)
    os_name = _read_os(t, pats)
    t, intent = read_intent(t, catalog)
    t, classified = _read_classified_counts(t, pats)
    t = _without_cpu_models(t, index)

    ps = [_piece(w, s, e, index) for w, s, e in pieces(t) if w not in vocab.card_words]
    found = _find_cards(setup.unblanked, ps, pats, catalog)
    notes = [*setup.notes, *(c.note for c in classified if c.note)]
    found, cards = _cards_with_counts(t, ps, found, classified, pats, notes, setup.unblanked)
    cards = _cards_read_fully(cards, ps, index, catalog, setup.laptop, notes)
    cards, host_gib = _unified_ram(cards, setup.host.gib, catalog)
    cards = _total_memory(cards, ps, catalog)
    cards = _mixed_total(cards, catalog)
    cards, host_gib = _ram_read_as_card(cards, host_gib, catalog)
    intent = _compared(setup.unblanked, ps, found, cards, intent, catalog)
    intent = with_card(intent, bool(cards), setup.unblanked, catalog)
    intent = _backends_compared(cleaned, backends, intent, index)
    first = cards[0] if cards else None

    model = _find_model(ps, index, catalog, pats)
    laptop = setup.laptop or (first is not None and _is_laptop(first.res, catalog))
    return ParsedQuestion(
        raw=raw[:500],
        gpu=first.res if first else None,
        gpu_count=first.count if first else 1,
        model=model,
        quants=setup.quants,
        contexts=setup.contexts,
        os=os_name,
        framework=setup.framework,
        intent=intent,
        cards=tuple(cards),
        machines=setup.machines,
        host_ram_gib=host_gib,
        host_ram_type=setup.host.ram_type,
        host_ram_channels=setup.host.channels,
        kv_type=setup.kv_type,
        laptop=laptop,
        size_b=_size_typed(ps),
        notes=tuple(dict.fromkeys(notes)),
        backend=backends[0][0] if backends else None,
        backends=tuple(b for b, _start, _end in backends),
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
    if row is None or row.memory_gib != share:
        return cards
    return [ParsedCard(sized, card.count, card.joiner), *cards[1:]]


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
    found = [(gpu, span, "")]
    while len(found) < MAX_CARD_KINDS:
        after = found[-1][1][1]  # cards are read left to right: the next one starts after this one
        if not any(_may_name_card(p.text, pats) for p in ps[after:] if not p.used):
            break  # no word left that starts a card name ("a100", "titan", "spark"): no card left
        more, more_span = _exact_gpu(ps, index, catalog, after)
        if more is None or more_span is None:
            break
        found.append((more, more_span, _joiner(_between(t, ps, found[-1][1], more_span), index)))
    return found


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
    found, counts = _said_again(said, ps, found, counts, pats.index)
    return found, [
        ParsedCard(res, count or 1, joiner) for (res, _span, joiner), count in zip(found, counts, strict=True)
    ]


_Found = list[tuple[Resolution, tuple[int, int], str]]


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
    return _fuzzy_gpu(ps, index, catalog)


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
        if end and (best is None or end - i > best[1] - best[0]):
            best = (i, end, index.model_exact["".join(p.text for p in free[i:end])])
    return best


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
    close = process.extract(w, pats.model_word_list, scorer=fuzz.ratio, score_cutoff=80, limit=4)
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
    free: list[_Piece], best: tuple[int, int, str] | None, index: Index, pats: _Patterns
) -> list[str]:
    """The free words that belong to a model name. A bare version number right after a name word
    belongs to it: "Llamma 3" is Llama 3 misspelt, not "llamma" alone (any llama)."""
    words: list[str] = []
    previous = False
    for k, p in enumerate(free):
        taken = (best is not None and best[0] <= k < best[1]) or _model_like(p.text, index, pats)
        version = previous and p.text.isdigit() and len(p.text) == 1 and not SIZE_TOKEN.match(p.text)
        if taken or version:
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


def _find_model(ps: list[_Piece], index: Index, catalog: Catalog, pats: _Patterns) -> Resolution | None:
    free = _free_pieces(ps, index)
    best = _longest_exact_model(free, index)
    words = _model_words(free, best, index, pats)
    if best is not None:
        named = [p.text for p in free[best[0] : best[1]]]
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
