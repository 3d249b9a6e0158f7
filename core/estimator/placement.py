"""Where a row's run puts the model, as the framework engine sees it (`FrameworkQuery`): the cards,
the layers on the GPU, the MoE experts in RAM, the KV cache type, CPU only or not. A row that runs
only with its way out is placed as that way out runs (the quant, context, cache, layers or cards it
changes), so a launch command built from it is the command of that setup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from core.catalog.loader import Catalog
from core.catalog.platforms import framework_os
from core.catalog.sections import sections
from core.estimator.expert_split import card_split, first_layers_holding, moe_layer_count
from core.estimator.frameworks import FrameworkQuery
from core.estimator.layer_packing import card_usable, slot_counts
from core.estimator.memory import GIB, compute_buffer_bytes, constants, kv_cache_bytes, usable_memory
from core.estimator.memory_fit import offload_ubatch
from core.estimator.multi_gpu import mode_flag
from core.estimator.ways_out.base import Placed
from core.estimator.ways_out.registry import way_out
from core.estimator.ways_out.remedy import Remedy
from core.estimator.weights import weight_breakdown

if TYPE_CHECKING:  # estimate.py imports this module: only its types are needed here
    from core.estimator.estimate import EstimateRequest, FitStatus, Setup


def framework_query(
    request: EstimateRequest,
    quant_id: str,
    ctx: int,
    status: FitStatus,
    remedy: Remedy | None,
    catalog: Catalog,
) -> FrameworkQuery:
    """The framework engine's view of one row, with the row's way out applied when it has one."""
    setup = request.setup
    at = Placed(quant_id, ctx, request.kv_type, "all", None, setup.count, status != "no_fit")
    if remedy is not None:
        at = way_out(remedy.kind).placed(remedy, at)  # what the way out changes (its class says)
    n_gpu_layers: int | Literal["all"] = at.n_gpu_layers
    threads, backend, cpu_only = 0, request.backend, request.offload == "cpu"
    if cpu_only:
        # CPU only: no layer on a card whatever the way out, one thread per physical core.
        n_gpu_layers, threads, backend = 0, cpu_threads(setup, catalog), "cpu"
    first = _first_layers(request, at, catalog)  # --n-cpu-moe N, which the -ts split also follows
    return FrameworkQuery(
        gpu=setup.gpu,
        model=request.model,
        quant=catalog.quants[at.quant],
        context=at.context,
        os=framework_os(setup.os),  # linux_desktop is Linux to a framework
        gpu_count=at.cards,
        kv_cache=at.kv_type,
        fits_on_gpu=at.fits,
        n_gpu_layers=n_gpu_layers,
        n_cpu_moe=first,
        backend=backend,
        cpu_only=cpu_only,
        cpu_threads=threads,
        numa=cpu_only and setup.host.sockets > 1,
        ollama_tag=request.ollama_tag,
        tensor_split=_tensor_split(request, at, first, catalog),
        users=max(request.users or 1, 1),
        gpu_memory_utilization=request.gpu_memory_utilization,
        split_flags=_split_flags(request.split_mode, at.cards, catalog),
        ubatch=_ubatch(request, at, cpu_only, catalog),
    )


def _first_layers(request: EstimateRequest, at: Placed, catalog: Catalog) -> int | None:
    """`--n-cpu-moe N`: the first N layers that hold the `at.n_cpu_moe` MoE layers priced in RAM
    (expert_split.first_layers_holding: dense layers count in N but hold no experts)."""
    if not at.n_cpu_moe or not request.model.is_moe:
        return at.n_cpu_moe
    model = request.model
    weights = weight_breakdown(model, catalog.quants[at.quant], catalog)
    if at.n_cpu_moe >= moe_layer_count(weights.layer_expert_bytes):
        return model.layers  # every layer's experts: --cpu-moe
    return first_layers_holding(weights.layer_expert_bytes, at.n_cpu_moe)


def _tensor_split(
    request: EstimateRequest, at: Placed, first: int | None, catalog: Catalog
) -> tuple[float, ...]:
    """-ts ratios of a layer split with every layer on the cards. llama.cpp puts whole layers on each
    card (layer_packing), so the -ts must be a split each card holds: the even one, or mixed cards'
    memory ("24,12"), where it does; with the first N layers' experts in RAM, layer counts that give
    each card its share of the bytes (expert_split: an even split would send every layer that kept its
    experts to the last card); else the balanced packing that fits, in layer counts. Mixed cards under
    a way out that changes the cards: even again."""
    setup, model = request.setup, request.model
    memories = tuple(memory for _, memory in setup.mix) if at.cards == len(setup.mix) else ()
    layer_split = request.split_mode in (None, "layer") and request.offload != "cpu"
    if at.cards < 2 or not layer_split or at.n_gpu_layers != "all":
        return memories
    weights = weight_breakdown(model, catalog.quants[at.quant], catalog)
    kv = kv_cache_bytes(model, at.context, at.kv_type, catalog, max(request.users or 1, 1))
    usable = usable_memory(setup.gpu, setup.memory_gib, at.cards, setup.os, catalog).total_gib * GIB
    buffer = compute_buffer_bytes(
        model, at.context, catalog, constants(catalog).flash_attention, _ubatch(request, at, False, catalog)
    )
    shares = memories or (1.0,) * at.cards
    n_cpu_moe = min(first or 0, model.layers) if model.is_moe else 0
    split = card_split(
        weights,
        kv,
        n_cpu_moe,
        shares,
        card_usable(memories, usable, at.cards),
        buffer,
        constants(catalog).smooth_fraction,
    )
    if not split.counts or split.counts == slot_counts(shares, model.layers + 1):
        return memories  # the even or memory-proportional -ts packs as it is written
    return tuple(float(c) for c in split.counts)


def _ubatch(request: EstimateRequest, at: Placed, cpu_only: bool, catalog: Catalog) -> int:
    """The -ub the row was priced with: a run with weights in RAM and a card takes the larger one
    where it has room (memory_fit.offload_ubatch); otherwise the user's, or 0 for llama.cpp's default."""
    in_ram = not cpu_only and (bool(at.n_cpu_moe) or at.n_gpu_layers != "all")
    if in_ram:
        s = request.setup
        usable = usable_memory(s.gpu, s.memory_gib, s.count, s.os, catalog).total_gib * GIB
        ub = offload_ubatch(request, at.context, usable, catalog)
        return 0 if ub == constants(catalog).ubatch and not request.ubatch else ub
    return request.ubatch or 0


def _split_flags(mode: str | None, cards: int, catalog: Catalog) -> dict[str, str]:
    """How each framework's launch asks for the split mode the user named (none: its default)."""
    if mode is None or cards < 2:
        return {}
    table = sections(catalog).split_modes
    return {fw: flag for fw in table.engine if (flag := mode_flag(fw, mode, table))}


def cpu_threads(setup: Setup, catalog: Catalog) -> int:
    """The threads a CPU-only llama.cpp run takes: the named CPU's physical performance cores on every
    socket (llama.cpp's own default leaves E-cores and SMT siblings out too: they add no memory
    bandwidth); 0 with no CPU named (llama.cpp then counts the cores itself)."""
    cpu = catalog.cpus.get(setup.host.cpu)
    if cpu is None:
        return 0
    return (cpu.cores - cpu.e_cores) * max(setup.host.sockets, 1)
