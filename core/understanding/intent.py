"""What a question asks for (its intent), and the few numbers only some intents carry.

`read_intent` is the parser's step for the intent: it runs on the cleaned question after contexts,
quants and frameworks were taken out, and blanks the intent words it used so they can't be misread
as a name later. The intents that run the other way ("which model fits", "what hardware do I need",
"A vs B", time to first token, concurrency) come from catalogs/intents.toml and are checked first;
the fit / speed / cards / memory words stay in catalogs/understanding.toml [intent].

`intent_details` reads, from the raw question, what only those replies need: the prompt length,
the number of concurrent users, a card known only by its memory ("a 16GB GPU"), the task a model is
wanted for ("for coding": `read_task`) and whether a KV cache type is asked to be worth it.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from typing import Any

from core.cache.warm import per_catalog
from core.catalog.loader import CATALOG_DIR, Catalog
from core.understanding.gate import Gated, gated
from core.understanding.normalize import clean
from core.understanding.query import Intent, is_intent
from core.understanding.vocab import Vocab, vocab_for

INTENTS_FILE = CATALOG_DIR / "intents.toml"
MAX_USERS = 4096  # "16并发": more than this is a cluster question, not a number to estimate for
MAX_PROMPT = 16 * 1024 * 1024
MAX_OUTPUT = 1024 * 1024  # tokens of reply ("500 out"); more is no reply length

# "how many h100 ...", "how many 4090s": a count of cards; "how many tokens/GB" is not.
_HOW_MANY = gated(re.compile(r"how many\s+(?!tok|t/s|gb|g\b|vram|memory|ram|bit)"))


@cache
def _shipped_table() -> dict[str, Any]:
    with INTENTS_FILE.open("rb") as fh:
        return tomllib.load(fh)


def intents_table(catalog: Catalog) -> dict[str, Any]:
    """catalogs/intents.toml as the catalog carries it, or the shipped one (a tiny test catalog)."""
    table: dict[str, Any] = catalog.tables.get("intents") or _shipped_table()
    return table


def _word_pattern(word: str) -> str:
    """A latin word must stand alone ("vs" is not in "cvs"); CJK words need no boundary."""
    # The catalog pads some words with spaces (" vs "); the boundary is judged on the word itself,
    # so "vs" never matches inside "devstral".
    word = word.strip()
    body = re.escape(word)
    if word[:1].isascii() and word[:1].isalnum():
        body = r"(?<![a-z])" + body
    if word[-1:].isascii() and word[-1:].isalnum():
        body += r"(?![a-z])"
    return body


# Every pattern here is gated (core/understanding/gate.py): a question with none of its words is not
# searched, which is most questions for most lists.
def _words_re(words: list[str] | tuple[str, ...]) -> Gated | None:
    parts = [_word_pattern(w) for w in sorted({w.lower() for w in words if w.strip()}, key=len, reverse=True)]
    return gated(re.compile("|".join(parts))) if parts else None


def _phrases_re(phrases: list[str] | tuple[str, ...]) -> Gated | None:
    return gated(re.compile("|".join(f"(?:{p})" for p in phrases))) if phrases else None


_IntentList = tuple[tuple[Intent, Gated | None, Gated | None], ...]


@dataclass(frozen=True, slots=True)
class _Patterns:
    # (intent, its words (blanked once read), its phrase patterns (only read: they span the model))
    intents: _IntentList
    legacy: _IntentList
    users: tuple[Gated, ...]
    capacity: tuple[Gated, ...]  # "how many users", "最多多少并发": users asked for, no number given
    prompt: tuple[Gated, ...]
    # "2000 in", "input 8000" / "500 out", "输出 500" (issue 23): read after `prompt`, and blanked
    # by read_intent so none of their numbers is a card ("RTX 4000"), a count or a model size.
    input: tuple[Gated, ...]
    output: tuple[Gated, ...]
    speed_target: tuple[Gated, ...]
    speed_target_weak: tuple[Gated, ...]
    memory_card: tuple[Gated, ...]
    memory_cards: tuple[Gated, ...]  # several cards named by memory only: groups n and g
    count_words: dict[str, int]
    # [task]: each task's words, and the look-alike phrases blanked before them ("error code 43")
    tasks: tuple[tuple[str, Gated, tuple[Gated, ...]], ...] = ()
    editors: Gated | None = None  # "vs code": an editor, blanked before "vs" can read as a comparison
    # [kv_worth]: "worth it", "值得" ... asked with one of the KV cache words (understanding.toml [kv])
    kv_worth: Gated | None = None
    # [max_context]: "how much context can I fit", "能开多长上下文"
    max_context: Gated | None = None
    # [topics]: side questions answered by one sourced line each ("nvlink有用吗", "-ot or --n-cpu-moe"):
    # (topic, the word groups that must all be in the question)
    topics: tuple[tuple[str, tuple[Gated, ...]], ...] = ()
    kv_words: Gated | None = None


def _intent_list(order: tuple[str, ...], words: dict[str, Any], phrases: dict[str, Any]) -> _IntentList:
    out: list[tuple[Intent, Gated | None, Gated | None]] = []
    for name in order:
        if is_intent(name):  # a name the replies have no view for is skipped
            out.append(
                (name, _words_re(tuple(words.get(name, ()))), _phrases_re(tuple(phrases.get(name, ()))))
            )
    return tuple(out)


def _tasks(section: dict[str, Any]) -> tuple[tuple[str, Gated, tuple[Gated, ...]], ...]:
    out: list[tuple[str, Gated, tuple[Gated, ...]]] = []
    for name in section.get("order", ()):
        words_re = _words_re(tuple(section.get(name, ())))
        if words_re is not None:
            unlike = tuple(gated(re.compile(p)) for p in section.get(f"not_{name}", ()))
            out.append((str(name), words_re, unlike))
    return tuple(out)


def _topics(section: dict[str, Any]) -> tuple[tuple[str, tuple[Gated, ...]], ...]:
    """[topics]: each topic's word groups (a list of words is one group; a list of lists, all of
    them), in `order`."""
    out: list[tuple[str, tuple[Gated, ...]]] = []
    for name in section.get("order", ()):
        words = section.get(name, ())
        groups = words if words and isinstance(words[0], list) else [words]
        compiled = tuple(g for g in (_words_re(tuple(group)) for group in groups) if g is not None)
        if compiled:
            out.append((str(name), compiled))
    return tuple(out)


def _build(table: dict[str, Any], vocab: Vocab) -> _Patterns:
    words = table.get("words", {})
    phrases = table.get("patterns", {})
    task = table.get("task", {})
    return _Patterns(
        intents=_intent_list(tuple(words.get("order", ())), words, phrases),
        legacy=_intent_list(vocab.intent_order, dict(vocab.intent_words), dict(vocab.intent_patterns)),
        users=tuple(gated(re.compile(p)) for p in phrases.get("concurrency_number", ())),
        capacity=tuple(gated(re.compile(p)) for p in phrases.get("capacity", ())),
        prompt=tuple(gated(re.compile(p)) for p in phrases.get("prompt_number", ())),
        input=tuple(gated(re.compile(p)) for p in phrases.get("input_number", ())),
        output=tuple(gated(re.compile(p)) for p in phrases.get("output_number", ())),
        speed_target=tuple(gated(re.compile(p)) for p in phrases.get("speed_target_number", ())),
        speed_target_weak=tuple(gated(re.compile(p)) for p in phrases.get("speed_target_weak", ())),
        memory_card=tuple(gated(re.compile(p)) for p in phrases.get("memory_only_card", ())),
        memory_cards=tuple(gated(re.compile(p)) for p in phrases.get("memory_only_cards", ())),
        count_words=dict(vocab.count_words),
        tasks=_tasks(task),
        editors=_words_re(tuple(task.get("editors", ()))),
        kv_worth=_words_re(tuple(table.get("kv_worth", {}).get("words", ()))),
        max_context=_words_re(tuple(table.get("max_context", {}).get("words", ()))),
        topics=_topics(table.get("topics", {})),
        kv_words=_words_re(vocab.kv_words),
    )


@per_catalog("understanding.intent")
def _patterns_for(catalog: Catalog) -> _Patterns:
    return _build(intents_table(catalog), vocab_for(catalog))


def _blank_all(pattern: Gated, t: str) -> str:
    return pattern.sub(lambda m: " " * len(m.group(0)), t)


def _scan(t: str, intents: _IntentList, first: Intent, also: Intent | None = None) -> tuple[str, Intent]:
    """The first intent of the list whose words or phrases appear (`first` when none; `also` counts
    as a hit without words); every list's words are blanked either way."""
    intent = first
    for name, words_re, phrases_re in intents:
        hit = bool(phrases_re and phrases_re.search(t)) or name == also
        if words_re and words_re.search(t):
            hit = True
            t = _blank_all(words_re, t)
        if hit and intent == "general":
            intent = name
    return t, intent


# The words of "8gb vram", "24g显存", "a 16GB GPU" that say "graphics card memory".
_CARD_MEMORY_WORDS = re.compile(r"vram|显存|显卡|graphics card|video card|gpu|card|卡")


def _keep_size(m: re.Match[str]) -> str:
    """The match with its card-memory words blanked; the size, its unit and any verb stay."""
    return _CARD_MEMORY_WORDS.sub(lambda w: " " * len(w.group(0)), m.group(0))


def read_intent(t: str, catalog: Catalog) -> tuple[str, Intent]:
    """(the text with the intent words blanked, the intent). The first intent of intents.toml whose
    words or phrases appear wins; else "how many <card>" is cards_needed; else the first of
    understanding.toml's order."""
    pats = _patterns_for(catalog)
    # "50路并发" is 50 users, not 50 cards ("四路" counts cards elsewhere): blanked first, remembered.
    users = False
    for users_re in (*pats.users, *pats.capacity):
        if users_re.search(t):
            users = True
            t = _blank_all(users_re, t)
    for io_re in (*pats.input, *pats.output):  # "2000 in 500 out": lengths, not cards or sizes
        t = _blank_all(io_re, t)
    # "8gb vram", "24g显存": the words of a card known by its memory describe the card, they don't
    # ask how much memory ("8gb vram 16gb ram qwen3 30b a3b?" is no memory question); the size stays.
    for card_re in pats.memory_card:
        t = card_re.sub(_keep_size, t)
    if pats.editors is not None:  # "best model for vs code": the editor, not "A vs B"
        t = _blank_all(pats.editors, t)
    t, intent = _scan(t, pats.intents, "general", "concurrency" if users else None)
    t, legacy = _scan(t, pats.legacy, "cards_needed" if _HOW_MANY.search(t) else "general")
    return t, intent if intent != "general" else legacy


def with_card(intent: Intent, card_named: bool, t: str, catalog: Catalog) -> Intent:
    """ "What hardware" asked with the card already named is about that card: "需要多大显存，一张24G
    4090能跑吗？" (dots.ocr#22) asks whether the 4090 runs it. The fit/speed/memory words decide then;
    with none of them it stays a hardware question ("我有3060，跑70b需要什么显卡")."""
    if intent != "which_hardware" or not card_named:
        return intent
    pats = _patterns_for(catalog)
    for card_re in pats.memory_card:
        t = card_re.sub(_keep_size, t)
    _t, legacy = _scan(t, pats.legacy, "general")
    return legacy if legacy in ("fit", "speed") else intent


# --- the numbers only some intents carry -----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class IntentDetails:
    prompt: int | None = None  # prompt tokens the question names ("prompt 8k")
    users: int | None = None  # concurrent users ("16并发")
    # "How many users can it serve?" with no number: the users are to be found, not given (users
    # stays None), so the concurrency answer gives the KV-bound maximum instead of pricing N.
    capacity: bool = False
    memory_only_gib: float | None = None  # "a 16GB GPU": the memory of a card named by nothing else
    memory_only_count: int = 1  # "两张8g的卡": how many such cards
    output: int | None = None  # tokens of reply the question names ("2000 in 500 out", "输出 500")
    # The token counts of the in/out phrase ("2k in 300 out": 2048, 300): lengths of one request, which
    # the context reader also took for contexts; the query drops them from its contexts.
    io_tokens: tuple[int, ...] = ()
    task: str | None = None  # what a model is wanted for ("for coding": "code"; read_task)
    kv_worth: bool = False  # "is q4 KV cache worth it", "q8 kv cache 值得吗" (asks_kv_worth)
    max_context: bool = False  # "how long a context can I fit", "能开多长上下文" ([max_context])
    topics: tuple[str, ...] = ()  # side questions named ([topics]): "nvlink", "ot_vs_n_cpu_moe"
    target_tps: float | None = None  # a decode speed wanted ("at least 20 tok/s", "达到 30 token/s")


def _first_number(patterns: tuple[Gated, ...], t: str) -> re.Match[str] | None:
    for pat in patterns:
        m = pat.search(t)
        if m:
            return m
    return None


def _tokens(m: re.Match[str] | None, least: int, most: int) -> int | None:
    if m is None:
        return None
    value = float(m.group(1)) * (1024 if (m.lastindex or 0) >= 2 and m.group(2) else 1)
    return int(value) if least <= value <= most else None


def _prompt_tokens(m: re.Match[str] | None) -> int | None:
    return _tokens(m, 16, MAX_PROMPT)


def _io_lengths(pats: _Patterns, t: str) -> tuple[int | None, int | None, int | None]:
    """(prompt said, prompt written as an input, output): "prompt 2000" wins over "2000 in"."""
    said = _prompt_tokens(_first_number(pats.prompt, t))
    written = _prompt_tokens(_first_number(pats.input, t))
    return said, written, _tokens(_first_number(pats.output, t), 1, MAX_OUTPUT)


MAX_TARGET_TPS = 5000.0  # a wanted speed above this is no speed anyone asks a single stream for


def _target_tps(pats: _Patterns, t: str, intent: str) -> float | None:
    """The decode speed wanted; plain "at N tok/s" only when the question asks for hardware (beside
    a card it reports a run: "my 3090 runs it at 5 tok/s")."""
    found = _first_number(pats.speed_target, t)
    if found is None and intent == "which_hardware":
        found = _first_number(pats.speed_target_weak, t)
    value = float(found.group(1)) if found else 0.0
    return value if 0.0 < value <= MAX_TARGET_TPS else None


def intent_details(raw: str, catalog: Catalog, intent: str = "general") -> IntentDetails:
    """The numbers and side questions an intent's reply uses; `intent` (the parse's) decides what
    a plain "at N tok/s" is."""
    pats = _patterns_for(catalog)
    t = clean(raw)
    users, capacity = _users(pats, t)
    count, memory = _memory_cards(pats, t)
    if memory is None:
        mem_m = _first_number(pats.memory_card, t)
        memory = float(mem_m.group(1)) if mem_m else None
    said, written, output = _io_lengths(pats, t)
    return IntentDetails(
        prompt=said if said is not None else written,
        users=users,
        capacity=capacity,
        memory_only_gib=memory if memory is not None and 1 <= memory <= 1024 else None,
        memory_only_count=count,
        output=output,
        io_tokens=tuple(n for n in (said, written, output) if n is not None) if output else (),
        task=_task(pats, t),
        kv_worth=_kv_worth(pats, t),
        max_context=bool(pats.max_context and pats.max_context.search(t)),
        topics=tuple(name for name, groups in pats.topics if all(g.search(t) for g in groups)),
        target_tps=_target_tps(pats, t, intent),
    )


def read_task(raw: str, catalog: Catalog) -> str | None:
    """The task the question wants a model for ("best model for coding": "code"), or None. Whole
    words only ("decode" is no "code"), after the look-alikes are blanked ("error code 43")."""
    return _task(_patterns_for(catalog), clean(raw))


def _task(pats: _Patterns, t: str) -> str | None:
    for name, words_re, unlike in pats.tasks:
        text = t
        for unlike_re in unlike:
            text = _blank_all(unlike_re, text)
        if words_re.search(text):
            return name
    return None


def asks_kv_worth(raw: str, catalog: Catalog) -> bool:
    """Whether the question asks if a KV cache type is worth it: a KV word and a worth word."""
    return _kv_worth(_patterns_for(catalog), clean(raw))


def _kv_worth(pats: _Patterns, t: str) -> bool:
    if pats.kv_worth is None or pats.kv_words is None:
        return False
    return bool(pats.kv_words.search(t) and pats.kv_worth.search(t))


def _users(pats: _Patterns, t: str) -> tuple[int | None, bool]:
    """(the users the question names ("16并发"), whether it asks how many instead, naming none)."""
    m = _first_number(pats.users, t)
    if m is not None:
        # A number out of range is no capacity question either: the question did name a count.
        users = int(m.group(1))
        return (users if 1 <= users <= MAX_USERS else None), False
    return None, _first_number(pats.capacity, t) is not None


def _memory_cards(pats: _Patterns, t: str) -> tuple[int, float | None]:
    """(count, GB each) of cards named only by their memory ("两张8g的卡"); (1, None) when none is."""
    m = _first_number(pats.memory_cards, t)
    if m is None:
        return 1, None
    n = m.group("n")
    count = int(n) if n.isdigit() else pats.count_words.get(n)
    if count is None or not 1 <= count <= 64:
        return 1, None
    return count, float(m.group("g"))


def typical_card(memory_gib: float, catalog: Catalog, laptop: bool = False) -> str | None:
    """The catalog card a question naming only a memory size is answered for: intents.toml
    [typical_card] ([typical_laptop_card] when a laptop was said), the largest key not above the size."""
    table = intents_table(catalog).get("typical_laptop_card" if laptop else "typical_card", {})
    sizes = sorted((float(k), str(v)) for k, v in table.items() if str(v) in catalog.gpus)
    below = [gid for size, gid in sizes if size <= memory_gib]
    if below:
        return below[-1]
    return sizes[0][1] if sizes else None
