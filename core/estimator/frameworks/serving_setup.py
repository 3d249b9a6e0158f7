"""Serving setups (issue 20 item 2, "the framework by the setup"): which boxes are served with vLLM /
SGLang rather than llama.cpp, how their cards are split (tensor parallel the framework accepts, the
rest pipeline parallel), and which serving quant a GGUF spelling ("fp16") means there. The lists and
sizes are catalogs/estimator.toml [serving] (core/catalog/pricing_sections.py ServingRules)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.pricing_sections import ServingRules
from core.catalog.sections import sections

if TYPE_CHECKING:  # estimate.py imports the frameworks package: only the type is needed here
    from core.estimator.estimate import EstimateRequest


def serving_rules(catalog: Catalog) -> ServingRules:
    return sections(catalog).estimator.serving


def is_serving_setup(gpu: Gpu, count: int, users: int | None, catalog: Catalog) -> bool:
    """A box served with vLLM / SGLang: a datacenter card, `min_cards` cards or more, or N users; a card
    those frameworks drive (not Apple, not a CPU-only run)."""
    r = serving_rules(catalog)
    if gpu.vendor not in r.vendors or gpu.memory_gib <= 0:
        return False
    cc = gpu.compute_capability
    if gpu.vendor == "NVIDIA" and cc is not None and cc < r.min_compute:
        return False  # current vLLM wheels need 7.5+ (V100 stays llama.cpp unless vLLM is asked)
    return gpu.segment in r.segments or count >= r.min_cards or bool(users)


def _weights_fit(request: EstimateRequest, quant_id: str, catalog: Catalog) -> bool:
    """Whether the quant's weights alone fit the cards (a rough first look: the estimate prices it)."""
    setup, quant = request.setup, catalog.quants[quant_id]
    weights_gb = request.model.params_b * quant.bpw / 8
    return weights_gb < setup.count * setup.memory_gib * serving_rules(catalog).weights_share


def _tp_ok(model: Model, tp: int, rule: str) -> bool:
    """Whether the framework accepts this tensor-parallel size for the model: it divides the attention
    heads, and (rule "divide") the KV heads divide it or it divides them (replicated / split)."""
    if model.heads % tp:
        return False
    kv = model.kv_heads or model.heads
    return rule != "divide" or kv % tp == 0 or tp % kv == 0


def parallel_sizes(model: Model, count: int, catalog: Catalog) -> tuple[int, int]:
    """(tensor parallel, pipeline parallel) over `count` cards: the largest accepted TP size that
    splits the cards evenly, the rest pipeline stages (other nodes, or the same node's other cards)."""
    if count <= 1:
        return 1, 1
    r = serving_rules(catalog)
    for tp in sorted(r.tp_sizes, reverse=True):
        if tp <= count and count % tp == 0 and _tp_ok(model, tp, r.kv_heads_rule):
            return tp, count // tp
    return 1, count


def serving_quants(quants: tuple[str, ...], catalog: Catalog) -> tuple[str, ...]:
    """The quants asked, with a GGUF spelling of the released weights ("fp16") as the serving quant of
    the same weights (`from_gguf`): vLLM / SGLang serve the original repo, not a GGUF file."""
    table = serving_rules(catalog).from_gguf
    return tuple(dict.fromkeys(table.get(q, q) for q in quants))


def siblings(quant_id: str, catalog: Catalog) -> tuple[str, ...]:
    """The serving quants of the same size served when `quant_id` has no listed checkpoint."""
    return serving_rules(catalog).siblings.get(quant_id, ())


def serving_pick(request: EstimateRequest, ctx: int, catalog: Catalog) -> str:
    """vLLM or SGLang (the first of [serving] frameworks that runs the serving ladder's first quant) for
    a serving setup where the user named neither a framework nor a GGUF quant; "" otherwise."""
    setup = request.setup
    if (
        request.framework
        or request.offload
        or not is_serving_setup(setup.gpu, setup.count, request.users, catalog)
    ):
        return ""
    quants = serving_quants(tuple(q for q in request.quants if q in catalog.quants), catalog)
    if any(catalog.quants[q].format != "serving" for q in quants):
        return ""  # a GGUF quant asked for: llama.cpp runs it
    ladder = [q for q in sections(catalog).estimator.ladder.serving if q in catalog.quants]
    first = (quants or tuple(ladder))[:1]
    if not first:
        return ""
    # placement imports the frameworks package, which imports this module: only when asked.
    from core.estimator.frameworks.gates import runs
    from core.estimator.placement import framework_query

    r, frameworks = serving_rules(catalog), catalog.frameworks
    if setup.gpu.segment not in r.segments and not request.users:
        # Served for its card count only: when no serving quant fits the cards, llama.cpp's offload
        # is the answer (Llama 4 Maverick on 4x 4090).
        if not any(_weights_fit(request, quant, catalog) for quant in quants or tuple(ladder)):
            return ""
    q = framework_query(request, first[0], ctx, "smooth", None, catalog)
    return next((f for f in r.frameworks if f in frameworks and runs(frameworks[f], q)), "")


__all__ = [
    "is_serving_setup",
    "parallel_sizes",
    "serving_pick",
    "serving_quants",
    "serving_rules",
    "siblings",
]
