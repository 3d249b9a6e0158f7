"""vLLM and SGLang command values: what to serve (a published checkpoint, the original repo with
online quantization, a GGUF file), tensor parallel, dtype and KV cache dtype."""

from __future__ import annotations

from core.catalog.framework import Framework
from core.catalog.kv_cache import FULL_PRECISION_KV
from core.catalog.loader import default_catalog
from core.catalog.model import Model
from core.catalog.published_files import published_repo
from core.catalog.quant import Quant
from core.estimator.frameworks.commands.sources import gguf_file, published_checkpoint
from core.estimator.frameworks.kernels import kernels_run
from core.estimator.frameworks.kv_flag import serving_kv_flag
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkQuery
from core.estimator.frameworks.serving_setup import parallel_sizes, siblings
from core.i18n import Note

# Quants that are the released weights (served from the model's own repo, no quant flag); ids of
# catalogs/quants.toml plus the plain spellings.
_UNQUANTIZED = frozenset({"HF-BF16", "HF-FP16", "HF-MXFP4", "FP16", "F16", "BF16", "FP32", "F32"})
# Serving quants vLLM/SGLang create on the fly from the original repo.
_ONLINE_QUANT_FLAGS = {
    "FP8": "fp8",
    "BNB-NF4": "bitsandbytes",
    "BNB-INT8": "bitsandbytes",
    "BITSANDBYTES": "bitsandbytes",
}


def serving_values(fw: Framework, q: FrameworkQuery, notes: list[Note]) -> dict[str, str]:
    """vLLM / SGLang: what to serve, tensor parallel, dtype, online quantization, KV dtype."""
    # an FP8 / AWQ repo the Hub listing found, else one catalogs/estimator.toml [checkpoints] lists
    listed = published_repo(q.model, q.quant.id) or _listed(q) or None
    online = None if q.model.native_quant == q.quant.id else _online_quant(q.quant, listed)
    return {
        "serve_model": _serve_model(fw, q, listed, online, notes),
        "gpu_util": _gpu_util(fw, q),
        "tp_flags": _tp_flags(fw, q),
        "dtype_flags": " --dtype half" if _half(q) else "",
        "quant_flags": f" --quantization {online}" if online else "",
        "kv_dtype_flags": _kv_dtype_flags(fw, q),
        "seq_flags": _seq_flags(fw, q),
    }


def servable(model: Model, quant: Quant) -> bool:
    """Whether vLLM / SGLang have weights to serve in this quant: the release itself, weights made on
    the fly (FP8, bitsandbytes), a GGUF, or a published checkpoint (of a same-size sibling too). The
    plan is never one whose command can't be written (2x A6000, Llama-3.3-70B: no AWQ listed)."""
    repo = model.hf_repo or model.name
    if quant.format == "gguf" or model.native_quant == quant.id or published_repo(model, quant.id):
        return True
    if quant.id.upper() in _UNQUANTIZED or quant_in(quant, _UNQUANTIZED) or _online_quant(quant, None):
        return True
    names = (quant.id, *siblings(quant.id, default_catalog()))
    return any(published_checkpoint(repo, name) for name in names)


def _gpu_util(fw: Framework, q: FrameworkQuery) -> str:
    """The share of each card the command lets the engine take: the user's (the estimate was priced
    at it), else the framework's own value."""
    share = q.gpu_memory_utilization or fw.gpu_memory_utilization
    return f"{share:g}" if share else ""


def _listed(q: FrameworkQuery) -> str:
    """The [checkpoints] entry of the model's repo in this quant (a published FP8 / AWQ copy), ""
    for none or for the release's own quant."""
    if q.quant.format != "serving" or q.model.native_quant == q.quant.id:
        return ""
    return published_checkpoint(q.model.hf_repo or q.model.name, q.quant.id)


def _online_quant(quant: Quant, listed: str | None) -> str | None:
    """The --quantization method that makes this quant on the fly; None for a published checkpoint,
    which is already quantized and served as it is."""
    online = next((flag for key, flag in _ONLINE_QUANT_FLAGS.items() if quant_in(quant, (key,))), None)
    return None if listed and online else online


def _serve_model(
    fw: Framework, q: FrameworkQuery, listed: str | None, online: str | None, notes: list[Note]
) -> str:
    """What the command serves: a GGUF file with its tokenizer, a listed repo, the original repo
    (released weights or online quantization) or a published checkpoint."""
    model, quant = q.model, q.quant
    repo = model.hf_repo or model.name
    if quant.format == "gguf":
        return f"./{gguf_file(model, quant)} --tokenizer {repo}"
    if listed:
        return listed
    if model.native_quant == quant.id:
        return repo  # the release itself is in this quant (DeepSeek / MiniMax FP8)
    if quant.id.upper() in _UNQUANTIZED or quant_in(quant, _UNQUANTIZED) or online:
        return repo
    return _checkpoint(fw, q, repo, notes)


def _checkpoint(fw: Framework, q: FrameworkQuery, repo: str, notes: list[Note]) -> str:
    """The published checkpoint of `repo` in this quant."""
    quant, catalog = q.quant, default_catalog()
    published = published_checkpoint(repo, quant.id)
    for other in () if published else siblings(quant.id, catalog):
        # None listed in this quant: the listed one of the same size (AWQ <-> GPTQ-Int4), said so;
        # never one the card has no kernels for (AWQ on a V100, where GPTQ runs).
        if other in catalog.quants and not kernels_run(fw, catalog.quants[other], q.gpu, q.model, catalog):
            continue
        published = published_checkpoint(repo, other)
        if published:
            notes.append(Note("fw.vllm.sibling_checkpoint", {"quant": quant.id, "served": published}))
            break
    if fw.engine not in ("vllm", "sglang"):
        return published or f"<{quant.id} checkpoint of {repo}>"
    # No placeholder in a command people paste: a listed repo, or no command and a note saying none
    # is listed (the caller drops a command whose model is "").
    if not published:
        notes.append(Note("fw.vllm.no_checkpoint", {"quant": quant.id, "repo": repo}))
    return published


def _tp_flags(fw: Framework, q: FrameworkQuery) -> str:
    """Tensor parallel at a size the engine accepts (it divides the attention heads; 1/2/4/8), the
    other cards pipeline stages, each in the engine's own spelling."""
    if q.gpu_count <= 1 or not fw.tensor_parallel:
        return ""
    if fw.engine not in ("vllm", "sglang"):
        return f" --tensor-parallel-size {q.gpu_count}"
    tp, pp = parallel_sizes(q.model, q.gpu_count, default_catalog())
    sglang = fw.engine == "sglang"
    out = "" if tp <= 1 else (f" --tp {tp}" if sglang else f" --tensor-parallel-size {tp}")
    if pp > 1:
        out += f" --pp-size {pp}" if sglang else f" --pipeline-parallel-size {pp}"
    return out


def _seq_flags(fw: Framework, q: FrameworkQuery) -> str:
    """N users: the requests batched at once, in each engine's spelling (vLLM engine args
    --max-num-seqs, SGLang server args --max-running-requests): the batch the reply's figures were
    priced for is the one the server runs (their defaults admit hundreds)."""
    if q.users <= 1:
        return ""
    return f" --max-running-requests {q.users}" if fw.engine == "sglang" else f" --max-num-seqs {q.users}"


def _half(q: FrameworkQuery) -> bool:
    """Served in FP16: a card without BF16 (NVIDIA below compute 8.0), or an FP16 the user asked for
    (HF-FP16) — both engines default to the release's BF16 (`--dtype auto`), so FP16 must be said.
    vLLM and SGLang both take `--dtype half` (vLLM engine args; SGLang server args, its
    test_dtype_options runs half / float16 / bfloat16)."""
    cc = q.gpu.compute_capability
    return q.quant.id == "HF-FP16" or (q.gpu.vendor == "NVIDIA" and cc is not None and cc < 8.0)


def _kv_dtype_flags(fw: Framework, q: FrameworkQuery) -> str:
    """A quantized KV cache: FP8, in the format each engine takes (vLLM `--kv-cache-dtype fp8`,
    docs.vllm.ai quantization/quantized_kvcache; SGLang `--kv-cache-dtype fp8_e5m2`, docs.sglang.io
    advanced_features/server_arguments: "To enable fp8 kv cache quantization, add --kv-cache-dtype
    fp8_e5m2"). The cache is priced as q8_0 (one byte a value); the ways out offer no 4-bit cache to
    these engines (ways_out/kv_quant.py)."""
    if q.kv_cache == FULL_PRECISION_KV:
        return ""
    return " " + (serving_kv_flag(fw) or "--kv-cache-dtype fp8")
