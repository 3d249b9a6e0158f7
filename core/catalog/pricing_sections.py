"""The settings files the estimator prices with, as typed sections (read by `core/catalog/sections.py`).

estimator.toml (the memory model, the host side of an offload, the ways out, the default ladders),
speed.toml (hand-set speed constants), calibration.toml (the fitted speed terms), concurrency.toml
(the batched-decode fit), hosts.toml (host presets), cpus.toml's [host_ram] / [efficiency] and
eagle_drafts.toml. Each default lives here once: a field the code used to read with `.get(key, x)`
defaults to that `x`; a field the code required defaults to the shipped value, so a tiny catalog
without the file still prices.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

Words = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Band:
    """A (low, high) range as multipliers on a mid figure (speed bands, the CPU fit's spread)."""

    low: float  # multiplier on mid for the low end (< 1)
    high: float  # multiplier for the high end (> 1)


# --- estimator.toml ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class LlamaCppRules:
    ctx_pad: int = 256  # llama.cpp rounds the KV size up to a multiple of this many cells
    ubatch: int = 512  # default physical batch: sizes the compute buffer and the SWA slack
    compute_base_mib: float = 8.0
    flash_attention: bool = True


@dataclass(frozen=True, slots=True)
class VllmRules:
    gpu_memory_utilization: float = 0.92
    activation_gib: tuple[float, float] = (2.2, 5.7)
    cuda_graph_gib: float = 1.0
    nccl_per_gpu_gib: float = 2.1
    # Cards without NVLink (these segments): custom all-reduce is off, NCCL keeps far less per card.
    nccl_pcie_per_gpu_gib: float = 2.1
    pcie_segments: Words = ()


@dataclass(frozen=True, slots=True)
class DriverRules:
    context_gib: float = 0.45


@dataclass(frozen=True, slots=True)
class VerdictRules:
    smooth_fraction: float = 0.9


@dataclass(frozen=True, slots=True)
class OsRules:
    """[os.<name>]: what the desktop takes; macOS also the share of memory Metal wires to the GPU."""

    display_reserve_gib: float = 0.0
    gpu_fraction_small: float = 0.667
    gpu_fraction_large: float = 0.75
    small_limit_gib: float = 36.0


def _shipped_oses() -> dict[str, OsRules]:
    return {"linux": OsRules(), "linux_desktop": OsRules(0.4), "windows": OsRules(1.0), "macos": OsRules()}


@dataclass(frozen=True, slots=True)
class UnifiedRules:
    os_reserve_gib: float = 6.0
    os_reserve_fraction: float = 0.35  # the cap on a small module's reserve (8 GB Jetson: 2.8 GiB)


@dataclass(frozen=True, slots=True)
class OffloadScale:
    """[host.offload_scale]: multiplier on the host bandwidth reached, per offload kind."""

    experts: float = 1.0
    layers: float = 1.0
    cpu: float = 1.0


@dataclass(frozen=True, slots=True)
class KtransformersRules:
    prefill_chunk: int = 32768  # tokens per layerwise pass over the CPU-held experts
    hybrid_max_tokens: int = 4096  # up to this prompt length the CPU computes the experts instead


@dataclass(frozen=True, slots=True)
class HostRules:
    """[host]: the box around the card when the user does not say, and how an offload is priced."""

    os_reserve_gib: float = 4.0
    pcie_gbs: float = 25.0
    offload_ubatch: int = 512
    offload_ubatch_share: float = 0.1  # the most of the card(s) offload_ubatch's larger buffer may take
    # Decode band of a run with weights in RAM (measured / estimated), at least the card's widened.
    offload_band_low: float = 0.6
    offload_band_high: float = 1.75
    cpu_prefill_gflops: float = 400.0
    ktransformers: KtransformersRules = KtransformersRules()
    offload_scale: OffloadScale = OffloadScale()


@dataclass(frozen=True, slots=True)
class RemedyRules:
    """[remedy]: how the ways out of a row that doesn't fit are ranked."""

    low_bit_bpw: float = 3.0
    min_usable_tps: float = 3.0
    mac_wired_max_fraction: float = 0.9
    mac_wired_headroom_gib: float = 2.0
    mac_wired_min_free_gib: float = 4.0  # memory left to macOS whatever the fraction

    def mac_wired_cap_gib(self, memory_gib: float) -> float:
        """The most GiB the GPU may wire on a Mac with `memory_gib` of unified memory."""
        return min(memory_gib * self.mac_wired_max_fraction, memory_gib - self.mac_wired_min_free_gib)


@dataclass(frozen=True, slots=True)
class ChoiceRules:
    """[choice]: which row of an estimate the reply recommends (core/estimator/choice.py)."""

    default_context: int = 32768  # the context the command is written for when the user names none
    usable_tps: float = 5.0  # below this a chat reply says the pick is too slow for chat
    comfortable_tps: float = 10.0  # a better quant is taken over a faster one at this pace or more
    full_min_bpw: float = 4.0  # "runs fully on the GPU" means a quant of about 4 bits or more
    experts_min_bpw: float = 4.5  # MoE experts in RAM: a ~4-5-bit quant (Q4_K_M .. Q5_K_M)
    experts_max_bpw: float = 5.8
    low_bit_bpw: float = 3.1  # IQ1_*, IQ2_*, Q2_K: only when nothing else runs, said plainly
    slow_floor_tps: float = 3.0  # a ~3-bit+ run this fast (said to be slow) comes before a 1-2-bit one
    min_context: int = 8192  # a shorter context is no way out below this
    unasked_min_context: int = 16384  # no context asked: shortened to this before a 4-bit KV cache
    lossy_kv: Words = ("q4_0",)  # KV cache types taken only after smaller weights
    rich_quants: Words = ()  # quants past the point where more bits buy quality (Q8_0 over Q6_K) ...
    rich_tps: float = 20.0  # ... are taken over the next one down only at this pace or more
    weight_only_min_cc: float = 8.0  # FP8 weights below their tensor-core generation: Marlin (Ampere+)


@dataclass(frozen=True, slots=True)
class MacRules:
    """[mac]: Apple silicon runs MLX 4-bit or llama.cpp Metal, whichever the engine prices faster
    (core/estimator/plan.py `pricing_framework`); these are the two quants compared, the same bits."""

    llama_cpp_quant: str = "Q4_K_M"
    mlx_quant: str = "MLX-4BIT"


@dataclass(frozen=True, slots=True)
class BigMoeRules:
    """[big_moe]: a big MoE with its experts in RAM beside one or two NVIDIA cards is priced and run
    on this framework (core/estimator/plan.py `pricing_framework`); "" turns the rule off."""

    framework: str = ""
    min_params_b: float = 200.0
    max_cards: int = 2  # one or two cards: a bigger box splits the model over its cards instead
    amx_framework: str = ""  # a named CPU with Intel AMX whose RAM holds the FP8 experts
    amx_ram_share: float = 0.9  # of the host RAM the FP8 weights may take


@dataclass(frozen=True, slots=True)
class Ladder:
    """[ladder]: the quants and contexts a question that names none gets."""

    gguf: Words = ()
    large_params_b: float = 150.0
    gguf_large: Words = ()
    remedy: Words = ()
    serving: Words = ()
    mlx: Words = ()
    ktransformers: Words | None = None  # None: the serving ladder
    contexts: tuple[int, ...] = (4096, 16384, 32768, 65536, 131072)
    # Contexts a shorter-context way out may also stop at (not table columns): 8K between 4K and 16K.
    shorter_contexts: tuple[int, ...] = ()
    native_first: bool = True


def _shipped_kv_types() -> dict[str, float]:
    # ggml block sizes: q8_0 = 34 bytes per 32 values, q4_0 = 18 per 32.
    return {"f16": 2.0, "bf16": 2.0, "q8_0": 1.0625, "q4_0": 0.5625, "fp8": 1.0}


@dataclass(frozen=True, slots=True)
class ServingRules:
    """[serving]: which setups are served with vLLM / SGLang, and how the cards are split
    (core/estimator/frameworks/serving_setup.py)."""

    segments: Words = ("datacenter",)  # a card of these segments is a serving box
    min_cards: int = 4  # this many cards of any segment is one too
    min_compute: float = 7.5  # NVIDIA compute capability the serving frameworks' wheels need
    weights_share: float = 0.85  # a card-count serving box: the weights must fit this share of VRAM
    vendors: Words = ("NVIDIA", "AMD")  # the cards vLLM / SGLang drive
    frameworks: Words = ("vllm", "sglang")  # the pick, first that runs
    tp_sizes: tuple[int, ...] = (1, 2, 4, 8)  # tensor-parallel sizes within one node
    # the framework's rule on KV heads: "divide" (tp divides them, or they divide tp: replicated)
    kv_heads_rule: str = "divide"
    # a GGUF quant id the question named, as the serving checkpoint of the same weights
    from_gguf: dict[str, str] = field(default_factory=dict)
    # a serving quant with no listed checkpoint: the listed one of the same size served instead
    siblings: dict[str, Words] = field(default_factory=dict)
    # N users chatting: each live sequence holds its prompt and a reply of this many tokens (the
    # headline's depth; the KV line gives the full context's worst case)
    chat_reply_tokens: int = 512


@dataclass(frozen=True, slots=True)
class EstimatorSection:
    """catalogs/estimator.toml."""

    kv_types: dict[str, float] = field(default_factory=_shipped_kv_types)  # bytes per cached value
    llama_cpp: LlamaCppRules = LlamaCppRules()
    vllm: VllmRules = VllmRules()
    driver: DriverRules = DriverRules()
    verdict: VerdictRules = VerdictRules()
    os: dict[str, OsRules] = field(default_factory=_shipped_oses)
    unified: UnifiedRules = UnifiedRules()
    host: HostRules = HostRules()
    remedy: RemedyRules = RemedyRules()
    choice: ChoiceRules = ChoiceRules()
    ladder: Ladder = Ladder()
    serving: ServingRules = ServingRules()
    mac: MacRules = MacRules()
    big_moe: BigMoeRules = BigMoeRules()
    # base repo -> quant id -> published checkpoint (and "source": where that was read)
    checkpoints: dict[str, dict[str, str]] = field(default_factory=dict)


# --- speed.toml and calibration.toml -------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class BackendChoice:
    """[backend_choice]: the llama.cpp backend people run per vendor (a name, or per OS with a
    default) and per card."""

    vendor: dict[str, str | dict[str, str]] = field(default_factory=dict)
    gpu: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class OffloadSpeed:
    host_eff: float = 0.65  # share of host RAM bandwidth CPU-offloaded layers reach
    # The PCIe rate an offloaded prefill streams RAM-held weights at (GB/s), by card family and by
    # card; the runtimes that keep a second socket's reads local (core/estimator/memory_fit.py).
    pcie_gbs: dict[str, float] = field(default_factory=dict)
    pcie_gbs_card: dict[str, float] = field(default_factory=dict)
    numa_aware: Words = ()


@dataclass(frozen=True, slots=True)
class MultiGpu:
    tp_us_per_layer: float = 40.0  # all-reduce cost per layer per token, tensor parallel
    tp_eff: float = 0.85  # bandwidth efficiency kept per card under tensor parallel
    layer_split_us: float = 150.0  # per-token hand-off between cards, layer split
    # core/estimator/multi_gpu.py: the sync cost by link (x the PCIe one), each link's usable
    # reduction bandwidth (GB/s), row split's syncs over tensor mode's two.
    link_sync: dict[str, float] = field(default_factory=dict)
    link_gbs: dict[str, float] = field(default_factory=dict)
    row_syncs: float = 3.5


@dataclass(frozen=True, slots=True)
class EngineSplit:
    """catalogs/split_modes.toml [engine.X]: how an engine splits a model over several cards."""

    default: str = "layer"  # core/estimator/multi_gpu.SPLITS
    modes: Words = ("layer",)
    flags: dict[str, str] = field(default_factory=dict)  # mode -> launch flag ("-sm graph")


@dataclass(frozen=True, slots=True)
class SplitModesSection:
    """catalogs/split_modes.toml: the split modes per engine and the words people use for them."""

    engine: dict[str, EngineSplit] = field(default_factory=dict)
    words: dict[str, Words] = field(default_factory=dict)  # mode -> spellings ("graph" -> tensor)
    framework_words: dict[str, str] = field(default_factory=dict)  # "graph" -> "ik_llama.cpp"
    link_words: dict[str, Words] = field(default_factory=dict)  # link -> spellings ("nv桥" -> nvlink)

    def mode_for(self, word: str) -> str | None:
        """The mode a typed word names ("graph" -> "tensor", "pipeline" -> "layer"); None if none."""
        w = word.strip().lower()
        return next((mode for mode, words in self.words.items() if w == mode or w in words), None)


@dataclass(frozen=True, slots=True)
class MatrixRules:
    no_tensor_families: Words = ()  # families without usable FP16 matrix units
    tflops_per_gbs_fallback: float = 0.03  # matrix TFLOPS per GB/s for a card that lists none


@dataclass(frozen=True, slots=True)
class SpeedSection:
    """catalogs/speed.toml: the hand-set speed constants."""

    backend_choice: BackendChoice = BackendChoice()
    offload: OffloadSpeed = OffloadSpeed()
    multi_gpu: MultiGpu = MultiGpu()
    matrix: MatrixRules = MatrixRules()


@dataclass(frozen=True, slots=True)
class BackendFit:
    eff: float  # base efficiency
    us_per_layer: float  # fixed cost per layer (per token, or per ubatch)
    attention: float = 1.0  # prefill: attention's share of a matmul's efficiency
    kv_tile: float | None = None  # prefill: query rows sharing one pass over the K/V cache


@dataclass(frozen=True, slots=True)
class PhaseFit:
    """[decode] / [prefill]: per-backend bases and one factor per key of each term (speed.TERMS)."""

    backend: dict[str, BackendFit] = field(default_factory=dict)
    arch: dict[str, float] = field(default_factory=dict)
    backend_arch: dict[str, float] = field(default_factory=dict)
    quant_kind: dict[str, float] = field(default_factory=dict)
    backend_quant_kind: dict[str, float] = field(default_factory=dict)
    moe: dict[str, float] = field(default_factory=dict)
    moe_backend: dict[str, float] = field(default_factory=dict)
    hbm: dict[str, float] = field(default_factory=dict)
    framework: dict[str, float] = field(default_factory=dict)
    framework_moe: dict[str, float] = field(default_factory=dict)
    full_rate_tensor: dict[str, float] = field(default_factory=dict)
    framework_hbm: dict[str, float] = field(default_factory=dict)
    # prefill: attention's share per "backend/arch" (speed.PhaseCalibration.attention_arch)
    attention_arch: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class FittedMultiGpu:
    """calibration.toml [multi_gpu]: the fitted tensor-parallel terms over speed.toml's (None: not
    fitted, the hand-set value stands)."""

    tp_us_per_layer: float | None = None
    tp_eff: float | None = None
    layer_split_us: float | None = None
    rows: int = 0


@dataclass(frozen=True, slots=True)
class SplitFit:
    """catalogs/multi_gpu_fit.toml, written by scripts/fit_multi_gpu.py: per framework, its tensor
    split's sync cost over vLLM's and the share of each card's prefill rate it keeps; links whose
    sync cost the rows measured (over the speed.toml priors)."""

    sync_factor: dict[str, float] = field(default_factory=dict)
    prefill_eff: dict[str, float] = field(default_factory=dict)
    link_sync: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class SeenFit:
    """[seen]: what the fit had data for (cards, backend/arch pairs, non-llama.cpp frameworks)."""

    decode: Words = ()
    prefill: Words = ()
    decode_cards: Words = ()
    prefill_cards: Words = ()
    decode_frameworks: Words = ()
    prefill_frameworks: Words = ()


@dataclass(frozen=True, slots=True)
class CalibrationFit:
    """catalogs/calibration.toml, written by scripts/fit_calibration.py."""

    meta: dict[str, Any] = field(default_factory=dict)
    decode: PhaseFit = PhaseFit()
    prefill: PhaseFit = PhaseFit()
    multi_gpu: FittedMultiGpu = FittedMultiGpu()
    concurrency: dict[str, Any] = field(default_factory=dict)  # the legacy single batch_eff
    seen: SeenFit = SeenFit()
    band: dict[str, dict[str, Band]] = field(default_factory=dict)  # phase -> tier -> band


# --- concurrency.toml ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class PartialBand:
    low: float | None = None
    high: float | None = None


@dataclass(frozen=True, slots=True)
class BatchTerms:
    """Fitted batched-decode terms; None: not given at this level (the level below stands)."""

    batch_eff: float | None = None
    overlap: float | None = None
    seq_us: float | None = None
    routing: float | None = None
    band: PartialBand = PartialBand()


@dataclass(frozen=True, slots=True)
class FrameworkBatchTerms:
    """[framework.<group>], with its own [framework.<group>.moe] over it for a mixture of experts."""

    batch_eff: float | None = None
    overlap: float | None = None
    seq_us: float | None = None
    routing: float | None = None
    band: PartialBand = PartialBand()
    moe: BatchTerms | None = None


@dataclass(frozen=True, slots=True)
class ConcurrencySection:
    """catalogs/concurrency.toml, written by scripts/fit_concurrency.py."""

    default: BatchTerms = BatchTerms()
    framework: dict[str, FrameworkBatchTerms] = field(default_factory=dict)


# --- hosts.toml, cpus.toml, eagle_drafts.toml ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class HostPreset:
    """One [[host]]: a typical box's system RAM."""

    id: str
    ram_type: str
    channels: int
    mt_s: int
    bandwidth_gbs: float
    default_ram_gib: float
    max_ram_gib: float = math.inf
    name: str = ""
    aliases: Words = ()


@dataclass(frozen=True, slots=True)
class Numa:
    extra_socket_gain: float = 0.4  # what a second socket adds for a NUMA-blind runtime


def _os_by_segment() -> dict[str, str]:
    return {
        "consumer": "windows",
        "workstation": "linux_desktop",
        "datacenter": "linux",
        "embedded": "linux",
        "soc": "linux",
    }


@dataclass(frozen=True, slots=True)
class OsDefaults:
    """hosts.toml [os]: the OS a card runs when the user names none, which cards run only one OS (no
    switch is offered), and what makes a box a server (Linux assumed whatever the card)."""

    by_segment: dict[str, str] = field(default_factory=_os_by_segment)
    fallback: str = "windows"
    one_os_segments: Words = ("datacenter", "embedded")
    server_os: str = "linux"
    server_ram_gib: float = 256.0
    server_cards: int = 4
    serving_frameworks: Words = ("vllm", "sglang")


@dataclass(frozen=True, slots=True)
class HostsSection:
    """catalogs/hosts.toml."""

    host: tuple[HostPreset, ...] = ()
    defaults: dict[str, str] = field(default_factory=dict)  # segment / form -> preset id
    ram_types: dict[str, int] = field(default_factory=dict)  # MT/s a bare RAM type means
    numa: Numa = Numa()
    os: OsDefaults = OsDefaults()


@dataclass(frozen=True, slots=True)
class CpuEfficiency:
    """cpus.toml [efficiency]: the CPU fit (prefill shares per SIMD class and attention, decode
    multipliers per segment x memory kind, each with a "default"; the range per phase)."""

    prefill: dict[str, float] = field(default_factory=dict)
    decode: dict[str, float] = field(default_factory=dict)
    band: dict[str, Band] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CpusSection:
    """catalogs/cpus.toml beyond its [[cpu]] entries and [socket_words]."""

    host_ram: dict[str, float] = field(default_factory=dict)  # segment -> GiB of RAM per socket
    efficiency: CpuEfficiency = CpuEfficiency()


@dataclass(frozen=True, slots=True)
class EagleHead:
    model: str  # catalog model id
    repo: str  # the published EAGLE-3 head
    source: str = ""


@dataclass(frozen=True, slots=True)
class EagleDraftsSection:
    """catalogs/eagle_drafts.toml."""

    eagle: tuple[EagleHead, ...] = ()
