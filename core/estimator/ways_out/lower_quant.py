"""The best lower quant of the same format that fits: of 3 bits or more it ranks before buying cards;
a 1-2-bit one is flagged `quality_warning` and ranks last (never the answer when anything else works)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from core.catalog.framework import Framework
from core.catalog.pricing_sections import RemedyRules
from core.estimator.frameworks.kernels import kernels_run
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.memory import GIB
from core.estimator.memory_fit import NoFitRow, decode_range, fits, packs, packs_at
from core.estimator.token_bytes import bytes_per_token, decode_bytes
from core.estimator.ways_out.base import WIRED_LOWER_QUANT_TIER, Facts, Placed, WayOut, remedy_rules, swapped
from core.estimator.ways_out.cases import CardCase, CpuCase, cpu_option
from core.estimator.ways_out.kind import WayOutKind
from core.estimator.ways_out.ladder import ladder_contexts, lower_weights, natively_gguf, on_card_bytes
from core.estimator.ways_out.remedy import Remedy


def _at_a_shorter_context(row: NoFitRow, fw: Framework | None) -> Remedy | None:
    """No lower quant of 3 bits or more fits at the row's context: the best one that fits at a
    shorter one, at the longest such context (70B Q4 on 3090 + 3060 at 32K: IQ3_XXS at 8K fully on
    the cards, ~13 tok/s, where the other way out is layers in RAM at ~1.3)."""
    shorter = [c for c in ladder_contexts(row.catalog) if c < row.ctx]
    # A usable chat context first (8K+: a 4K window fills in a few turns), then any.
    roomy = [c for c in shorter if c >= _CHAT_CONTEXT]
    return _best_fitting(row, fw, roomy) or _best_fitting(row, fw, [c for c in shorter if c < _CHAT_CONTEXT])


_CHAT_CONTEXT = 8192


def _best_fitting(row: NoFitRow, fw: Framework | None, contexts: list[int]) -> Remedy | None:
    """The best lower quant of 3 bits or more that fits at one of `contexts` (longest first)."""
    model, catalog, cards = row.request.model, row.catalog, row.request.setup.count
    low_bit = remedy_rules(catalog).low_bit_bpw
    for q, w in lower_weights(model, row.quant_id, catalog, fw.ladder if fw else ()):
        if q.bpw < low_bit or not kernels_run(fw, q, row.rt.gpu, model, catalog):
            continue
        if fw is not None and fw.quants and not quant_in(q, fw.quants):
            continue
        for ctx in contexts:
            total = on_card_bytes(model, w, ctx, row.request.kv_type, catalog, cards)
            if fits(total, row.usable_bytes, row.smooth_fraction) and packs_at(row, w, ctx):
                reads = decode_bytes(model, w, min(row.depth, ctx), row.request.kv_type, catalog)
                lo, mid, hi = decode_range(row, reads, quant_id=q.id)
                return Remedy(
                    WayOutKind.LOWER_QUANT, mid, lo, hi, round(total / GIB, 2), quant=q.id, context=ctx
                )
    return None


@dataclass(frozen=True, slots=True)
class LowerQuant(WayOut):
    kind: ClassVar[WayOutKind] = WayOutKind.LOWER_QUANT
    facts: ClassVar[Facts] = Facts(tier=5.0, has_command=True, on_card=True)

    def applies(self, case: CardCase) -> bool:
        return not natively_gguf(case.row.request.model, case.row.catalog)

    def propose(self, case: CardCase) -> Remedy | None:
        row = case.row
        # fits() inlined: this loop walks up to a dozen quants for every no-fit row.
        usable_bytes, kv_bytes = row.usable_bytes, row.kv_bytes
        smooth_bytes = usable_bytes * row.smooth_fraction
        buffers = row.buffer * row.request.setup.count
        fw, gpu, model = row.catalog.frameworks.get(row.rt.framework), row.rt.gpu, row.request.model
        for q, w in lower_weights(model, row.quant_id, row.catalog, fw.ladder if fw else ()):
            if not kernels_run(fw, q, gpu, model, row.catalog):
                continue  # weights the engine refuses on this card (vLLM FP8 on a T4): no way out
            if fw is not None and fw.quants and not quant_in(q, fw.quants):
                continue  # weights the framework doesn't load (ExLlamaV2 and AWQ): no way out
            total = w.gpu_bytes_full_offload + kv_bytes + buffers
            # ... and whole layers per card on a layer split (a 7 GiB MoE layer doesn't halve).
            if (total <= smooth_bytes or total <= usable_bytes) and packs(row, w, kv_bytes, row.buffer):
                reads = bytes_per_token(w.active_bytes_per_token, row.active_kv)
                lo, mid, hi = decode_range(row, reads, quant_id=q.id)
                low_bit = q.bpw < remedy_rules(row.catalog).low_bit_bpw
                found = Remedy(
                    self.kind, mid, lo, hi, round(total / GIB, 2), quant=q.id, quality_warning=low_bit
                )
                # A 1-2-bit file is the last resort: a 3-bit one at a shorter context first.
                return (_at_a_shorter_context(row, fw) or found) if low_bit else found
        return _at_a_shorter_context(row, fw)

    def applies_cpu(self, case: CpuCase) -> bool:
        return not natively_gguf(case.request.model, case.pricing.catalog)

    def propose_cpu(self, case: CpuCase) -> Remedy | None:
        catalog = case.pricing.catalog
        for q, w in lower_weights(case.request.model, case.quant_id, catalog):
            f = case.runs(case.request, q.id, w, case.ctx)
            if f is not None:
                low_bit = q.bpw < remedy_rules(catalog).low_bit_bpw
                return cpu_option(self.kind, f, quant=q.id, quality_warning=low_bit)
        return None

    def placed(self, remedy: Remedy, at: Placed) -> Placed:
        return swapped(remedy, at)

    def tier(self, remedy: Remedy, rules: RemedyRules) -> float:
        # A lower quant that also needs the wired limit raised (wired_limit.py): after one that doesn't.
        return WIRED_LOWER_QUANT_TIER if remedy.wired_limit_mb else self.facts.tier
