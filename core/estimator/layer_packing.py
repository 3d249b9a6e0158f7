"""Whole layers per card: what a llama.cpp / ik_llama.cpp layer split (`-sm layer`, the default on
several cards) can load, and the -ts that loads it.

llama.cpp hands the cards n_layer + 1 slots, the repeating layers then the output layer, by the -ts
ratios: slot il goes to the first card whose running share of the ratios exceeds il / (n_layer + 1)
(src/llama-model.cpp, llama_model::load_tensors: `std::upper_bound(splits, ..., float(il -
i_gpu_start)/act_gpu_layers)` with act_gpu_layers = min(-ngl, n_layer + 1); "assign the output layer"
is the same lookup at il = n_layer, so the last card gets it). The input embeddings stay in RAM ("there
is very little benefit to offloading the input layer, so always keep it on the CPU"): nothing extra
sits on the first card. ik_llama.cpp (src/llama.cpp, llm_load_tensors) does the same arithmetic. Each
layer's KV cache sits on its layer's card, and every card allocates a compute buffer of its own.

So a card holds whole layers. DeepSeek-V3 Q4_K_M's MoE layers weigh 6-7 GiB: a 48 GB card holds 7 of
them, eight cards 56 of the 61 layers, though their memory summed (380 GiB) exceeds the file's (376).
The pooled check (sum of bytes <= sum of memory) is necessary, not enough: this is the rest of it.

Layers are placed in order, so whether they fit is decided by filling each card as far as it goes
(`greedy_counts`: taking more on an earlier card never leaves a later one worse off). The grid asks
this of many rows and every way out, so a row far from its cards' memory is decided by sums alone
(prefix sums per model x quant, cached); one near it builds its running bytes once (O(layers), C-level
maps, cached per KV share) and ends each card's run by bisection (O(cards x log layers)).
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate, chain, repeat
from operator import add, mul, sub
from typing import Literal, NamedTuple

from core.estimator.weights import WeightBreakdown

FitStatus = Literal["smooth", "tight", "no_fit"]

# What llama.cpp itself computes in float32; the bound a slot sits on exactly (slot 31 of 62 on an even
# 8-card split: 0.5) goes to the next card there, and here with this margin against float64 noise.
_EXACT = 1e-9
# Steps of the search for the lowest fill every card can keep to (`balanced_counts`): 1/4096 of the
# range between the pooled fill and a full card, finer than one layer of any model.
_BISECT_STEPS = 12


@dataclass(frozen=True, slots=True)
class _Prefix:
    """One model x quant's layers as prefix sums (index i: the first i layers), built once."""

    weights: WeightBreakdown  # kept alive so the cache's id() key can't be reused
    layer_bytes: tuple[float, ...]  # running sum of the layers' bytes
    expert_bytes: tuple[float, ...]  # running sum of their routed experts' bytes
    kept_max: tuple[float, ...]  # the heaviest of the first i layers with its experts in RAM
    full_max: tuple[float, ...]  # the heaviest of layers i.. with their experts on the card
    output: float  # the output head and final norm: every GPU byte outside the repeating layers


_PREFIX: dict[int, _Prefix] = {}


def _prefix(weights: WeightBreakdown) -> _Prefix:
    hit = _PREFIX.get(id(weights))
    if hit is not None and hit.weights is weights:
        return hit
    sizes, experts = weights.layer_bytes, weights.layer_expert_bytes
    kept = [float(b - e) for b, e in zip(sizes, experts, strict=True)]
    found = _Prefix(
        weights,
        tuple(accumulate((float(b) for b in sizes), initial=0.0)),
        tuple(accumulate((float(e) for e in experts), initial=0.0)),
        tuple(accumulate(kept, max, initial=0.0)),
        (*reversed(tuple(accumulate((float(b) for b in reversed(sizes)), max))), 0.0),
        float(weights.gpu_bytes_full_offload) - float(sum(sizes)),
    )
    if len(_PREFIX) >= 65536:
        _PREFIX.clear()
    _PREFIX[id(weights)] = found
    return found


class Layers(NamedTuple):
    """The bytes a layer split places, slot by slot: each repeating layer's (its weights, less its
    routed experts when they sit in RAM, plus its share of the KV cache), then the output layer's.
    A NamedTuple, not a frozen dataclass: one is built for many rows and way outs of every grid."""

    prefix: _Prefix
    n_layers: int  # repeating layers
    share: float  # each layer's share of the KV cache
    n_cpu_moe: int  # the first N layers' routed experts are in RAM
    output: float
    total: float  # every slot's bytes: the pooled figure without the compute buffers
    largest: float  # the heaviest slot (a bound: less than this much room is lost on each card)

    def upto(self, j: int) -> float:
        """Bytes of the first `j` repeating layers."""
        p = self.prefix
        return p.layer_bytes[j] - p.expert_bytes[min(j, self.n_cpu_moe)] + j * self.share

    @property
    def loads(self) -> tuple[float, ...]:
        """Each repeating layer's bytes (a command's split and the tests read them one by one)."""
        return tuple(self.upto(i + 1) - self.upto(i) for i in range(self.n_layers))


@dataclass(frozen=True, slots=True)
class CardSplit:
    """A layer split over the cards: the slots each card takes (the -ts written in layers; the last
    card's count includes the output layer, so llama.cpp places exactly these), the bytes each then
    holds beside its compute buffer, and whether every card holds them."""

    counts: tuple[int, ...]
    held: tuple[float, ...]
    status: FitStatus  # smooth: every card within smooth_fraction of its memory; tight: within it


def _sums(p: _Prefix, n_cpu_moe: int, kv_bytes: float) -> tuple[int, int, float, float, float]:
    """(layers, first N with experts in RAM, KV share per layer, every slot's bytes, heaviest slot)."""
    n = len(p.layer_bytes) - 1
    first = max(0, min(n_cpu_moe, n))
    share = kv_bytes / n if n else 0.0
    total = p.layer_bytes[n] - p.expert_bytes[first] + kv_bytes + p.output
    largest = max(p.kept_max[first] + share, p.full_max[first] + share, p.output)
    return n, first, share, total, largest


def layer_loads(weights: WeightBreakdown, kv_bytes: float, n_cpu_moe: int = 0) -> Layers:
    """The slots of these weights and KV cache, the routed experts of the first `n_cpu_moe` layers in
    RAM (`--n-cpu-moe N` counts layers from the first, dense ones too). O(1) once the model x quant's
    prefix sums are built."""
    p = _prefix(weights)
    n, first, share, total, largest = _sums(p, n_cpu_moe, kv_bytes)
    return Layers(p, n, share, first, p.output, total, largest)


def slot_counts(ratios: Sequence[float], slots: int) -> tuple[int, ...]:
    """The slots llama.cpp gives each card for these -ts ratios: slot il on the first card whose
    running share exceeds il / slots, so card c ends at ceil(slots x its running share)."""
    total = float(sum(ratios))
    if total <= 0 or not ratios:
        return ()
    counts: list[int] = []
    running, placed = 0.0, 0
    for ratio in ratios:
        running += ratio
        end = min(slots, math.ceil(running * slots / total - _EXACT))
        counts.append(max(end - placed, 0))
        placed = max(end, placed)
    counts[-1] += slots - placed  # float rounding never leaves a slot unplaced: the last card takes it
    return tuple(counts)


def held_bytes(layers: Layers, counts: Sequence[int]) -> tuple[float, ...]:
    """What each card holds with these slot counts (the last slot is the output layer)."""
    held: list[float] = []
    start, n = 0, layers.n_layers
    for count in counts:
        end = start + count
        held.append(
            layers.upto(min(end, n)) - layers.upto(min(start, n)) + (layers.output if end > n else 0.0)
        )
        start = end
    return tuple(held)


# `_running` per (prefix, experts in RAM, KV share): a row's verdict checks two levels and its ways
# out the same weights again; the prefix is kept alive so its id() can't be reused.
_RUNNING: dict[tuple[int, int, float], tuple[_Prefix, list[float]]] = {}


def _running(p: _Prefix, n_cpu_moe: int, share: float) -> list[float]:
    """Bytes of the first j repeating layers, for every j (`Layers.upto` for all of them at once):
    built by C-level maps, the routed experts of the first `n_cpu_moe` layers left out."""
    key = (id(p), n_cpu_moe, share)
    hit = _RUNNING.get(key)
    if hit is not None and hit[0] is p:
        return hit[1]
    n = len(p.layer_bytes) - 1
    first = max(0, min(n_cpu_moe, n))
    experts = chain(p.expert_bytes[: first + 1], repeat(p.expert_bytes[first], n - first))
    kv = map(mul, range(n + 1), repeat(share))
    running = list(map(add, map(sub, p.layer_bytes, experts), kv))
    if len(_RUNNING) >= 4096:
        _RUNNING.clear()
    _RUNNING[key] = (p, running)
    return running


def _greedy(running: Sequence[float], output: float, rooms: Sequence[float]) -> tuple[int, ...] | None:
    """Slots per card filling each card in turn as far as it goes (the end of its run found by
    bisection over the running bytes), the output layer on the last; None when the last card can't
    take what is left: then no split in order fits."""
    n = len(running) - 1
    counts: list[int] = []
    i = 0
    for room in rooms[:-1]:
        end = bisect_right(running, running[i] + room, i) - 1  # the last j whose run fits the card
        end = i if end < i else end
        counts.append(end - i)
        i = end
    if running[n] - running[i] + output > rooms[-1]:
        return None
    counts.append(n - i + 1)
    return tuple(counts)


def greedy_counts(loads: Sequence[float], output: float, rooms: Sequence[float]) -> tuple[int, ...] | None:
    """`_greedy` over a plain list of layer loads."""
    return _greedy(tuple(accumulate(loads, initial=0.0)), output, rooms)


def _rooms(usable: Sequence[float], per_card: float, level: float) -> list[float]:
    """Each card's room for layers at `level` of its memory, its compute buffer (and share of the
    framework's own allocations) kept."""
    return [u * level - per_card for u in usable]


def layer_fits(
    weights: WeightBreakdown,
    kv_bytes: float,
    usable: Sequence[float],
    per_card: float,
    n_cpu_moe: int = 0,
    level: float = 1.0,
) -> bool:
    """Whether some layer split of these weights and KV keeps every card of `usable` bytes within
    `level` of its memory, `per_card` bytes of compute buffer (and framework allocations) on each: what
    a way out checks beside the pooled sum. Decided by the sums where they can (over the rooms summed:
    no; spare room past what each card can lose, less than its next slot: yes), else by filling the
    cards in turn over the running bytes (cached per weights x experts in RAM x KV share)."""
    p = _prefix(weights)  # `_sums` inlined below: this is the verdict's and every way out's hot path
    n = len(p.layer_bytes) - 1
    first = n_cpu_moe if 0 <= n_cpu_moe <= n else (0 if n_cpu_moe < 0 else n)
    total = p.layer_bytes[n] - p.expert_bytes[first] + kv_bytes + p.output
    rooms = [u * level - per_card for u in usable]
    room = sum(rooms)
    if total > room:
        return False  # the pooled sum already fails: no split can
    share = kv_bytes / n if n else 0.0
    kept, full = p.kept_max[first], p.full_max[first]
    largest = (kept if kept > full else full) + share
    largest = largest if largest > p.output else p.output
    if total + (len(rooms) - 1) * largest <= room and min(rooms) >= largest:
        return True
    return _greedy(_running(p, first, share), p.output, rooms) is not None


def layer_status(
    weights: WeightBreakdown,
    kv_bytes: float,
    usable: Sequence[float],
    per_card: float,
    smooth: float,
    n_cpu_moe: int = 0,
) -> FitStatus:
    """The verdict of a layer split: "smooth" when some split keeps every card within `smooth` of its
    memory, "tight" within it, else "no_fit" (`layer_fits` at each level)."""
    if layer_fits(weights, kv_bytes, usable, per_card, n_cpu_moe, smooth):
        return "smooth"
    return "tight" if layer_fits(weights, kv_bytes, usable, per_card, n_cpu_moe) else "no_fit"


def balanced_counts(
    layers: Layers, usable: Sequence[float], per_card: float, level: float
) -> tuple[int, ...] | None:
    """The split whose fullest card is as empty as it can be, at most `level` of its memory: the
    lowest fill every card keeps to, searched by halving (each step one greedy pass)."""

    running = _running(layers.prefix, layers.n_cpu_moe, layers.share)  # one walk for every step

    def packed(fill: float) -> tuple[int, ...] | None:
        return _greedy(running, layers.output, _rooms(usable, per_card, fill))

    if packed(level) is None:
        return None
    low = (layers.total + per_card * len(usable)) / sum(usable)  # no split fills the cards less
    high = level
    for _ in range(_BISECT_STEPS):
        mid = (low + high) / 2
        if packed(mid) is None:
            low = mid
        else:
            high = mid
    return packed(high)


def choose_split(
    layers: Layers, usable: Sequence[float], per_card: float, smooth: float, preferred: tuple[int, ...]
) -> CardSplit:
    """The split a command writes: `preferred` (the even or memory-proportional -ts, or the bytes-
    proportional one of an experts-in-RAM split) where it keeps every card as comfortable as any split
    can, else the balanced one that does; "no_fit" (with `preferred`) when none fits."""
    for level, status in ((smooth, "smooth"), (1.0, "tight")):
        rooms = _rooms(usable, per_card, level)
        if preferred:
            held = held_bytes(layers, preferred)
            if all(h <= r for h, r in zip(held, rooms, strict=True)):
                return CardSplit(preferred, held, status)  # type: ignore[arg-type]
        counts = balanced_counts(layers, usable, per_card, level)
        if counts is not None:
            return CardSplit(counts, held_bytes(layers, counts), status)  # type: ignore[arg-type]
    return CardSplit(preferred, held_bytes(layers, preferred) if preferred else (), "no_fit")


def with_output_slot(counts: Sequence[int]) -> tuple[int, ...]:
    """Counts of the repeating layers as -ts slots: the output layer is the last card's extra slot
    (llama.cpp divides n_layer + 1 slots by the ratios, so counts summing to n_layer shift a layer)."""
    return (*counts[:-1], counts[-1] + 1) if counts else ()


def card_usable(memories: Sequence[float], usable_total: float, cards: int) -> tuple[float, ...]:
    """Bytes each card lets a program allocate: `memories` (GiB, llama.cpp's order) each less an equal
    share of what the setup keeps back (driver context and display reserve: memory.usable_memory), or
    `cards` equal shares of `usable_total` when the cards are alike."""
    if len(memories) != cards:
        return (usable_total / cards,) * cards
    kept = (sum(memories) * 2**30 - usable_total) / cards
    return tuple(m * 2**30 - kept for m in memories)


def worse(a: FitStatus, b: FitStatus) -> FitStatus:
    """The less comfortable of two verdicts."""
    order = ("smooth", "tight", "no_fit")
    return a if order.index(a) >= order.index(b) else b
