"""Names the catalog may not hold: when a typed model name needs a Hub look-up rather than the
nearest catalog row (`model_need`), and the readings remembered by text (`forget_texts`)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.model_source import RepoRef, parse_repo_ref
from core.understanding import fuzzy
from core.understanding.intent import read_intent
from core.understanding.name_index import (
    Index,
    _compact_simple,
    gpu_full_key,
    gpu_key,
    index_for,
)
from core.understanding.normalize import ACTIVE_TOKEN, SIZE_TOKEN, _fold_model_words, clean
from core.understanding.resolution import TEXTS_REMEMBERED, Resolution, _hub_words
from core.understanding.resolve import _resolve_gpu, _resolve_model, resolve_model
from core.understanding.vocab import vocab_for

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
# Not model words: context lengths, memory sizes, counts, quant codes, a chip's core count ("80-core").
_NOT_NAME = re.compile(
    r"^(?:\d+-?cores?|\d+c|\d+k|\d+(?:\.\d+)?(?:g|gb|gib|m)|\d+x|x\d+|i?q\d(?:_[a-z0-9_]+)?|[a-z]?\d+bit|\d+(?:\.\d+)?t/?s)$"
)
TYPO_SCORE = 70.0  # a typed word at least this close to a candidate's word is that word misspelt


@dataclass(frozen=True, slots=True)
class HubNeed:
    """What to look up on the Hub: a repo named in the question, or a search for the typed name."""

    kind: Literal["repo", "search"]
    name: str  # "Qwen/Qwen3-Coder-30B-A3B-Instruct", or the name as typed ("qwen3-coder-30b-a3b")
    quant: str = ""  # an Ollama hf.co/…:Q4_K_M tag's quant


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
    if _HAS_DIGIT.search(part) or part in variant or _variant_glued(part, have, variant):
        return False
    # A family word: a misspelling of one of the model's words is still that model.
    if len(part) >= 4 and part in compact:
        return True
    return any(fuzzy.ratio(part, w) >= TYPO_SCORE for w in have if not _HAS_DIGIT.search(w))


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
        elif _misspelt_word(part, have) and not _variant_glued(part, have, variant):
            named = True  # "Lllama 3 8b": the model's own word, a letter off
        elif not _HAS_DIGIT.search(part) and part not in variant and len(name_parts(token)) < 2:
            # A lone word beside the name ("deploy DeepSeek-V3") may be any word; one joined to the
            # name ("seed-oss-36b") is part of it.
            lone.append(part)
        elif not _model_has(part, model.params_b, model.active_params_b, have, compact, variant):
            missing.append(part)
    if not named:
        # Only a size or active count matched ("zorblax a13b" vs Hunyuan-A13B): a word beside it is
        # the name of some other model, not filler, when none of this model's words was typed; so
        # too beside a version the model lacks ("olmo 2 32b", "exaone 4 32b" are no Qwen3-32B).
        missing.extend(w for w in lone if len(w) >= 3)
    return tuple(missing)


def typed_model_name(raw: str, catalog: Catalog) -> str:
    """The model name as the question typed it, cards, quants, sizes of memory and filler removed:
    "4090跑qwen3-coder-30b-a3b" -> "qwen3-coder-30b-a3b"; the longest run of model words wins."""
    names = typed_model_names(raw, catalog)
    return names[0] if names else ""


# A framework's hyphenated name ("gpt-fast", "tensorrt-llm", "mlc-llm") is one word to the name reader
# below and would join the model name ("gpt-fast llama 3 8b"): blanked like the tools. Only names
# with a joiner and six characters or more: a short or plain alias ("lms", "mlc") may sit inside a
# model name.
_JOINED_NAME = re.compile(r"^(?=.{6,}$)[a-z0-9]+(?:[-_.][a-z0-9]+)+$")


def _framework_words(catalog: Catalog) -> frozenset[str]:
    forms = {a.lower() for fw in catalog.frameworks.values() for a in (fw.id, *fw.aliases)}
    forms |= set(vocab_for(catalog).framework_synonyms)
    return frozenset(f for f in forms if _JOINED_NAME.match(f))


@lru_cache(maxsize=4)
def _tools_pattern(catalog: Catalog) -> re.Pattern[str]:
    words = sorted(_hub_words(catalog, "tools") | _framework_words(catalog), key=len, reverse=True)
    return re.compile("|".join(re.escape(w) for w in words) or "(?!)", re.IGNORECASE)


@lru_cache(maxsize=4)
def _mac_product_pattern(catalog: Catalog) -> re.Pattern[str]:
    """A Mac's product name ("macbook pro", "mac mini") is the machine, never part of a model's name:
    left in, "macbook pro llama 3.1 8b" typed a model "pro llama 3.1 8b" and went to the Hub."""
    names = sorted(index_for(catalog).vocab.mac_products, key=len, reverse=True)
    spelt = (r"\s*".join(re.escape(w) for w in n.split()) for n in names)
    return re.compile(r"(?<![a-z0-9])(?:" + ("|".join(spelt) or "(?!)") + r")(?![a-z0-9])", re.IGNORECASE)


@lru_cache(maxsize=4)
def _plain_framework_pattern(catalog: Catalog) -> re.Pattern[str]:
    """Every other framework word ("exllamav2", "tabbyapi", "exl3") standing as a word of its own: a
    framework is never part of a model name, and glued to it ("exllamav2 gemma 3 27b") the reading
    lacked a word of the name and a catalog model went to the Hub. Only a word alone: "mlx" inside
    "mlx-community/Qwen3-4B-4bit" is the repo's, and no word that is also a model word is taken."""
    model_words = index_for(catalog).model_words
    forms = {a.lower() for fw in catalog.frameworks.values() for a in (fw.id, *fw.aliases)}
    forms |= set(vocab_for(catalog).framework_synonyms)
    plain = sorted((f for f in forms if f and f not in model_words), key=len, reverse=True)
    words = "|".join(re.escape(f).replace(r"\ ", r"[-_ ]?") for f in plain) or "(?!)"
    return re.compile(rf"(?<![a-z0-9_./-])(?:{words})(?![a-z0-9_./-])", re.IGNORECASE)


@lru_cache(maxsize=4)
def _context_phrase_pattern(catalog: Catalog) -> re.Pattern[str]:
    """The context words of more than one word ("max context", "max ctx"): blanked as the parse
    blanks them, so "4090 qwen3 14b max context" looks up no "qwen3 14b max" (Qwen3-Max is a name)."""
    phrases = sorted((w for w in vocab_for(catalog).context_words if " " in w), key=len, reverse=True)
    words = "|".join(re.escape(w) for w in phrases) or "(?!)"
    return re.compile(rf"(?<![a-z0-9])(?:{words})(?![a-z0-9])", re.IGNORECASE)


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
    raw = _mac_product_pattern(catalog).sub(lambda m: " " * len(m.group(0)), raw)
    raw = _plain_framework_pattern(catalog).sub(lambda m: " " * len(m.group(0)), raw)
    raw = _context_phrase_pattern(catalog).sub(lambda m: " " * len(m.group(0)), raw)
    # "猎鹰3 10b": a Chinese family name is its family word here too, as `clean` folds it for the parse.
    raw = _fold_model_words(unicodedata.normalize("NFKC", raw[:500]))
    index = index_for(catalog)
    vocab = index.vocab
    ignore = _hub_words(catalog, "ignore") | vocab.noise_words
    runs: list[list[str]] = [[]]
    end = 0
    for m in _RUN.finditer(raw[:500]):
        word = m.group(0).strip(".:/-")
        low = word.lower()
        gap, end = raw[end : m.start()], m.end()
        skip = low in ignore or _not_a_name_word(low, word, runs[-1], gap, index)
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


def _not_a_name_word(low: str, word: str, run: list[str], gap: str, index: Index) -> bool:
    """A typed word that is no part of a model name: a quant, a count or unit, a card."""
    vocab = index.vocab
    card = gpu_key(word, vocab)
    return bool(
        not low
        or low in vocab.quant_synonyms
        or _NOT_NAME.match(low)
        # a count or a length; 4 digits: a date ("2507"); a version digit after a family word
        # ("Qwen 3 coder next", llama.cpp#19366) stays in the name
        or (low.isdigit() and len(low) != 4 and not _version_after(low, run, gap))
        or (not card.base and not _name_word_after(low, run, gap, index.model_words))
        or card.base in index.gpu_exact
        or gpu_full_key(card) in index.gpu_exact
    )


def _name_word_after(low: str, run: list[str], gap: str, words: frozenset[str]) -> bool:
    """ "mini" in "phi-4 mini": a device word that is a model's name word, right after a name word of
    the run, is the name's (the parse reads it so: parse_patterns.name_words_kept)."""
    return bool(run) and not gap.strip() and low in words and run[-1].lower().split("-")[-1] in words


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


def _variant_glued(part: str, have: frozenset[str], variant: frozenset[str]) -> bool:
    """ "internvl": a family word ending in a variant ("vl") the model's words lack is that variant's
    family (InternVL), not InternLM a letter off."""
    return any(
        part.endswith(v) and len(part) > len(v) + 2 and not any(w.endswith(v) for w in have) for v in variant
    )


def _misspelt_word(part: str, words: frozenset[str]) -> bool:
    """ "lllama", "llamma": a model word with a letter doubled or dropped (same first letter, one edit),
    so "Lllama 3 8b instruct and impossible slow speeds" (koboldcpp#800) names Llama, not "impossible"."""
    if len(part) == 4 and part.isalpha():
        # "lama", "gema": a short name word typed with one of its double letters single
        return any(part[:k] + part[k] + part[k:] in words for k in range(4))
    if len(part) < 5:
        return False
    by_start = _words_by_start(words)
    return any(
        fuzzy.ratio(part, w) >= 85
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
# A family word and its size: glued ("vicuna-13B"), after a version ("falcon3 10b", "olmo 2 13b",
# "exaone 4.0 32b") or a variant piece ("falcon-h1 7b") -- issue 22: these name a model the catalog
# may not hold, so a catalog row of the same size can't vouch for them.
_FAMILY_SIZE = re.compile(
    r"(?<![a-z0-9])[a-z]{3,}[a-z0-9.]*(?:[-_ ][a-z0-9.]{1,8}){0,2}[-_ ]?\d+(?:\.\d+)?b(?![a-z])"
)
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


def same_family(name: str, model: Model, catalog: Catalog) -> bool:
    """Whether `model` is of the family `name` types (issue 22): one of the name's family words
    ("olmo" of "olmo 2 13b") is one of the model's own words, or one misspelt. A name with no family
    word ("13b") has no family to match: any model does. A size alone never makes a neighbour."""
    ignore, variant = _hub_words(catalog, "ignore"), _hub_words(catalog, "variant")
    family = [p for p in name_parts(name) if p.isalpha() and len(p) >= 3 and p not in ignore | variant]
    if not family:
        return True
    have = _model_parts(model)
    return any(p in have or _misspelt_word(p, have) for p in family)


def family_candidates(
    name: str, candidates: tuple[tuple[str, float], ...], catalog: Catalog
) -> tuple[tuple[str, float], ...]:
    """The candidates of the family `name` types: the only neighbours a "closest" may offer."""
    models = catalog.models
    return tuple((m, s) for m, s in candidates if m in models and same_family(name, models[m], catalog))
