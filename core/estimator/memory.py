"""Memory model: KV cache per attention kind, compute buffers, and what a card lets you use.

Everything is in bytes inside; GiB only at the edges. The formulas follow what llama.cpp and vLLM
allocate (see catalogs/README.md, "Estimator constants"), and the tests check them against the
buffers those programs logged (../shared/reference/measured_memory.csv).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache

from core.catalog.architectures.parts import KvShape, full_kv_shape
from core.catalog.architectures.registry import sizing_for
from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.catalog.sections import sections
from core.i18n import Note

GIB = 1024**3
MIB = 1024**2


@dataclass(frozen=True, slots=True)
class EstimatorConstants:
    kv_bytes: dict[str, float]
    ctx_pad: int
    ubatch: int
    compute_base_bytes: float
    flash_attention: bool
    driver_context_gib: float
    smooth_fraction: float
    os_reserve_gib: dict[str, float]
    mac_fraction_small: float
    mac_fraction_large: float
    mac_small_limit_gib: float
    unified_os_reserve_gib: float
    unified_os_reserve_fraction: float
    vllm_activation_gib: tuple[float, float]
    vllm_cuda_graph_gib: float
    vllm_nccl_per_gpu_gib: float


@cache
def constants(catalog: Catalog) -> EstimatorConstants:
    table = sections(catalog).estimator
    llama, oses, vllm = table.llama_cpp, table.os, table.vllm
    return EstimatorConstants(
        kv_bytes=dict(table.kv_types),
        ctx_pad=llama.ctx_pad,
        ubatch=llama.ubatch,
        compute_base_bytes=llama.compute_base_mib * MIB,
        flash_attention=llama.flash_attention,
        driver_context_gib=table.driver.context_gib,
        smooth_fraction=table.verdict.smooth_fraction,
        os_reserve_gib={name: v.display_reserve_gib for name, v in oses.items()},
        mac_fraction_small=oses["macos"].gpu_fraction_small,
        mac_fraction_large=oses["macos"].gpu_fraction_large,
        mac_small_limit_gib=oses["macos"].small_limit_gib,
        unified_os_reserve_gib=table.unified.os_reserve_gib,
        unified_os_reserve_fraction=table.unified.os_reserve_fraction,
        vllm_activation_gib=vllm.activation_gib,
        vllm_cuda_graph_gib=vllm.cuda_graph_gib,
        vllm_nccl_per_gpu_gib=vllm.nccl_per_gpu_gib,
    )


# --- KV cache ---------------------------------------------------------------------------------


_KV_SHAPES: dict[int, tuple[Model, KvShape]] = {}


def kv_shape(model: Model) -> KvShape:
    """Cached by object identity: hashing a Model (40 fields) costs more than the formula."""
    hit = _KV_SHAPES.get(id(model))
    if hit is not None and hit[0] is model:
        return hit[1]
    shape = _kv_shape(model)
    _KV_SHAPES[id(model)] = (model, shape)
    return shape


def _kv_shape(model: Model) -> KvShape:
    """The shape rule of the model's attention kind (core/catalog/architectures/)."""
    rule = sizing_for(model.attention).kv_shape or full_kv_shape
    return rule(model)


def padded_context(ctx: int, pad: int) -> int:
    return int(math.ceil(ctx / pad) * pad)


# Memo of the two per-row formulas below: a grid and its ways out ask for the same (model, context,
# cache type) dozens of times. Keyed on identities like `kv_shape`; the entry keeps the model and the
# catalog alive so their ids cannot be reused, and a hit must be the very same objects.
_MEMO_LIMIT = 65536
_KV_MEMO: dict[tuple[int, int, str, int, int], tuple[float, Model, Catalog]] = {}
_BUFFER_MEMO: dict[tuple[int, int, bool, int, int], tuple[float, Model, Catalog]] = {}


def kv_cache_bytes(model: Model, ctx: int, kv_type: str, catalog: Catalog, n_seq: int = 1) -> float:
    """KV cache allocated for `ctx` tokens (llama.cpp: padded to 256; SWA layers hold window+ubatch)."""
    key = (id(model), ctx, kv_type, n_seq, id(catalog))
    hit = _KV_MEMO.get(key)
    if hit is not None and hit[1] is model and hit[2] is catalog:
        return hit[0]
    total = _kv_cache_bytes(model, ctx, kv_type, catalog, n_seq)
    if len(_KV_MEMO) >= _MEMO_LIMIT:
        _KV_MEMO.clear()
    _KV_MEMO[key] = (total, model, catalog)
    return total


def _kv_cache_bytes(model: Model, ctx: int, kv_type: str, catalog: Catalog, n_seq: int) -> float:
    const = constants(catalog)
    value_bytes = const.kv_bytes[kv_type]
    shape = kv_shape(model)
    cells = padded_context(ctx, const.ctx_pad)
    total = shape.full_values_per_token * cells * value_bytes
    if shape.swa_values_per_token:
        swa_cells = min(cells, padded_context(shape.window * n_seq + const.ubatch, const.ctx_pad))
        total += shape.swa_values_per_token * swa_cells * value_bytes
    return total + shape.state_bytes * n_seq


def kv_read_bytes(model: Model, depth: int, kv_type: str, catalog: Catalog) -> float:
    """Bytes of cache one decoded token reads when `depth` tokens are already in the context."""
    value_bytes = constants(catalog).kv_bytes[kv_type]
    shape = kv_shape(model)
    read_rule = sizing_for(model.attention).kv_read
    values = read_rule(model, depth) if read_rule is not None else None
    if values is not None:  # an attention kind that reads less than it caches (DeepSeek-V4)
        return values * value_bytes + shape.state_bytes
    read = shape.full_values_per_token * depth * value_bytes
    if shape.swa_values_per_token:
        read += shape.swa_values_per_token * min(depth, shape.window) * value_bytes
    return read + shape.state_bytes


# --- compute buffers ----------------------------------------------------------------------------


def compute_buffer_bytes(
    model: Model, ctx: int, catalog: Catalog, flash_attention: bool = True, ubatch: int = 0
) -> float:
    """llama.cpp's CUDA compute buffer: the largest phase of the worst-case ubatch graph.

    The graph allocator reuses memory, so the buffer is the peak of one phase, not a sum: the
    output logits (f32 vocab x ubatch), the FFN activations, and without flash attention the f32
    score matrix (ctx x ubatch x heads) that grows with context. Every part scales with the ubatch
    (`-ub`; 0: llama.cpp's default, estimator.toml [llama] ubatch): an offloaded run's -ub 2048 takes
    four times the default's buffer.
    """
    # With flash attention the context plays no part: one entry serves every context.
    key = (id(model), 0 if flash_attention else ctx, bool(flash_attention), id(catalog), ubatch)
    hit = _BUFFER_MEMO.get(key)
    if hit is not None and hit[1] is model and hit[2] is catalog:
        return hit[0]
    peak = _compute_buffer_bytes(model, ctx, catalog, flash_attention, ubatch)
    if len(_BUFFER_MEMO) >= _MEMO_LIMIT:
        _BUFFER_MEMO.clear()
    _BUFFER_MEMO[key] = (peak, model, catalog)
    return peak


def _compute_buffer_bytes(
    model: Model, ctx: int, catalog: Catalog, flash_attention: bool, ubatch: int
) -> float:
    const = constants(catalog)
    ub = ubatch or const.ubatch
    f32 = 4
    residual = 2 * model.hidden * ub * f32
    logits = model.vocab * ub * f32
    ffn_width = model.moe_intermediate_size or model.intermediate_size or 4 * model.hidden
    ffn = (2 * ffn_width) * ub * f32 + residual
    peak = max(logits, ffn)
    if not flash_attention:
        cells = padded_context(ctx, const.ctx_pad)
        scores = cells * ub * model.heads * f32 + residual + ffn_width * ub * f32
        peak = max(peak, scores)
    return peak + const.compute_base_bytes


# --- usable memory -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Usable:
    per_card_gib: float  # what one card lets a framework allocate
    count: int
    memory_gib: float  # nominal memory of one card (or the unified-memory system)
    notes: tuple[Note, ...]

    @property
    def total_gib(self) -> float:
        return self.per_card_gib * self.count


def default_os(gpu: Gpu, catalog: Catalog) -> str:
    """What to assume when the user did not say (hosts.toml [os] by_segment): Macs run macOS,
    datacenter cards and Jetson modules headless Linux, workstation cards a Linux desktop,
    GeForce/Radeon desktop cards Windows with the desktop on them."""
    if gpu.vendor == "Apple":
        return "macos"
    rules = sections(catalog).hosts.os
    return rules.by_segment.get(gpu.segment, rules.fallback)


def runs_one_os(gpu: Gpu, catalog: Catalog) -> bool:
    """A card that runs one OS in practice (an Apple chip: macOS; SXM / datacenter boards and Jetson
    modules: Linux): a reply offers no OS switch for it and doesn't ask which OS it runs."""
    return gpu.vendor == "Apple" or gpu.segment in sections(catalog).hosts.os.one_os_segments


def server_os(catalog: Catalog) -> str:
    """The OS a server runs whatever card it holds (hosts.toml [os] server_os)."""
    return sections(catalog).hosts.os.server_os


SERVING_ENGINES = frozenset({"vllm", "sglang"})  # engines that take a set share of each card at start


def engine_of(framework: str, catalog: Catalog) -> str:
    """The engine a framework runs on (frameworks.toml `engine`: LM Studio -> llama.cpp); an unknown
    name is its own."""
    fw = catalog.frameworks.get(framework)
    return fw.engine if fw else framework


def serving_share(engine: str, asked: float | None, catalog: Catalog) -> float | None:
    """The share of each card's memory the engine fills: the one the user set (`--gpu-memory-utilization
    0.7`, SGLang's `--mem-fraction-static`) for vLLM and SGLang, else the engine's default, the very
    figure its command launches with (frameworks.toml `gpu_memory_utilization`: vLLM 0.92, SGLang
    0.88), so a row is never judged against memory its command does not let it take; None: the engine
    fills what the card has free (llama.cpp and the rest)."""
    if engine not in SERVING_ENGINES:
        return None
    if asked is not None:
        return asked
    fw = catalog.frameworks.get(engine)
    return fw.gpu_memory_utilization if fw is not None else None


def usable_memory(gpu: Gpu, memory_gib: float, count: int, os_name: str, catalog: Catalog) -> Usable:
    const = constants(catalog)
    notes: list[Note] = []
    if gpu.vendor == "Apple":
        fraction = (
            const.mac_fraction_small if memory_gib <= const.mac_small_limit_gib else const.mac_fraction_large
        )
        per_card = memory_gib * fraction
        notes.append(Note("assume.macos_wired", {"fraction": round(fraction * 100), "gib": per_card}))
        return Usable(per_card, 1, memory_gib, tuple(notes))
    if gpu.unified_memory:
        # A headless 8 GB Jetson keeps ~2.8 GB for JetPack, not the 6 GiB a 128 GB desktop SoC keeps.
        reserve = round(min(const.unified_os_reserve_gib, memory_gib * const.unified_os_reserve_fraction), 1)
        per_card = memory_gib - reserve
        notes.append(Note("assume.unified_reserve", {"gib": reserve}))
        return Usable(per_card, count, memory_gib, tuple(notes))
    reserve = const.os_reserve_gib.get(os_name, 0.0)
    if reserve:
        notes.append(Note(f"assume.os_{os_name}", {"gib": reserve}))
    else:
        notes.append(Note("assume.os_headless", {"gib": const.driver_context_gib}))
    return Usable(discrete_per_card_gib(memory_gib, count, os_name, const), count, memory_gib, tuple(notes))


def discrete_per_card_gib(memory_gib: float, count: int, os_name: str, const: EstimatorConstants) -> float:
    """What each of `count` discrete cards lets a framework allocate: the driver context on every
    card, the desktop's reserve spread over all of them (it sits on one card only; the others keep
    their full memory). `usable_memory` without its notes, for loops over card counts."""
    return memory_gib - const.driver_context_gib - const.os_reserve_gib.get(os_name, 0.0) / count
