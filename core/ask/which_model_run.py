"""What a which-model list ends on (a practitioner audit: the list named models but no way to run
any): the top pick's `$` launch command, priced as the single-model question "<card> <model>
<quant> <ctx>" would be, so the command is the one that question gets (core/estimator/plan.py
writes it, core/render/advice.py says it). And the context the list is sized at: the asked one,
else the task's own (RAG: the retrieved passages), else the chat default."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from core.catalog.loader import Catalog
from core.estimator.choice import choose
from core.estimator.plan import plan_for
from core.estimator.serialize import plan_dict
from core.i18n import translate
from core.render.advice import advise
from core.render.doc import Cmd, Doc, Para, fits, render
from core.render.intent_rows import config
from core.render.model_names import short_name
from core.render.which_model import PROSE_WIDTH, WhichModel
from core.understanding.query import AskQuery

DEFAULT_CONTEXT = 8192  # a chat's context when the question names none ([which_model] context)


def list_context(query: AskQuery, catalog: Catalog) -> int:
    """The asked context; else the task's ([which_model] task_context: RAG 32K); else the default."""
    if query.contexts:
        return query.contexts[0]
    cfg = config(catalog, "which_model")
    own = cfg.get("task_context", {}).get(query.task or "")
    return int(own) if own else int(cfg.get("context", DEFAULT_CONTEXT))


def top_pick_run(query: AskQuery, result: WhichModel, catalog: Catalog) -> tuple[Doc, dict[str, Any] | None]:
    """The line that introduces the first row's command and the command, with its plan (`ask
    --json`); nothing when the list is empty or the plan has no command here."""
    from core.ask.answer import estimate_for  # answer.py imports the intent replies

    if not result.fits:
        return (), None
    top = result.fits[0]
    asked = replace(
        query,
        model_id=top.model_id,
        quants=(top.quant,),
        contexts=(result.ctx,),
        intent="speed",
        task=None,
        model_size_b=None,
    )
    try:
        est = estimate_for(asked, catalog)
    except (KeyError, ValueError):
        return (), None
    choice = choose(est, catalog)
    plan = plan_for(est, choice.row, catalog, query.framework)
    advice = advise(plan, catalog, query.lang)
    if not advice.command:
        return (), None
    name = short_name(catalog.models[top.model_id], catalog, PROSE_WIDTH)
    lead = Para(translate("intent.which_model.run", query.lang, model=name, quant=top.quant))
    return (lead, Cmd(advice.command)), plan_dict(est, catalog, query.lang, chosen=(choice, plan))


def with_run(
    doc: Doc, query: AskQuery, result: WhichModel, catalog: Catalog
) -> tuple[Doc, dict[str, Any] | None]:
    """The list with its top pick's command when the whole still fits one message of the chat."""
    run, plan = top_pick_run(query, result, catalog)
    if not run:
        return doc, None
    longer = (*doc, *run)
    if not fits(render(longer, query.target), query.target):
        return doc, None
    return longer, plan
