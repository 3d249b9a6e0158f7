"""Catalog `Rule`s (catalogs/frameworks.toml): whether a rule's conditions hold for a query, and the
notes the matching rules of a framework add (blockers and caveats)."""

from __future__ import annotations

from core.catalog.framework import Framework, Rule
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkQuery
from core.i18n import Note


def rule_matches(rule: Rule, q: FrameworkQuery, backend: str | None) -> bool:
    """Whether every condition set on the rule holds for the query."""
    # One condition after the other, stopping at the first that fails: most rules fail on their
    # first condition (what runs: quant, card, OS), and this runs for every rule of every framework.
    return _setup_matches(rule, q, backend) and _run_matches(rule, q)


def _setup_matches(rule: Rule, q: FrameworkQuery, backend: str | None) -> bool:
    """The conditions on what is run where: quant, its format, the card, the OS, the backend."""
    gpu = q.gpu
    return (
        (not rule.quants or quant_in(q.quant, rule.quants))
        and (not rule.formats or q.quant.format in rule.formats)
        and (not rule.vendors or gpu.vendor in rule.vendors)
        and (not rule.arch_families or gpu.arch_family in rule.arch_families)
        and (not rule.model_families or q.model.family in rule.model_families)
        and (not rule.os or q.os in rule.os)
        and (not rule.backends or backend in rule.backends)
    )


def _run_matches(rule: Rule, q: FrameworkQuery) -> bool:
    """The conditions on how it is run: compute capability, KV cache, cards, offload, MoE."""
    cc = q.gpu.compute_capability
    return (
        (rule.compute_below is None or (cc is not None and cc < rule.compute_below))
        and (rule.compute_at_least is None or (cc is not None and cc >= rule.compute_at_least))
        and (not rule.kv_cache or q.kv_cache in rule.kv_cache)
        and (rule.multi_gpu is None or (q.gpu_count > 1) == rule.multi_gpu)
        and (rule.partial_offload is None or (not q.fully_on_gpu) == rule.partial_offload)
        and (rule.moe is None or q.model.is_moe == rule.moe)
        and (rule.cpu_only is None or q.cpu_only == rule.cpu_only)
    )


def rule_notes(
    fw: Framework, q: FrameworkQuery, backend: str | None, params: dict[str, object]
) -> tuple[list[Note], list[Note]]:
    """(blockers, caveats) of the framework's rules that match, each in catalog order."""
    blockers: list[Note] = []
    caveats: list[Note] = []
    for rule in fw.rules:
        if rule_matches(rule, q, backend):
            (blockers if rule.effect == "block" else caveats).append(Note(rule.note, params))
    return blockers, caveats
