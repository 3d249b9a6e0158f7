"""The framework to suggest for one user chatting on a setup (latency, not throughput): the usual
pick for the card and the quant's format, the point-and-click alternative and hints."""

from __future__ import annotations

from collections.abc import Iterable

from core.catalog.loader import Catalog, default_catalog
from core.estimator.frameworks.gates import runs
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkOption, FrameworkQuery, Recommendation
from core.i18n import Note

# The ExLlama formats: their quants list loaders too, but the pick goes by format (EXL3 first).
_EXL = ("EXL2", "EXL3")


def recommend(
    q: FrameworkQuery,
    options: Iterable[FrameworkOption] | None = None,
    catalog: Catalog | None = None,
) -> Recommendation:
    """The best framework for one user chatting on this setup (latency, not throughput)."""
    ok = _runnable(q, options, catalog)
    if not ok:
        return Recommendation(None, Note("fw.rec.none", {"quant": q.quant.id, "gpu": q.gpu.name}))
    params = {"count": q.gpu_count, "quant": q.quant.id, "gpu": q.gpu.name}
    hints: list[Note] = []
    pick, reason = _pick_for_format(ok, q, params, hints)
    if pick is None:
        pick, reason = next(iter(ok)), "fw.rec.only_option"
    easy = _easy(ok, q, pick)
    if q.gpu_count == 1 and pick in ("vllm", "sglang"):
        hints.append(Note("fw.rec.hint_concurrency", params))
    alternatives = tuple(fid for fid in ok if fid not in (pick, easy))
    # The reason names the framework as people write it ("vLLM", "MLX (mlx-lm)"), not by its id.
    fw = (catalog or default_catalog()).frameworks.get(pick)
    named = params | {"framework": fw.name if fw is not None else pick}
    return Recommendation(pick, Note(reason, named), easy, alternatives, tuple(hints))


def _easy(ok: dict[str, object], q: FrameworkQuery, pick: str) -> str | None:
    """The point-and-click app that runs (LM Studio first on a Mac), unless it is the pick itself."""
    easy = _first(ok, ("ollama", "lmstudio") if q.gpu.vendor != "Apple" else ("lmstudio", "ollama"))
    return None if easy == pick else easy


def _runnable(
    q: FrameworkQuery, options: Iterable[FrameworkOption] | None, catalog: Catalog | None
) -> dict[str, object]:
    """The frameworks that run, by id, in catalog order."""
    # A framework priced only when named (`plan_pick = false`: transformers, MLC LLM) is never one.
    frameworks = (catalog or default_catalog()).frameworks
    if options is not None:
        return {
            o.framework: o
            for o in options
            if o.runnable and (o.framework not in frameworks or frameworks[o.framework].plan_pick)
        }
    # Only which frameworks run matters here: ask just that (`runs`), in catalog order.
    return {fw.id: fw for fw in frameworks.values() if fw.plan_pick and runs(fw, q)}


def _pick_for_format(
    ok: dict[str, object], q: FrameworkQuery, params: dict[str, object], hints: list[Note]
) -> tuple[str | None, str]:
    """(framework, reason code) by the card and the quant's format; None when none of the usual
    picks runs. A multi-card GGUF setup that tensor parallel would suit gets a hint."""
    fmt = q.quant.format
    if q.quant.loaders and not quant_in(q.quant, _EXL):
        # Only some engines read the file (ik_llama.cpp's own types): the first of them that runs.
        return _first(ok, q.quant.loaders), "fw.rec.quant_loader"
    if q.gpu.vendor == "Apple":
        return _first(ok, ("mlx", "llama.cpp")), "fw.rec.apple"
    if fmt == "serving" and "ktransformers" in ok and q.model.is_moe and q.n_cpu_moe and len(ok) == 1:
        # Judged among KTransformers alone (the plan priced a big MoE on an AMX Xeon with it).
        return "ktransformers", "fw.rec.kt_amx"
    if fmt == "serving":
        return _pick_serving(ok, q)
    if fmt == "gguf":
        if _tensor_parallel_suits(q):
            hints.append(Note("fw.rec.hint_vllm_tp", params))
        if "llama.cpp" not in ok and "ik_llama.cpp" in ok and q.model.is_moe and q.n_cpu_moe:
            # Judged among the fork alone (the plan priced a big MoE on it): why it is the one.
            return "ik_llama.cpp", "fw.rec.ik_cpu_moe"
        return _first(ok, ("llama.cpp",)), _gguf_reason(ok, q)
    if fmt == "mlx":
        return _first(ok, ("mlx", "lmstudio")), "fw.rec.apple"
    return None, ""


def _pick_serving(ok: dict[str, object], q: FrameworkQuery) -> tuple[str | None, str]:
    """A serving quant: ExLlama for its own formats, else vLLM (tensor parallel over 2+ cards)."""
    if quant_in(q.quant, _EXL):
        return _first(ok, ("exllamav3", "exllamav2")), "fw.rec.exllama"
    reason = "fw.rec.vllm_tp" if q.gpu_count > 1 else "fw.rec.serving"
    return _first(ok, ("vllm", "sglang", "exllamav2")), reason


def _tensor_parallel_suits(q: FrameworkQuery) -> bool:
    """Whether vLLM's tensor parallel would suit this GGUF setup better: 2+ NVIDIA cards of compute
    7.5 or newer, on Linux, with everything on the GPUs."""
    nvidia_tp = q.gpu.vendor == "NVIDIA" and (q.gpu.compute_capability or 0) >= 7.5
    return q.gpu_count > 1 and nvidia_tp and q.os == "linux" and q.fully_on_gpu


def _gguf_reason(ok: dict[str, object], q: FrameworkQuery) -> str:
    """Why llama.cpp is the GGUF pick: on the CPU alone, MoE experts in RAM, one card or several."""
    if q.cpu_only:
        return "fw.rec.llamacpp_cpu"
    if q.model.is_moe and q.n_cpu_moe and "ik_llama.cpp" in ok and "llama.cpp" in ok:
        # A MoE model with its experts in RAM: the paired measurements show the ik_llama.cpp fork
        # ahead (1.1-1.7x prefill, 1.1x decode on the same box), but mainline is what people run
        # (prebuilt for every OS, `--n-cpu-moe`): it stays the pick and its line names the fork
        # (fw.rec.llamacpp_ik); ik is the pick where only it reads the file, or when asked for.
        # On the CPU alone the CPU line names ik the same way (fw.rec.llamacpp_cpu).
        return "fw.rec.llamacpp_ik"
    return "fw.rec.llamacpp_multi" if q.gpu_count > 1 else "fw.rec.llamacpp"


def _first(ok: dict[str, object], order: tuple[str, ...]) -> str | None:
    return next((fid for fid in order if fid in ok), None)
