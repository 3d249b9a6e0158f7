"""Read a chat question ("双3090 跑 llama3 70b q4 速度") into a `ParsedQuestion`.

The parser peels off what has a fixed shape first (context lengths, quant codes, OS and framework
words, intent phrases, card counts), blanking each match so it cannot be misread later ("32k" is a
context, never a model size). What remains is scanned once, left to right, for the longest run of
words that is an exact card or model name; a card name takes a memory size glued to it ("V100 32G")
and a count standing next to it ("双", "2x", "x2", "two ... 4090s"). Leftover model-like words go
to the fuzzy model resolver. Nothing here raises on odd input.
"""

from __future__ import annotations

from dataclasses import replace
from functools import lru_cache

from core.catalog.loader import Catalog
from core.catalog.platforms import OsFamily
from core.understanding.asked_setup import asked_cards, without_server_names
from core.understanding.backend_words import read_backends
from core.understanding.card_reading import (
    _backends_compared,
    _cards_read_fully,
    _cards_with_counts,
    _compared,
    _find_cards,
    _is_laptop,
    _mac_by_its_ram,
    _mixed_total,
    _ram_read_as_card,
    _size_typed,
    _total_memory,
    _unified_ram,
)
from core.understanding.cpu_words import read_cpu
from core.understanding.family_words import fitting_members_first, machine_room, without_negated_variants
from core.understanding.intent import read_intent, with_card
from core.understanding.model_reading import _find_model
from core.understanding.normalize import (
    clean,
    pieces,
)
from core.understanding.parse_fields import _oses_compared, _read_classified_counts, _read_os, _read_setup
from core.understanding.parse_patterns import (
    _Patterns,
    _patterns_for,
    _piece,
    _without_cpu_models,
    name_words_kept,
)
from core.understanding.question import ParsedCard, ParsedQuestion
from core.understanding.resolution import TEXTS_REMEMBERED
from core.understanding.setup_words import Note

__all__ = ["ParsedCard", "ParsedQuestion", "parse_question"]

REMEMBERED_TEXT_CHARS = 1000


def parse_question(text: str, catalog: Catalog) -> ParsedQuestion:
    raw = text if isinstance(text, str) else str(text)
    if len(raw) <= REMEMBERED_TEXT_CHARS:
        return _remembered(raw, catalog)
    return _read(raw, catalog)


@lru_cache(maxsize=TEXTS_REMEMBERED)
def _remembered(raw: str, catalog: Catalog) -> ParsedQuestion:
    return _read(raw, catalog)


def forget_text_readings() -> None:
    """Forget the readings remembered by question text (benchmarks of questions never seen)."""
    _remembered.cache_clear()


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
    # A CPU priced as its family's typical part (cpus.toml [[platform]]): the reply says so.
    notes = (*parsed.notes, ("cpu_platform", got.typed)) if got.platform else parsed.notes
    return replace(parsed, cpu=got.cpu_id, cpu_sockets=got.sockets, host_ram_gib=ram, notes=notes)


def _os_compared(t: str, pats: _Patterns, os_name: OsFamily | None, notes: list[Note]) -> OsFamily | None:
    """Windows and Linux both named: priced on Linux, where it runs best, with a note saying what
    Windows changes (reply.note.os_compare)."""
    if not _oses_compared(t, pats):
        return os_name
    notes.append(("os_compare", ""))
    return "linux"


def _parse(raw: str, catalog: Catalog) -> ParsedQuestion:
    pats = _patterns_for(catalog)
    index = pats.index
    vocab = index.vocab
    # Backend words first, blanked, so "vulkan" / "hip" never join a card or model name.
    cleaned = clean(raw)
    t, backends = read_backends(cleaned, catalog)
    t, setup = _read_setup(t, pats, catalog)
    # A Mac counted as machines ("three Mac Studios") had its OS word blanked with the count.
    os_name = _read_os(t, pats) or (_read_os(setup.unblanked, pats) if setup.machines > 1 else None)
    t, intent = read_intent(t, catalog)
    t, classified = _read_classified_counts(t, pats)
    t = without_negated_variants(_without_cpu_models(t, index))

    ps = name_words_kept(
        [_piece(w, s, e, index) for w, s, e in pieces(t) if w not in vocab.card_words], index
    )
    found = without_server_names(setup.unblanked, ps, _find_cards(setup.unblanked, ps, pats, catalog), vocab)
    notes = [*setup.notes, *(c.note for c in classified if c.note)]
    os_name = _os_compared(t, pats, os_name, notes)
    found, cards = _cards_with_counts(t, ps, found, classified, pats, notes, setup.unblanked)
    cards, other_setup = asked_cards(setup.unblanked, ps, found, cards, vocab)
    if other_setup is not None:
        notes.append(other_setup)
        intent = "fit" if intent in ("general", "speed") else intent  # "能不能行", "would X work"
    cards = _cards_read_fully(cards, ps, index, catalog, setup.laptop, notes)
    cards, host_gib = _unified_ram(cards, setup.host.gib, catalog)
    cards, host_gib = _mac_by_its_ram(cards, host_gib, catalog)
    cards = _total_memory(cards, ps, catalog)
    cards = _mixed_total(cards, catalog)
    cards, host_gib = _ram_read_as_card(cards, host_gib, catalog)
    intent = _compared(setup.unblanked, ps, found, cards, intent, catalog)
    intent = with_card(intent, bool(cards), setup.unblanked, catalog)
    intent = _backends_compared(cleaned, backends, intent, index)
    first = cards[0] if cards else None

    model = _find_model(ps, index, catalog, pats, t)
    if first is not None:
        gpu_row = catalog.gpus.get(first.res.best_id or "")
        memory = first.res.memory_gib or (gpu_row.memory_gib if gpu_row else None)
        room = machine_room(first.res.best_id, first.count, memory, host_gib, catalog)
        model = fitting_members_first(model, memory, _size_typed(ps) is not None, catalog, room)
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
        cpu_moe_layers=setup.flags.cpu_moe_layers,
        gpu_memory_utilization=setup.flags.gpu_memory_utilization,
        split_mode=setup.split_mode,
        link=setup.link,
        ubatch=setup.flags.ubatch,
    )
