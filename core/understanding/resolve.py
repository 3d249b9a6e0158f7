"""Resolve a name as people type it ("V100 32G", "r1 32b", "qwen3:32b") to catalog ids.

Order of evidence: an exact alias (after normalisation) beats everything; for models a size-aware
reading comes next ("27b" alone, "r1 32b" -> the R1 distill of that size); rapidfuzz scores the rest.
Every function returns a `Resolution` and never raises on odd input: an unknown name gives
`best_id=None` with the nearest candidates so the reply can say "did you mean ...".
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

from rapidfuzz import fuzz, process

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.model_source import RepoRef, parse_repo_ref
from core.understanding.intent import read_intent
from core.understanding.name_index import (
    Index,
    ModelFacts,
    _compact_simple,
    gpu_full_key,
    gpu_key,
    index_for,
    model_key,
    model_words_of,
)
from core.understanding.normalize import ACTIVE_TOKEN, MOE_TOKEN, SIZE_TOKEN, clean
from core.understanding.vocab import vocab_for

CONFIDENT_SCORE = 88.0  # a fuzzy reading at least this good, and
CONFIDENT_MARGIN = 6.0  # at least this far ahead of the next card/model, is taken without asking
MIN_SCORE = 72.0  # below this a fuzzy reading is only a "did you mean"
POPULARITY_MARGIN = 10  # "27b" alone: the most popular reading must lead by this much
TOP = 5

Scorer = Callable[..., Any]  # a rapidfuzz scorer (fuzz.ratio, fuzz.WRatio, ...)


@dataclass(frozen=True, slots=True)
class Resolution:
    best_id: str | None
    candidates: tuple[tuple[str, float], ...] = ()  # (id, score 0..100), best first
    confident: bool = False  # one reading is clearly best: answer without asking back
    memory_gib: float | None = None  # GPU only: a memory size the text named ("V100 32G" -> 32)
    also: tuple[str, ...] = ()  # other plausible readings worth a mention ("also: Gemma 2 27B")

    @property
    def found(self) -> bool:
        return self.best_id is not None


NOTHING = Resolution(None)


def _rank(scored: dict[str, float]) -> tuple[tuple[str, float], ...]:
    return tuple(sorted(scored.items(), key=lambda kv: -kv[1])[:TOP])


def _fuzzy(query: str, choices: tuple[str, ...], ids: tuple[str, ...], scorer: Scorer) -> dict[str, float]:
    best: dict[str, float] = {}
    if not query or not choices:
        return best
    for _choice, score, pos in process.extract(query, choices, scorer=scorer, limit=24):
        gid = ids[pos]
        if score > best.get(gid, -1.0):
            best[gid] = float(score)
    return best


def _from_scores(scored: dict[str, float], memory: float | None = None) -> Resolution:
    ranked = _rank(scored)
    if not ranked or ranked[0][1] < MIN_SCORE:
        return Resolution(None, ranked, False, memory)
    best, score = ranked[0]
    runner = ranked[1][1] if len(ranked) > 1 else 0.0
    confident = score >= CONFIDENT_SCORE and score - runner >= CONFIDENT_MARGIN
    also = tuple(gid for gid, s in ranked[1:3] if s >= score - CONFIDENT_MARGIN)
    return Resolution(best, ranked, confident, memory, also)


# --- GPUs ---------------------------------------------------------------------------------------


def _gpu_with_memory(index: Index, catalog: Catalog, base_id: str, base: str, memory: float) -> str:
    """Pick the sibling whose size matches ("3080" + 12g -> rtx-3080-12g); else keep the named card."""
    for gid in index.gpu_base.get(base, ()):
        if catalog.gpus[gid].memory_gib == memory:
            return gid
    return base_id


def resolve_gpu(text: str, catalog: Catalog) -> Resolution:
    try:
        return _resolve_gpu(text, catalog)
    except Exception:  # noqa: BLE001 - resolution must never take the bot down; an odd input is "unknown"
        return NOTHING


# A name's reading depends on the name and the catalog alone, and chat groups type the same few names
# ("4090", "qwen3 32b") in question after question: remembered, as the index is (forget_texts()).
TEXTS_REMEMBERED = 4096


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _resolve_gpu(text: str, catalog: Catalog) -> Resolution:
    index = index_for(catalog)
    key = gpu_key(text, index.vocab)
    if not key.base:
        return NOTHING
    memory = key.memory
    full = gpu_full_key(key)
    if full in index.gpu_exact:
        gid = index.gpu_exact[full]
        return Resolution(gid, ((gid, 100.0),), True, memory)
    if key.base in index.gpu_exact:
        gid = index.gpu_exact[key.base]
        if memory is not None:
            gid = _gpu_with_memory(index, catalog, gid, key.base, memory)
        return Resolution(gid, ((gid, 100.0),), True, memory)
    scored = _fuzzy(key.base, index.gpu_choices, index.gpu_choice_ids, fuzz.ratio)
    result = _from_scores(scored, memory)
    if result.best_id is not None and memory is not None:
        # The fuzzy hit names a card; its memory sibling is the better reading ("3o80 12g").
        for base, ids in index.gpu_base.items():
            if result.best_id in ids:
                sibling = _gpu_with_memory(index, catalog, result.best_id, base, memory)
                if sibling != result.best_id:
                    return Resolution(sibling, result.candidates, result.confident, memory, result.also)
    return result


# --- models -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _ModelQuery:
    words: tuple[str, ...]  # name words, no sizes
    size: str | None  # "32", "8x7"
    active: str | None  # "22" from "a22b"
    full: bool  # "满血": the full model, not a distill


def _model_query(text: str, index: Index) -> _ModelQuery:
    vocab = index.vocab
    words: list[str] = []
    size = active = None
    full = False
    for word in model_words_of(text, vocab):
        if m := SIZE_TOKEN.match(word):
            size = size or f"{float(m.group(1)):g}"
        elif m := ACTIVE_TOKEN.match(word):
            active = active or f"{float(m.group(1)):g}"
        elif m := MOE_TOKEN.match(word):
            size = size or f"{m.group(1)}x{float(m.group(2)):g}"
        elif word in vocab.full_model_words:
            full = True
        elif word in vocab.noise_words or word in vocab.quant_synonyms:
            continue
        else:
            words.append(word)
    return _ModelQuery(tuple(words), size, active, full)


def _size_fits(facts: ModelFacts, size: str | None, active: str | None) -> bool:
    if size is not None and size not in facts.sizes:
        try:
            value = float(size)
        except ValueError:
            return False
        if abs(value - facts.params_b) > 0.03 * facts.params_b:
            return False
    return active is None or active in facts.actives


def _stem_score(words: str, facts: ModelFacts, variant_only: bool = False) -> float:
    best = 0.0
    for stem in facts.stems:
        score = fuzz.ratio(words, stem)
        if variant_only:
            pass  # "large" alone ("large llms", "a large model") is no Mistral Large: fuzzy only
        elif len(words) >= 2 and stem.startswith(words):
            # "llama" for "llama3.3": a family without its version; popularity decides among them.
            score = max(score, 92.0)
        elif len(words) >= 2 and words in stem and (stem.endswith(words) or _has_digit(words)):
            # "r1" inside "deepseekr1": a short name that is part of the full one. A plain word inside
            # a name is not one ("still" in "deepseekr1distillqwen", vllm#5711): it must end the name.
            score = max(score, 88.0)
        best = max(best, score)
    return best


def _has_digit(word: str) -> bool:
    return any(ch.isdigit() for ch in word)


def _variant_only(stem: str, catalog: Catalog) -> bool:
    """The typed name is only a variant word (hub.toml [names] variant: "large", "small", "air"): it
    says which variant of a family, not which family, so it names no model by being part of one."""
    return stem in _hub_words(catalog, "variant")


def _plain_and_versioned(stem: str, result: Resolution, index: Index) -> bool:
    """ "ministral 8b": one reading of this size carries the name as typed (Ministral-8B-2410, its date
    aside), another the name plus a version (Ministral-3-8B): the typed name fits both releases."""
    ids = [mid for mid, _score in result.candidates]
    stems = [index.model_facts[mid].stems for mid in ids]
    plain = any(stem in own for own in stems)
    versioned = any(
        s.startswith(stem) and s[len(stem) : len(stem) + 1].isdigit() for own in stems for s in own
    )
    return plain and versioned


def _unless_versionless(stem: str, result: Resolution, index: Index) -> Resolution:
    """ "ministral 8b", "baichuan 13b": a family name without the version the only catalog release of
    that family carries ("ministral3", "baichuan2"). The family has other releases the catalog lacks
    (Ministral-8B-2410, Baichuan-13B), so the reading is asked back with its candidates, never
    answered as that release. Where the catalog holds two or more versions ("qwen" -> Qwen2.5 / Qwen3)
    the popularity rule already chooses or asks; a name that is the reading's own stem ("mistral") is it."""
    if result.best_id is None or not stem or _has_digit(stem):
        return result
    if _plain_and_versioned(stem, result, index):
        return Resolution(None, result.candidates, False, None, result.also)
    if stem in index.model_facts[result.best_id].stems:
        return result  # the reading's own name ("mistral 7b"); "yi 9b" is Yi-34B's stem, not Yi-1.5-9B's
    versions = {
        other[len(stem) :].split(".")[0][:1]
        for other in index.model_stem_owners
        if other.startswith(stem) and other[len(stem) : len(stem) + 1].isdigit()
    }
    own = [s for s in index.model_facts[result.best_id].stems if s.startswith(stem)]
    if len(versions) != 1 or not own or not own[0][len(stem) : len(stem) + 1].isdigit():
        return result
    return Resolution(None, result.candidates, False, None, result.also)


def resolve_model(text: str, catalog: Catalog) -> Resolution:
    try:
        return _resolve_model(text, catalog)
    except Exception:  # noqa: BLE001 - see resolve_gpu
        return NOTHING


def _exact_windows(words: list[str], index: Index) -> list[tuple[int, str]]:
    """Exact model keys found in runs of consecutive words, longest run first."""
    hits: list[tuple[int, str]] = []
    n = len(words)
    for length in range(min(n, 6), 0, -1):
        for start in range(0, n - length + 1):
            key = "".join(words[start : start + length])
            if key in index.model_exact:
                hits.append((length, index.model_exact[key]))
    return hits


def _exact_window(text: str, stem: str, query: _ModelQuery, index: Index) -> Resolution | None:
    """An exact model name among the words, of the size asked. "Qwen3-VL": the whole name is another
    model's stem, so its exact part "qwen3" (Qwen3-8B) is not what was named."""
    owners = index.model_stem_owners.get(stem, frozenset())
    for _length, mid in _exact_windows(model_words_of(text, index.vocab), index):
        if owners and mid not in owners:
            return None
        if _size_fits(index.model_facts[mid], query.size, query.active):
            return Resolution(mid, ((mid, 100.0),), True)
    return None


def _sized(facts: dict[str, ModelFacts], query: _ModelQuery) -> set[str]:
    """Models of the size asked; "72b" names the 72B models before the 70B ones within the size
    tolerance, "34b" is Yi-34B before a 35B."""
    sized = {mid for mid, f in facts.items() if _size_fits(f, query.size, query.active)}
    exact = {mid for mid in sized if query.size is not None and query.size in facts[mid].sizes}
    return exact or sized


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _resolve_model(text: str, catalog: Catalog) -> Resolution:
    index = index_for(catalog)
    key = model_key(text, index.vocab)
    if not key:
        return NOTHING
    if key in index.model_exact:
        mid = index.model_exact[key]
        return Resolution(mid, ((mid, 100.0),), True)
    query = _model_query(text, index)
    facts = index.model_facts
    stem = "".join(query.words)
    hit = _exact_window(text, stem, query, index)
    if hit is not None:
        return hit
    sized = _sized(facts, query)
    if query.size is not None or query.active is not None:
        if not stem:
            return _by_popularity(sized, facts)
        scored = {mid: _stem_score(stem, facts[mid], _variant_only(stem, catalog)) for mid in sized}
        if scored and max(scored.values()) >= MIN_SCORE:
            return _unless_versionless(stem, _with_popularity_ties(scored, facts), index)
        # The name is known but not at that size ("r1 1.5b"): the nearest name, flagged unsure.
        loose = {mid: _stem_score(stem, f) - 15.0 for mid, f in facts.items()}
        result = _with_popularity_ties(loose, facts)
        return Resolution(result.best_id, result.candidates, False, None, result.also)
    if not stem:
        return NOTHING
    variant_only = _variant_only(stem, catalog)
    if variant_only:
        return NOTHING  # "large llms", "a small model": a variant word alone names no model
    scored = {mid: _stem_score(stem, f, variant_only) for mid, f in facts.items()}
    fuzzy = _fuzzy(key, index.model_choices, index.model_choice_ids, fuzz.WRatio)
    for mid, score in fuzzy.items():
        scored[mid] = max(scored.get(mid, 0.0), score - 5.0)
    if query.full and "deepseek-r1" in scored:
        scored["deepseek-r1"] += 5.0
        return _with_popularity_ties(scored, facts)
    result = _with_popularity_ties(scored, facts)
    if result.confident and _bare_family(scored):
        # "llama" alone spans 1B to 405B: whatever the alias table happens to match best, the size
        # decides the whole answer, so ask back with the most popular ones instead of guessing.
        family = sorted(
            (m for m, v in scored.items() if v >= FAMILY_SCORE), key=lambda m: facts[m].rank, reverse=True
        )
        candidates = tuple((m, round(scored[m], 1)) for m in family[:TOP])
        return Resolution(family[0], candidates, False, None, tuple(family[1:3]))
    return result


FAMILY_SCORE = 90.0  # a family word ("llama", "qwen") scores about this against each of its models
FAMILY_SIZE = 3  # this many models that close, and no size or version said: it named a family


def _bare_family(scored: dict[str, float]) -> bool:
    return sum(1 for v in scored.values() if v >= FAMILY_SCORE) >= FAMILY_SIZE


def _by_popularity(ids: set[str], facts: dict[str, ModelFacts]) -> Resolution:
    """ "27b" alone: every model of that size, the most popular first."""
    if not ids:
        return NOTHING
    ordered = sorted(ids, key=lambda mid: facts[mid].rank, reverse=True)
    top = facts[ordered[0]].rank[0]
    runner = facts[ordered[1]].rank[0] if len(ordered) > 1 else -100
    candidates = tuple((mid, float(70 + facts[mid].rank[0] * 0.2)) for mid in ordered[:TOP])
    confident = top - runner >= POPULARITY_MARGIN
    return Resolution(ordered[0], candidates, confident, None, tuple(ordered[1:3]))


def _with_popularity_ties(scored: dict[str, float], facts: dict[str, ModelFacts]) -> Resolution:
    """Rank by score; equal scores (a family name without version) go to the more popular model."""
    ordered = sorted(scored, key=lambda mid: (round(scored[mid], 1), facts[mid].rank), reverse=True)
    ranked = tuple((mid, round(scored[mid], 1)) for mid in ordered[:TOP])
    if not ranked or ranked[0][1] < MIN_SCORE:
        return Resolution(None, ranked)
    best, score = ranked[0]
    ties = [mid for mid, s in ranked[1:] if s >= score - 0.05]
    if ties:
        lead = facts[best].rank[0] - max(facts[mid].rank[0] for mid in ties)
        confident = score >= CONFIDENT_SCORE and lead >= POPULARITY_MARGIN
    else:
        runner = ranked[1][1] if len(ranked) > 1 else 0.0
        confident = score >= CONFIDENT_SCORE and score - runner >= CONFIDENT_MARGIN
    also = tuple(mid for mid, s in ranked[1:3] if s >= score - CONFIDENT_MARGIN)
    return Resolution(best, ranked, confident, None, also)


# --- quants and frameworks ----------------------------------------------------------------------


def _resolve_simple(text: str, table: dict[str, str], known: Mapping[str, object]) -> Resolution:
    key = _compact_simple(text)
    if not key:
        return NOTHING
    if key in table:
        qid = table[key]
        return Resolution(qid, ((qid, 100.0),), True)
    choices = tuple(table)
    ids = tuple(table.values())
    scored = _fuzzy(key, choices, ids, fuzz.ratio)
    result = _from_scores(scored)
    # Short codes ("q4" vs "q5") differ by one character: a fuzzy hit is a suggestion, never an answer.
    if result.best_id is not None and len(key) <= 4:
        return Resolution(None, result.candidates)
    if known and result.best_id is not None and result.best_id not in known:
        return Resolution(result.best_id, result.candidates, False)
    return result


def resolve_quant(text: str, catalog: Catalog) -> Resolution:
    try:
        index = index_for(catalog)
        return _resolve_simple(text, index.quant_exact, catalog.quants)
    except Exception:  # noqa: BLE001 - see resolve_gpu
        return NOTHING


def resolve_framework(text: str, catalog: Catalog) -> Resolution:
    try:
        index = index_for(catalog)
        return _resolve_simple(text, index.framework_exact, catalog.frameworks)
    except Exception:  # noqa: BLE001 - see resolve_gpu
        return NOTHING


# --- names the catalog may not hold: the Hub look-up rule (issue 9) -------------------------------
#
# Order: a catalog alias exact -> a Hub repo id or URL named in the question -> the catalog's fuzzy
# reading, only when the typed name carries nothing that reading lacks (a size, "coder", "vl",
# "a3b", a version 3.2 vs 3.1, "2507", "distill" ...) -> a Hub search for the name as typed. Core
# decides and never touches the network: a `HubNeed` says what the command layer must look up.

_RUN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/-]*")
_PART = re.compile(r"[^a-z0-9.]+")
_LETTERS_THEN_VERSION = re.compile(r"^([a-z]{2,})(\d+(?:\.\d+)*)$")
_HAS_DIGIT = re.compile(r"\d")
# Not model words: context lengths, memory sizes, counts, quant codes.
_NOT_NAME = re.compile(
    r"^(?:\d+k|\d+(?:\.\d+)?(?:g|gb|gib|m)|\d+x|x\d+|i?q\d(?:_[a-z0-9_]+)?|[a-z]?\d+bit|\d+(?:\.\d+)?t/?s)$"
)
TYPO_SCORE = 70.0  # a typed word at least this close to a candidate's word is that word misspelt


@dataclass(frozen=True, slots=True)
class HubNeed:
    """What to look up on the Hub: a repo named in the question, or a search for the typed name."""

    kind: Literal["repo", "search"]
    name: str  # "Qwen/Qwen3-Coder-30B-A3B-Instruct", or the name as typed ("qwen3-coder-30b-a3b")
    quant: str = ""  # an Ollama hf.co/…:Q4_K_M tag's quant


@lru_cache(maxsize=16)
def _hub_words(catalog: Catalog, key: str) -> frozenset[str]:
    return sections(catalog).hub.name_words(key)


@lru_cache(maxsize=TEXTS_REMEMBERED)
def name_parts(text: str) -> tuple[str, ...]:
    """A model name as comparable parts: "Qwen3-Coder-30B-A3B" -> qwen, 3, coder, 30b, a3b."""
    parts: list[str] = []
    for piece in _PART.split(text.lower()):
        piece = piece.strip(".")
        if not piece:
            continue
        m = _LETTERS_THEN_VERSION.match(piece)
        parts.extend((m.group(1), m.group(2)) if m else (piece,))
    return tuple(parts)


_PARTS_SEEN: dict[int, tuple[Model, frozenset[str]]] = {}


def _model_parts(model: Model) -> frozenset[str]:
    # Remembered by the row's identity: hashing a whole Model row per call cost more than the parts.
    hit = _PARTS_SEEN.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    names = (model.id, model.name, *model.aliases, model.hf_repo.split("/")[-1], model.ollama_tag)
    parts = frozenset(p for name in names if name for p in name_parts(name))
    if len(_PARTS_SEEN) > 4096:
        _PARTS_SEEN.clear()
    _PARTS_SEEN[id(model)] = (model, parts)
    return parts


def forget_texts() -> None:
    """Forget every reading remembered by text (names, cleaned texts, card keys): what a benchmark of
    never-seen words calls, or a caller that swaps a catalog in place. The indexes stay."""
    from core.understanding import name_index, normalize, parse

    for fn in (
        parse._remembered,
        _resolve_gpu,
        _resolve_model,
        name_parts,
        _model_has,
        _words_by_start,
        _lacking_in,
        typed_model_names,
        normalize.clean,
    ):
        fn.cache_clear()
    _PARTS_SEEN.clear()
    name_index.forget_keys()


def _close(value: float, target: float, share: float) -> bool:
    return target > 0 and abs(value - target) <= share * target


@lru_cache(maxsize=8192)  # the same (typed name, candidate) pairs recur across questions
def _model_has(
    part: str, params_b: float, active_b: float, have: frozenset[str], compact: str, variant: frozenset[str]
) -> bool:
    """Whether a piece of the typed name (not in the model's own parts) still fits the model of these
    sizes and name parts: a size or active count close to its own, or a misspelling of one of its
    words. (Keyed by the numbers, not the Model: hashing a whole Model row per call cost more than
    the answer.)"""
    if m := SIZE_TOKEN.match(part):
        return _close(float(m.group(1)), params_b, 0.06)
    if m := ACTIVE_TOKEN.match(part):
        return _close(float(m.group(1)), active_b, 0.12)
    if _HAS_DIGIT.search(part) or part in variant:
        return False
    # A family word: a misspelling of one of the model's words is still that model.
    if len(part) >= 4 and part in compact:
        return True
    return any(fuzz.ratio(part, w) >= TYPO_SCORE for w in have if not _HAS_DIGIT.search(w))


_JOINED = re.compile(r"[-_]")


def _without_quants(name: str, quants: Mapping[str, str]) -> str:
    """The typed name less a weights format glued to it: "qwen-72B-int4", "qwen_72B_int4" (QwenLM/Qwen#1067,
    Langchain-Chatchat#3613) name Qwen 72B; the int4 is the quant, read apart."""
    kept = (
        "-".join(piece for piece in _JOINED.split(token) if piece.lower() not in quants)
        for token in name.split()
    )
    return " ".join(token for token in kept if token)


def lacking(name: str, model: Model, catalog: Catalog) -> tuple[str, ...]:
    """The parts of a typed name that `model` lacks: a size or active count it doesn't have, a
    version or date it doesn't carry, a variant word ("coder", "vl") or a family word it isn't."""
    if catalog.models.get(model.id) is not model:
        return _lacking(name, model, catalog)  # a row from elsewhere: not remembered by its id
    return _lacking_in(name, model.id, catalog)


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _lacking_in(name: str, model_id: str, catalog: Catalog) -> tuple[str, ...]:
    # Remembered by the row's id in its catalog (the same typed names meet the same rows again).
    return _lacking(name, catalog.models[model_id], catalog)


def _lacking(name: str, model: Model, catalog: Catalog) -> tuple[str, ...]:
    have = _model_parts(model)
    compact = "".join(sorted(have)) + _compact_simple(model.name)
    ignore, variant = _hub_words(catalog, "ignore"), _hub_words(catalog, "variant")
    name = _without_quants(name, index_for(catalog).vocab.quant_synonyms)
    missing: list[str] = []
    lone: list[str] = []
    named = False  # whether a word of the model's own name (not only a size) was typed
    for token, part in ((t, p) for t in name.split() for p in name_parts(t)):
        if part in have or part in ignore:
            named = named or (part in have and not _HAS_DIGIT.search(part))
        elif _misspelt_word(part, have):
            named = True  # "Lllama 3 8b": the model's own word, a letter off
        elif not _HAS_DIGIT.search(part) and part not in variant and len(name_parts(token)) < 2:
            # A lone word beside the name ("deploy DeepSeek-V3") may be any word; one joined to the
            # name ("seed-oss-36b") is part of it.
            lone.append(part)
        elif not _model_has(part, model.params_b, model.active_params_b, have, compact, variant):
            missing.append(part)
    if not named and not missing:
        # Only a size or active count matched ("zorblax a13b" vs Hunyuan-A13B): a word beside it is
        # the name of some other model, not filler, when none of this model's words was typed.
        missing.extend(w for w in lone if len(w) >= 3)
    return tuple(missing)


def typed_model_name(raw: str, catalog: Catalog) -> str:
    """The model name as the question typed it, cards, quants, sizes of memory and filler removed:
    "4090跑qwen3-coder-30b-a3b" -> "qwen3-coder-30b-a3b"; the longest run of model words wins."""
    names = typed_model_names(raw, catalog)
    return names[0] if names else ""


@lru_cache(maxsize=4)
def _tools_pattern(catalog: Catalog) -> re.Pattern[str]:
    words = sorted(_hub_words(catalog, "tools"), key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in words) or "(?!)", re.IGNORECASE)


@lru_cache(maxsize=4)
def card_like_pattern(catalog: Catalog) -> re.Pattern[str] | None:
    """A card-like name ("RTX 9999", "RX 9090 XT"): understanding.toml [unknown_card]."""
    pattern = vocab_for(catalog).unknown_card_pattern
    return re.compile(pattern) if pattern else None


@lru_cache(maxsize=256)  # model_need reads them twice for a question that names a model
def typed_model_names(raw: str, catalog: Catalog) -> tuple[str, ...]:
    """Every run of model words in the question ("qwen3 32b 和 gemma3 27b": two), longest first."""
    # A card-like name the catalog doesn't know ("RTX 9999") is a card, not the start of a model
    # name: blanked first, so "RTX 9999 qwen3 8b" names Qwen3-8B (and the reply names the card).
    card_like = card_like_pattern(catalog)
    if card_like is not None:
        raw = card_like.sub(lambda m: " " * len(m.group(0)), raw[:500])
    raw = _tools_pattern(catalog).sub(lambda m: " " * len(m.group(0)), raw)
    index = index_for(catalog)
    vocab = index.vocab
    ignore = _hub_words(catalog, "ignore") | vocab.noise_words
    runs: list[list[str]] = [[]]
    end = 0
    for m in _RUN.finditer(raw[:500]):
        word = m.group(0).strip(".:/-")
        low = word.lower()
        card = gpu_key(word, vocab)
        gap, end = raw[end : m.start()], m.end()
        skip = (
            not low
            or low in ignore
            or low in vocab.quant_synonyms
            or _NOT_NAME.match(low)
            # a count or a length; 4 digits: a date ("2507"); a version digit after a family word
            # ("Qwen 3 coder next", llama.cpp#19366) stays in the name
            or (low.isdigit() and len(low) != 4 and not _version_after(low, runs[-1], gap))
            or not card.base
            or card.base in index.gpu_exact
            or gpu_full_key(card) in index.gpu_exact
        )
        if skip:
            if runs[-1]:
                runs.append([])
            continue
        if runs[-1] and gap.strip():  # a CJK word between two names splits them
            runs.append([])
        runs[-1].append(word)
    runs = [r for r in runs if r]
    runs.sort(key=lambda r: (sum(len(w) for w in r if not _HAS_DIGIT.fullmatch(w)), len(r)), reverse=True)
    return tuple(" ".join(r) for r in runs)


def _version_after(digits: str, run: list[str], gap: str) -> bool:
    """ "3" in "qwen 3 coder": one or two digits right after a letters-only word of the run."""
    return len(digits) <= 2 and bool(run) and run[-1].isalpha() and not gap.strip()


def repo_in_question(raw: str) -> RepoRef | None:
    """A Hub repo the question names: a URL (huggingface.co/…, hf.co/…:Q4_K_M) or "org/name"."""
    for m in _RUN.finditer(raw[:500]):
        word = m.group(0)
        if "/" in word:
            ref = parse_repo_ref(word)
            if ref is not None and (_is_url(word) or _looks_like_repo(ref.repo)):
                return ref
    return None


def _is_url(word: str) -> bool:
    return "huggingface.co/" in word.lower() or "hf.co/" in word.lower()


def _looks_like_repo(repo: str) -> bool:
    """A bare "org/name" is a repo only when the name looks like one ("Qwen3-Coder-30B-A3B-Instruct",
    "gpt-oss-20b"): "tok/s", "tokens/s", "A100/A800" or "3090/4090" are units and alternatives."""
    owner, _, name = repo.partition("/")
    return len(owner) >= 2 and len(name) >= 3 and any(c in name for c in "-_.") and not name.isdigit()


def _catalog_repo(repo: str, catalog: Catalog) -> str | None:
    low = repo.lower()
    for mid, model in catalog.models.items():
        repos = (model.hf_repo.lower(), model.gguf_repo.lower())
        if low in repos or mid == low or low in (a.lower() for a in model.aliases):
            return mid
    return None


def _has_model_word(name: str, words: frozenset[str]) -> bool:
    return any(p in words or _misspelt_word(p, words) for p in name_parts(name) if p.isalpha())


def _misspelt_word(part: str, words: frozenset[str]) -> bool:
    """ "lllama", "llamma": a model word with a letter doubled or dropped (same first letter, one edit),
    so "Lllama 3 8b instruct and impossible slow speeds" (koboldcpp#800) names Llama, not "impossible"."""
    if len(part) < 5:
        return False
    by_start = _words_by_start(words)
    return any(
        fuzz.ratio(part, w) >= 85
        for size in (len(part) - 1, len(part), len(part) + 1)
        for w in by_start.get((part[:1], size), ())
    )


@lru_cache(maxsize=64)
def _words_by_start(words: frozenset[str]) -> dict[tuple[str, int], tuple[str, ...]]:
    """(first letter, length) -> the words: a misspelling is looked for only among words it could be."""
    out: dict[tuple[str, int], list[str]] = {}
    for w in words:
        out.setdefault((w[:1], len(w)), []).append(w)
    return {k: tuple(sorted(v)) for k, v in out.items()}


def _could_name(name: str, words: frozenset[str]) -> bool:
    """A typed run that may be a model's name: a word of some model's name, or a family word with its
    size ("vicuna-13B"; "70B parameter model" is a bare size, its words name nothing)."""
    return _has_model_word(name, words) or _FAMILY_SIZE.search(name.lower()) is not None


_BARE_SIZE = re.compile(r"(?<![a-z0-9._:/-])\d+(?:\.\d+)?b(?![a-z0-9_-])")  # "13b" alone, not in "x-13b"
_FAMILY_SIZE = re.compile(r"[a-z]{3,}[-_ ]?\d+(?:\.\d+)?b(?![a-z])")
_SIZE_LIKE = re.compile(r"^(?:a?\d+(?:\.\d+)?[bm]|\d+x\d+(?:\.\d+)?b|v?\d+\.\d+(?:\.\d+)?|r\d)$")


def _release_date(part: str) -> bool:
    """A release date in a name: YYMM ("2507", "2503") or MMDD ("0528")."""
    if len(part) != 4 or not part.isdigit():
        return False
    yy_mm = 23 <= int(part[:2]) <= 29 and 1 <= int(part[2:]) <= 12
    mm_dd = 1 <= int(part[:2]) <= 12 and 1 <= int(part[2:]) <= 31
    return yy_mm or mm_dd


def _distinguishing(name: str, model: Model, catalog: Catalog) -> tuple[str, ...]:
    """The parts `model` lacks that would make the typed name another model: a variant word, a size
    or active count, a version, a release date, or a family word of its own ("zorblax-9000-13b" is
    no Llama 2). Other pieces with digits are counts, cards and units ("4090s", "8xh100", "ddr4")."""
    variant = _hub_words(catalog, "variant")

    def names_another(p: str) -> bool:
        if p in variant or _SIZE_LIKE.match(p) or _release_date(p):
            return True
        return len(p) >= 3 and not _HAS_DIGIT.search(p)

    return tuple(p for p in lacking(name, model, catalog) if names_another(p))


def _compared_unknown(raw: str, names: tuple[str, ...], best: Model, catalog: Catalog) -> HubNeed | None:
    """ "T4 跑 chatglm3 6b 和 qwen2.5 7b 哪个快": two models compared and the other one is not in the
    catalog: a Hub search for it, rather than the known one answered alone (the question swapped).
    Only a run with a parameter size counts as the other model ("pro 6000" of "rtx pro 6000" is a card
    the run picked up, not a model)."""
    # Every run typed, not only those with a word the catalog knows: "baichuan2 13b" names no catalog
    # model, which is the point.
    typed = (*names, *(n for n in typed_model_names(raw, catalog) if n not in names))
    others = [
        n for n in typed if lacking(n, best, catalog) and any(SIZE_TOKEN.match(p) for p in name_parts(n))
    ]
    if not others or read_intent(clean(raw), catalog)[1] != "compare":
        return None
    for name in others:
        other = resolve_model(name, catalog)
        known = other.best_id in catalog.models and other.confident
        if not known or lacking(name, catalog.models[other.best_id or ""], catalog):
            return HubNeed("search", name)
    return None


def model_need(
    raw: str, res: Resolution | None, catalog: Catalog
) -> tuple[Resolution | None, HubNeed | None]:
    """The model reading after the Hub rule: (resolution, what to look up on the Hub or None).

    A repo named in the question is that repo (the catalog's model when it is one); a catalog
    reading that lacks a part of the typed name is not taken (a silent swap), its candidates are
    kept only when they lack nothing; a name the catalog doesn't hold at all is a Hub search."""
    ref = repo_in_question(raw)
    if ref is not None:
        mid = _catalog_repo(ref.repo, catalog)
        if mid is not None:
            return Resolution(mid, ((mid, 100.0),), True), None
        return Resolution(None), HubNeed("repo", ref.repo, ref.quant)
    if res is None:
        return None, None
    names = typed_model_names(raw, catalog)
    if not names:
        return res, None
    # The longest run that has a word of some model's name: "token generation speed ... Qwen 3 Coder"
    # (llama.cpp#19345) is about Qwen 3 Coder, not a model called "generation".
    words = index_for(catalog).model_words
    # Only a run that could be a model's name speaks for or against the reading: one with a word of
    # some model's name, or a parameter size ("vicuna-13B"). The card and the RAM around it ("1650显卡
    # 40G内存 ... Baichuan-13B", "took 75 G") name no model, so they cannot vouch for Llama 2 13B.
    naming = [n for n in names if _could_name(n, words)]
    if not naming and _BARE_SIZE.search(clean(raw)):
        # Nothing typed could name a model and a bare size was said ("a model with 13 billion
        # parameters", oobabooga/textgen#5363): the words left ("t have enough") name no other model.
        return res, None
    naming = naming or list(names)
    name = next((n for n in naming if _has_model_word(n, words)), naming[0])
    names = tuple(naming)
    kept = tuple(
        (mid, s)
        for mid, s in res.candidates
        if mid in catalog.models and not lacking(name, catalog.models[mid], catalog)
    )
    if res.best_id is not None and res.best_id in catalog.models:
        best_model = catalog.models[res.best_id]
        # Two models named ("qwen3 32b 和 gemma3 27b"): the reading fits one of them (when they are
        # compared, the other must be known too).
        if any(not lacking(n, best_model, catalog) for n in names):
            return res, _compared_unknown(raw, names, best_model, catalog)
        # A confident reading is kept unless the name carries something that makes it another
        # model (a size, an active count, a version, a release date, a variant word). Words the
        # run picked up around the name ("two 4090s", "8xH100", "ddr4", "llama-server", "7900 xtx
        # rocm", a glued "qwq32b") are not that.
        if res.confident and any(not _distinguishing(n, best_model, catalog) for n in names):
            return res, None
    elif kept:
        return res, None  # a name that asks back among readings that all fit it ("llama")
    if kept:
        best = kept[0][0]
        return Resolution(best, kept, False, None, tuple(m for m, _ in kept[1:3])), HubNeed("search", name)
    return Resolution(None, ()), HubNeed("search", name)
