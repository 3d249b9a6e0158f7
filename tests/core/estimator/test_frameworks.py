"""Gating, commands and recommendation of core/estimator/frameworks/, on small inline objects."""

from __future__ import annotations

import pytest

from core.catalog.gpu import Gpu
from core.catalog.loader import default_catalog
from core.catalog.model import Model
from core.catalog.quant import Quant
from core.estimator.frameworks import FrameworkQuery, framework_options, recommend

CAT = default_catalog()


def gpu(**kw) -> Gpu:
    base = dict(
        id="t", vendor="NVIDIA", name="Test GPU", aliases=(), memory_gib=24.0, bandwidth_gbs=900.0,
        arch="Ampere", arch_family="ampere", segment="consumer", compute_capability=8.6,
    )  # fmt: skip
    return Gpu(**(base | kw))


V100 = gpu(name="Tesla V100 32GB", memory_gib=32.0, arch="Volta", arch_family="volta", compute_capability=7.0,
           segment="datacenter")  # fmt: skip
T4 = gpu(name="T4", memory_gib=16.0, arch="Turing", arch_family="turing", compute_capability=7.5)
P40 = gpu(name="Tesla P40", arch="Pascal", arch_family="pascal", compute_capability=6.1)
RTX3090 = gpu(name="RTX 3090")
RTX4090 = gpu(name="RTX 4090", arch="Ada Lovelace", arch_family="ada", compute_capability=8.9)
M2 = gpu(name="M2 Max", vendor="Apple", arch="Apple M2", arch_family="apple", segment="soc",
         compute_capability=None, unified_memory=True, memory_gib=64.0)  # fmt: skip
RX7900 = gpu(name="RX 7900 XTX", vendor="AMD", arch="RDNA3", arch_family="rdna3", compute_capability=None,
             gfx_target="gfx1100")  # fmt: skip
MI50 = gpu(name="MI50", vendor="AMD", arch="GCN5", arch_family="gcn5", compute_capability=None,
           gfx_target="gfx906", segment="datacenter")  # fmt: skip
ARC = gpu(name="Arc A770", vendor="Intel", arch="Alchemist", arch_family="xe-hpg", compute_capability=None)

GEMMA = Model(
    id="gemma-3-27b", family="Gemma 3", name="gemma-3-27b-it", aliases=(), params_b=27.0,
    active_params_b=27.0, layers=62, hidden=5376, heads=32, kv_heads=16, head_dim=128, vocab=262208,
    max_context=131072, hf_repo="google/gemma-3-27b-it", gguf_repo="bartowski/google_gemma-3-27b-it-GGUF",
    gguf_file_stem="google_gemma-3-27b-it", ollama_tag="gemma3:27b",
)  # fmt: skip
MOE = Model(
    id="qwen3-30b-a3b", family="Qwen3-MoE", name="Qwen3-30B-A3B", aliases=(), params_b=30.5,
    active_params_b=3.3, layers=48, hidden=2048, heads=32, kv_heads=4, head_dim=128, vocab=151936,
    max_context=40960, experts=128, experts_active=8, hf_repo="Qwen/Qwen3-30B-A3B",
    gguf_file_stem="Qwen_Qwen3-30B-A3B",
)  # fmt: skip

Q4 = Quant(id="Q4_K_M", format="gguf", aliases=("q4km",), bpw=4.85)
Q6 = Quant(id="Q6_K", format="gguf", aliases=(), bpw=6.56)
AWQ = Quant(id="AWQ", format="serving", aliases=("awq-int4",), bpw=4.25)
GPTQ = Quant(id="GPTQ", format="serving", aliases=(), bpw=4.25)
FP8 = Quant(id="FP8", format="serving", aliases=(), bpw=8.0)
BF16 = Quant(id="BF16", format="serving", aliases=(), bpw=16.0)
MLX4 = Quant(id="MLX-4bit", format="mlx", aliases=(), bpw=4.5)
EXL2 = Quant(id="EXL2", format="serving", aliases=(), bpw=4.65)


def options(**kw) -> dict:
    base = dict(gpu=RTX3090, model=GEMMA, quant=Q4, context=32768)
    return {o.framework: o for o in framework_options(FrameworkQuery(**(base | kw)), CAT)}


def codes(option) -> set[str]:
    return {n.code for n in option.notes}


def test_every_catalog_framework_is_judged():
    assert set(options()) == set(CAT.frameworks)


@pytest.mark.parametrize("os_name", ["windows", "macos"])
def test_vllm_linux_only_with_wsl_note_on_windows(os_name):
    opt = options(os=os_name, quant=AWQ)["vllm"]
    assert not opt.runnable
    if os_name == "windows":
        assert "fw.gate.wsl" in codes(opt)
        # No published AWQ of gemma-3-27b is listed: no placeholder command, a note instead.
        assert opt.command == "" and "fw.vllm.no_checkpoint" in codes(opt)
        bf16 = options(os=os_name, quant=CAT.quants["HF-BF16"])["vllm"]
        assert bf16.command.startswith("vllm serve")  # still useful inside WSL2
    else:
        assert "fw.gate.os" in codes(opt)
        assert opt.command == ""


def test_vllm_not_on_pascal():
    opt = options(gpu=P40, quant=GPTQ)["vllm"]
    assert not opt.runnable and "fw.gate.compute" in codes(opt)


def test_fp8_blocked_below_turing_weight_only_below_ada_native_on_ada():
    assert not options(gpu=V100, quant=FP8)["vllm"].runnable
    ampere = options(gpu=RTX3090, quant=FP8)["vllm"]
    assert ampere.runnable and "fw.common.fp8_weight_only" in codes(ampere)
    ada = options(gpu=RTX4090, quant=FP8)["vllm"]
    assert ada.runnable and "fw.common.fp8_weight_only" not in codes(ada)
    # gemma-3-27b's FP8 checkpoint is listed (catalogs/quant_repos.toml): vLLM serves it; a model with
    # none listed (gemma-2-9b) is quantized online.
    assert ada.command.startswith("vllm serve RedHatAI/gemma-3-27b-it-FP8-dynamic")
    online = options(gpu=RTX4090, quant=FP8, model=CAT.models["gemma-2-9b"])["vllm"]
    assert "--quantization fp8" in online.command


def test_bf16_on_v100_and_t4_runs_half():
    for card in (V100, T4):
        opt = options(gpu=card, quant=BF16)["vllm"]
        assert opt.runnable
        assert "--dtype half" in opt.command and "fw.common.bf16_half" in codes(opt)
    assert "--dtype" not in options(quant=BF16)["vllm"].command


def test_v100_vllm_version_notes():
    c = codes(options(gpu=V100, quant=GPTQ)["vllm"])
    assert {"fw.vllm.v1_pre_ampere", "fw.vllm.volta_wheels"} <= c


def test_awq_needs_turing_in_vllm_and_is_not_gguf():
    assert not options(gpu=V100, quant=AWQ)["vllm"].runnable
    assert options(gpu=T4, quant=AWQ)["vllm"].runnable
    opts = options(quant=AWQ)
    for fid in ("llama.cpp", "ollama", "lmstudio"):
        assert not opts[fid].runnable and "fw.gate.format" in codes(opts[fid])


def test_gguf_runs_in_llamacpp_family():
    opts = options(quant=Q6)
    assert all(opts[f].runnable for f in ("llama.cpp", "ollama", "lmstudio"))
    assert not opts["exllamav2"].runnable and not opts["mlx"].runnable


def test_mlx_only_on_apple():
    assert options(gpu=M2, os="macos", quant=MLX4)["mlx"].runnable
    assert not options(gpu=RTX3090, os="linux", quant=MLX4)["mlx"].runnable
    assert not options(gpu=M2, os="macos", quant=MLX4)["llama.cpp"].runnable
    assert options(gpu=M2, os="macos", quant=MLX4)["lmstudio"].runnable
    assert not options(gpu=M2, os="macos", quant=AWQ)["vllm"].runnable


def test_amd_backends():
    opts = options(gpu=RX7900, os="linux")
    assert opts["llama.cpp"].backend == "rocm"
    assert options(gpu=RX7900, os="windows")["llama.cpp"].runnable
    # vLLM ROCm: gfx1100 is supported, gfx906 (MI50) is not; vLLM's AWQ is CUDA only.
    assert options(gpu=RX7900, quant=BF16)["vllm"].runnable
    mi50 = options(gpu=MI50, quant=BF16)["vllm"]
    assert not mi50.runnable and "fw.gate.rocm_gfx" in codes(mi50)
    assert options(gpu=MI50)["llama.cpp"].backend == "rocm"  # llama.cpp has no gfx list
    assert not options(gpu=RX7900, quant=AWQ)["vllm"].runnable


def test_intel_arc_sycl_or_vulkan_and_no_exllama():
    opts = options(gpu=ARC, os="windows")
    assert opts["llama.cpp"].backend == "sycl"
    assert opts["ollama"].backend == "vulkan"
    assert not options(gpu=ARC, quant=EXL2)["exllamav2"].runnable


def test_exllama_needs_cuda_or_rocm():
    assert options(quant=EXL2)["exllamav2"].runnable
    assert not options(gpu=M2, os="macos", quant=EXL2)["exllamav2"].runnable
    exl3 = Quant(id="EXL3", format="serving", aliases=(), bpw=4.0)
    assert not options(gpu=T4, quant=exl3)["exllamav3"].runnable
    assert options(gpu=RTX3090, quant=exl3)["exllamav3"].runnable


def test_llamacpp_command_full_and_partial_offload():
    full = options(kv_cache="q8_0")["llama.cpp"].command
    assert full == (
        "llama-server -m google_gemma-3-27b-it-Q4_K_M.gguf -ngl 99 -c 32768 -fa on "
        "--cache-type-k q8_0 --cache-type-v q8_0"
    )
    partial = options(fits_on_gpu=False, n_gpu_layers=40)["llama.cpp"].command
    assert "-ngl 40" in partial
    moe = options(model=MOE, fits_on_gpu=False, n_cpu_moe=20)["llama.cpp"].command
    assert "--n-cpu-moe 20" in moe and "Qwen_Qwen3-30B-A3B-Q4_K_M.gguf" in moe
    assert "--cpu-moe" in options(model=MOE, fits_on_gpu=False, n_cpu_moe=99)["llama.cpp"].command
    assert "-sm layer -ts 1,1" in options(gpu_count=2)["llama.cpp"].command


def test_partial_offload_blocks_gpu_only_frameworks():
    opt = options(quant=GPTQ, fits_on_gpu=False, n_gpu_layers=30)["vllm"]
    assert not opt.runnable and "fw.gate.needs_full_gpu" in codes(opt)


def test_vllm_command_tp_kv_and_quant_repo():
    opt = options(gpu=RTX4090, gpu_count=2, quant=AWQ, kv_cache="q8_0")["vllm"]
    # gemma-3-27b has no AWQ checkpoint listed (catalogs/estimator.toml [checkpoints]): no command
    # with a placeholder in it, a note saying so.
    assert opt.command == "" and "fw.vllm.no_checkpoint" in codes(opt)
    assert "fw.common.preallocates" in codes(opt)
    qwen = options(model=CAT.models["qwen3-32b"], gpu=RTX4090, gpu_count=2, quant=AWQ, kv_cache="q8_0")[
        "vllm"
    ]
    assert qwen.command == (
        "vllm serve Qwen/Qwen3-32B-AWQ --max-model-len 32768 "
        "--gpu-memory-utilization 0.92 --tensor-parallel-size 2 --kv-cache-dtype fp8"
    )
    assert opt.overhead_gib == (2.0, 4.0)


def test_ollama_command_context_kv_and_tags():
    opt = options(kv_cache="q8_0")["ollama"]
    assert "OLLAMA_CONTEXT_LENGTH=32768" in opt.command
    assert "OLLAMA_FLASH_ATTENTION=1 OLLAMA_KV_CACHE_TYPE=q8_0" in opt.command
    assert opt.command.endswith("ollama run gemma3:27b")
    q6 = options(quant=Q6)["ollama"]
    assert "hf.co/bartowski/google_gemma-3-27b-it-GGUF:Q6_K" in q6.command
    assert "fw.ollama.no_tag" in codes(q6)


def test_lmstudio_and_mlx_commands():
    assert options()["lmstudio"].command.endswith("--context-length 32768 --gpu max")
    assert "--gpu 0.50" in options(fits_on_gpu=False, n_gpu_layers=31)["lmstudio"].command
    mlx = options(gpu=M2, os="macos", quant=MLX4)["mlx"]
    assert mlx.command == "mlx_lm.server --model mlx-community/gemma-3-27b-it-4bit"


def test_every_note_has_text_in_both_languages():
    from core.i18n import messages

    known = messages()
    queries = [
        dict(gpu=V100, quant=BF16, os="windows", kv_cache="q4_0"),
        dict(gpu=M2, os="macos", quant=MLX4),
        dict(gpu=MI50, quant=AWQ, gpu_count=2, fits_on_gpu=False, n_gpu_layers=10),
        dict(gpu=ARC, quant=Q6, model=MOE, n_cpu_moe=10, fits_on_gpu=False),
        dict(gpu=T4, quant=FP8, kv_cache="q8_0"),
    ]
    for kw in queries:
        for opt in options(**kw).values():
            for note in (*opt.notes, *opt.strengths, *opt.weaknesses):
                assert note.code in known, note.code
                assert {"en", "zh"} <= set(known[note.code])
                assert "{" not in note.text("en") and "{" not in note.text("zh"), note.code


def test_recommend():
    q = FrameworkQuery(gpu=V100, model=GEMMA, quant=Q4, context=32768)
    rec = recommend(q, catalog=CAT)
    assert rec.framework == "llama.cpp" and rec.easy == "ollama"
    tp = recommend(
        FrameworkQuery(gpu=RTX3090, model=GEMMA, quant=AWQ, context=32768, gpu_count=2), catalog=CAT
    )
    assert tp.framework == "vllm" and tp.reason.code == "fw.rec.vllm_tp"
    multi = recommend(
        FrameworkQuery(gpu=RTX3090, model=GEMMA, quant=Q4, context=8192, gpu_count=2), catalog=CAT
    )
    assert multi.framework == "llama.cpp" and "fw.rec.hint_vllm_tp" in {h.code for h in multi.hints}
    mac = recommend(FrameworkQuery(gpu=M2, model=GEMMA, quant=MLX4, context=8192, os="macos"), catalog=CAT)
    assert mac.framework == "mlx" and mac.easy == "lmstudio"
    mac_gguf = recommend(FrameworkQuery(gpu=M2, model=GEMMA, quant=Q4, context=8192, os="macos"), catalog=CAT)
    assert mac_gguf.framework == "llama.cpp"
    none = recommend(FrameworkQuery(gpu=P40, model=GEMMA, quant=AWQ, context=8192), catalog=CAT)
    assert none.framework is None and none.reason.code == "fw.rec.none"


def test_every_framework_is_judged_once_in_catalog_order():
    """(Its ms per call is scripts/bench_estimate_speed.py's figure, not a test.)"""
    q = FrameworkQuery(gpu=V100, model=GEMMA, quant=Q4, context=32768, kv_cache="q8_0")
    options = framework_options(q, CAT)
    assert [o.framework for o in options] == list(CAT.frameworks)
    assert framework_options(q, CAT) == options


def test_shipped_quant_catalog_ids_gate_as_intended():
    quants = CAT.quants
    needed = {"AWQ", "FP8", "HF-BF16", "GPTQ-INT4", "BNB-NF4", "MLX-4BIT", "Q4_K_M"}
    if not needed <= set(quants):
        pytest.skip("quant catalog not filled yet")
    assert not options(gpu=V100, quant=quants["AWQ"])["vllm"].runnable
    assert options(gpu=V100, quant=quants["GPTQ-INT4"])["vllm"].runnable
    assert not options(gpu=V100, quant=quants["FP8"])["vllm"].runnable
    bf16 = options(gpu=V100, quant=quants["HF-BF16"])["vllm"]
    assert bf16.command.startswith("vllm serve google/gemma-3-27b-it ") and "--dtype half" in bf16.command
    assert "--quantization bitsandbytes" in options(quant=quants["BNB-NF4"])["vllm"].command
    assert options(quant=quants["GPTQ-INT4"])["exllamav2"].runnable
    assert options(gpu=M2, os="macos", quant=quants["MLX-4BIT"])["mlx"].command.endswith("-4bit")
    assert options(quant=quants["Q4_K_M"])["ollama"].command.endswith("ollama run gemma3:27b")


def test_framework_rules_can_name_a_model_family():
    """DeepSeek-V4: llama.cpp needs a build with the deepseek4 architecture (a caveat), mlx-lm does
    not load it, vLLM's FP4-expert path needs compute 8.0 (a V100 is refused); other models are
    untouched by those rules."""
    v4 = CAT.models["deepseek-v4-flash"]
    v100, a100 = V100, CAT.gpus["a100-80g-sxm4"]
    fp8 = CAT.quants["FP8"]
    assert "fw.llamacpp.deepseek4_build" in codes(options(model=v4)["llama.cpp"])
    assert "fw.llamacpp.deepseek4_build" not in codes(options()["llama.cpp"])
    on_v100 = options(gpu=v100, model=v4, quant=fp8, os="linux")["vllm"]
    assert not on_v100.runnable and "fw.vllm.deepseek4_sm80" in codes(on_v100)
    on_a100 = options(gpu=a100, model=v4, quant=fp8, os="linux")["vllm"]
    assert "fw.vllm.deepseek4_sm80" not in codes(on_a100)
    mac = options(gpu=CAT.gpus["apple-m3-ultra"], model=v4, quant=CAT.quants["MLX-4BIT"], os="macos")
    assert not mac["mlx"].runnable and "fw.mlx.deepseek4_unsupported" in codes(mac["mlx"])


def test_ktransformers_runs_moe_checkpoints_with_experts_on_the_cpu():
    """KTransformers: a MoE checkpoint in its native precision, one download both SGLang and
    KT-Kernel read, CPU workers and NUMA pools read from lscpu; a dense model is refused."""
    r1, fp8 = CAT.models["deepseek-r1"], CAT.quants["FP8"]
    a100 = CAT.gpus["a100-80g-sxm4"]
    kt = options(gpu=a100, model=r1, quant=fp8, os="linux", fits_on_gpu=False)["ktransformers"]
    assert kt.runnable, kt.notes
    assert kt.command.startswith("hf download deepseek-ai/DeepSeek-R1 --local-dir ~/models/DeepSeek-R1 && ")
    assert "--kt-method FP8" in kt.command and "--kt-cpuinfer $(lscpu -p=CORE" in kt.command
    assert "{" not in kt.command, "no unfilled placeholder"
    dense = options(gpu=a100, model=CAT.models["qwen3-32b"], quant=fp8, os="linux")["ktransformers"]
    assert not dense.runnable and "fw.kt.moe_only" in codes(dense)
    bf16 = options(gpu=a100, model=CAT.models["qwen3-30b-a3b"], quant=CAT.quants["HF-BF16"], os="linux")
    assert "--kt-method BF16" in bf16["ktransformers"].command
