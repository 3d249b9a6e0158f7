"""A question that names a CPU and a model but no card is answered as a CPU-only run on that CPU."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer, chart, estimate_for, follow_up
from core.catalog.loader import default_catalog
from core.estimator.estimate import Estimate
from core.estimator.serialize import estimate_dict
from core.render.fmt import ctx_label, gib, num

CATALOG = default_catalog()


def test_a_cpu_and_a_model_is_a_cpu_only_answer() -> None:
    reply = answer("7950X 64G ddr5 能跑 qwen3 30b 吗", CATALOG)
    assert reply.status == "answer" and reply.query is not None
    assert "AMD Ryzen 9 7950X · Qwen3-30B-A3B · llama.cpp (CPU)" in reply.text
    hw = reply.query.hardware
    assert (hw.cpu, hw.host_ram_gib, hw.host_ram_type) == ("ryzen-9-7950x", 64.0, "DDR5")
    est = estimate_for(reply.query, CATALOG)
    host = est.request.setup.host
    assert est.request.offload == "cpu" and host.cpu == "ryzen-9-7950x"
    assert (host.ram_gib, host.mt_s, host.channels) == (64.0, 5200, 2)
    assert reply.query.as_json()["cpu"] == "ryzen-9-7950x"


def test_unseen_english_phrasing_with_sockets() -> None:
    reply = answer("would dual EPYC 9654 with 1.5TB run deepseek r1 Q4_K_M, how many tok/s?", CATALOG)
    assert reply.status == "answer" and reply.query is not None
    assert "2x AMD EPYC 9654 · DeepSeek-R1" in reply.text
    assert reply.query.as_json()["cpu_sockets"] == 2
    host = estimate_for(reply.query, CATALOG).request.setup.host
    assert (host.channels, host.sockets, host.ram_gib) == (12, 2, 1536.0)


def test_no_cpu_no_change() -> None:
    reply = answer("3090 能跑 qwen3 32b 吗", CATALOG)
    assert reply.query is not None and reply.query.as_json()["cpu"] is None
    assert estimate_for(reply.query, CATALOG).request.setup.host.name == "ddr4-2ch"


def test_a_model_alone_is_still_the_model_overview() -> None:
    reply = answer("qwen3 30b 需要多少显存", CATALOG)
    assert reply.query is not None and reply.query.hardware.cpu is None
    assert "CPU only" not in reply.text


# --- the reply of a CPU-only run reads as one: RAM, not VRAM -------------------------------------


RESERVE = float(CATALOG.tables["estimator"]["host"]["os_reserve_gib"])
CPU_QUESTIONS = (
    "7950X 64G ddr5 能跑 qwen3 30b 吗",
    "epyc 9654 768g ram deepseek r1 q4 speed",
    "i5-12400 32gb ram, no gpu, llama 3 8b?",
    "i5-12400 16gb ram, no gpu, can it run qwen3 32b?",
)
GPU_WORDS = re.compile(
    r"VRAM|显存|-ngl 99|(?<![\d.])0\.0 GiB|/ 0 GiB|of 0 GiB|more cards|张卡|experts of .* in RAM|专家放内存"
)


def _cpu_answer(question: str) -> tuple[str, Estimate]:
    reply = answer(question, CATALOG)
    assert reply.status == "answer" and reply.query is not None, reply.text
    return reply.text, estimate_for(reply.query, CATALOG)


@pytest.mark.parametrize("question", CPU_QUESTIONS)
def test_rows_carry_the_ram_the_run_needs_against_usable_ram(question: str) -> None:
    _, est = _cpu_answer(question)
    host = est.request.setup.host
    assert est.request.offload == "cpu"
    assert est.usable.total_gib == host.ram_gib - RESERVE
    for row in est.rows:
        assert row.usable_gib == round(host.ram_gib - RESERVE, 2)
        assert row.weights_gib > 0 and row.total_gib >= row.weights_gib + row.kv_gib
        assert (row.status == "no_fit") == (row.total_gib > row.usable_gib)
        if row.status == "no_fit":
            assert row.decode_tps is None and row.remedy is not None
            kinds = {o.kind for o in (row.remedy, *row.remedy.alternatives)}
            # Ways out that make sense with no card: never offload to a GPU or buy cards.
            assert kinds <= {"kv_quant", "shorter_ctx", "lower_quant", "more_ram"}, kinds
            assert "more_ram" in kinds
        else:
            assert row.decode_tps is not None and row.prefill_tps is not None and row.ttft_s


@pytest.mark.parametrize("question", CPU_QUESTIONS)
def test_every_view_of_a_cpu_only_answer_shows_the_same_figures_and_no_gpu_layout(question: str) -> None:
    text, est = _cpu_answer(question)
    reply = answer(question, CATALOG)
    assert reply.query is not None
    cpu = CATALOG.cpus[est.request.setup.host.cpu]
    views = {"reply": text}
    for view in ("quant", "frameworks", "speculative", "sources"):
        out = follow_up(reply.query, view, CATALOG)
        assert out.status == "answer", (view, out.text)
        views[view] = out.text
    for name, body in views.items():
        assert not GPU_WORDS.search(body), (name, GPU_WORDS.search(body), body)
    assert text.splitlines()[0 if "·" in text.splitlines()[0] else 1].startswith(cpu.name)
    assert f"{cpu.name} · {est.request.model.name} · llama.cpp (CPU)" in text
    # The table's GiB column is the RAM the weights take, its cells the estimate's decode.
    by_cell = {(r.quant, ctx_label(r.context)): r for r in est.rows}
    for line in text.splitlines():
        parts = line.split()
        if parts and parts[0] in {r.quant for r in est.rows} and len(parts) > 2:
            first = next(r for r in est.rows if r.quant == parts[0])
            assert parts[1] == gib(first.weights_gib)
    # "In full": each context's total and verdict are the rows'.
    quant_view = views["quant"]
    shown = quant_view.splitlines()
    for (quant, ctx), row in by_cell.items():
        if f" {quant} " not in shown[0] + " ":
            continue
        line = next(x for x in shown if x.split()[:1] == [ctx] or x.split()[:1] == [ctx + "^"])
        assert line.split()[2] == gib(row.total_gib)
    # The usable-RAM line says the same figure everywhere.
    usable = f"{est.usable.total_gib:.1f}"
    assert usable in text and usable in quant_view
    # The JSON rows are the same rows, and say their memory is RAM.
    data = estimate_dict(est, CATALOG)
    assert data["memory"] == "ram" and data["usable_gib"] == round(est.usable.total_gib, 2)
    rows = reply.as_dict()["rows"]
    for obj, from_est, row in zip(rows, data["rows"], est.rows, strict=True):
        assert obj["memory"] == "ram"
        assert obj["total_gib"] == from_est["total_gib"] == row.total_gib
        mid = None if row.decode_tps is None else row.decode_tps.mid
        assert (obj["decode_tps"] or {}).get("mid") == mid
        assert obj["ttft_s"] == row.ttft_s
    # Every way-out figure shown is one the estimate priced.
    figures = {
        num(o.decode_mid)
        for r in est.rows
        if r.remedy
        for o in (r.remedy, *r.remedy.alternatives)
        if o.decode_mid
    }
    for shown_tps in re.findall(r"(?:→|->)\s*(?:~|约\s*)(\d+(?:\.\d+)?)\s*tok/s", text + views["quant"]):
        assert num(float(shown_tps)) in figures, shown_tps


def test_the_launch_command_runs_on_the_cpu() -> None:
    text, _ = _cpu_answer("7950X 64G ddr5 能跑 qwen3 30b 吗")
    command = next(line for line in text.splitlines() if line.startswith("$ llama-server"))
    assert "-ngl 0" in command and " -t 16" in command and "--numa" not in command  # 16 Zen 4 cores
    two = answer("would dual EPYC 9654 with 1.5TB run deepseek r1 Q4_K_M, how many tok/s?", CATALOG).text
    command = next(line for line in two.splitlines() if line.startswith("$ llama-server"))
    assert " -t 192" in command and command.endswith("--numa distribute")  # 2 x 96 cores
    hybrid = answer("i7-12700h 32g ram no gpu llama 3 8b", CATALOG)
    if hybrid.query is not None and hybrid.query.hardware.cpu in CATALOG.cpus:
        cpu = CATALOG.cpus[hybrid.query.hardware.cpu]
        command = next(line for line in hybrid.text.splitlines() if line.startswith("$ llama-server"))
        assert f" -t {cpu.cores - cpu.e_cores}" in command  # performance cores only


def test_the_fit_lead_and_ram_line_in_both_languages() -> None:
    zh, est = _cpu_answer("7950X 64G ddr5 能跑 qwen3 30b 吗")
    first = zh.splitlines()[0]
    assert first.startswith("能跑(纯 CPU)") and "占内存" in first and "/ 60.0 GiB" in first
    assert "可用内存 60.0 / 64 GiB(系统保留 4 GiB;DDR5-5200 2 通道" in zh
    assert "CPU 预填充约" in zh and "首 token 要等约" in zh
    assert "ik_llama.cpp" in zh
    en = answer("can my 7950X with 64 GB DDR5 and no graphics card run Qwen3 30B?", CATALOG)
    assert en.status == "answer" and en.query is not None and en.query.hardware.cpu == "ryzen-9-7950x"
    assert "Usable RAM 60.0 of 64 GiB (the OS keeps 4 GiB; DDR5-5200 × 2 channels" in en.text
    assert "AMD Ryzen 9 7950X · Qwen3-30B-A3B · llama.cpp (CPU)" in en.text
    assert "Prefill on the CPU ~" in en.text


def test_too_little_ram_says_so_with_ways_out_that_need_no_card() -> None:
    text = answer("i5-12400 16gb ram, no gpu, can it run qwen3 32b?", CATALOG).text
    first = text.splitlines()[0]
    assert (
        first.startswith("No: even IQ3_XXS") and "of RAM, 12.0 GiB usable" in first and "GiB RAM →" in first
    )
    assert "If it doesn't fit:" in text and "GiB RAM →" in text
    zh = answer("i5-12400 16G 内存 没有显卡 能跑 qwen3 32b 吗", CATALOG)
    assert zh.status == "answer" and zh.query is not None and zh.query.hardware.cpu == "core-i5-12400"
    assert zh.text.splitlines()[0].startswith("跑不了") and "内存加到" in zh.text


def test_a_shorter_context_or_kv_quant_is_offered_before_more_ram() -> None:
    est = estimate_for(answer("7950X 32G ddr5 qwen3 30b q8_0 128k", CATALOG).query, CATALOG)  # type: ignore[arg-type]
    row = next(r for r in est.rows if r.quant == "Q8_0" and r.context == 131072)
    assert row.status == "no_fit" and row.remedy is not None
    assert row.remedy.kind in ("kv_quant", "shorter_ctx", "lower_quant")
    kinds = [o.kind for o in (row.remedy, *row.remedy.alternatives)]
    assert kinds.index("more_ram") > 0


def test_the_chart_of_a_cpu_only_answer_renders() -> None:
    pytest.importorskip("matplotlib")
    reply = answer("7950X 64G ddr5 能跑 qwen3 30b 吗", CATALOG)
    assert reply.query is not None
    assert chart(reply.query, CATALOG)[:8] == b"\x89PNG\r\n\x1a\n"


def test_a_card_answer_that_names_the_cpu_says_which_box_prices_the_offload() -> None:
    named = answer("4090 + 7950x + 64g ddr5 gpt-oss-120b", CATALOG)
    assert "host AMD Ryzen 9 7950X: 64 GiB DDR5-5200 × 2 channels, 83.2 GB/s for offload" in named.text
    assert named.query is not None
    est = estimate_for(named.query, CATALOG)
    assert est.request.setup.host.bandwidth_gbs == 83.2
    plain = answer("4090 + 64g ddr5 gpt-oss-120b", CATALOG)
    assert "host AMD" not in plain.text
    # No CPU named: the offload figure still says the RAM it was priced on (issue 20).
    assert "host RAM 64 GiB DDR5-5600 × 2 channels" in plain.text
    zh = answer("4090 配 7950x 64g ddr5 跑 gpt-oss-120b 多快", CATALOG)
    assert "主机 AMD Ryzen 9 7950X:内存 64 GiB DDR5-5200 2 通道" in zh.text


def test_a_cpu_only_answer_gets_its_follow_up_buttons() -> None:
    from core.commands.ask import _has_views, buttons_for

    reply = answer("7950X 64G ddr5 能跑 qwen3 30b 吗", CATALOG)
    assert reply.query is not None and not reply.query.complete  # no card ...
    assert _has_views(reply.query, CATALOG)  # ... but a CPU and a model: the views are there
    actions = [b.action.split(":")[1] for row in buttons_for("k", reply.query, CATALOG) for b in row]
    assert actions == ["q", "f", "s", "c", "k", "r"]  # no OS switch: a CPU-only figure doesn't move with it
    model_only = answer("qwen3 30b 需要多少显存", CATALOG)
    assert model_only.query is not None and not _has_views(model_only.query, CATALOG)


def test_a_time_to_first_token_question_on_a_cpu_is_answered_for_that_cpu() -> None:
    """Not the intents' table of common cards: the CPU-only answer, whose prefill line is the wait."""
    for question in (
        "7950x 64gb ram qwen3 30b, how long to first token with an 8k prompt?",
        "7950x 64g qwen3 30b 8k 提示词 首字要多久",
    ):
        reply = answer(question, CATALOG)
        assert reply.status == "answer" and reply.query is not None
        assert "RTX 4090" not in reply.text and "AMD Ryzen 9 7950X · Qwen3-30B-A3B" in reply.text
        est = estimate_for(reply.query, CATALOG)
        row = next(
            r
            for r in est.rows
            if f"({r.quant}, with {ctx_label(r.context)} already" in reply.text
            or f"({r.quant},上下文已有 {ctx_label(r.context)} 时)" in reply.text
        )
        assert row.ttft_s is not None and num(row.ttft_s) in reply.text


def test_a_chat_question_on_a_named_cpu_gets_the_cpu_fits_range() -> None:
    """Written before looking at the rows: a Chinese question with an Intel desktop CPU and no card
    carries the CPU fit's range (cpus.toml [efficiency.band]), not the GPU tiers' unseen band."""
    band = CATALOG.tables["cpus"]["efficiency"]["band"]["decode"]
    reply = answer("i9-13900k 64g ddr5 纯cpu 跑 qwen3 30b 速度多少", CATALOG)
    assert reply.query is not None and reply.query.hardware.cpu == "core-i9-13900k"
    est = estimate_for(reply.query, CATALOG)
    ranges = [r.decode_tps for r in est.rows if r.decode_tps is not None]
    assert ranges
    for d in ranges:  # figures are rounded to 0.1 tok/s
        assert abs(d.low - d.mid * band["low"]) <= 0.06 + 0.01 * d.mid
        assert abs(d.high - d.mid * band["high"]) <= 0.06 + 0.01 * d.mid
