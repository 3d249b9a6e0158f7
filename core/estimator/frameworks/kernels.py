"""Whether a serving engine's kernels run a quant's weights on a card at all, apart from whether a
checkpoint exists or fits: FP8 below its tensor-core generation only through vLLM's weight-only
Marlin path, which needs `weight_only_min_cc` (catalogs/estimator.toml [choice]: a T4 or a V100
serves 16-bit, AWQ or GPTQ, never FP8), and the framework's own block rules on a quant and a card
(catalogs/frameworks.toml: AWQ on Volta, AWQ / GPTQ on ROCm). The table, its ways out and the plan
read this one answer, so none of them offers weights the engine refuses on this card."""

from __future__ import annotations

from core.catalog.framework import Framework, Rule
from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.quant import Quant
from core.catalog.sections import sections
from core.estimator.frameworks.quant_match import quant_in


def kernels_run(fw: Framework | None, quant: Quant, gpu: Gpu, model: Model, catalog: Catalog) -> bool:
    """Whether `fw` (vLLM / SGLang; any other framework: always) has kernels for `quant` on `gpu`."""
    if fw is None or not fw.gpu_only:
        return True  # llama.cpp and the like load every quant of their format on any card they drive
    cc, floor = gpu.compute_capability, sections(catalog).estimator.choice.weight_only_min_cc
    if quant.min_compute_capability and cc is not None and cc < min(floor, quant.min_compute_capability):
        return False
    return not any(_blocks_on_card(rule, quant, gpu, model) for rule in fw.rules)


def _blocks_on_card(rule: Rule, quant: Quant, gpu: Gpu, model: Model) -> bool:
    """A block rule that names quants and holds for this card and model alone."""
    if rule.effect != "block" or not rule.quants or not quant_in(quant, rule.quants):
        return False
    return not _run_dependent(rule) and _card_matches(rule, gpu) and _model_matches(rule, model)


def _run_dependent(rule: Rule) -> bool:
    """A rule that also depends on the run (OS, backend, KV cache, offload, card count): judged on the
    full query (`rules.rule_matches`), not here, since it can't rule the weights out everywhere."""
    if rule.os or rule.backends or rule.kv_cache or rule.formats:
        return True
    return rule.multi_gpu is not None or rule.partial_offload is not None or rule.cpu_only is not None


def _card_matches(rule: Rule, gpu: Gpu) -> bool:
    cc = gpu.compute_capability
    return (
        (not rule.vendors or gpu.vendor in rule.vendors)
        and (not rule.arch_families or gpu.arch_family in rule.arch_families)
        and (rule.compute_below is None or (cc is not None and cc < rule.compute_below))
        and (rule.compute_at_least is None or (cc is not None and cc >= rule.compute_at_least))
    )


def _model_matches(rule: Rule, model: Model) -> bool:
    return (not rule.model_families or model.family in rule.model_families) and (
        rule.moe is None or model.is_moe == rule.moe
    )


__all__ = ["kernels_run"]
