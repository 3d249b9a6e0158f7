"""The fields of a fixed shape read first and blanked: contexts, quants and frameworks, OS, counts, host."""

from __future__ import annotations

import re
from dataclasses import dataclass

from core.catalog.kv_cache import KvCacheType
from core.catalog.loader import Catalog
from core.catalog.platforms import OsFamily, family_from_word
from core.catalog.quant import QuantTable, free_bpw_mentions
from core.catalog.sections import sections
from core.understanding.bare_quants import framework_quant
from core.understanding.name_index import Index
from core.understanding.normalize import clean
from core.understanding.parse_flags import Flags, read_flags
from core.understanding.parse_patterns import _blank, _number, _Patterns, _patterns_for
from core.understanding.question import MAX_CONTEXT, MAX_COUNT, MIN_CONTEXT
from core.understanding.resolve import resolve_framework, resolve_quant
from core.understanding.setup_words import (
    HostRam,
    Note,
    read_chinese_sizes,
    read_host_ram,
    read_kv_type,
    read_laptop,
    read_machines,
)


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


def _exact_framework(text: str, catalog: Catalog) -> str | None:
    read = resolve_framework(text, catalog)
    return read.best_id if read.candidates and read.candidates[0][1] >= 100.0 else None


def _unpriced(word: str, pats: _Patterns, catalog: Catalog) -> str | None:
    """The framework a word names that the catalog has no entry for ("tensorrt" -> "tensorrt-llm"),
    None when the word names none or one the catalog prices under another name ("kobold")."""
    target = pats.index.vocab.framework_synonyms.get(word.strip())
    return target if target and _exact_framework(target, catalog) is None else None


def _unpriced_notes(
    words: list[str], framework: str | None, pats: _Patterns, catalog: Catalog
) -> tuple[Note, ...]:
    """The note for the first unpriced framework named, when the question names no priced one."""
    named = None if framework else next((u for w in words if (u := _unpriced(w, pats, catalog))), None)
    return (("framework_not_priced", named),) if named else ()


def _framework_words(
    t: str, pats: _Patterns, catalog: Catalog
) -> tuple[list[str], list[str], list[tuple[int, int]]]:
    """Every priced framework said (the first being the one asked for), the words for frameworks the
    catalog lacks, and the spans of both."""
    unpriced: list[str] = []
    named: list[str] = []
    spans: list[tuple[int, int]] = []
    if pats.framework:
        for m in pats.framework.finditer(t):
            # A word for a framework the catalog lacks is blanked but names none: its nearest
            # catalog spelling ("ktransformers" for "transformers" once) is another framework.
            exact = _exact_framework(m.group(0), catalog)
            named += [exact] if exact else []
            unpriced += [] if exact else [m.group(0)]
            spans.append(m.span())
    return named, unpriced, spans


def named_frameworks(text: str, catalog: Catalog) -> tuple[str, ...]:
    """Every priced framework a question names, once each, in the order said ("ollama or exllamav2"
    -> ollama, exllamav2): a comparison of frameworks reads them all, where the parse keeps the
    first as the one asked for (ParsedQuestion.framework)."""
    named, _unpriced, _spans = _framework_words(clean(text), _patterns_for(catalog), catalog)
    return tuple(dict.fromkeys(named))


def _read_framework_and_quants(
    t: str, pats: _Patterns, catalog: Catalog
) -> tuple[str, str | None, tuple[str, ...], tuple[Note, ...]]:
    """Framework words are read before quant codes are blanked: "mlx 4bit" names both. A word for a
    framework the catalog lacks ("tensorrt-llm", "tgi") names none but is said in a note
    (reply.note.framework_not_priced): the user is told it was not what was priced."""
    named, unpriced, spans = _framework_words(t, pats, catalog)
    framework = named[0] if named else None
    said = tuple(spans)  # the framework words' own spans
    found: list[tuple[str, str | None]] = []  # (quant id, the bit width when only that was said)
    t = _read_free_bpw(t, framework, catalog, found, spans)
    if pats.quant:
        for m in pats.quant.finditer(t):
            word = m.group(0).strip()
            if _within(m.span(), said):
                # "exl2 qwen3 32b": the word named ExLlamaV2, whose table is its own ladder
                # (frameworks.toml `ladder`), not the EXL2 family's bare 4.0 bpw alone.
                continue
            # "vllm 4bit" is the AWQ checkpoint vLLM serves, not the GGUF "4bit" alone means.
            qid = framework_quant(word, named, catalog) or resolve_quant(m.group(0), catalog).best_id
            bits = _BIT_WORD.fullmatch(word)
            if qid:
                found.append((qid, _QAT if word == _QAT else bits.group(1) if bits else None))
            spans.append(m.span())
    framework = _exl_listed_as_quant(t, framework, said, named, found)
    for start, end in spans:
        t = _blank(t, start, end)
    # "exl2 … 4.0bpw": the family word is the member at that bpw, not a second quant asked for.
    made = [catalog.quants.get(qid) for qid, _ in found]
    members = {q.family for q in made if q is not None and q.family and q.family != q.id}
    found = [(qid, bits) for qid, bits in found if qid not in members]
    return t, framework, _named_quants(found, catalog), _unpriced_notes(unpriced, framework, pats, catalog)


def _exl_listed_as_quant(
    t: str,
    framework: str | None,
    said: tuple[tuple[int, int], ...],
    named: tuple[str, ...] | list[str],
    found: list[tuple[str, str | None]],
) -> str | None:
    """ "Q4_K_M vs Q8 vs AWQ vs EXL3 which quant": "exl3" set beside quants of other formats is one
    more quant weighed (each row on its own framework), not ExLlamaV3 named for all of them (the
    reply dismissed EXL3 as "ExLlamaV3 loads safetensors only, and Q4_K_M here is a GGUF file")."""
    family = _EXL_FAMILY.get(framework or "")
    # Another format said beside it ("exl3 vs q4_k_m"): a member of its own family ("exl3 4.0bpw")
    # or a bare width ("exl3 4bit") is the engine's quant, not a second one.
    if family is None or len(named) != 1 or not any(not (q.startswith(family) or bits) for q, bits in found):
        return framework
    if not any(t[a:b].strip().lower() == family.lower() for a, b in said):
        return framework  # "exllamav3" / "tabbyapi" name the engine, not its format
    found.append((family, None))
    return None


def _within(span: tuple[int, int], spans: tuple[tuple[int, int], ...]) -> bool:
    """A match that is no more than one of `spans`' own word ("exl2" read as the quant family too);
    one that says more ("mlx 8bit" around the framework word "mlx") is a quant of its own."""
    start, end = span
    return any(s <= start and end <= e for s, e in spans)


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


def _oses_compared(t: str, pats: _Patterns) -> bool:
    """Windows and Linux both named ("Windows vs Linux 4090 ... worth switching", "win还是linux"):
    the question weighs the two, so the reply prices Linux and says what Windows changes."""
    if not pats.os:
        return False
    named = {family_from_word(m.group(1), pats.index.vocab.os_words) for m in pats.os.finditer(t)}
    return {"windows", "linux"} <= named


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
    flags: Flags = Flags()  # serving flags pasted with it ("-c 65536", "--n-cpu-moe 28")
    link: str | None = None  # what joins the cards, said ("nvlink"): catalogs/split_modes.toml [link_words]
    split_mode: str | None = None  # `-sm graph` read as multi_gpu.SPLITS names it ("tensor")


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
    t, flags = read_flags(t)
    t, contexts, context_notes = _read_contexts(t, pats)
    contexts = (*flags.contexts, *(c for c in contexts if c not in flags.contexts))
    t, kv_type = read_kv_type(t, pats.setup, vocab)
    t, framework, quants, framework_notes = _read_framework_and_quants(t, pats, catalog)
    # `-sm graph` pasted with no framework named is ik_llama.cpp's launch (catalogs/split_modes.toml).
    framework = framework or sections(catalog).split_modes.framework_words.get(flags.split_word or "")
    t, host = read_host_ram(t, pats.setup, vocab)
    t, machines, machine_notes = read_machines(t, pats.setup, vocab)
    laptop = read_laptop(t, pats.setup)
    t, link = _read_link(t, catalog)
    word = flags.split_word
    split_mode = sections(catalog).split_modes.mode_for(word) if word else None
    notes = (*context_notes, *framework_notes, *host.notes, *machine_notes)
    return t, _Setup(
        contexts,
        framework,
        quants,
        kv_type,
        host,
        machines,
        laptop,
        notes,
        unblanked,
        flags,
        link,
        split_mode,
    )


def _read_link(t: str, catalog: Catalog) -> tuple[str, str | None]:
    """ "with nvlink", "nv桥接": the link between the cards, blanked (no model is named "nvlink")."""
    for link, words in sections(catalog).split_modes.link_words.items():
        for word in sorted(words, key=len, reverse=True):
            at = t.find(word)
            if at >= 0 and (at == 0 or not t[at - 1].isalnum()):
                return t[:at] + " " * len(word) + t[at + len(word) :], link
    return t, None
