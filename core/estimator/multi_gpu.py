"""How several cards share one model, and what that costs per token (issue 23).

Three ways to split (catalogs/split_modes.toml says which framework offers which):
- "layer" (llama.cpp's default, pipeline parallel): each card holds a run of layers; one token
  visits the cards in turn, so its time is the same bytes over one card's bandwidth plus a hand-off
  per card boundary.
- "tensor" (vLLM / SGLang / ExLlama tensor parallel, llama.cpp `-sm tensor`, ik_llama.cpp
  `-sm graph`): every layer's weights and KV are split, all cards read their slice at once
  (bandwidth adds), and the partial results are summed across cards twice per layer. Those two
  reductions wait on the link (PCIe, NVLink / xGMI, or a network between two boxes): their latency is
  what keeps a small model from scaling, and their bytes bound a long prompt's prefill over PCIe.
- "row" (llama.cpp's old `-sm row`): dense matrices split by rows, with a gather after every matrix
  product instead of two per layer, so it pays several times tensor mode's syncs.

The per-layer sync cost and the share of bandwidth each card keeps are fitted by
scripts/fit_calibration.py on multi-card single-stream rows (calibration.toml [multi_gpu]); the
per-link multipliers, link bandwidths and row split's sync count are priors in speed.toml
[multi_gpu] unless the fit had rows for them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from core.catalog.gpu import Gpu
from core.catalog.model import Model
from core.catalog.pricing_sections import EngineSplit, SplitModesSection

SPLITS = ("layer", "row", "tensor")


@dataclass(frozen=True, slots=True)
class SplitCosts:
    """The multi-card terms beside the fitted tensor-parallel sync cost (Calibration.tp_us_per_layer,
    priced for PCIe and a vLLM-style engine)."""

    link_sync: Mapping[str, float] = field(default_factory=dict)  # sync cost x, by link (pcie = 1)
    link_gbs: Mapping[str, float] = field(default_factory=dict)  # usable reduction bandwidth, GB/s
    row_syncs: float = 3.5  # row split's syncs per layer over tensor mode's two
    # Per framework (fitted, multi_gpu_fit.toml): its tensor split's sync cost over vLLM's (llama.cpp's
    # and ik_llama.cpp's reductions are ggml graph splits, not NCCL inside one CUDA graph), and the
    # share of each card's prefill rate its tensor split keeps (missing: Calibration.tp_eff).
    sync_factor: Mapping[str, float] = field(default_factory=dict)
    prefill_eff: Mapping[str, float] = field(default_factory=dict)


def link_of(gpu: Gpu, count: int) -> str:
    """The link the cards' reductions cross: two unified-memory boxes (DGX Spark, Macs) are two
    machines on a network; SXM / OAM / superchip modules and NVLink-bridged pairs have NVLink or
    xGMI; every other card talks over PCIe."""
    if count < 2:
        return ""
    if gpu.unified_memory:
        return "network"
    form = gpu.form.lower()
    if "oam" in form:
        return "xgmi"
    if any(word in form for word in ("sxm", "superchip", "nvlink")):
        return "nvlink"
    return "pcie"


def sync_us_per_layer(
    tp_us_per_layer: float, costs: SplitCosts, split: str, link: str, framework: str
) -> float:
    """Microseconds a token waits per layer on cross-card reductions under `split`."""
    if split == "layer":
        return 0.0
    us = tp_us_per_layer * costs.link_sync.get(link, 1.0) * costs.sync_factor.get(framework, 1.0)
    return us * (costs.row_syncs if split == "row" else 1.0)


def prefill_reduction_seconds(
    model: Model, prompt: int, count: int, split: str, link: str, costs: SplitCosts
) -> float:
    """Seconds a prefill spends moving partial sums between cards: two all-reduces of one hidden
    vector (FP16) per token and layer; a ring all-reduce sends 2(n-1)/n of it from every card.
    Over PCIe this bounds a long prompt on a big dense model; over NVLink it vanishes."""
    if split == "layer" or count < 2:
        return 0.0
    gbs = costs.link_gbs.get(link) or costs.link_gbs.get("pcie") or 0.0
    if gbs <= 0:
        return 0.0
    per_token = 2 * model.hidden * 2.0 * model.layers * 2.0 * (count - 1) / count
    syncs = costs.row_syncs if split == "row" else 1.0
    return prompt * per_token * syncs / (gbs * 1e9)


def _engine(framework: str, engine: str, table: SplitModesSection) -> EngineSplit:
    """A framework's split modes (catalogs/split_modes.toml): its own entry, else its engine's when it
    is that engine; a wrapper (Ollama, LM Studio) launches llama.cpp its own way: layers only."""
    entry = table.engine.get(framework) or (table.engine.get(engine) if engine == framework else None)
    return entry or EngineSplit()


def split_for(framework: str, engine: str, asked: str | None, count: int, table: SplitModesSection) -> str:
    """The split a run on `count` cards uses: the one asked when the framework offers it, else the
    framework's default (one card: "layer", nothing to split)."""
    if count < 2:
        return "layer"
    entry = _engine(framework, engine, table)
    return asked if asked in entry.modes else entry.default


def layout(
    framework: str,
    engine: str,
    asked: tuple[str | None, str | None],
    kv_quantized: bool,
    gpu: Gpu,
    count: int,
    table: SplitModesSection,
) -> tuple[str, str]:
    """(split, link) of a run on `count` cards: `asked` is the (split mode, link) the user named.
    llama.cpp's -sm tensor refuses a quantized KV cache, so that run splits by layer (its command says
    why); a link named counts only on several cards, else the cards' own (`link_of`)."""
    mode, link = asked
    if mode == "tensor" and framework == "llama.cpp" and kv_quantized:
        mode = None
    split = split_for(framework, engine, mode, count, table)
    return split, (link if count > 1 else None) or link_of(gpu, count)


def offered(framework: str, engine: str, table: SplitModesSection) -> tuple[str, ...]:
    """The split modes a framework runs (what a refusal of another one names)."""
    return _engine(framework, engine, table).modes


def mode_flag(framework: str, split: str, table: SplitModesSection) -> str:
    """The launch flag that asks for `split` ("-sm graph" on ik_llama.cpp); "" for the default."""
    entry = table.engine.get(framework)
    return entry.flags.get(split, "") if entry else ""
