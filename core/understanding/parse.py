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
from dataclasses import dataclass
from threading import Lock

from rapidfuzz import fuzz, process

from core.ask_query import Intent, is_intent
from core.catalog.loader import Catalog
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
from core.understanding.os_names import OsFamily, os_named
from core.understanding.resolve import (
    Resolution,
    resolve_framework,
    resolve_gpu,
    resolve_model,
    resolve_quant,
)

MAX_COUNT = 64  # "128卡" is a cluster question, not a count we can estimate; larger numbers are noise
_CJK_PIECE = re.compile(r"^[\u3400-\u9fff\uf900-\ufaff]$")


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


@dataclass(frozen=True, slots=True)
class _Patterns:
    index: Index
    context_k: re.Pattern[str]
    context_m: re.Pattern[str]
    context_word_number: re.Pattern[str]
    context_words: re.Pattern[str] | None
    quant: re.Pattern[str] | None
    framework: re.Pattern[str] | None
    os: re.Pattern[str] | None
    # (intent, its words (blanked once read), its phrase patterns (only read: they span the model))
    intents: tuple[tuple[Intent, re.Pattern[str] | None, re.Pattern[str] | None], ...]
    count_classifier: re.Pattern[str]
    count_word_before: re.Pattern[str]
    count_x_before: re.Pattern[str]
    count_x_after: re.Pattern[str]
    count_digit_before: re.Pattern[str]
    count_lead: re.Pattern[str]
    how_many: re.Pattern[str]
    split_x: re.Pattern[str]
    split_x_after: re.Pattern[str]
    model_word_list: tuple[str, ...]


def _form_pattern(form: str) -> str:
    """A surface form as a regex: separators inside it may be "-", "_", " " or nothing."""
    escaped = re.escape(form)
    return re.sub(r"(?:\\-|_|\\ )", "[-_ ]?", escaped)


def _word_pattern(word: str) -> str:
    """A latin word must stand alone ("fit" is not in "benefit"); CJK words need no boundary."""
    body = re.escape(word)
    if word[:1].isascii() and word[:1].isalnum():
        body = r"(?<![a-z])" + body
    if word[-1:].isascii() and word[-1:].isalnum():
        body += r"(?![a-z])"
    return body


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
    intents: list[tuple[Intent, re.Pattern[str] | None, re.Pattern[str] | None]] = []
    for name in vocab.intent_order:
        if not is_intent(name):
            continue  # a name the replies have no view for (catalogs/understanding.toml [intent])
        parts = [_word_pattern(w) for w in sorted(vocab.intent_words.get(name, ()), key=len, reverse=True)]
        phrases = vocab.intent_patterns.get(name, ())
        words_re = re.compile("|".join(parts)) if parts else None
        phrases_re = re.compile("|".join(phrases)) if phrases else None
        intents.append((name, words_re, phrases_re))
    number_words = _alternation(list(vocab.count_words))
    classifiers = "|".join(re.escape(c) for c in vocab.count_classifiers) or "张"
    ctx_words = _alternation(list(vocab.context_words))
    return _Patterns(
        index=index,
        context_k=re.compile(
            rf"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*k(?![a-z0-9])(?:\s*(?:{ctx_words or 'ctx'}))?"
        ),
        context_m=re.compile(rf"(?<![a-z0-9.])(\d+(?:\.\d+)?)\s*m\s*(?:{ctx_words or 'ctx'})"),
        context_word_number=re.compile(rf"(?:{ctx_words or 'ctx'})\s*[=:]?\s*(\d{{3,7}})(?![0-9k])"),
        context_words=_bounded(ctx_words),
        quant=_bounded(_alternation(quant_forms)),
        framework=_bounded(_alternation(fw_forms)),
        os=_bounded(_alternation(list(vocab.os_words))),
        intents=tuple(intents),
        count_classifier=re.compile(rf"(?<![a-z0-9.])(\d{{1,3}}|{number_words})\s*(?:{classifiers})"),
        count_word_before=re.compile(rf"(?<![a-z])({number_words})\s*(?:{classifiers})?\s*$"),
        count_x_before=re.compile(r"(?<![a-z0-9.])(\d{1,2})\s*[x*]\s*$"),
        count_x_after=re.compile(r"^\s*[x*]\s*(\d{1,2})(?![0-9a-z])"),
        count_digit_before=re.compile(r"(?<![a-z0-9.])(\d{1,2})\s+$"),
        # "on 4 h100": a bare number before a card counts only after words like these (or plural "4090s").
        count_lead=re.compile(r"(?:^|\b(?:on|with|have|got|using|use|own|run|用|有|上))\s*(\d{1,2})\s+$"),
        # "how many h100 ...", "how many 4090s": a count of cards; "how many tokens/GB" is not.
        how_many=re.compile(r"how many\s+(?!tok|t/s|gb|g\b|vram|memory|ram|bit)"),
        # "2x3090" -> "2 x 3090", "h100x8" -> "h100 x 8"; "8x7b" (Mixtral) is a model size and stays.
        split_x=re.compile(r"(?<![a-z0-9.])(\d{1,2})\s*([x*])\s*(?=[a-z0-9])(?!\d+(?:\.\d+)?b(?![a-z0-9]))"),
        split_x_after=re.compile(r"(?<=\d)([x*])(\d{1,2})(?![0-9a-z.])"),
        model_word_list=tuple(sorted(index.model_words)),
    )


_CACHE: dict[int, tuple[Catalog, _Patterns]] = {}
_LOCK = Lock()


def _patterns_for(catalog: Catalog) -> _Patterns:
    hit = _CACHE.get(id(catalog))
    index = index_for(catalog)
    if hit is not None and hit[0] is catalog and hit[1].index is index:
        return hit[1]
    with _LOCK:
        pats = _build_patterns(index, catalog)
        if len(_CACHE) > 16:
            _CACHE.clear()
        _CACHE[id(catalog)] = (catalog, pats)
        return pats


def _blank(text: str, start: int, end: int) -> str:
    return text[:start] + " " * (end - start) + text[end:]


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


def parse_question(text: str, catalog: Catalog) -> ParsedQuestion:
    raw = text if isinstance(text, str) else str(text)
    try:
        return _parse(raw, catalog)
    except Exception:  # noqa: BLE001 - a question we cannot read is answered with help, not a crash
        return ParsedQuestion(raw=raw[:500])


def _read_contexts(t: str, pats: _Patterns) -> tuple[str, tuple[int, ...]]:
    """Context lengths: "32k", "128k上下文", "1m context", "ctx 8192"; blanked with their words."""
    contexts: list[int] = []
    for pat, scale in ((pats.context_k, 1024), (pats.context_m, 1024 * 1024), (pats.context_word_number, 1)):
        for m in pat.finditer(t):
            value = int(float(m.group(1)) * scale)
            if 256 <= value <= 16 * 1024 * 1024 and value not in contexts:
                contexts.append(value)
            t = _blank(t, m.start(), m.end())
    if pats.context_words:
        t = pats.context_words.sub(lambda m: " " * len(m.group(0)), t)
    return t, tuple(contexts)


def _read_framework_and_quants(
    t: str, pats: _Patterns, catalog: Catalog
) -> tuple[str, str | None, tuple[str, ...]]:
    """Framework words are read before quant codes are blanked: "mlx 4bit" names both."""
    framework: str | None = None
    spans: list[tuple[int, int]] = []
    if pats.framework:
        for m in pats.framework.finditer(t):
            framework = framework or resolve_framework(m.group(0), catalog).best_id
            spans.append(m.span())
    quants: list[str] = []
    if pats.quant:
        for m in pats.quant.finditer(t):
            qid = resolve_quant(m.group(0), catalog).best_id
            if qid and qid not in quants:
                quants.append(qid)
            spans.append(m.span())
    for start, end in spans:
        t = _blank(t, start, end)
    return t, framework, tuple(quants)


def _read_os(t: str, pats: _Patterns) -> OsFamily | None:
    """The first OS word, read only (not blanked: "mac mini" is also a card)."""
    if pats.os:
        for m in pats.os.finditer(t):
            named = os_named(m.group(0), pats.index.vocab)
            if named is not None:
                return named
    return None


def _read_intent(t: str, pats: _Patterns) -> tuple[str, Intent]:
    """The first intent in the catalog's order whose words or phrases appear; its words are blanked."""
    intent: Intent = "cards_needed" if pats.how_many.search(t) else "general"
    for name, words_re, phrases_re in pats.intents:
        hit = bool(phrases_re and phrases_re.search(t))
        if words_re and words_re.search(t):
            hit = True
            t = words_re.sub(lambda m: " " * len(m.group(0)), t)
        if hit and intent == "general":
            intent = name
    return t, intent


def _read_classified_count(t: str, pats: _Patterns) -> tuple[str, int | None]:
    """A count with a classifier ("4张", "两块"), anywhere in the question."""
    m = pats.count_classifier.search(t)
    if not m:
        return t, None
    n = _number(m.group(1), pats)
    return _blank(t, m.start(), m.end()), n if n is not None and 1 <= n <= MAX_COUNT else None


def _parse(raw: str, catalog: Catalog) -> ParsedQuestion:
    pats = _patterns_for(catalog)
    index = pats.index
    vocab = index.vocab
    t = clean(raw)
    t = pats.split_x.sub(r"\1 \2 ", t)
    t = pats.split_x_after.sub(r" \1\2", t)
    t, contexts = _read_contexts(t, pats)
    t, framework, quants = _read_framework_and_quants(t, pats, catalog)
    os_name = _read_os(t, pats)
    t, intent = _read_intent(t, pats)
    t, count = _read_classified_count(t, pats)

    ps = [
        _Piece(w, s, e, w in vocab.vendor_words, memory_of(w))
        for w, s, e in pieces(t)
        if w not in vocab.card_words
    ]
    gpu, span = _find_gpu(ps, index, catalog)
    if gpu is not None and span is not None:
        count = count or _count_near(t, ps, span, pats)

    model = _find_model(ps, index, catalog, pats)
    return ParsedQuestion(
        raw=raw[:500],
        gpu=gpu,
        gpu_count=count or 1,
        model=model,
        quants=quants,
        contexts=contexts,
        os=os_name,
        framework=framework,
        intent=intent,
    )


def _gpu_window(ps: list[_Piece], i: int, j: int, index: Index) -> str | None:
    """The GPU id named by pieces[i:j] exactly, or None. A window must not start or end on a bare
    memory size; vendor words inside are dropped ("nvidia rtx 4090")."""
    if ps[i].memory is not None or ps[j - 1].vendor:
        return None
    base = ""
    memory: float | None = None
    for p in ps[i:j]:
        if p.used:
            return None
        if p.vendor:
            continue
        if p.memory is not None:
            memory = p.memory
            continue
        base += p.text
    if not base:
        return None
    base = base.replace("+", "")
    if memory is not None and f"{base}{memory:g}g" in index.gpu_exact:
        return index.gpu_exact[f"{base}{memory:g}g"]
    if base in index.gpu_exact:
        return index.gpu_exact[base]
    return None


def _model_window(ps: list[_Piece], i: int, j: int, index: Index) -> str | None:
    if any(p.used for p in ps[i:j]):
        return None
    key = "".join(p.text for p in ps[i:j])
    return index.model_exact.get(key)


def _find_gpu(
    ps: list[_Piece], index: Index, catalog: Catalog
) -> tuple[Resolution | None, tuple[int, int] | None]:
    n = len(ps)
    i = 0
    while i < n:
        if ps[i].used:
            i += 1
            continue
        best_gpu: tuple[int, str] | None = None
        best_model = 0
        for j in range(min(n, i + 6), i, -1):
            if best_gpu is None:
                gid = _gpu_window(ps, i, j, index)
                if gid is not None:
                    best_gpu = (j, gid)
            if not best_model and _model_window(ps, i, j, index):
                best_model = j
        # A model name that swallows a card alias wins ("minimax m2" is not an Apple M2).
        if best_gpu is None or best_model > best_gpu[0]:
            i = best_model if best_model > i else i + 1
            continue
        return _gpu_resolution(ps, i, best_gpu[0], index, catalog)
    return _fuzzy_gpu(ps, index, catalog)


def _gpu_resolution(
    ps: list[_Piece], i: int, j: int, index: Index, catalog: Catalog
) -> tuple[Resolution, tuple[int, int]]:
    # A memory size right after ("m4 pro 64g") or right before ("a 24gb 3090") belongs to the card.
    while j < len(ps) and ps[j].vendor:
        j += 1
    words = [p.text for p in ps[i:j]]
    if not any(p.memory is not None for p in ps[i:j]):
        if j < len(ps) and ps[j].memory is not None and not ps[j].used:
            words.append(ps[j].text)
            j += 1
        elif i > 0 and ps[i - 1].memory is not None and not ps[i - 1].used:
            words.insert(0, ps[i - 1].text)
            ps[i - 1].used = True
    for p in ps[i:j]:
        p.used = True
    return resolve_gpu(" ".join(words), catalog), (i, j)


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
        if word.endswith("s") and word[:-1] in index.gpu_exact:  # "two 4090s"
            p.text = word[:-1]
            return _gpu_resolution(ps, i, i + 1, index, catalog)
        res = resolve_gpu(word, catalog)
        if res.confident:
            p.used = True
            return res, (i, i + 1)
    return None, None


def _count_near(t: str, ps: list[_Piece], span: tuple[int, int], pats: _Patterns) -> int | None:
    i, j = span
    before = t[: ps[i].start]
    after = t[ps[j - 1].end :]
    plural = after.startswith("s") or ps[j - 1].text.endswith("s")
    for pat in (pats.count_x_before, pats.count_word_before):
        m = pat.search(before)
        if m:
            n = _number(m.group(1), pats)
            if n is not None and 1 <= n <= MAX_COUNT:
                return n
    m = pats.count_x_after.search(after)
    if m and 1 <= int(m.group(1)) <= MAX_COUNT:
        return int(m.group(1))
    m = pats.count_digit_before.search(before)
    if m and plural and 1 <= int(m.group(1)) <= MAX_COUNT:
        return int(m.group(1))
    m = pats.count_lead.search(before)
    if m and 1 <= int(m.group(1)) <= 16:
        return int(m.group(1))
    return None


def _longest_exact_model(free: list[_Piece], index: Index) -> tuple[int, int, str] | None:
    """(start, end, id) of the longest run of free words that is an exact model name."""
    best: tuple[int, int, str] | None = None
    n = len(free)
    for i in range(n):
        for j in range(min(n, i + 6), i, -1):
            key = "".join(p.text for p in free[i:j])
            if key in index.model_exact:
                if best is None or j - i > best[1] - best[0]:
                    best = (i, j, index.model_exact[key])
                break
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
    return len(w) >= 3 and bool(
        process.extractOne(w, pats.model_word_list, scorer=fuzz.ratio, score_cutoff=80)
    )


def _find_model(ps: list[_Piece], index: Index, catalog: Catalog, pats: _Patterns) -> Resolution | None:
    free = [p for p in ps if not p.used and p.memory is None and not p.vendor]
    best = _longest_exact_model(free, index)
    words = [
        p.text
        for k, p in enumerate(free)
        if (best is not None and best[0] <= k < best[1]) or _model_like(p.text, index, pats)
    ]
    if best is not None:
        named = [p.text for p in free[best[0] : best[1]]]
        exact = resolve_model(" ".join(named), catalog)
        # "r1 32b": the exact name "r1" is the 671B model; a size next to it asks for the distill.
        sizes = [w for w in words if SIZE_TOKEN.match(w) or ACTIVE_TOKEN.match(w)]
        if not sizes or all(w in named for w in sizes):
            return exact
        wider = resolve_model(" ".join(words), catalog)
        return wider if wider.best_id else exact
    if not words:
        return None
    res = resolve_model(" ".join(words), catalog)
    return res if res.best_id or res.candidates else None
