"""ik_llama.cpp as a framework of its own: what it runs where, its launch command, when it is the pick;
quants only some engines load (ik-only types, EXL2/EXL3 members)."""

from __future__ import annotations

from dataclasses import replace

from core.catalog.gpu import Gpu
from core.catalog.loader import default_catalog
from core.estimator.frameworks import FrameworkOption, FrameworkQuery, framework_options, recommend
from core.i18n import translate

CAT = default_catalog()
RTX4090 = CAT.gpus["rtx-4090"]
R1 = CAT.models["deepseek-r1"]
QWEN_MOE = CAT.models["qwen3-30b-a3b"]
LLAMA8B = next(m for m in CAT.models.values() if not m.is_moe and 7.5 < m.params_b < 8.5)


def _card(**kw: object) -> Gpu:
    return replace(RTX4090, **kw)  # type: ignore[arg-type]


def options(**kw: object) -> dict[str, FrameworkOption]:
    base: dict[str, object] = dict(gpu=RTX4090, model=R1, quant=CAT.quants["IQ2_K_R4"], context=32768)
    q = FrameworkQuery(**(base | kw))  # type: ignore[arg-type]
    return {o.framework: o for o in framework_options(q, CAT)}


def _query(**kw: object) -> FrameworkQuery:
    base: dict[str, object] = dict(gpu=RTX4090, model=R1, quant=CAT.quants["Q4_K_M"], context=32768)
    return FrameworkQuery(**(base | kw))  # type: ignore[arg-type]


def test_mainline_engines_cannot_load_an_ik_quant_and_say_why() -> None:
    opts = options(fits_on_gpu=False, n_cpu_moe=R1.layers)
    for fid in ("llama.cpp", "ollama", "lmstudio"):
        assert not opts[fid].runnable, fid
        note = opts[fid].notes[0]
        assert note.code == "fw.gate.quant_loader"
        en = translate(note.code, "en", **note.params)
        assert "can't load IQ2_K_R4" in en and "ik_llama.cpp-only" in en and "run it with ik_llama.cpp" in en
        assert "只有 ik_llama.cpp 能读" in translate(note.code, "zh", **note.params)
    assert opts["ik_llama.cpp"].runnable
    # vLLM reads (experimental) GGUF, not ik's types: the same reason; SGLang lacks GGUF altogether
    assert opts["vllm"].notes[0].code == "fw.gate.quant_loader"
    assert opts["sglang"].notes[0].code == "fw.gate.format"


def test_ik_command_with_experts_in_ram() -> None:
    all_experts = options(fits_on_gpu=False, n_cpu_moe=R1.layers)["ik_llama.cpp"].command
    assert all_experts.startswith("llama-server ") and " -ot exps=CPU" in all_experts
    assert " -mla 3 -amb 512" in all_experts and " -fa on" in all_experts and " -c 32768" in all_experts
    # fused MoE is on by default since PR #863 and the flag is refused; -rtr would keep repacked
    # tensors on the CPU in a hybrid run
    assert "-fmoe" not in all_experts and "-rtr" not in all_experts
    some = options(fits_on_gpu=False, n_cpu_moe=40)["ik_llama.cpp"].command
    assert " --n-cpu-moe 40" in some and "-ot" not in some
    tips = {n.code for n in options(fits_on_gpu=False, n_cpu_moe=40)["ik_llama.cpp"].notes}
    assert {"fw.ik.no_rtr_hybrid", "fw.ik.old_build_flags"} <= tips


def test_ik_command_on_the_cpu_alone_repacks_at_load() -> None:
    q = dict(quant=CAT.quants["Q4_K_M"], n_gpu_layers=0, fits_on_gpu=False, cpu_only=True, cpu_threads=16)
    opt = options(model=QWEN_MOE, **q)["ik_llama.cpp"]
    cmd = opt.command
    assert " -rtr" in cmd and " -ngl 0" in cmd and " -t 16" in cmd
    assert "fw.ik.no_rtr_hybrid" not in {n.code for n in opt.notes}  # nothing on a card: -rtr is right
    assert "-mla" not in cmd  # Qwen3 has no MLA
    dense = options(model=LLAMA8B, quant=CAT.quants["Q4_K_M"])["ik_llama.cpp"].command
    assert "-rtr" not in dense and "-ot" not in dense and "-mla" not in dense


def test_ik_backends_are_cuda_turing_and_newer_and_the_cpu() -> None:
    pascal = _card(name="Tesla P40", arch_family="pascal", compute_capability=6.1)
    opt = options(gpu=pascal, quant=CAT.quants["Q4_K_M"])["ik_llama.cpp"]
    assert not opt.runnable and opt.notes[0].code == "fw.gate.compute"
    amd = CAT.gpus["rx-7900-xtx"]
    assert not options(gpu=amd, quant=CAT.quants["Q4_K_M"])["ik_llama.cpp"].runnable  # no ROCm/Vulkan
    assert options(gpu=amd, quant=CAT.quants["Q4_K_M"])["llama.cpp"].runnable
    assert options(quant=CAT.quants["Q4_K_M"])["ik_llama.cpp"].backend == "cuda"
    # it reads every mainline GGUF too
    assert options(model=LLAMA8B, quant=CAT.quants["Q4_K_M"])["ik_llama.cpp"].runnable


def test_ik_is_picked_only_where_it_is_clearly_ahead() -> None:
    # a MoE model with its experts in RAM: mainline stays the pick, its line names the fork that
    # measured 1.1-1.7x prefill / 1.1x decode faster on the same boxes
    hybrid = recommend(_query(model=QWEN_MOE, fits_on_gpu=False, n_cpu_moe=20), catalog=CAT)
    assert hybrid.framework == "llama.cpp" and hybrid.reason.code == "fw.rec.llamacpp_ik"
    assert "ik_llama.cpp" in translate(hybrid.reason.code, "zh", **hybrid.reason.params)
    assert "ik_llama.cpp" in hybrid.alternatives
    # on the CPU alone the price is the CPU fit of mainline rows: llama.cpp, its CPU line naming ik
    cpu = recommend(
        _query(model=QWEN_MOE, n_gpu_layers=0, fits_on_gpu=False, cpu_only=True, backend="cpu"), catalog=CAT
    )
    assert cpu.framework == "llama.cpp" and cpu.reason.code == "fw.rec.llamacpp_cpu"
    assert "ik_llama.cpp" in cpu.alternatives
    assert "ik_llama.cpp" in translate(cpu.reason.code, "en", **cpu.reason.params)
    # fully on the card, or a dense model: llama.cpp (ik decodes 0.96x there), ik one option among others
    full = recommend(_query(model=QWEN_MOE), catalog=CAT)
    assert full.framework == "llama.cpp" and "ik_llama.cpp" in full.alternatives
    dense_cpu = recommend(
        _query(model=LLAMA8B, n_gpu_layers=0, fits_on_gpu=False, cpu_only=True, backend="cpu"), catalog=CAT
    )
    assert dense_cpu.framework == "llama.cpp"
    # an ik-only quant: the engine that loads it, whatever the setup
    only = recommend(_query(model=LLAMA8B, quant=CAT.quants["IQ4_KS"]), catalog=CAT)
    assert only.framework == "ik_llama.cpp" and only.reason.code == "fw.rec.quant_loader"


def test_exl_members_are_gated_by_their_family() -> None:
    exl2 = CAT.quants["EXL2-4.25"]
    exl3 = CAT.quants["EXL3-3.0"]
    model = CAT.models["qwen2.5-72b"]
    opts = options(model=model, quant=exl2, gpu_count=2)
    assert opts["exllamav2"].runnable  # the framework lists the family "EXL2"
    assert "exl2-4.25" in opts["exllamav2"].command
    for fid in ("vllm", "sglang", "exllamav3"):  # vLLM/SGLang load "serving" but not EXL2; V3 only EXL3
        assert not opts[fid].runnable and opts[fid].notes[0].code == "fw.gate.quant_loader", fid
    opts3 = options(model=model, quant=exl3, gpu_count=2)
    assert opts3["exllamav3"].runnable and not opts3["exllamav2"].runnable
    rec = recommend(_query(model=model, quant=exl2, gpu_count=2), catalog=CAT)
    assert rec.framework == "exllamav2" and rec.reason.code == "fw.rec.exllama"


def test_estimate_quant_takes_an_exl_bpw() -> None:
    from core.ask.estimate_request import EstimateQuery, QueryError, resolve_request

    def quants(*names: str, framework: str | None = None) -> tuple[str, ...]:
        query = EstimateQuery(
            gpu="3090", count=2, model="qwen2.5 72b", quant=list(names), framework=framework
        )
        return resolve_request(query, CAT).quants

    assert quants("EXL2-4.25", "exl2 4.65bpw", "EXL3 3.0 bpw") == ("EXL2-4.25", "EXL2-4.65", "EXL3-3.0")
    assert quants("4.0bpw", framework="exllamav3") == ("EXL3-4.0",)  # a bare bpw is the asked ExLlama's
    assert quants("IQ2_K_R4", "Q4_K_M") == ("IQ2_K_R4", "Q4_K_M")  # other names resolve as before
    try:
        quants("exl2 9.5bpw")
    except QueryError:
        pass
    else:
        raise AssertionError("an EXL2 bpw above 8 is no quant")


def test_a_chat_question_with_experts_in_ram_runs_mainline_and_names_the_fork() -> None:
    """Unseen phrasing (Chinese, a 5090 with 128 GB): mainline llama.cpp with --n-cpu-moe is the
    command, and its line names ik_llama.cpp's measured gain."""
    from core.ask.answer import answer

    reply = answer("5090 + 128g 内存 跑 qwen3 235b a22b q4 用什么框架", CAT)
    assert reply.status == "answer"
    assert "--n-cpu-moe" in reply.text and "ik_llama.cpp" in reply.text
    assert "llama-server" in reply.text and "-mla" not in reply.text
