"""KTransformers (SGLang + KT-Kernel) command values: the checkpoint in its native precision, the
local folder both read and the kt-method that precision takes."""

from __future__ import annotations

from core.catalog.published_files import published_repo
from core.estimator.frameworks.commands.sources import published_checkpoint
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkQuery
from core.i18n import Note


def kt_values(q: FrameworkQuery, notes: list[Note]) -> dict[str, str]:
    """KTransformers: the checkpoint in its native precision (an FP8 release, or a published FP8 repo
    of a BF16 one), downloaded once to a local folder both SGLang and KT-Kernel read, and the
    kt-method that precision takes. No FP8 checkpoint known: no command (the caller drops it)."""
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
