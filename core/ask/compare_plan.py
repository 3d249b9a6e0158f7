"""The plan under a comparison: "7900 XTX or 3090 for 70b, 2 cards", "qwen3 32b vs gemma3 27b on a
4090" end on what to run and its `$` command, not on a bare table (a practitioner audit: compare
replies gave no command). The side that wins the table's verdict row is priced in full, as a
single-setup question is, so the command is the one that question would get."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.catalog.loader import Catalog
from core.estimator.choice import choose
from core.estimator.plan import plan_for
from core.estimator.serialize import plan_dict
from core.i18n import translate
from core.render.advice import advise
from core.render.compare import SAME, Pair, verdict_pair
from core.render.doc import Cmd, Doc, Para, Part
from core.render.fmt import num
from core.render.intent_rows import runs
from core.understanding.query import AskQuery, CardSpec


def _b_wins(pair: Pair) -> bool:
    """B leads when only B runs the verdict row or B is clearly faster there (a tie stays with A)."""
    if not runs(pair.b):
        return False
    if not runs(pair.a):
        return True
    a, b = pair.a.decode_tps, pair.b.decode_tps
    return a is not None and b is not None and b.mid > a.mid * SAME


def _side_query(query: AskQuery, b_side: bool) -> AskQuery:
    """The question as though only the winning side had been asked."""
    if not b_side:
        return replace(query, other_card=None, other_model_id=None, other_backend=None, intent="speed")
    if query.other_backend is not None:  # "ROCm or Vulkan": the same card on the other backend
        return replace(query, backend=query.other_backend, other_backend=None, intent="speed")
    if query.other_card is not None:
        card: CardSpec = query.other_card
        return replace(
            query, hardware=replace(query.hardware, cards=(card,)), other_card=None, intent="speed"
        )
    return replace(query, model_id=query.other_model_id, other_model_id=None, intent="speed")


def _prefill_line(pair: Pair, query: AskQuery) -> Part | None:
    """Prefill of both sides at the verdict row: where backends or cards differ most (ROCm vs
    Vulkan, a 3090 vs a 7900 XTX), and what decides a long prompt."""
    a = pair.a.prefill_tps if runs(pair.a) else None
    b = pair.b.prefill_tps if runs(pair.b) else None
    if a is None or b is None:
        return None
    return Para(translate("intent.compare.prefill", query.lang, quant=pair.quant, a=num(a.mid), b=num(b.mid)))


def compare_plan(
    query: AskQuery, pairs: tuple[Pair, ...], catalog: Catalog
) -> tuple[Doc, dict[str, Any] | None]:
    """The prefill line, then the winning side's plan and command (none when neither side runs)."""
    from core.ask.answer import estimate_for  # answer.py imports the intent replies

    pair = verdict_pair(pairs)
    if pair is None:
        return (), None
    b_side = _b_wins(pair)
    try:
        est = estimate_for(_side_query(query, b_side), catalog)
    except (KeyError, ValueError):
        return (), None
    choice = choose(est, catalog)
    plan = plan_for(est, choice.row, catalog, query.framework)
    advice = advise(plan, catalog, query.lang)
    parts: list[Part] = []
    prefill = _prefill_line(pair, query)
    if prefill is not None:
        parts.append(prefill)
    if advice.command:
        side = "B" if b_side else "A"
        parts += [
            Para(translate("intent.compare.run", query.lang, side=side, line=advice.line)),
            Cmd(advice.command),
        ]
    return tuple(parts), plan_dict(est, catalog, query.lang, chosen=(choice, plan))
