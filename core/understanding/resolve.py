"""Resolve a name as people type it ("V100 32G", "r1 32b", "qwen3:32b") to catalog ids.

Order of evidence: an exact alias (after normalisation) beats everything; for models a size-aware
reading comes next ("27b" alone, "r1 32b" -> the R1 distill of that size); rapidfuzz scores the rest.
Every function returns a `Resolution` and never raises on odd input: an unknown name gives
`best_id=None` with the nearest candidates so the reply can say "did you mean ...".
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache

from core.catalog.loader import Catalog
from core.understanding import fuzzy
from core.understanding.name_index import (
    Index,
    ModelFacts,
    _compact_simple,
    gpu_full_key,
    gpu_key,
    index_for,
    model_key,
    model_words_of,
    name_version,
)
from core.understanding.normalize import ACTIVE_TOKEN, MOE_TOKEN, SIZE_TOKEN
from core.understanding.resolution import (
    CONFIDENT_MARGIN,
    CONFIDENT_SCORE,
    MIN_SCORE,
    NOTHING,
    POPULARITY_MARGIN,
    TEXTS_REMEMBERED,
    TOP,
    Resolution,
    _from_scores,
    _fuzzy,
    _hub_words,
)

# --- GPUs ---------------------------------------------------------------------------------------


def _gpu_with_memory(index: Index, catalog: Catalog, base_id: str, base: str, memory: float) -> str:
    """Pick the sibling whose size matches ("3080" + 12g -> rtx-3080-12g); else keep the named card."""
    for gid in index.gpu_base.get(base, ()):
        if catalog.gpus[gid].memory_gib == memory:
            return gid
    return base_id


def _siblings(index: Index, base: str, gid: str) -> tuple[str, ...]:
    """The other cards sold under the name typed without its memory ("a100": the 40 GB is read, the
    80 GB is said beside it): a reading that prices 40 GB for someone holding 80 GB changes the
    verdict, so the answer names the others instead of choosing silently."""
    return tuple(s for s in index.gpu_base.get(base, ()) if s != gid)[:2]


def resolve_gpu(text: str, catalog: Catalog) -> Resolution:
    try:
        return _resolve_gpu(text, catalog)
    except Exception:  # noqa: BLE001 - resolution must never take the bot down; an odd input is "unknown"
        return NOTHING


# A name's reading depends on the name and the catalog alone, and chat groups type the same few names
# ("4090", "qwen3 32b") in question after question: remembered, as the index is (forget_texts()).


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
        also = _siblings(index, key.base, gid) if memory is None else ()
        return Resolution(gid, ((gid, 100.0),), True, memory, also)
    if key.base in index.gpu_exact:
        gid = index.gpu_exact[key.base]
        if memory is not None:
            gid = _gpu_with_memory(index, catalog, gid, key.base, memory)
            return Resolution(gid, ((gid, 100.0),), True, memory)
        return Resolution(gid, ((gid, 100.0),), True, memory, _siblings(index, key.base, gid))
    scored = _fuzzy(key.base, index.gpu_choices, index.gpu_choice_ids, "ratio")
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


def _version_fits(typed: str | None, facts: ModelFacts) -> bool:
    """The typed family version is one of the model's, or its major alone ("llama 3" of Llama 3.3:
    the family without its point release, which popularity or a question back decides). "3n" is not
    "3", "3.5" is not "3": another release of the family, never read as this one."""
    if typed is None or not facts.versions:
        return True
    return any(v == typed or v.startswith(f"{typed}.") for v in facts.versions)


def _stem_score(words: str, facts: ModelFacts, variant_only: bool = False) -> float:
    best = 0.0
    for stem in facts.stems:
        score = fuzzy.ratio(words, stem)
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
        text = _PLUS.sub(" plus", text)
        return _unless_swapped(text, _resolve_model(text, catalog), catalog)
    except Exception:  # noqa: BLE001 - see resolve_gpu
        return NOTHING


# "command-r+": a plus joined to a name word is the "Plus" variant (c4ai-command-r-plus), not noise
# to drop (which read it as Command R); "4090 + 128gb" keeps its spaced plus.
_PLUS = re.compile(r"(?<=[A-Za-z])\+(?![\w+])")
# A card number or chip right before "super" / "ultra" ("4070 super", "m3 ultra") owns the word.
_CARD_BEFORE = re.compile(r"^(?:\d{3,5}[a-z]*|m\d+)$")
_CARD_AFTER = re.compile(r"^\d+$")  # "super 4090", "core ultra 9"


def _unless_swapped(text: str, result: Resolution, catalog: Catalog) -> Resolution:
    """ "nemotron 3 super", "qwen3 30b super": a variant word that is also filler (hub.toml [names]
    swap, "super" of "4070 Super") typed next to a model name, and the reading's name lacks it. The
    reading is another variant: asked back with its candidates, never answered as that variant."""
    if result.best_id is None:
        return result
    words = re.findall(r"[a-z0-9]+", text.lower())
    swap = _hub_words(catalog, "swap")
    typed = {
        w
        for i, w in enumerate(words)
        if w in swap
        and not (i > 0 and _CARD_BEFORE.match(words[i - 1]))
        and not (i + 1 < len(words) and _CARD_AFTER.match(words[i + 1]))
    }
    if not typed:
        return result
    model = catalog.models[result.best_id]
    own = " ".join((model.name, model.id, *model.aliases)).lower()
    if all(w in own for w in typed):
        return result
    return Resolution(None, result.candidates, False, None, result.also)


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
    # The words with a kept suffix first ("k2 thinking 8": Kimi-K2-Thinking), then without any.
    kept = _exact_windows(model_words_of(text, index.vocab, index.kept_suffixes), index)
    for _length, mid in kept + _exact_windows(model_words_of(text, index.vocab), index):
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


def _exact_key(text: str, key: str, index: Index) -> Resolution | None:
    """The typed name is an entry's name: with a kept suffix ("Kimi-K2-Thinking(-GGUF)": the word is
    kept where an entry is named with it) first, then without the suffixes."""
    kept = "".join(model_words_of(text, index.vocab, index.kept_suffixes))
    for name in (kept, key) if index.kept_suffixes else (key,):
        if name in index.model_exact:
            mid = index.model_exact[name]
            return Resolution(mid, ((mid, 100.0),), True)
    return None


def _sized_reading(
    stem: str, sized: set[str], facts: dict[str, ModelFacts], index: Index, catalog: Catalog
) -> Resolution:
    """A name with a size ("r1 32b"): the models of that size whose name fits it."""
    scored = {mid: _stem_score(stem, facts[mid], _variant_only(stem, catalog)) for mid in sized}
    if scored and max(scored.values()) >= MIN_SCORE:
        return _unless_versionless(stem, _with_popularity_ties(scored, facts), index)
    # The name is known but not at that size ("r1 1.5b"): the nearest name, flagged unsure.
    loose = {mid: _stem_score(stem, f) - 15.0 for mid, f in facts.items()}
    result = _with_popularity_ties(loose, facts)
    return Resolution(result.best_id, result.candidates, False, None, result.also)


def _with_fuzzy(scored: dict[str, float], key: str, index: Index) -> dict[str, float]:
    """The stem scores with rapidfuzz's over every alias, for the models still in `scored` (one of
    another family version stays out)."""
    fuzzy = _fuzzy(key, index.model_choices, index.model_choice_ids, "wratio")
    for mid, score in fuzzy.items():
        if mid in scored:
            scored[mid] = max(scored[mid], score - 5.0)
    return scored


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _resolve_model(text: str, catalog: Catalog) -> Resolution:
    index = index_for(catalog)
    key = model_key(text, index.vocab)
    exact = _exact_key(text, key, index)
    if exact is not None or not key:
        return exact or NOTHING
    query = _model_query(text, index)
    # "gemma 3n": a model of another family version (Gemma 3, Gemma 4) is no reading of the name.
    typed_version = name_version(model_words_of(text, index.vocab))
    facts = {mid: f for mid, f in index.model_facts.items() if _version_fits(typed_version, f)}
    stem = "".join(query.words)
    hit = _exact_window(text, stem, query, index)
    if hit is not None:
        return hit
    sized = _sized(facts, query)
    if query.size is not None or query.active is not None:
        return _sized_reading(stem, sized, facts, index, catalog) if stem else _by_popularity(sized, facts)
    if not stem or _variant_only(stem, catalog):
        return NOTHING  # "large llms", "a small model": a variant word alone names no model
    scored = _with_fuzzy({mid: _stem_score(stem, f) for mid, f in facts.items()}, key, index)
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
    scored = _fuzzy(key, choices, ids, "ratio")
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
