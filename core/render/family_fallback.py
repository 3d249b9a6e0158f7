"""What runs well on the machine, for a reply whose own pick doesn't (nothing runs, only a 1-2-bit
quant, or too slow for chat), with its speed and command beside the asked table: the model's own
best quant when the asked one is the trouble ("3070 8g qwen3 8b q8": Q8_0 at 3.8 tok/s with layers
in RAM, Q5_K_M fully on the card ~50), else the largest smaller model of its family ("rtx 6000 ada
llama 3.1 405b": Llama-3.1-70B, not only IQ1_S at 0.8 tok/s and "a smaller model of the family does
better" with none named)."""

from __future__ import annotations

from dataclasses import replace

from core.catalog.loader import Catalog
from core.estimator.choice import Choice, choose, rules
from core.estimator.estimate import Estimate, estimate
from core.estimator.plan import plan_for
from core.i18n import Lang, translate
from core.render.advice import advise
from core.render.doc import Cmd, Para, Part
from core.render.fmt import ctx_label, num

# Members tried, largest first: each is one estimate, and past the third the family's small ones
# are no answer to a question about its largest.
MAX_TRIED = 3
# A member this close in size is the same model's sibling (V3 / R1), no smaller one.
SMALLER = 0.9


def _poor(choice: Choice) -> bool:
    return choice.step == "none" or choice.low_bit or choice.slow or not choice.decode_mid


# What is named instead must be this much faster than the poor pick when that runs at all: IQ4_XS at
# 5.2 tok/s beside Q4_K_M at 4.5 (Llama 3.3 70B on a DGX Spark) is the same crawl, no way out.
FASTER = 1.5


def _runs_well(pick: Choice, poor: Choice, catalog: Catalog) -> bool:
    """Worth naming instead of `poor`: not poor itself, at a comfortable pace (`comfortable_tps`,
    10 tok/s) when whole layers sit in RAM (a 3-bit file so at 6 tok/s is no answer to a crawl; a MoE's
    experts in RAM at 8 is how people run GLM-4.5-Air on a 3090), and `FASTER` than a poor pick that
    crawls."""
    if _poor(pick):
        return False
    tps = pick.decode_mid or 0.0
    if pick.place == "layers" and tps < rules(catalog).comfortable_tps:
        return False
    # Against a crawl it must be faster; against a 1-2-bit file (IQ1_S of a 72B at 28 tok/s) it is
    # better for its quality, whatever its pace.
    return not poor.slow or tps >= FASTER * (poor.decode_mid or 0.0)


def better_here(est: Estimate, choice: Choice, catalog: Catalog) -> tuple[str, Estimate, Choice] | None:
    """("quant" | "member", estimate, pick) of what runs well here in the place of a poor pick: the
    model's own pick with no quant asked, else the largest family member below it that runs well
    with nothing assumed beyond the asked setup; None when the pick is fine or nothing does."""
    if not _poor(choice):
        return None
    if est.request.quants:
        unasked = estimate(replace(est.request, quants=(), ollama_tag=None), catalog)
        pick = choose(unasked, catalog)
        if _runs_well(pick, choice, catalog):
            return "quant", unasked, pick
    model = est.request.model
    members = sorted(
        (
            m
            for m in catalog.models.values()
            if m.family == model.family and m.params_b < model.params_b * SMALLER
        ),
        key=lambda m: -m.params_b,
    )
    for member in members[:MAX_TRIED]:
        other = estimate(replace(est.request, model=member, quants=(), ollama_tag=None), catalog)
        pick = choose(other, catalog)
        if _runs_well(pick, choice, catalog):
            return "member", other, pick
    return None


def instead_line(est: Estimate, choice: Choice, catalog: Catalog, lang: Lang) -> tuple[str, str] | None:
    """(line, command) naming what runs well here in the place of a poor pick, or None."""
    found = better_here(est, choice, catalog)
    if found is None:
        return None
    kind, other, pick = found
    plan = plan_for(other, pick.row, catalog, other.request.framework)
    command = advise(plan, catalog, lang).command
    said = {
        "model": other.request.model.name,
        "quant": pick.quant,
        "ctx": ctx_label(pick.context),
        "tps": num(pick.decode_mid or 0.0),
    }
    key = "reply.unasked_quant_better" if kind == "quant" else "reply.family_smaller"
    return translate(key, lang, **said), command


def family_fallback_parts(est: Estimate, choice: Choice, catalog: Catalog, lang: Lang) -> list[Part]:
    """The chat's line naming what runs well here, its command below it; nothing for a fine pick."""
    found = instead_line(est, choice, catalog, lang)
    if found is None:
        return []
    line, command = found
    parts: list[Part] = [Para(line)]
    return [*parts, Cmd(command)] if command else parts
