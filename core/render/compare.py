"""Two cards × one model ("4090 vs 5090 for qwen3 32b") or one card × two models ("qwen3 32b 和
gemma3 27b 哪个快"), side by side in one narrow table: A and B are named above it so that the columns
stay a few characters wide on a phone."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.catalog.loader import Catalog
from core.estimator.estimate import Row, Setup
from core.i18n import Lang, translate
from core.render.doc import Doc, Para, Pre
from core.render.fmt import NO_FIT, TIGHT, ctx_label, gib, num, table
from core.render.intent_rows import RowAsk, one_row, runs

SAME = 1.1  # within 10 %: "about the same"


@dataclass(frozen=True, slots=True)
class Side:
    label: str  # the full name shown above the table
    setup: Setup
    model_id: str


@dataclass(frozen=True, slots=True)
class Pair:
    quant: str
    a: Row
    b: Row


def compare_rows(
    catalog: Catalog, a: Side, b: Side, quants: tuple[str, ...], ctx: int, framework: str | None = None
) -> tuple[Pair, ...]:
    return tuple(
        Pair(
            q,
            one_row(catalog, a.setup, a.model_id, q, ctx, RowAsk(framework=framework)),
            one_row(catalog, b.setup, b.model_id, q, ctx, RowAsk(framework=framework)),
        )
        for q in quants
    )


def _cell(row: Row) -> str:
    if not runs(row) or row.decode_tps is None:
        return NO_FIT
    return num(row.decode_tps.mid) + (TIGHT if row.status == "tight" else "")


def _verdict(pair: Pair, lang: Lang) -> str:
    a_ok, b_ok = runs(pair.a), runs(pair.b)
    if a_ok != b_ok:
        return translate("intent.compare.only", lang, quant=pair.quant, winner="A" if a_ok else "B")
    assert pair.a.decode_tps is not None and pair.b.decode_tps is not None
    fa, fb = pair.a.decode_tps.mid, pair.b.decode_tps.mid
    ratio = max(fa, fb) / max(min(fa, fb), 0.01)
    if ratio < SAME:
        return translate("intent.compare.same", lang, quant=pair.quant)
    return translate(
        "intent.compare.faster", lang, quant=pair.quant, winner="A" if fa > fb else "B", ratio=ratio
    )


def compare_doc(a: Side, b: Side, pairs: tuple[Pair, ...], what: str, ctx: int, lang: Lang) -> Doc:
    same_model = a.model_id == b.model_id
    if same_model:
        header = ["quant", "GiB", "A", "B"]
        rows = [[p.quant, gib(p.a.total_gib), _cell(p.a), _cell(p.b)] for p in pairs]
    else:
        header = ["quant", "A GiB", "A", "B GiB", "B"]
        rows = [[p.quant, gib(p.a.total_gib), _cell(p.a), gib(p.b.total_gib), _cell(p.b)] for p in pairs]
    parts: list[Para | Pre] = [
        Para(translate("intent.compare.title", lang, a=a.label, b=b.label)),
        Para(translate("intent.compare.setup", lang, what=what, ctx=ctx_label(ctx))),
        Pre(table(header, rows)),
    ]
    pair = verdict_pair(pairs)
    if pair is not None:
        parts.append(Para(_verdict(pair, lang)))
    return tuple(parts)


VERDICT_QUANT = "Q4_K_M"  # what people compare at: the default download of most GGUF questions


def verdict_pair(pairs: tuple[Pair, ...]) -> Pair | None:
    """The row the verdict is said at: Q4_K_M where both sides run it, else the first row both
    run, else the first either runs. Not simply the first row: a Q8_0 row of gpt-oss is its MXFP4
    file again, so "At Q8_0: gpt-oss 3.7x faster than GLM-4.5-Air" set MXFP4 against an 8-bit file."""
    both = [p for p in pairs if runs(p.a) and runs(p.b)]
    usual = next((p for p in both if p.quant == VERDICT_QUANT), None)
    if usual is not None:
        return usual
    if both:
        return both[0]
    return next((p for p in pairs if runs(p.a) or runs(p.b)), None)


def compare_json(pairs: tuple[Pair, ...]) -> list[dict[str, Any]]:
    def side(row: Row) -> dict[str, Any]:
        return {
            "total_gib": row.total_gib,
            "status": row.status,
            "decode_tps": row.decode_tps.mid if row.decode_tps and runs(row) else None,
        }

    return [{"quant": p.quant, "a": side(p.a), "b": side(p.b)} for p in pairs]
