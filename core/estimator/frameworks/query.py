"""The value types of a framework answer: the setup asked about, one framework judged against it,
and the framework to suggest. Plain frozen data, so answers can be cached and compared."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from core.catalog.gpu import Gpu
from core.catalog.kv_cache import KvCacheType
from core.catalog.model import Model
from core.catalog.platforms import OsFamily
from core.catalog.quant import Quant
from core.i18n import Note

OsName = OsFamily  # core/catalog/platforms.py


@dataclass(frozen=True, slots=True)
class FrameworkQuery:
    """The setup and run configuration one answer is about."""

    gpu: Gpu
    model: Model
    quant: Quant
    context: int
    os: OsName = "linux"
    gpu_count: int = 1
    kv_cache: KvCacheType = "f16"
    fits_on_gpu: bool = True  # weights + KV + buffers fit in GPU memory
    n_gpu_layers: int | Literal["all"] = "all"  # layers offloaded to the GPU(s)
    # MoE: number of layers whose routed experts stay in CPU RAM (llama.cpp --n-cpu-moe);
    # >= model.layers means all of them (--cpu-moe). None/0 = experts on the GPU.
    n_cpu_moe: int | None = None
    # The backend the user named (estimate --backend, "on vulkan"): a framework runs the setup only
    # on that backend. None: each framework takes its first backend that drives the card.
    backend: str | None = None
    # CPU only (no GPU layers): the threads llama.cpp runs (-t N, the physical cores; 0 = its own
    # default) and whether the RAM spans NUMA nodes (2+ sockets: --numa distribute).
    cpu_only: bool = False
    cpu_threads: int = 0
    numa: bool = False
    # The Ollama tag the user typed ("qwen3:32b"): Ollama runs it when it downloads this quant.
    ollama_tag: str | None = None
    # Mixed cards: each card's memory (GiB) in the order llama.cpp numbers them, its -ts ratios.
    tensor_split: tuple[float, ...] = ()
    # N users at once (a concurrency question): the command serves them (llama-server -np N with N
    # slots of context, vLLM --max-num-seqs N, SGLang --max-running-requests N, OLLAMA_NUM_PARALLEL).
    users: int = 1
    # The share of each card vLLM / SGLang take, as the user set it (`--gpu-memory-utilization 0.7`):
    # the command carries it. None: the framework's own value (catalogs/frameworks.toml).
    gpu_memory_utilization: float | None = None
    # The split mode the user asked for, as each framework's launch says it ({"llama.cpp": "-sm
    # tensor", "ik_llama.cpp": "-sm graph"}; catalogs/split_modes.toml): empty when none was asked.
    split_flags: Mapping[str, str] = field(default_factory=dict)
    # llama.cpp's -ub the run is priced with where it isn't the default (0): the user's, or the larger
    # one an offloaded run takes so each ubatch's copy of the RAM-held weights serves more tokens.
    ubatch: int = 0

    @property
    def fully_on_gpu(self) -> bool:
        layers_ok = self.n_gpu_layers == "all" or self.n_gpu_layers >= self.model.layers
        return self.fits_on_gpu and layers_ok and not self.n_cpu_moe


@dataclass(frozen=True, slots=True)
class FrameworkOption:
    """One framework judged against a query."""

    framework: str  # Framework.id
    runnable: bool
    notes: tuple[Note, ...]  # why not / caveats / tips, most important first
    overhead_gib: tuple[float, float]  # beyond weights + KV + compute buffer, all GPUs together
    command: str  # filled launch command ("" when it can't run)
    backend: str | None = None  # the backend it would use: "cuda", "rocm", "vulkan", ...
    strengths: tuple[Note, ...] = ()
    weaknesses: tuple[Note, ...] = ()


@dataclass(frozen=True, slots=True)
class Recommendation:
    """The framework to suggest for single-user chat on this setup."""

    framework: str | None  # None when nothing runs
    reason: Note
    easy: str | None = None  # the point-and-click alternative (Ollama / LM Studio) when it runs
    alternatives: tuple[str, ...] = ()  # other runnable frameworks, catalog order
    hints: tuple[Note, ...] = ()
