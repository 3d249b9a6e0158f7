"""The hard gates read from a Framework's fields: the OS, the quant's format and loaders, a backend
that drives the card, a format's backends, full GPU offload. `hard_gates` says why a framework
does not run (Notes, in the order the gates run); `runs` answers only whether it does."""

from __future__ import annotations

from dataclasses import dataclass

from core.catalog.framework import Framework
from core.estimator.frameworks.backends import backend_for, below_min_compute
from core.estimator.frameworks.quant_match import loads, quant_in
from core.estimator.frameworks.query import FrameworkQuery
from core.estimator.frameworks.rules import rule_matches
from core.i18n import Note, translate


@dataclass(frozen=True, slots=True)
class Gates:
    """The hard gates' verdict on one framework."""

    blockers: tuple[Note, ...]  # why it can't run, in the order the gates ran
    wsl_only: bool  # on Windows it runs under WSL only (then "fw.gate.wsl" is the first blocker)
    backend: str | None  # the backend it would use, None when none drives the card


def gate_params(fw: Framework, q: FrameworkQuery) -> dict[str, object]:
    """The values every framework note may name."""
    return {
        "framework": fw.name,
        "gpu": q.gpu.name,
        "compute": q.gpu.compute_capability,
        "min_compute": fw.min_compute_capability,
        "quant": q.quant.id,
        "ctx": q.context,
        "kv": q.kv_cache,
        "count": q.gpu_count,
        "os": q.os,
        "vendor": q.gpu.vendor,
        "model": q.model.name,
        "loaders": ", ".join(q.quant.loaders),
    }


def hard_gates(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> Gates:
    """Every hard gate of the framework for the query, each failing one a blocker."""
    blockers, wsl_only = _os_blockers(fw, q, params)
    fmt_ok = _format_blockers(fw, q, params, blockers)
    # Under WSL the GPU is reached as on Linux, so judge the backend for Linux there.
    backend = backend_for(fw, q.gpu, "linux" if wsl_only else q.os, q.backend)
    if backend is None and (q.os in fw.os or wsl_only):
        blockers.append(_no_backend(fw, q, params))
    if backend is not None and fmt_ok:
        blockers.extend(_format_backend_blockers(fw, q, backend, params))
    if fw.gpu_only and not q.fully_on_gpu:
        blockers.append(Note("fw.gate.needs_full_gpu", params))
    return Gates(tuple(blockers), wsl_only, backend)


def _os_blockers(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> tuple[list[Note], bool]:
    """The OS gate: (blockers so far, whether it runs only under WSL)."""
    if q.os in fw.os:
        return [], False
    if fw.wsl and q.os == "windows":
        return [Note("fw.gate.wsl", params)], True
    return [Note("fw.gate.os", params | {"supported": ", ".join(fw.os)})], False


def _format_blockers(
    fw: Framework, q: FrameworkQuery, params: dict[str, object], blockers: list[Note]
) -> bool:
    """The quant gate: whether the framework reads this quant's format (and list); why not in `blockers`."""
    if q.quant.format not in fw.quant_formats:
        loads_names = " / ".join(format_name(f) for f in fw.quant_formats)
        named = {"formats": loads_names, "quant_format": format_name(q.quant.format)}
        blockers.append(Note("fw.gate.format", params | named))
        return False
    if not loads(fw, q.quant):
        blockers.append(Note("fw.gate.quant_loader", params))
        return False
    if fw.quants and not quant_in(q.quant, fw.quants):
        blockers.append(Note("fw.gate.quant_list", params | {"quants": ", ".join(fw.quants)}))
        return False
    return True


def format_name(fmt: str) -> str:
    """A weight format by name ("serving" -> "Hugging Face safetensors"): the reply never shows the
    internal id. The names are proper nouns, the same in every language (catalogs/messages
    frameworks.toml [fw.format_name]), so the English entry serves both."""
    code = f"fw.format_name.{fmt}"
    name = translate(code, "en")
    return fmt if name == code else name


def _format_backend_blockers(
    fw: Framework, q: FrameworkQuery, backend: str, params: dict[str, object]
) -> list[Note]:
    """The format's backends gate: some formats run on some of a framework's backends only."""
    allowed = fw.format_backends.get(q.quant.format)
    if allowed is not None and backend not in allowed:
        return [Note("fw.gate.format_backend", params | {"backends": ", ".join(allowed)})]
    return []


def _no_backend(fw: Framework, q: FrameworkQuery, params: dict[str, object]) -> Note:
    """Why no backend of the framework drives this card: compute too old, ROCm target, or none."""
    gpu = q.gpu
    if q.cpu_only and "cpu" not in fw.backends:
        # A CPU-only run's "card" is a stand-in named "CPU only (...)": say what is missing instead.
        return Note("fw.gate.no_cpu_backend", params)
    if q.backend is not None:
        return Note("fw.gate.asked_backend", params | {"backend": q.backend})
    if gpu.vendor == "NVIDIA" and "cuda" in fw.backends and below_min_compute(fw, gpu):
        return Note("fw.gate.compute", params)
    rocm_listed = gpu.vendor == "AMD" and "rocm" in fw.backends and fw.rocm_gfx
    if rocm_listed and gpu.gfx_target and gpu.gfx_target not in fw.rocm_gfx:
        return Note("fw.gate.rocm_gfx", params | {"gfx": gpu.gfx_target})
    return Note("fw.gate.no_backend", params)


def runs(fw: Framework, q: FrameworkQuery) -> bool:
    """`evaluate(fw, q).runnable`, without building a single note: the same gates in the same order,
    answering at the first blocker. Choosing a framework needs no more than this."""
    if q.os not in fw.os:
        return False  # blocked outright, or runnable only under WSL: a blocker either way
    if q.quant.format not in fw.quant_formats:
        return False
    if not loads(fw, q.quant) or fw.quants and not quant_in(q.quant, fw.quants):
        return False
    backend = backend_for(fw, q.gpu, q.os, q.backend)
    if backend is None:
        return False
    allowed = fw.format_backends.get(q.quant.format)
    if allowed is not None and backend not in allowed:
        return False
    if fw.gpu_only and not q.fully_on_gpu:
        return False
    return not any(rule.effect == "block" and rule_matches(rule, q, backend) for rule in fw.rules)
