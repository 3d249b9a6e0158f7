"""Lookup tables built once per catalog: exact keys, fuzzy choice lists, sizes and name stems.

A question is resolved in well under a millisecond because everything that depends only on the
catalog (normalised aliases, the rapidfuzz choice lists, each model's size labels) is computed here
once and kept for the catalog object's lifetime.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace

from core.cache.warm import per_catalog
from core.catalog.loader import Catalog
from core.understanding.normalize import (
    ACTIVE_TOKEN,
    MOE_TOKEN,
    SIZE_TOKEN,
    clean,
    memory_of,
    split_fused_memory,
    split_words,
    strip_org,
)
from core.understanding.vocab import Vocab, vocab_for

_PAREN = re.compile(r"\([^)]*\)")


@dataclass(frozen=True, slots=True)
class GpuKey:
    base: str  # compact name without vendor words and memory: "v100pcie"
    memory: float | None  # memory the key itself names ("V100 32G" -> 32.0)


@dataclass(frozen=True, slots=True)
class ModelFacts:
    sizes: frozenset[str]  # size labels people use: "32", "8x7", "671"
    actives: frozenset[str]  # MoE active-size labels: "3", "22"
    params_b: float
    stems: tuple[str, ...]  # compact names without size: "qwen3", "deepseekr1", "r1蒸馏"
    rank: tuple[int, str, int]  # (popularity, release, catalog order) for ties
    # The family versions its names carry ("3" of gemma-3-27b, "3.3" of llama-3.3-70b): a name typed
    # with another version ("gemma 3n") is another model (resolve.py, _version_fits).
    versions: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class Index:
    vocab: Vocab
    gpu_exact: dict[str, str]  # compact key (with memory) -> gpu id
    gpu_base: dict[str, tuple[str, ...]]  # compact key without memory -> gpu ids (siblings by memory)
    gpu_choices: tuple[str, ...]  # fuzzy choices (compact keys without memory)
    gpu_choice_ids: tuple[str, ...]
    model_exact: dict[str, str]  # compact key -> model id
    model_choices: tuple[str, ...]
    model_choice_ids: tuple[str, ...]
    model_facts: dict[str, ModelFacts]
    model_words: frozenset[str]  # every word that appears in a model key (for the parser)
    quant_exact: dict[str, str]  # compact surface form -> quant id
    framework_exact: dict[str, str]  # compact surface form -> framework id
    # gpu id -> the same card at other memory sizes ("rtx-4060-ti-8g" -> the 16 GB row), and the
    # rows named after it ("rtx-5090" -> 5090 D, 5090 D V2, the laptop 5090): where a memory size
    # the question gives, or a laptop word, points.
    gpu_siblings: dict[str, tuple[str, ...]] = field(default_factory=dict)
    gpu_variants: dict[str, tuple[str, ...]] = field(default_factory=dict)
    # a model stem -> the models that own it ("qwen3vl" -> the Qwen3-VL rows)
    model_stem_owners: dict[str, frozenset[str]] = field(default_factory=dict)
    # Every prefix of an exact key: the parser stops growing a run of words once it is no key's start.
    gpu_prefixes: frozenset[str] = frozenset()
    model_prefixes: frozenset[str] = frozenset()
    # Model-name suffixes ("thinking") that some entry's own id carries (kimi-k2-thinking): a typed
    # name with the word is that entry, not the one the name without it reads as (Kimi-K2-Instruct).
    kept_suffixes: frozenset[str] = frozenset()


def gpu_words(text: str, vocab: Vocab) -> list[str]:
    return [w for w in split_words(clean(text)) if w not in vocab.vendor_words]


_KEYS_SEEN: dict[int, tuple[Vocab, dict[str, GpuKey]]] = {}
MAX_KEYS_SEEN = 16384  # words; past this the memo starts over (chat text is open-ended)


def gpu_key(text: str, vocab: Vocab) -> GpuKey:
    """Compact a GPU name: drop vendor words, take the memory size out ("V100 32G" -> v100, 32).
    Remembered per vocabulary: the same words come back in question after question."""
    hit = _KEYS_SEEN.get(id(vocab))
    if hit is None or hit[0] is not vocab:
        if len(_KEYS_SEEN) > 16:
            _KEYS_SEEN.clear()
        hit = _KEYS_SEEN[id(vocab)] = (vocab, {})
    seen = hit[1]
    key = seen.get(text)
    if key is None:
        if len(seen) > MAX_KEYS_SEEN:
            seen.clear()
        key = seen[text] = _gpu_key(text, vocab)
    return key


def forget_keys() -> None:
    _KEYS_SEEN.clear()


def _gpu_key(text: str, vocab: Vocab) -> GpuKey:
    words = gpu_words(text, vocab)
    memory: float | None = None
    kept: list[str] = []
    for word in words:
        mem = memory_of(word)
        if mem is not None:
            memory = mem
            continue
        kept.append(word)
    if memory is None and len(kept) == 1:
        fused = split_fused_memory(kept[0])
        # "a10g" is a card, not "a" with 10 GB: only split when what is left still has a digit.
        if fused and any(ch.isdigit() for ch in fused[0]):
            kept, memory = [fused[0]], fused[1]
    return GpuKey("".join(kept).replace("+", ""), memory)


def gpu_full_key(key: GpuKey) -> str:
    if key.memory is None:
        return key.base
    return f"{key.base}{key.memory:g}g"


def model_words_of(text: str, vocab: Vocab, keep: frozenset[str] = frozenset()) -> list[str]:
    """Words of a model name: org prefix and suffixes like `instruct`/`it`/`gguf` removed (those in
    `keep` stay: a suffix word that names an entry of its own)."""
    text = clean(text)
    words: list[str] = []
    for chunk in text.split(" "):
        words.extend(split_words(strip_org(chunk)))
    return [w for w in words if w not in vocab.model_suffixes or w in keep]


def model_key(text: str, vocab: Vocab) -> str:
    return "".join(model_words_of(text, vocab))


# A family word with its version glued ("gemma3n", "qwen2.5", "glm4") or the version as a word of its
# own after one ("gemma 3n", "llama 3.3"): a digit or two, a point release, one letter at most. "e2b",
# "k2", "r1", "v3" (letter first) are names, not versions; sizes and 4-digit dates are read apart, and
# a letter of a size, a context, a memory or a count ("8b", "4k", "24g", "1t", "2x") makes none.
_VERSION_TAIL = r"\d{1,2}(?:\.\d+)?(?:(?![bgkmtx])[a-z])?"
_GLUED_VERSION = re.compile(rf"^[a-z]{{3,}}({_VERSION_TAIL})$")
VERSION_WORD = re.compile(rf"^{_VERSION_TAIL}$")


def name_version(words: list[str]) -> str | None:
    """The first family version among a name's words, or None where it says none."""
    for i, word in enumerate(words):
        if SIZE_TOKEN.match(word) or MOE_TOKEN.match(word):
            continue
        if m := _GLUED_VERSION.match(word):
            return m.group(1)
        family = i > 0 and words[i - 1].isalpha() and len(words[i - 1]) >= 3
        if family and VERSION_WORD.match(word):
            return word
    return None


def _literal_key(text: str) -> str:
    return "".join(w for chunk in clean(text).split(" ") for w in split_words(strip_org(chunk)))


def _size_label(value: str) -> str:
    return f"{float(value):g}"


def _model_facts(
    model_keys: list[str], params_b: float, rank: tuple[int, str, int], vocab: Vocab
) -> ModelFacts:
    sizes: set[str] = set()
    actives: set[str] = set()
    stems: list[str] = []
    for text in model_keys:
        words = model_words_of(text, vocab)
        stem_words: list[str] = []
        for word in words:
            if m := SIZE_TOKEN.match(word):
                sizes.add(_size_label(m.group(1)))
            elif m := ACTIVE_TOKEN.match(word):
                actives.add(_size_label(m.group(1)))
            elif m := MOE_TOKEN.match(word):
                sizes.add(f"{m.group(1)}x{_size_label(m.group(2))}")
            elif re.fullmatch(r"\d+e", word) or re.fullmatch(r"\d{2}-?\d{4}|\d{4}", word):
                continue  # "16e" (experts), "2507"/"0528" (release tags) say nothing about the name
            else:
                # "r1蒸馏32b": a size glued to CJK text.
                glued = re.match(r"^(.*?)(\d+(?:\.\d+)?)b$", word)
                if glued and glued.group(1) and not glued.group(1)[-1].isascii():
                    sizes.add(_size_label(glued.group(2)))
                    stem_words.append(glued.group(1))
                else:
                    stem_words.append(word)
        stem = "".join(stem_words)
        if stem and stem not in stems:
            stems.append(stem)
    sizes.add(f"{round(params_b):g}")
    versions = {v for text in model_keys if (v := name_version(model_words_of(text, vocab)))}
    return ModelFacts(frozenset(sizes), frozenset(actives), params_b, tuple(stems), rank, frozenset(versions))


@dataclass(frozen=True, slots=True)
class _GpuTables:
    exact: dict[str, str]
    base: dict[str, tuple[str, ...]]
    choices: tuple[str, ...]
    choice_ids: tuple[str, ...]


def _gpu_tables(catalog: Catalog, vocab: Vocab) -> _GpuTables:
    exact: dict[str, str] = {}
    base: dict[str, list[str]] = {}
    choices: list[str] = []
    choice_ids: list[str] = []
    for gpu in catalog.gpus.values():
        for text in (gpu.id.replace("-", " "), gpu.name, _PAREN.sub(" ", gpu.name), *gpu.aliases):
            key = gpu_key(text, vocab)
            # "Radeon 7" compacts to "7" (the vendor word goes): a lone one- or two-digit number is
            # in every question ("7 tokens/s", "速度 7"), so it names no card on its own: the
            # vendor word stays in such a key ("radeon7").
            if key.base.isdigit() and len(key.base) < 3:
                key = GpuKey("".join(split_words(clean(text))), key.memory)
            if not key.base:
                continue
            exact.setdefault(gpu_full_key(key), gpu.id)
            siblings = base.setdefault(key.base, [])
            if gpu.id not in siblings:
                siblings.append(gpu.id)
            if key.base not in choices or choice_ids[choices.index(key.base)] != gpu.id:
                choices.append(key.base)
                choice_ids.append(gpu.id)
    # A bare name ("v100") means the card whose own name has no memory size, not every sibling.
    for name, ids in base.items():
        exact.setdefault(name, ids[0])
    return _GpuTables(exact, {k: tuple(v) for k, v in base.items()}, tuple(choices), tuple(choice_ids))


@dataclass(frozen=True, slots=True)
class _ModelTables:
    exact: dict[str, str]
    choices: tuple[str, ...]
    choice_ids: tuple[str, ...]
    facts: dict[str, ModelFacts]
    words: frozenset[str]


def _model_tables(catalog: Catalog, vocab: Vocab) -> _ModelTables:
    exact: dict[str, str] = {}
    choices: list[str] = []
    choice_ids: list[str] = []
    facts: dict[str, ModelFacts] = {}
    words: set[str] = set()
    for order, model in enumerate(catalog.models.values()):
        texts = [model.id, model.name, _PAREN.sub(" ", model.name), *model.aliases]
        if model.ollama_tag:
            texts.append(model.ollama_tag)
        if model.hf_repo:
            texts.append(model.hf_repo)
        keys: list[str] = []
        for text in texts:
            key = model_key(text, vocab)
            if key and key not in keys:
                keys.append(key)
                words.update(model_words_of(text, vocab))
        for key in keys:
            exact.setdefault(key, model.id)
            choices.append(key)
            choice_ids.append(model.id)
        # The name as typed with its suffix words kept ("ministral8binstruct2410"): the parser joins
        # the question's words as they come, so "Ministral-8B-Instruct-2410" must be a key too, or
        # the date after "instruct" is lost and the name reads as a bare "ministral 8b".
        for text in texts:
            exact.setdefault(_literal_key(text), model.id)
        rank = (model.popularity, model.release, -order)
        facts[model.id] = _model_facts(texts, model.params_b, rank, vocab)
    return _ModelTables(
        exact, tuple(choices), tuple(choice_ids), _without_family_stems(facts), frozenset(words)
    )


_FAMILY_MODELS = 3  # a stem that starts this many other models' stems is a family word, not a name


def _without_family_stems(facts: dict[str, ModelFacts]) -> dict[str, ModelFacts]:
    """Drop a stem that only names the family, without any version: "llama" (from the alias
    "llama 405b") would make every misspelt llama ("Llamma 3", "LLaMAs") read as Llama-3.1-405B,
    the one model that owns the stem.
    A model keeps its stems when all of them are family words (nothing else would name it)."""
    owners: dict[str, set[str]] = {}
    for mid, f in facts.items():
        for stem in f.stems:
            owners.setdefault(stem, set()).add(mid)

    def family(stem: str, mid: str) -> bool:
        if any(ch.isdigit() for ch in stem):
            return False  # "llama3", "qwen3", "r1": a version or generation already narrows it
        longer = {o for other, ids in owners.items() if other != stem and other.startswith(stem) for o in ids}
        return len(longer - {mid}) >= _FAMILY_MODELS

    out: dict[str, ModelFacts] = {}
    for mid, f in facts.items():
        kept = tuple(stem for stem in f.stems if not family(stem, mid))
        out[mid] = replace(f, stems=kept) if kept and kept != f.stems else f
    return out


def _simple_exact(
    names: dict[str, tuple[str, ...]], synonyms: Mapping[str, str], known: Mapping[str, object]
) -> dict[str, str]:
    """Compact surface form -> id, for quants and frameworks: the catalog's own names and aliases
    first, then the vocabulary's synonyms for ids the catalog has."""
    exact: dict[str, str] = {}
    for item_id, texts in names.items():
        for text in texts:
            exact.setdefault(_compact_simple(text), item_id)
    for form, target in synonyms.items():
        if not known or target in known:
            exact.setdefault(_compact_simple(form), target)
    return exact


def _build(catalog: Catalog) -> Index:
    vocab = vocab_for(catalog)
    gpus = _gpu_tables(catalog, vocab)
    models = _model_tables(catalog, vocab)
    quant_names = {q.id: (q.id, *q.aliases) for q in catalog.quants.values()}
    fw_names = {f.id: (f.id, f.name, *f.aliases) for f in catalog.frameworks.values()}
    return Index(
        vocab=vocab,
        gpu_exact=gpus.exact,
        gpu_base=gpus.base,
        gpu_choices=gpus.choices,
        gpu_choice_ids=gpus.choice_ids,
        model_exact=models.exact,
        model_choices=models.choices,
        model_choice_ids=models.choice_ids,
        model_facts=models.facts,
        model_words=models.words,
        quant_exact=_simple_exact(quant_names, vocab.quant_synonyms, catalog.quants),
        framework_exact=_simple_exact(fw_names, vocab.framework_synonyms, catalog.frameworks),
        gpu_siblings=_gpu_siblings(gpus.base),
        gpu_variants=_gpu_variants(catalog),
        model_stem_owners=_stem_owners(models.facts),
        gpu_prefixes=_prefixes(gpus.exact),
        model_prefixes=_prefixes(models.exact),
        kept_suffixes=_kept_suffixes(catalog, vocab),
    )


def _kept_suffixes(catalog: Catalog, vocab: Vocab) -> frozenset[str]:
    """The suffix words an entry's id is named with ("kimi-k2-thinking"): an alias carrying one
    ("Qwen3-30B-A3B-Thinking-2507") only says the same row, an id says the word makes another model."""
    return frozenset(
        w for model in catalog.models for w in split_words(clean(model)) if w in vocab.model_suffixes
    )


def _prefixes(keys: Mapping[str, str]) -> frozenset[str]:
    return frozenset(key[:n] for key in keys for n in range(1, len(key) + 1))


def _stem_owners(facts: dict[str, ModelFacts]) -> dict[str, frozenset[str]]:
    owners: dict[str, set[str]] = {}
    for mid, f in facts.items():
        for stem in f.stems:
            owners.setdefault(stem, set()).add(mid)
    return {stem: frozenset(ids) for stem, ids in owners.items()}


def _gpu_siblings(base: dict[str, tuple[str, ...]]) -> dict[str, tuple[str, ...]]:
    out: dict[str, list[str]] = {}
    for ids in base.values():
        if len(ids) < 2:
            continue
        for gid in ids:
            known = out.setdefault(gid, [])
            known.extend(other for other in ids if other != gid and other not in known)
    return {gid: tuple(ids) for gid, ids in out.items()}


def _gpu_variants(catalog: Catalog) -> dict[str, tuple[str, ...]]:
    """Rows whose id extends another's ("rtx-5090" -> "rtx-5090d-v2", "rtx-5090-laptop"); a row named
    by its memory extends the name without it ("rtx-3060-12g" -> "rtx-3060-laptop", the 6 GB 3060 of
    "Nvidia 3060 6G VRAM", THUDM/WebGLM#18)."""
    ids = sorted(catalog.gpus)
    out: dict[str, tuple[str, ...]] = {}
    for gid in ids:
        stem = _MEMORY_SUFFIX.sub("", gid)
        longer = tuple(
            other
            for other in ids
            if other != gid and (other.startswith(gid) or (stem != gid and other.startswith(f"{stem}-")))
        )
        if longer:
            out[gid] = longer
    return out


_MEMORY_SUFFIX = re.compile(r"-\d+g$")  # "rtx-3060-12g" -> "rtx-3060"


def _compact_simple(text: str) -> str:
    return "".join(split_words(clean(text)))


@per_catalog("understanding.name_index")
def index_for(catalog: Catalog) -> Index:
    """The index of `catalog`, built on first use (kept in the warm cache for the shipped one)."""
    return _build(catalog)
