"""The parser's vocabulary (`catalogs/understanding.toml`) as one immutable object.

The words live in a data file so that adding "四路" or a new framework nickname is an edit to TOML,
not to code. The loader exposes every extra catalog file as `catalog.tables[stem]`; a catalog loaded
from a directory without the file (tests with a tiny catalog) falls back to the shipped one.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import Any

from core.cache.warm import per_catalog
from core.catalog.kv_cache import KvSpellings, is_kv_cache_type
from core.catalog.loader import CATALOG_DIR, Catalog
from core.catalog.sections import sections

VOCAB_FILE = CATALOG_DIR / "understanding.toml"


@dataclass(frozen=True, slots=True)
class Vocab:
    vendor_words: frozenset[str]
    card_words: frozenset[str]
    count_words: MappingProxyType[str, int]
    count_classifiers: tuple[str, ...]
    count_not_before: tuple[str, ...]  # a classifier followed by one of these counts no cards
    quant_synonyms: MappingProxyType[str, str]  # surface form -> quant id
    framework_synonyms: MappingProxyType[str, str]  # surface form -> framework id
    os_words: MappingProxyType[str, str]  # surface form -> "windows" | "linux" | "macos"
    context_words: tuple[str, ...]
    intent_order: tuple[str, ...]
    intent_words: MappingProxyType[str, tuple[str, ...]]
    intent_patterns: MappingProxyType[str, tuple[str, ...]]  # regexes for split phrases ("能...吗")
    noise_words: frozenset[str]
    model_suffixes: frozenset[str]
    full_model_words: frozenset[str]
    laptop_words: tuple[str, ...] = ()
    host_ram_words: tuple[str, ...] = ()
    ram_types: MappingProxyType[str, str] = field(
        default_factory=lambda: MappingProxyType({})
    )  # "ddr5"->"DDR5"
    kv_words: tuple[str, ...] = ()
    english_words: frozenset[str] = frozenset()  # [language] en_words: only an English sentence has them
    unknown_card_pattern: str = ""  # [unknown_card] pattern: a card-like name ("RTX 9999")
    kv_types: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))  # "q8"->"q8_0"
    machine_words: tuple[str, ...] = ()
    machine_zh_words: tuple[str, ...] = ()
    card_either_words: frozenset[str] = frozenset()  # "A100 or A800": either card, one machine
    card_versus_words: frozenset[str] = frozenset()  # "4090 vs 5090": two machines compared
    card_memory_joiners: frozenset[str] = frozenset()  # "A100的80G": a word between card and size
    card_together_words: tuple[str, ...] = ()  # "3090 + 3090", "4090 and 4090": a card said twice is two
    server_names: frozenset[str] = frozenset()  # "a2": also a server's name ("A2服务器")
    server_words: tuple[str, ...] = ()  # "服务器", "server": the words that make it the box's name
    server_card_words: tuple[str, ...] = ()  # "显卡", "nvidia": beside such a name, it is the card
    asked_markers: tuple[str, ...] = ()  # "能不能行", "would": the clause whose cards are asked about
    given_up_words: tuple[str, ...] = ()  # "很难买", "tried": another card in it is not the one asked
    added_words: tuple[str, ...] = ()  # "adding", "再插": a card in the asked clause joins the machine had
    ram_channel_words: MappingProxyType[str, int] = field(
        default_factory=lambda: MappingProxyType({})
    )  # "双通道" -> 2, "quad channel" -> 4
    dimm_words: tuple[str, ...] = ()  # "根", "条", "sticks": the DIMMs counted in "4根32G"
    # vendor word -> the words right after it that finish a device's name ("macbook" -> "pro", "air")
    device_suffixes: MappingProxyType[str, frozenset[str]] = field(
        default_factory=lambda: MappingProxyType({})
    )
    # "mac studio" -> its chips' ids, newest first: a Mac named by product and memory, no chip
    mac_products: MappingProxyType[str, tuple[str, ...]] = field(default_factory=lambda: MappingProxyType({}))
    mac_product_names: MappingProxyType[str, str] = field(default_factory=lambda: MappingProxyType({}))


def _invert(table: dict[str, list[str]]) -> MappingProxyType[str, str]:
    out: dict[str, str] = {}
    for target, forms in table.items():
        for form in forms:
            out.setdefault(form.lower(), target)
    return MappingProxyType(out)


def vocab_from_table(doc: dict[str, Any]) -> Vocab:
    intent = doc.get("intent", {})
    order = tuple(intent.get("order", ("cards_needed", "speed", "fit", "memory")))
    return Vocab(
        vendor_words=frozenset(w.lower() for w in doc.get("gpu", {}).get("vendor_words", ())),
        card_words=frozenset(w.lower() for w in doc.get("gpu", {}).get("card_words", ())),
        count_words=MappingProxyType(
            {k.lower(): int(v) for k, v in doc.get("count", {}).get("words", {}).items()}
        ),
        count_classifiers=tuple(doc.get("count", {}).get("classifiers", {}).get("words", ())),
        count_not_before=tuple(doc.get("count", {}).get("classifiers", {}).get("not_before", ())),
        quant_synonyms=_invert(doc.get("quant", {}).get("synonyms", {})),
        framework_synonyms=_invert(doc.get("framework", {}).get("synonyms", {})),
        os_words=_invert(doc.get("os", {})),
        context_words=tuple(w.lower() for w in doc.get("context", {}).get("words", ())),
        intent_order=order,
        intent_words=MappingProxyType({k: tuple(w.lower() for w in intent.get(k, ())) for k in order}),
        intent_patterns=MappingProxyType(
            {k: tuple(v) for k, v in intent.get("patterns", {}).items() if k in order}
        ),
        noise_words=frozenset(w.lower() for w in doc.get("noise", {}).get("words", ())),
        model_suffixes=frozenset(w.lower() for w in doc.get("noise", {}).get("model_suffixes", ())),
        full_model_words=frozenset(w.lower() for w in doc.get("noise", {}).get("full_model_words", ())),
        laptop_words=tuple(w.lower() for w in doc.get("gpu", {}).get("laptop_words", ())),
        host_ram_words=tuple(w.lower() for w in doc.get("host_ram", {}).get("words", ())),
        ram_types=_invert(doc.get("host_ram", {}).get("types", {})),
        ram_channel_words=MappingProxyType(
            {str(k).lower(): int(v) for k, v in doc.get("host_ram", {}).get("channels", {}).items()}
        ),
        dimm_words=tuple(w.lower() for w in doc.get("host_ram", {}).get("dimms", {}).get("words", ())),
        kv_words=tuple(w.lower() for w in doc.get("kv", {}).get("words", ())),
        english_words=frozenset(doc.get("language", {}).get("en_words", ())),
        unknown_card_pattern=str(doc.get("unknown_card", {}).get("pattern", "")),
        kv_types=_invert(doc.get("kv", {}).get("types", {})),
        machine_words=tuple(w.lower() for w in doc.get("machines", {}).get("words", ())),
        machine_zh_words=tuple(doc.get("machines", {}).get("zh_words", ())),
        card_either_words=frozenset(doc.get("cards", {}).get("either", ())),
        card_versus_words=frozenset(doc.get("cards", {}).get("versus", ())),
        card_memory_joiners=frozenset(doc.get("cards", {}).get("memory_joiners", ())),
        card_together_words=tuple(str(w).lower() for w in doc.get("cards", {}).get("together", ())),
        **_setup_choice_words(doc.get("cards", {})),
        **_device_words(doc.get("gpu", {})),
    )


def _device_words(gpu: dict[str, Any]) -> dict[str, Any]:
    """[gpu] words that finish a device's name ("macbook" -> "pro") and Macs named by product."""
    return {
        "device_suffixes": MappingProxyType(
            {
                str(k).lower(): frozenset(w.lower() for w in v)
                for k, v in gpu.get("device_suffixes", {}).items()
            }
        ),
        "mac_products": MappingProxyType(
            {str(k).lower(): tuple(v) for k, v in gpu.get("mac_products", {}).items()}
        ),
        "mac_product_names": MappingProxyType(
            {str(k).lower(): str(v) for k, v in gpu.get("mac_product_names", {}).items()}
        ),
    }


def _setup_choice_words(cards: dict[str, Any]) -> dict[str, Any]:
    """[cards] words of issue 21: server names ("A2服务器"), the asked and given-up setups."""

    def words(key: str) -> tuple[str, ...]:
        return tuple(str(w).lower() for w in cards.get(key, ()))

    return {
        "server_names": frozenset(words("server_names")),
        "server_words": words("server_words"),
        "server_card_words": words("server_card_words"),
        "asked_markers": words("asked_markers"),
        "given_up_words": words("given_up_words"),
        "added_words": words("added_words"),
    }


@cache
def shipped_doc(path: Path = VOCAB_FILE) -> dict[str, Any]:
    """The shipped understanding.toml as read, once (the vocabulary and normalize's Chinese family
    names both come from it)."""
    with path.open("rb") as fh:
        return tomllib.load(fh)


@cache
def _shipped(path: Path = VOCAB_FILE) -> Vocab:
    return vocab_from_table(shipped_doc(path))


@per_catalog("understanding.vocab")
def vocab_for(catalog: Catalog) -> Vocab:
    """The vocabulary that travels with `catalog`, or the shipped one."""
    table = catalog.tables.get("understanding")
    if table:
        return vocab_from_table(table)
    return _shipped()


@per_catalog("understanding.kv_spellings")
def kv_spellings(catalog: Catalog) -> KvSpellings:
    """The KV cache spellings of `catalog` (core/catalog/kv_cache.py): its vocabulary's words and the
    unpriced llama.cpp types of catalogs/submit.toml `[kv_priced_as]`."""
    exact = {w: t for w, t in vocab_for(catalog).kv_types.items() if is_kv_cache_type(t)}
    priced_as = {
        str(name).lower(): priced
        for name, priced in sections(catalog).submit.kv_priced_as.items()
        if is_kv_cache_type(priced)
    }
    return KvSpellings(MappingProxyType(exact), MappingProxyType(priced_as))
