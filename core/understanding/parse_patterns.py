"""The patterns the parser reads with, built once per catalog, and the words of a question as pieces."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from core.cache.warm import per_catalog
from core.catalog.loader import Catalog
from core.understanding.name_index import Index, index_for
from core.understanding.normalize import (
    memory_of,
)
from core.understanding.setup_words import (
    SetupPatterns,
    build_setup_patterns,
)


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
    # "GPU 0-7: Tesla V100" (nvidia-smi's numbering: 8 cards), "8-A100" (8 of them): issue 21.
    count_range_before: re.Pattern[str] = re.compile(r"(?!)")
    count_dash_before: re.Pattern[str] = re.compile(r"(?!)")


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
        count_range_before=re.compile(
            r"(?<![a-z])(?:gpus?|cards?|cuda)\s*(\d)\s*[-~]\s*(\d{1,2})\s*[:：]?\s*(?:nvidia\s*)?$"
        ),
        count_dash_before=re.compile(r"(?:^|[\s,;，；(（:：])(\d{1,2})-$"),
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


def name_words_kept(ps: list[_Piece], index: Index) -> list[_Piece]:
    """A device word that is also a model's name word ("mini") is the model's right after one of the
    model's words: "phi-4 mini", "Phi-4-mini-instruct" name Phi-4-mini, where "mac mini" stays the
    Mac (read as phi-4, the 14B, or refused as not in the catalog while it is)."""
    words = index.model_words
    return [
        replace(p, vendor=False)
        if k and p.vendor and p.text in words and not ps[k - 1].vendor and ps[k - 1].text in words
        else p
        for k, p in enumerate(ps)
    ]


# Chat questions repeat ("4090 qwen3 32b"), and a reading is a pure function of the text and the
# catalog (a frozen value): the same text is read once. Long pastes are read each time rather than
# kept as keys.
