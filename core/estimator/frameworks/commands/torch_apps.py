"""Hugging Face transformers, MLC LLM and gpt-fast command values: the quantization a transformers
load makes on the fly (bitsandbytes), MLC's prebuilt repo name, gpt-fast's checkpoint file and
tensor-parallel launcher. They are priced only when named (catalogs/frameworks.toml `plan_pick`)."""

from __future__ import annotations

from core.estimator.frameworks.commands.sources import base_repo_name
from core.estimator.frameworks.quant_match import quant_in
from core.estimator.frameworks.query import FrameworkQuery

# bitsandbytes quants transformers makes while loading (BitsAndBytesConfig); any other quant is a
# checkpoint whose config.json carries its quantization_config (AWQ, GPTQ, FP8) or the release.
_BNB = {"BNB-NF4": "load_in_4bit=True, bnb_4bit_quant_type='nf4'", "BNB-INT8": "load_in_8bit=True"}
# MLC's weight formats by quant id, as the mlc-ai repos name them ("Qwen3-8B-q4f16_1-MLC").
_MLC = {"MLC-Q4F16_1": "q4f16_1", "HF-FP16": "q0f16"}
# gpt-fast's quantize.py output files (README "Quantization": model_int8.pth, model_int4.g32.pth).
_GPT_FAST = {
    "INT8-WO": ("int8", "model_int8.pth"),
    "INT4-WO-G32": ("int4 --groupsize 32", "model_int4.g32.pth"),
}


def torch_values(q: FrameworkQuery) -> dict[str, str]:
    """The placeholders of the transformers, MLC LLM and gpt-fast templates."""
    quant, base = q.quant, base_repo_name(q.model)
    repo = q.model.hf_repo or q.model.name
    bnb = next((cfg for key, cfg in _BNB.items() if quant_in(quant, (key,))), "")
    mode, pth = _GPT_FAST.get(quant.id, ("", "model.pth"))
    return {
        "hf_quant_import": ", BitsAndBytesConfig" if bnb else "",
        "hf_quant_kwargs": f", model_kwargs={{'quantization_config': BitsAndBytesConfig({bnb})}}"
        if bnb
        else "",
        "mlc_model": f"{base}-{_MLC.get(quant.id, 'q4f16_1')}-MLC",
        "mlc_tp_flags": f" --overrides 'tensor_parallel_shards={q.gpu_count}'" if q.gpu_count > 1 else "",
        "gf_repo": repo,
        "gf_quantize": (
            f" && python quantize.py --checkpoint_path checkpoints/{repo}/model.pth --mode {mode}"
            if mode
            else ""
        ),
        "gf_checkpoint": f"checkpoints/{repo}/{pth}",
        "gf_launch": f"torchrun --standalone --nproc_per_node={q.gpu_count} generate.py"
        if q.gpu_count > 1
        else "python generate.py",
    }
