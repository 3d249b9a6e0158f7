"""Frameworks set against each other on one setup ("ollama or exllamav2 for qwen3 14b on a 3090",
"llama.cpp vs vLLM", "还是 … 哪个快"): one line per framework with the quant, context and tok/s its
own plan runs here, which is faster and by how much, then the faster one's plan and `$` command.

Each framework is priced as though it alone had been named (its own quant ladder: GGUF for Ollama,
EXL2 for ExLlamaV2, AWQ/FP8 for vLLM), so a line is what that framework's full answer recommends; the
comparison is of plans, the way the model comparison (compare.py) is of the same quant on two sides."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from core.catalog.loader import Catalog
from core.estimator.choice import Choice, choose
from core.estimator.estimate import Estimate, Row
from core.estimator.frameworks.quant_match import loads, quant_in
from core.estimator.plan import Plan, plan_for
from core.i18n import Lang, translate
from core.render.advice import advise, note_texts
from core.render.compact import setup_title
from core.render.compare import SAME
from core.render.doc import Cmd, Doc, Para, Part
from core.render.fmt import ctx_label, num


@dataclass(frozen=True, slots=True)
class Priced:
    """One framework's plan on the setup."""

    framework: str
    est: Estimate
    choice: Choice
    plan: Plan

    @property
    def decode(self) -> float | None:
        """tok/s as its plan runs (None: nothing of it runs here, or llama.cpp stood in for it)."""
        if self.est.stands_in is not None or self.choice.step == "none":
            return None
        return self.choice.decode_mid

    @property
    def prefill(self) -> float | None:
        """Prefill tok/s of the table row the command runs as it is (None where a way out changes the
        run: a q8_0 cache, experts in RAM; the table has no figure for that)."""
        at = _landing(self.est, self.choice)
        return at.prefill_tps.mid if at is not None and at.prefill_tps is not None else None


def _landing(est: Estimate, choice: Choice) -> Row | None:
    rows = (r for r in est.rows if r.quant == choice.quant and r.context == choice.context)
    return next((r for r in rows if r.status != "no_fit" and r.decode_tps is not None), None)


def loadable(quants: tuple[str, ...], framework: str, catalog: Catalog) -> tuple[str, ...]:
    """The asked quants this framework can load ("ollama vs exllamav2 q4_k_m": Q4_K_M is Ollama's
    only; ExLlamaV2 gets its own ladder): its formats, its listed quants where it lists them."""
    fw = catalog.frameworks[framework]
    out = []
    for qid in quants:
        q = catalog.quants.get(qid)
        if q is None or q.format not in fw.quant_formats or not loads(fw, q):
            continue
        if not fw.quants or quant_in(q, fw.quants):
            out.append(qid)
    return tuple(out)


def price(framework: str, est: Estimate, catalog: Catalog) -> Priced:
    choice = choose(est, catalog)
    return Priced(framework, est, choice, plan_for(est, choice.row, catalog, framework))


def price_all(
    frameworks: tuple[str, ...], estimate: Callable[[str], Estimate], catalog: Catalog
) -> tuple[Priced, ...]:
    """Each framework's plan, from `estimate` (the query priced with that framework named)."""
    return tuple(price(f, estimate(f), catalog) for f in frameworks)


def fastest(priced: tuple[Priced, ...]) -> Priced:
    """The one whose plan decodes fastest here (the first named when none runs)."""
    running = [p for p in priced if p.decode is not None]
    return max(running, key=lambda p: p.decode or 0.0) if running else priced[0]


def _name(framework: str, catalog: Catalog) -> str:
    fw = catalog.frameworks.get(framework)
    return fw.name if fw is not None else framework


def _line(p: Priced, catalog: Catalog, lang: Lang) -> str:
    name = _name(p.framework, catalog)
    if p.decode is None:
        stand_in = p.est.stands_in
        why = (
            stand_in.reason.text(lang) if stand_in is not None else translate("intent.fwcompare.no_fit", lang)
        )
        return translate("intent.fwcompare.none", lang, framework=name, why=why)
    figures = {"framework": name, "quant": p.choice.quant, "ctx": ctx_label(p.choice.context)}
    pp = p.prefill
    if pp is not None:
        return translate("intent.fwcompare.line_pp", lang, tps=num(p.decode), pp=num(pp), **figures)
    return translate("intent.fwcompare.line", lang, tps=num(p.decode), **figures)


def _verdict(priced: tuple[Priced, ...], catalog: Catalog, lang: Lang) -> str:
    """The fastest against the next fastest (or the only one that runs)."""
    running = sorted((p for p in priced if p.decode is not None), key=lambda p: -(p.decode or 0.0))
    if not running:
        return ""
    winner = _name(running[0].framework, catalog)
    if len(running) == 1:
        return translate("intent.fwcompare.only", lang, winner=winner)
    fa, fb = running[0].decode or 0.0, running[1].decode or 0.0
    loser = _name(running[1].framework, catalog)
    ratio = fa / max(fb, 0.01)
    if ratio < SAME:
        return translate("intent.fwcompare.same", lang, winner=winner, loser=loser)
    return translate("intent.fwcompare.faster", lang, winner=winner, loser=loser, ratio=ratio)


def framework_compare_doc(priced: tuple[Priced, ...], catalog: Catalog, lang: Lang) -> Doc:
    """The title, a line per framework, the verdict, and the faster one's plan with its command."""
    first = priced[0].est
    names = " / ".join(_name(p.framework, catalog).split(" (")[0] for p in priced)
    title = translate(
        "intent.fwcompare.title",
        lang,
        setup=setup_title(first),
        model=first.request.model.name,
        frameworks=names,
    )
    parts: list[Part] = [Para(title), *(Para(_line(p, catalog, lang)) for p in priced)]
    verdict = _verdict(priced, catalog, lang)
    if verdict:
        parts.append(Para(verdict))
    best = fastest(priced)
    said = note_texts(best.choice.notes, lang)  # a 1-2-bit or too-slow pick, said plainly
    if said:
        parts.append(Para(" ".join(said)))
    advice = advise(best.plan, catalog, lang)
    parts.append(Para(advice.line))
    if advice.command:
        parts.append(Cmd(advice.command))
    return tuple(parts)
