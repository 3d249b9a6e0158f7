"""The -ts split of a layer split that keeps some MoE experts in RAM (`--n-cpu-moe N`).

llama.cpp hands layers to the cards by count (-ts: each card's share of the repeating layers, in
order) and `--n-cpu-moe N` moves the routed experts of the *first* N layers to RAM. With an even
split the first card gets the layers whose experts left, the last card every layer that kept them:
GLM-4.5-Air on 2x 3090 with --n-cpu-moe 20 -ts 1,1 puts ~31 GB on the second 24 GB card and the
load fails (a known trap: lmstudio-bug-tracker #840, "rebalance the tensor split"). The split below
gives each card a run of layers whose bytes (the weights it keeps plus its share of the KV cache)
are in proportion to the card's memory, written as layer counts, which -ts takes as ratios: counts of
llama.cpp's n_layer + 1 slots, the output layer the last card's extra one, so it places exactly these
(layer_packing). A split whose cards can't each hold their run gives way to one that packs.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import accumulate

from core.estimator.layer_packing import CardSplit, choose_split, layer_loads, slot_counts, with_output_slot
from core.estimator.weights import WeightBreakdown


def proportional_counts(
    loads: Sequence[float], capacities: Sequence[float], last_card_bytes: float = 0.0
) -> tuple[int, ...]:
    """Consecutive layers per card, each card's run of loads ending where the running total is
    nearest its share of all of them (shares in proportion to `capacities`, the last card's
    `last_card_bytes` counted in: llama.cpp puts the output head there); every card keeps at least
    one layer, and the last takes what is left."""
    cards = len(capacities)
    if cards < 2 or len(loads) < cards:
        return ()
    prefix = list(accumulate(loads, initial=0.0))
    room = sum(capacities)
    counts: list[int] = []
    start, share = 0, 0.0
    for card in range(cards - 1):
        share += (prefix[-1] + last_card_bytes) * capacities[card] / room
        last = len(loads) - (cards - 1 - card)  # every card still to come keeps a layer
        end = start + 1
        while end < last and prefix[end] + loads[end] / 2 <= share:
            end += 1
        counts.append(end - start)
        start = end
    counts.append(len(loads) - start)
    return tuple(counts)


def card_split(
    weights: WeightBreakdown,
    kv_bytes: float,
    n_cpu_moe: int,
    shares: Sequence[float],
    usable: Sequence[float],
    per_card: float,
    smooth: float,
) -> CardSplit:
    """The layer split a command writes (-ts in slots: layer_packing), the first `n_cpu_moe` layers'
    experts in RAM. Preferred: with some experts in RAM, the split whose bytes follow `shares` (the
    even -ts would send every layer that kept its experts to the last card); otherwise the -ts of
    `shares` itself (even, or each card's memory), as llama.cpp places it. Either stands where every
    card holds it; else the balanced packing that does (layer_packing.choose_split)."""
    layers = layer_loads(weights, kv_bytes, n_cpu_moe)
    n = layers.n_layers
    if 0 < n_cpu_moe < n:
        preferred = with_output_slot(proportional_counts(layers.loads, shares, layers.output))
    else:
        preferred = slot_counts(shares, n + 1)
    return choose_split(layers, usable, per_card, smooth, preferred)


# `--n-cpu-moe N` counts layers from the first, the dense ones with no experts too (DeepSeek V3's
# first 3, GLM-4.5-Air's first, every other Llama 4 Maverick layer): the estimator counts the MoE
# layers whose experts are in RAM (k), the command the first N layers that hold them. Saying k as N
# would leave the experts of k - (MoE layers among the first k) layers more on the cards than priced.


def first_layers_holding(layer_expert_bytes: Sequence[int], moe_layers: int) -> int:
    """The N of `--n-cpu-moe N` whose first N layers hold `moe_layers` layers with routed experts
    (every layer when they are all of them: the caller then says --cpu-moe)."""
    if moe_layers <= 0:
        return 0
    seen = 0
    for index, experts in enumerate(layer_expert_bytes):
        seen += experts > 0
        if seen >= moe_layers:
            return index + 1
    return len(layer_expert_bytes)


def moe_layers_within(layer_expert_bytes: Sequence[int], first: int) -> int:
    """How many of the first `first` layers have routed experts (`--n-cpu-moe N` read back)."""
    return sum(1 for experts in layer_expert_bytes[: max(first, 0)] if experts > 0)


def moe_layer_count(layer_expert_bytes: Sequence[int]) -> int:
    """Layers with routed experts: all but the leading dense ones, or every `moe_layer_step`-th."""
    return sum(1 for experts in layer_expert_bytes if experts > 0)
