"""Approved measurements ("anchors") indexed for the reply: exact matches and the nearest ones.

An anchor is a `Submission` with status "approved": a community run (credited to its submitter) or
a published number (credited to its source). The command layer keeps one `AnchorIndex` in memory
and swaps it for `index.with_added(sub)` / `index.without(id)` after an approve or withdraw: an
index never changes after it is built, so a reply being rendered on another thread always sees one
consistent state, and `version` (unique per state) lets reply caches notice the swap.
"""

from __future__ import annotations

import itertools
import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from core.catalog.loader import Catalog
from core.catalog.sections import sections
from core.storage.records import Origin, Submission

Combo = tuple[str, int, str]  # (gpu_id, gpu_count, model_id)
Relation = Literal["other_count", "same_gpu", "same_model"]

# Every index state gets its own number, even across instances, so a cache keyed on it can never
# confuse an old index with a new one built from a different list.
_VERSIONS = itertools.count(1)


@dataclass(frozen=True, slots=True)
class Credit:
    """Who to thank for a run: the submitter's display name, or the short label of the source."""

    name: str
    origin: Origin
    date: str  # "YYYY-MM" (community: when submitted; published: the source's date as printed)
    url: str | None = None  # published: where the number was printed


@dataclass(frozen=True, slots=True)
class AnchorSummary:
    """The runs of one card x count x model x quant, as one line of a reply shows them."""

    gpu_id: str
    gpu_count: int
    model_id: str
    quant: str
    count: int
    median_decode: float
    low_decode: float
    high_decode: float
    median_prefill: float | None
    credits: tuple[Credit, ...]  # newest first, one per distinct name
    frameworks: tuple[str, ...]  # most used first
    contexts: tuple[
        int, ...
    ]  # contexts (or depths, when only that was given) that were stated, most used first
    anchor_ids: tuple[int, ...]
    community: int  # how many of the runs are community ones
    memory_gib: float | None = None  # per card, as the runs recorded it (a modded 48 GB 4090)


@dataclass(frozen=True, slots=True)
class NearAnchor:
    """Runs on a setup close to the asked one, and how it differs."""

    relation: Relation
    distance: float  # smaller is closer; comparable within one relation
    summary: AnchorSummary


def anchor_date(sub: Submission) -> str:
    if sub.origin == "published" and sub.source_date:
        return sub.source_date
    return sub.created_at.strftime("%Y-%m")


def credit_of(sub: Submission) -> Credit:
    url = sub.source if sub.origin == "published" else None
    return Credit(sub.submitter.name, sub.origin, anchor_date(sub), url)


def _most_used(values: Iterable[Any]) -> tuple[Any, ...]:
    counts: dict[Any, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return tuple(sorted(counts, key=lambda v: -counts[v]))


def _run_context(sub: Submission) -> int:
    m = sub.measurement
    return m.context or m.depth or 0


def summarize(anchors: Sequence[Submission]) -> AnchorSummary:
    """One summary for runs of one card x count x model x quant (the caller groups them)."""
    first = anchors[0].measurement
    decode = sorted(a.measurement.decode_tps for a in anchors)
    prefill = [a.measurement.prefill_tps for a in anchors if a.measurement.prefill_tps]
    newest = sorted(anchors, key=lambda a: (anchor_date(a), a.id), reverse=True)
    credits: list[Credit] = []
    for a in newest:
        c = credit_of(a)
        if all(c.name != seen.name or c.origin != seen.origin for seen in credits):
            credits.append(c)
    return AnchorSummary(
        gpu_id=first.gpu_id,
        gpu_count=first.gpu_count,
        model_id=first.model_id,
        quant=first.quant,
        count=len(anchors),
        median_decode=round(statistics.median(decode), 1),
        low_decode=decode[0],
        high_decode=decode[-1],
        median_prefill=round(statistics.median(prefill), 0) if prefill else None,
        credits=tuple(credits),
        frameworks=_most_used(a.measurement.framework for a in anchors),
        contexts=_most_used(c for c in (_run_context(a) for a in anchors) if c > 0),
        anchor_ids=tuple(a.id for a in newest),
        community=sum(1 for a in anchors if a.origin == "community"),
        memory_gib=first.memory_gib,
    )


def _combo(sub: Submission) -> Combo:
    m = sub.measurement
    return (m.gpu_id, m.gpu_count, m.model_id)


def _log_ratio(a: float, b: float) -> float:
    return abs(math.log(a / b)) if a > 0 and b > 0 else math.inf


@dataclass(frozen=True, slots=True)
class _Asked:
    """The setup a reply is about: card, count, model and per-card memory."""

    gpu_id: str
    gpu_count: int
    model_id: str
    memory_gib: float | None


def _per_quant(subs: Sequence[Submission]) -> tuple[AnchorSummary, ...]:
    """Runs summarized per quant, most runs first."""
    by_quant: dict[str, list[Submission]] = {}
    for sub in subs:
        by_quant.setdefault(sub.measurement.quant, []).append(sub)
    groups = sorted(by_quant.values(), key=lambda g: (-len(g), g[0].measurement.quant))
    return tuple(summarize(g) for g in groups)


def _pick(subs: Sequence[Submission], quant: str | None) -> AnchorSummary:
    """The asked quant's runs of a setup when it has them, else its most measured quant's."""
    groups = _per_quant(subs)
    return next((g for g in groups if g.quant == quant), groups[0])


class AnchorIndex:
    """Anchors by id, by card x count x model, by card and by model; lookups are dict reads.

    Built once from the approved submissions (anything else in the list is ignored). Summaries and
    nearest-lists are memoized per index: an index never changes, so they never go stale.
    """

    __slots__ = ("catalog", "version", "_by_id", "_by_combo", "_by_gpu", "_by_model", "_memo")

    def __init__(self, anchors: Iterable[Submission], catalog: Catalog) -> None:
        self.catalog = catalog
        self.version = next(_VERSIONS)
        self._by_id: dict[int, Submission] = {}
        self._by_combo: dict[Combo, tuple[Submission, ...]] = {}
        self._by_gpu: dict[str, tuple[Combo, ...]] = {}
        self._by_model: dict[str, tuple[Combo, ...]] = {}
        self._memo: dict[tuple[Any, ...], Any] = {}
        grouped: dict[Combo, list[Submission]] = {}
        for sub in anchors:
            if sub.status != "approved":
                continue
            self._by_id[sub.id] = sub
            grouped.setdefault(_combo(sub), []).append(sub)
        for combo, subs in grouped.items():
            self._set_combo(combo, tuple(subs))

    @classmethod
    def from_submissions(cls, anchors: Iterable[Submission], catalog: Catalog) -> AnchorIndex:
        """The same as the constructor; reads well where storage hands over its approved rows."""
        return cls(anchors, catalog)

    # --- building -------------------------------------------------------------------------------

    def _set_combo(self, combo: Combo, subs: tuple[Submission, ...]) -> None:
        gpu_id, _, model_id = combo
        had = combo in self._by_combo
        if subs:
            self._by_combo[combo] = subs
            if not had:
                self._by_gpu[gpu_id] = (*self._by_gpu.get(gpu_id, ()), combo)
                self._by_model[model_id] = (*self._by_model.get(model_id, ()), combo)
        elif had:
            del self._by_combo[combo]
            self._by_gpu[gpu_id] = tuple(c for c in self._by_gpu[gpu_id] if c != combo)
            self._by_model[model_id] = tuple(c for c in self._by_model[model_id] if c != combo)

    def _copy(self) -> AnchorIndex:
        # Shallow copies of the dicts: the tuples and submissions inside are shared, so an update
        # costs O(number of keys), not a rebuild of every group.
        new = AnchorIndex.__new__(AnchorIndex)
        new.catalog = self.catalog
        new.version = next(_VERSIONS)
        new._by_id = dict(self._by_id)
        new._by_combo = dict(self._by_combo)
        new._by_gpu = dict(self._by_gpu)
        new._by_model = dict(self._by_model)
        new._memo = {}
        return new

    def with_added(self, sub: Submission) -> AnchorIndex:
        """A new index with `sub` added (or replaced, same id); `sub` must be approved to count."""
        new = self.without(sub.id)
        if sub.status != "approved":
            return new
        if new is self:
            new = self._copy()
        new._by_id[sub.id] = sub
        combo = _combo(sub)
        new._set_combo(combo, (*new._by_combo.get(combo, ()), sub))
        return new

    def without(self, anchor_id: int) -> AnchorIndex:
        """A new index without that anchor (after a withdraw); the same index when it isn't there."""
        old = self._by_id.get(anchor_id)
        if old is None:
            return self
        new = self._copy()
        del new._by_id[anchor_id]
        combo = _combo(old)
        new._set_combo(combo, tuple(s for s in new._by_combo[combo] if s.id != anchor_id))
        return new

    # --- reading --------------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._by_id)

    def __contains__(self, anchor_id: object) -> bool:
        return anchor_id in self._by_id

    def get(self, anchor_id: int) -> Submission | None:
        return self._by_id.get(anchor_id)

    def all(self) -> tuple[Submission, ...]:
        return tuple(self._by_id.values())

    def on_gpu(self, gpu_id: str, origin: Origin | None = None) -> tuple[Submission, ...]:
        """Every anchor on this card (any model, any count), optionally of one origin."""
        key = ("on_gpu", gpu_id, origin)
        if key not in self._memo:
            subs = [s for c in self._by_gpu.get(gpu_id, ()) for s in self._by_combo[c]]
            self._memo[key] = tuple(s for s in subs if origin is None or s.origin == origin)
        return self._memo[key]  # type: ignore[no-any-return]

    def card_memory(self, sub: Submission) -> float | None:
        """The per-card memory a run was on: as recorded, else the catalog card's."""
        gpu = self.catalog.gpus.get(sub.measurement.gpu_id)
        return sub.measurement.memory_gib or (gpu.memory_gib if gpu else None)

    def _same_memory(self, gpu_id: str, a: float | None, b: float | None) -> bool:
        """One card: unified-memory chips run a model the same whatever their size; a discrete card
        of another size (the modded 48 GB 4090 for the 24 GB one) is another card."""
        gpu = self.catalog.gpus.get(gpu_id)
        if a is None or b is None or gpu is None or gpu.unified_memory:
            return True
        return abs(a - b) <= 0.05 * max(a, b)

    def exact(
        self, gpu_id: str, gpu_count: int, model_id: str, memory_gib: float | None = None
    ) -> tuple[Submission, ...]:
        """The anchors for exactly this card, card count and model (any quant); with `memory_gib`
        (per card), only the runs on a card of that size."""
        subs = self._by_combo.get((gpu_id, gpu_count, model_id), ())
        if memory_gib is None:
            return subs
        return tuple(s for s in subs if self._same_memory(gpu_id, self.card_memory(s), memory_gib))

    def summaries(
        self, gpu_id: str, gpu_count: int, model_id: str, memory_gib: float | None = None
    ) -> tuple[AnchorSummary, ...]:
        """The exact anchors summarized per quant, most runs first (a median across quants would mix
        a Q4 and an F16 speed into a number nobody measured)."""
        key = ("summaries", gpu_id, gpu_count, model_id, memory_gib)
        if key not in self._memo:
            self._memo[key] = _per_quant(self.exact(gpu_id, gpu_count, model_id, memory_gib))
        return self._memo[key]  # type: ignore[no-any-return]

    def nearest(
        self,
        gpu_id: str,
        gpu_count: int,
        model_id: str,
        limit: int = 3,
        quant: str | None = None,
        memory_gib: float | None = None,
    ) -> tuple[NearAnchor, ...]:
        """Related runs, closest first: the same card and model on a close card count; the same card
        (of the asked memory) with a model of the same kind and similar size; the same model on a
        close card (catalogs/anchors.toml [nearest]). The two kinds alternate so a reply shows one of
        each; nothing related, nothing shown. `quant` picks which quant's runs stand for a setup when
        it has several (the asked one when present)."""
        key = ("nearest", gpu_id, gpu_count, model_id, limit, quant, memory_gib)
        if key not in self._memo:
            gpu = self.catalog.gpus.get(gpu_id)
            memory = memory_gib or (gpu.memory_gib if gpu else None)
            self._memo[key] = self._nearest(_Asked(gpu_id, gpu_count, model_id, memory), limit, quant)
        return self._memo[key]  # type: ignore[no-any-return]

    def _groups(self, combos: Iterable[Combo]) -> list[tuple[Combo, float | None, list[Submission]]]:
        """The runs of each combination split by per-card memory (one group per card size)."""
        out: list[tuple[Combo, float | None, list[Submission]]] = []
        for combo in combos:
            by_memory: dict[float | None, list[Submission]] = {}
            for sub in self._by_combo.get(combo, ()):
                mem = self.card_memory(sub)
                found = next((m for m in by_memory if self._same_memory(combo[0], m, mem)), mem)
                by_memory.setdefault(found, []).append(sub)
            out.extend((combo, mem, subs) for mem, subs in by_memory.items())
        return out

    def _nearest(self, asked: _Asked, limit: int, quant: str | None) -> tuple[NearAnchor, ...]:
        combos = dict.fromkeys((*self._by_gpu.get(asked.gpu_id, ()), *self._by_model.get(asked.model_id, ())))
        found: dict[Relation, list[NearAnchor]] = {"other_count": [], "same_gpu": [], "same_model": []}
        for combo, mem, subs in self._groups(combos):
            near = self._relate(asked, combo, mem)
            if near is not None:
                relation, d = near
                found[relation].append(NearAnchor(relation, d, _pick(subs, quant)))

        def order(items: list[NearAnchor]) -> list[NearAnchor]:
            return sorted(
                items, key=lambda n: (n.distance, -n.summary.count, n.summary.gpu_id, n.summary.model_id)
            )

        out = order(found["other_count"])
        for pair in itertools.zip_longest(order(found["same_gpu"]), order(found["same_model"])):
            out.extend(n for n in pair if n is not None)
        return tuple(out[:limit])

    def _relate(self, asked: _Asked, combo: Combo, mem: float | None) -> tuple[Relation, float] | None:
        """How a group of runs relates to the asked setup and how far it is, or None: unrelated."""
        cfg = sections(self.catalog).anchors.nearest
        gpu_id, count, model_id = combo
        same_card = gpu_id == asked.gpu_id and self._same_memory(gpu_id, mem, asked.memory_gib)
        if same_card and model_id == asked.model_id:
            ratio = _log_ratio(count, asked.gpu_count)
            if count == asked.gpu_count or ratio > math.log(cfg.max_count_ratio) + 1e-9:
                return None
            return "other_count", cfg.other_count_distance * ratio
        if count != asked.gpu_count:
            return None
        if same_card:
            d = self._model_distance(asked.model_id, model_id)
            return None if d is None else ("same_gpu", d)
        if model_id != asked.model_id:
            return None
        d = self._card_distance(asked, gpu_id, mem)
        return None if d is None else ("same_model", d)

    def _model_distance(self, asked_id: str, other_id: str) -> float | None:
        """Another model on the same card: the same kind (dense vs MoE), within max_params_ratio."""
        cfg = sections(self.catalog).anchors.nearest
        model, other = self.catalog.models.get(asked_id), self.catalog.models.get(other_id)
        if model is None or other is None or other.is_moe != model.is_moe:
            return None
        ratio = _log_ratio(other.params_b, model.params_b)
        if ratio > math.log(cfg.max_params_ratio) + 1e-9:
            return None
        return max(ratio - (cfg.same_model_family_bonus if other.family == model.family else 0.0), 0.0)

    def _card_distance(self, asked: _Asked, gpu_id: str, mem: float | None) -> float | None:
        """The same model on another card (or another size of the same chip): related when the
        memory is close and it is the same vendor and family or the bandwidth is close."""
        cfg = sections(self.catalog).anchors.nearest
        gpu, card = self.catalog.gpus.get(asked.gpu_id), self.catalog.gpus.get(gpu_id)
        if gpu is None or card is None or card.unified_memory != gpu.unified_memory:
            # A Mac's or a Strix Halo's run says nothing of a discrete card's, and back: one holds
            # the model in the memory it reads from, the other spills to RAM over PCIe.
            return None
        memory = _log_ratio(mem or card.memory_gib, asked.memory_gib or gpu.memory_gib)
        bandwidth = _log_ratio(card.bandwidth_gbs, gpu.bandwidth_gbs)
        family = card.vendor == gpu.vendor and card.arch_family == gpu.arch_family
        if memory > math.log(cfg.max_memory_ratio) + 1e-9:
            return None
        if not family and bandwidth > math.log(cfg.max_bandwidth_ratio) + 1e-9:
            return None
        d = memory + bandwidth - (cfg.same_family_bonus if family else 0.0)
        d += cfg.other_vendor_penalty if card.vendor != gpu.vendor else 0.0
        return max(d, 0.0) if d <= cfg.max_distance else None

    def __hash__(self) -> int:
        return hash(self.version)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AnchorIndex) and other.version == self.version

    def __repr__(self) -> str:
        return f"AnchorIndex({len(self._by_id)} anchors, version {self.version})"
