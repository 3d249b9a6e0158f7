"""KTransformers command values: the checkpoint in its native precision for SGLang + KT-Kernel
(FP8 / BF16 safetensors), or GGUF experts for its classic `ktransformers` server (--gguf_path), the
local folder each reads and the kt-method the precision takes."""

from __future__ import annotations

from core.catalog.framework import Framework
from core.catalog.published_files import published_repo
from core.estimator.frameworks.commands.sources import published_checkpoint, published_gguf
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkQuery
from core.i18n import Note

# The classic recipe's launch (kvcache-ai/ktransformers doc/en/DeepseekR1_V3_tutorial.md and
# install.md: `ktransformers --model_path <config/tokenizer repo> --gguf_path <folder of GGUF parts>
# --cpu_infer N --port 10002`): the GGUF holds the weights (experts on the CPU, attention on the GPU),
# the Hugging Face repo only its config and tokenizer. The catalog's `command` is the SGLang +
# KT-Kernel one; a Framework has no per-format template field yet, so this one lives here.
GGUF_COMMAND = (
    "hf download {gguf_repo} --include '*{quant}*' --local-dir {gguf_dir} && ktransformers"
    " --model_path {repo} --gguf_path {gguf_dir}"
    " --cpu_infer $(lscpu -p=CORE | grep -v '^#' | sort -u | wc -l)"
    " --port 10002"
)


def kt_template(fw: Framework, q: FrameworkQuery) -> str:
    """The template a KTransformers run fills: the GGUF server's for a GGUF quant, else the catalog's."""
    return GGUF_COMMAND if q.quant.format == "gguf" else fw.command


def _gguf_values(q: FrameworkQuery) -> dict[str, str]:
    """GGUF: the repo holding the quant's files (downloaded to one folder, as --gguf_path reads a
    folder) and the original repo, read for its config and tokenizer only."""
    model = q.model
    published = published_gguf(model, q.quant)
    gguf_repo = published.repo if published is not None else model.gguf_repo or ""
    repo = model.hf_repo or model.name
    local = f"~/models/{gguf_repo.rsplit('/', 1)[-1]}-{q.quant.id}" if gguf_repo else ""
    # No GGUF repo known: serve_model empty, so the caller drops the command rather than guess one.
    return {"repo": repo, "gguf_repo": gguf_repo, "gguf_dir": local, "serve_model": gguf_repo}


def kt_values(q: FrameworkQuery, notes: list[Note]) -> dict[str, str]:
    """KTransformers: GGUF experts for the classic server, or the checkpoint in its native precision
    (an FP8 release, or a published FP8 repo of a BF16 one), downloaded once to a local folder both
    SGLang and KT-Kernel read, and the kt-method that precision takes. No FP8 checkpoint known: no
    command (the caller drops it)."""
    if q.quant.format == "gguf":
        return _gguf_values(q)
    model, quant = q.model, q.quant
    repo = model.hf_repo or model.name
    fp8 = quant_in(quant, ("FP8",))
    if fp8 and (model.native_quant or "").upper() != "FP8":
        repo = published_repo(model, quant.id) or published_checkpoint(repo, quant.id)
        if not repo:
            notes.append(
                Note("fw.vllm.no_checkpoint", {"quant": quant.id, "repo": model.hf_repo or model.name})
            )
    local = f"~/models/{repo.rsplit('/', 1)[-1]}" if repo else ""
    # serve_model doubles as "is there something to run": an empty one drops the command.
    return {"repo": repo, "local_dir": local, "kt_method": "FP8" if fp8 else "BF16", "serve_model": repo}
