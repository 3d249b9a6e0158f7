"""An inference framework: what it runs, where, with what overhead and launch command."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Framework:
    id: str  # "llama.cpp", "vllm", "ollama", "lmstudio", ...
    name: str
    aliases: tuple[str, ...]
    kind: str  # "cli/server", "server", "desktop", ...
    engine: str  # the engine underneath: ollama and LM Studio run llama.cpp
    quant_formats: tuple[str, ...]  # Quant.format values it loads ("gguf", "serving", "mlx")
    quants: tuple[str, ...]  # explicit quant ids it runs (empty = every quant of its formats)
    backends: tuple[str, ...]  # "cuda", "rocm", "metal", "vulkan", "sycl", "cpu"
    min_compute_capability: float | None  # CUDA minimum
    overhead_gib: tuple[float, float]  # runtime overhead beyond weights + KV + compute (low, high)
    os: tuple[str, ...]  # "linux", "windows", "macos"
    command: str  # launch template with {placeholders}
    notes: str = ""
