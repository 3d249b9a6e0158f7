"""Backends (CUDA, ROCm, Metal, Vulkan, ...): what each drives, how a reply names them, which one a
framework would use on a card, and whether a backend the user named can drive it."""

from __future__ import annotations

from dataclasses import dataclass

from core.catalog.framework import Framework
from core.catalog.gpu import Gpu
from core.catalog.loader import Catalog
from core.catalog.sections import sections

# What each backend can drive. Vulkan is vendor-neutral; Apple is reached through Metal only.
BACKEND_VENDORS: dict[str, tuple[str, ...]] = {
    "cuda": ("NVIDIA",),
    "rocm": ("AMD",),
    "metal": ("Apple",),
    "sycl": ("Intel",),
    "vulkan": ("NVIDIA", "AMD", "Intel"),
    "cann": ("Huawei",),  # Ascend NPUs: llama.cpp's CANN backend, the vllm-ascend plugin
    "cpu": ("NVIDIA", "AMD", "Intel", "Apple"),
}


@dataclass(frozen=True, slots=True)
class BackendCheck:
    """Whether a backend the user named can drive the card on the OS, and if not, why (a code the
    caller words) and the backends that can."""

    ok: bool
    why: str = ""  # "unknown" | "vendor" | "os" | "compute" | "windows_hip" | "no_gpu"
    possible: tuple[str, ...] = ()


def below_min_compute(fw: Framework, gpu: Gpu) -> bool:
    """Whether the card's CUDA compute capability is below the framework's floor (unknown: no)."""
    cc, floor = gpu.compute_capability, fw.min_compute_capability
    return cc is not None and floor is not None and cc < floor


def drives(fw: Framework, backend: str, gpu: Gpu, os: str) -> bool:
    """Whether the framework's `backend` drives this GPU on this OS (vendor, OS, compute, ROCm target)."""
    if backend == "cpu" or gpu.vendor not in BACKEND_VENDORS.get(backend, ()):
        return False
    allowed = fw.backend_os.get(backend)
    if allowed is not None and os not in allowed:
        return False
    if backend == "cuda" and below_min_compute(fw, gpu):
        return False
    return not (backend == "rocm" and fw.rocm_gfx and gpu.gfx_target and gpu.gfx_target not in fw.rocm_gfx)


def backend_for(fw: Framework, gpu: Gpu, os: str, asked: str | None = None) -> str | None:
    """The first backend of the framework that drives this GPU on this OS (CPU is not a choice), or,
    when the user named one, that backend if the framework has it for this card and OS (else None:
    a framework without the asked backend does not run the setup; nothing is swapped in)."""
    if asked == "cpu":
        return "cpu" if "cpu" in fw.backends else None
    for backend in fw.backends if asked is None else (asked,):
        if backend not in fw.backends or not drives(fw, backend, gpu, os):
            continue
        return backend
    return None


def backend_names(catalog: Catalog) -> dict[str, str]:
    """Backend id -> how a reply writes it (catalogs/backends.toml [names])."""
    names = sections(catalog).backends.names
    return {b: str(names.get(b, b)) for b in BACKEND_VENDORS}


def backend_id(text: str, catalog: Catalog) -> str | None:
    """A backend id from a name or alias as typed ("Vulkan", "hip" -> rocm); None when unknown."""
    key = text.strip().lower()
    aliases = sections(catalog).backends.aliases
    key = str(aliases.get(key, key))
    return key if key in BACKEND_VENDORS else None


def _windows_hip(gpu: Gpu, catalog: Catalog) -> bool:
    """Whether llama.cpp's Windows HIP build has kernels for this AMD card (unknown target: yes)."""
    targets = sections(catalog).backends.windows_hip.get("gfx", ())
    return not targets or not gpu.gfx_target or gpu.gfx_target in targets


def _os_family(os: str) -> str:
    # The Linux flavours ("linux", "linux-wsl", ...) share llama.cpp's Linux builds.
    return "linux" if os.startswith("linux") else os


def card_backends(gpu: Gpu, os: str, catalog: Catalog) -> tuple[str, ...]:
    """The backends llama.cpp (the framework with every backend) drives this card with on this OS, in
    its order of preference, CPU last: what a user may name with --backend."""
    fw = catalog.frameworks.get("llama.cpp")
    family = _os_family(os)
    if fw is None or gpu.memory_gib <= 0:
        return ("cpu",)  # no card (a CPU-only setup): the CPU is the only backend
    hip_ok = family != "windows" or _windows_hip(gpu, catalog)
    out = [b for b in fw.backends if drives(fw, b, gpu, family) and (b != "rocm" or hip_ok)]
    return (*out, "cpu")


def check_backend(backend: str, gpu: Gpu, os: str, catalog: Catalog) -> BackendCheck:
    """Can `backend` (an id) drive this card on this OS? Never a substitute: the caller refuses."""
    possible = card_backends(gpu, os, catalog)
    if backend in possible:
        return BackendCheck(True, possible=possible)
    return BackendCheck(False, _why_not(backend, gpu, _os_family(os), catalog), possible)


def _why_not(backend: str, gpu: Gpu, family: str, catalog: Catalog) -> str:
    """The code for why llama.cpp's `backend` does not drive this card on this OS family."""
    fw = catalog.frameworks.get("llama.cpp")
    allowed = fw.backend_os.get(backend) if fw is not None else None
    if backend not in BACKEND_VENDORS:
        return "unknown"
    if gpu.memory_gib <= 0:
        return "no_gpu"
    if gpu.vendor not in BACKEND_VENDORS[backend]:
        return "vendor"
    if allowed is not None and family not in allowed:
        return "os"
    if backend == "rocm" and family == "windows":
        return "windows_hip"
    return "compute"  # CUDA below llama.cpp's minimum compute capability, or a ROCm target it lacks
