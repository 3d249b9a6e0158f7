"""A pasted llama-bench asked about ("is this normal for my 3090?", "这速度正常吗"): each pp/tg row
against tokbot's own estimate, with a verdict, in the question's language.

The pastes are built in llama-bench's own formats (markdown, `-o csv`, `-o json` / `jsonl`), with
speeds of the size people report for these setups; the estimate ranges they are checked against are
the estimator's, so a verdict test names a measurement well inside or well outside its range.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from core.ask.answer import answer
from core.ask.pasted_bench_answer import BenchAnswer, pasted_bench_answer, question_words
from core.catalog.loader import default_catalog
from core.community.pasted import read_bench_records, read_pasted
from core.community.submit_parse import parse_submission
from core.i18n import translate

CATALOG = default_catalog()

HEADER = (
    "| model                          |       size |     params | backend    | ngl |            test |"
    "                  t/s |\n"
    "| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: |"
    " -------------------: |\n"
)


def table(model: str, size: str, params: str, backend: str, *tests: tuple[str, str]) -> str:
    """A llama-bench markdown table: one row per (test, t/s)."""
    rows = "".join(
        f"| {model:<30} | {size:>10} | {params:>10} | {backend:<10} |  99 | {test:>15} | {tps:>20} |\n"
        for test, tps in tests
    )
    return HEADER + rows


QWEN3_3090 = table(
    "qwen3moe 30B.A3B Q4_K - Medium",
    "17.35 GiB",
    "30.53 B",
    "CUDA",
    ("pp512", "4123.44 ± 20.11"),
    ("tg128", "98.71 ± 0.52"),
)
LLAMA8 = table(
    "llama 8B Q4_K - Medium",
    "4.58 GiB",
    "8.03 B",
    "CUDA",
    ("pp512", "11492.18 ± 61.30"),
    ("tg128", "151.36 ± 0.41"),
)
GEMMA27 = table(
    "gemma3 27B Q4_K - Medium",
    "15.40 GiB",
    "27.01 B",
    "CUDA",
    ("pp512", "1180.52 ± 4.77"),
    ("tg128", "24.31 ± 0.09"),
)
GPT_OSS20 = table(
    "gpt-oss 20B MXFP4 MoE",
    "11.27 GiB",
    "20.91 B",
    "CUDA",
    ("pp512", "10480.77 ± 92.15"),
    ("tg128", "281.64 ± 1.20"),
)
LLAMA8_VULKAN = table(
    "llama 8B Q4_K - Medium",
    "4.58 GiB",
    "8.03 B",
    "Vulkan",
    ("pp512", "2987.40 ± 15.02"),
    ("tg128", "101.23 ± 0.33"),
)


def rows_of(reply: BenchAnswer | None) -> list[dict[str, Any]]:
    assert reply is not None
    return [dict(r) for r in reply.rows]


def verdicts(reply: BenchAnswer | None) -> dict[str, str]:
    return {r["test"]: r["verdict"] for r in rows_of(reply)}


# --- the audit's example ---------------------------------------------------------------------------


def test_the_audit_example_reads_the_model_and_compares_each_row() -> None:
    reply = pasted_bench_answer(QWEN3_3090 + "is this normal for my 3090?", CATALOG)
    assert reply is not None and reply.status == "answer"
    assert "Qwen3-30B-A3B Q4_K_M" in reply.text and "RTX 3090" in reply.text
    assert "Medium” isn't in my catalog" not in reply.text
    rows = rows_of(reply)
    assert [r["test"] for r in rows] == ["pp512", "tg128"]
    assert rows[0]["measured"] == pytest.approx(4123.44) and rows[1]["measured"] == pytest.approx(98.71)
    for r in rows:
        assert r["gpu"] == "rtx-3090" and r["model"] == "qwen3-30b-a3b" and r["quant"] == "Q4_K_M"
        assert r["low"] <= r["mid"] <= r["high"]
    assert verdicts(reply) == {"pp512": "normal", "tg128": "low"}  # ~118-178 tok/s decode estimated
    assert translate("pasted_bench.low_causes", "en") in reply.text
    assert reply.text.rstrip().endswith(translate("anchors.call_more", "en"))


def test_through_answer_the_reply_is_the_comparison() -> None:
    reply = answer(QWEN3_3090 + "is this normal for my 3090?", CATALOG)
    assert reply.status == "answer" and reply.hub is None
    assert "Qwen3-30B-A3B Q4_K_M" in reply.text
    assert [r["verdict"] for r in reply.rows] == ["normal", "low"]


# --- new phrasings and pastes (written before the code) ----------------------------------------------


def test_llama8_on_a_4090_is_good() -> None:
    reply = pasted_bench_answer("on my 4090, is this good?\n" + LLAMA8, CATALOG)
    assert reply is not None and reply.status == "answer"
    assert "Llama-3.1-8B Q4_K_M" in reply.text and "RTX 4090" in reply.text
    assert verdicts(reply) == {"pp512": "normal", "tg128": "normal"}
    assert translate("pasted_bench.low_causes", "en") not in reply.text


def test_gemma27_on_a_3090_in_chinese_is_low() -> None:
    reply = pasted_bench_answer(GEMMA27 + "3090 跑的,这速度正常吗?", CATALOG)
    assert reply is not None and reply.status == "answer"
    assert "Gemma-3-27B" in reply.text or "gemma-3-27b" in reply.text.lower()
    assert "Q4_K_M" in reply.text
    assert verdicts(reply)["tg128"] == "low"
    assert translate("pasted_bench.verdict.low", "zh") in reply.text
    assert translate("pasted_bench.low_causes", "zh") in reply.text
    assert reply.text.rstrip().endswith(translate("anchors.call_more", "zh"))


def test_gpt_oss_20b_on_a_5090_too_slow() -> None:
    reply = pasted_bench_answer(GPT_OSS20 + "5090 here — too slow?", CATALOG)
    assert reply is not None and reply.status == "answer"
    assert "gpt-oss-20b" in reply.text.lower() and "MXFP4" in reply.text and "RTX 5090" in reply.text
    assert verdicts(reply) == {"pp512": "normal", "tg128": "normal"}


def test_vulkan_backend_line_on_a_7900_xtx() -> None:
    reply = pasted_bench_answer("7900 XTX 用 vulkan 跑的,这速度对吗\n" + LLAMA8_VULKAN, CATALOG)
    assert reply is not None and reply.status == "answer"
    assert "7900 XTX" in reply.text and "Vulkan" in reply.text
    rows = rows_of(reply)
    assert {r["backend"] for r in rows} == {"vulkan"}
    assert verdicts(reply) == {"pp512": "normal", "tg128": "normal"}


def test_no_card_named_asks_which_card() -> None:
    reply = pasted_bench_answer(QWEN3_3090 + "is this normal?", CATALOG)
    assert reply is not None and reply.status == "clarify"
    assert "Qwen3-30B-A3B Q4_K_M" in reply.text and "CUDA" in reply.text
    assert "98.7" in reply.text
    assert reply.rows == ()


def test_no_card_named_in_chinese_asks_in_chinese() -> None:
    reply = pasted_bench_answer("这速度对吗?\n" + GEMMA27, CATALOG)
    assert reply is not None and reply.status == "clarify"
    assert "哪" in reply.text  # 哪张卡 / 哪块卡


def test_card_from_the_device_lines_of_the_paste() -> None:
    log = (
        "ggml_cuda_init: found 1 CUDA devices:\n"
        "  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6, VMM: yes\n"
    )
    reply = pasted_bench_answer(log + QWEN3_3090 + "\nbuild: 5a32f10a (7340)\nis this expected?", CATALOG)
    assert reply is not None and reply.status == "answer"
    assert {r["gpu"] for r in rows_of(reply)} == {"rtx-3090"}


def test_depth_rows_are_priced_at_their_depth() -> None:
    paste = table(
        "llama 8B Q4_K - Medium",
        "4.58 GiB",
        "8.03 B",
        "CUDA",
        ("pp512", "11492.18 ± 61.30"),
        ("tg128", "151.36 ± 0.41"),
        ("pp512 @ d8192", "7801.55 ± 40.12"),
        ("tg128 @ d8192", "118.02 ± 0.30"),
    )
    reply = pasted_bench_answer("4090 这个速度合理吗\n" + paste + "\nbuild: 5a32f10a (7340)", CATALOG)
    rows = rows_of(reply)
    assert [r["test"] for r in rows] == ["pp512", "tg128", "pp512 @ d8192", "tg128 @ d8192"]
    by = {r["test"]: r for r in rows}
    assert by["tg128 @ d8192"]["mid"] < by["tg128"]["mid"]  # attention over 8K of KV costs decode
    assert by["pp512 @ d8192"]["mid"] < by["pp512"]["mid"]


def test_csv_output_names_its_own_card() -> None:
    fields = "build_commit,build_number,gpu_info,backends,model_filename,model_type,model_size,model_n_params"
    fields += ",n_gpu_layers,flash_attn,n_prompt,n_gen,n_depth,avg_ts,stddev_ts"
    common = (
        '"5a32f10a","7340","NVIDIA GeForce RTX 4090","CUDA","models/Meta-Llama-3.1-8B-Instruct-Q4_K_M.gguf"'
    )
    common += ',"llama 8B Q4_K - Medium","4920734720","8030261248","99","1"'
    pp = f'{common},"512","0","0","11873.410291","85.221930"'
    tg = f'{common},"0","128","0","156.092177","0.301442"'
    csv = f"{fields}\n{pp}\n{tg}\n"
    reply = pasted_bench_answer("is this ok?\n" + csv, CATALOG)
    assert reply is not None and reply.status == "answer"
    assert {r["gpu"] for r in rows_of(reply)} == {"rtx-4090"}
    assert verdicts(reply) == {"pp512": "normal", "tg128": "normal"}


def test_json_output_with_the_card_in_the_question() -> None:
    def record(n_prompt: int, n_gen: int, ts: float) -> dict[str, Any]:
        return {
            "build_commit": "5a32f10a",
            "build_number": 7340,
            "gpu_info": "",
            "backends": "CUDA",
            "model_type": "gemma3 27B Q4_K - Medium",
            "model_size": 16535572480,
            "model_n_params": 27009002240,
            "n_gpu_layers": 99,
            "flash_attn": 1,
            "n_prompt": n_prompt,
            "n_gen": n_gen,
            "n_depth": 0,
            "avg_ts": ts,
            "stddev_ts": 0.2,
            "samples_ts": [ts, ts],
        }

    paste = json.dumps([record(512, 0, 1244.9), record(0, 128, 38.6)], indent=2)
    reply = pasted_bench_answer(f"my 3090 on linux, are these numbers right?\n{paste}", CATALOG)
    assert reply is not None and reply.status == "answer"
    assert verdicts(reply) == {"pp512": "normal", "tg128": "normal"}
    jsonl = "\n".join(json.dumps(r) for r in (record(512, 0, 1244.9), record(0, 128, 38.6)))
    again = pasted_bench_answer(f"{jsonl}\n3090 正常吗", CATALOG)
    assert verdicts(again) == {"pp512": "normal", "tg128": "normal"}


def test_above_the_estimate() -> None:
    fast = QWEN3_3090.replace("98.71 ± 0.52", "260.12 ± 0.52")
    reply = pasted_bench_answer(fast + "is this normal for my 3090?", CATALOG)
    assert verdicts(reply)["tg128"] == "high"
    assert translate("pasted_bench.verdict.high", "en") in reply.text  # type: ignore[union-attr]


def test_flash_attention_off_is_named_when_the_table_shows_it() -> None:
    with_fa = HEADER.replace("| ngl |", "| ngl | fa |").replace("| --: |", "| --: | -: |")
    paste = with_fa + "".join(
        f"| gemma3 27B Q4_K - Medium | 15.40 GiB | 27.01 B | CUDA | 99 | 0 | {test} | {tps} |\n"
        for test, tps in (("pp512", "980.20 ± 3.10"), ("tg128", "22.90 ± 0.05"))
    )
    reply = pasted_bench_answer(paste + "3090, is this too slow?", CATALOG)
    assert reply is not None and verdicts(reply)["tg128"] == "low"
    assert translate("pasted_bench.fa_off", "en") in reply.text


def test_other_models_read_from_the_fixed_string() -> None:
    qwen2 = table("qwen2 7B Q5_K - Small", "4.95 GiB", "7.62 B", "CUDA", ("tg128", "120.40 ± 0.2"))
    ds = table("deepseek2 16B Q4_0", "8.29 GiB", "15.71 B", "CUDA", ("tg128", "190.00 ± 0.5"))
    for paste, quant in ((qwen2, "Q5_K_S"), (ds, "Q4_0")):
        rows = rows_of(pasted_bench_answer(paste + "normal for a 3090?", CATALOG))
        assert [r["quant"] for r in rows] == [quant]


def test_a_model_the_question_names_is_priced_when_it_has_the_printed_shape() -> None:
    reply = pasted_bench_answer(
        "4090, it's deepseek r1 distill llama 8b: is this normal?\n" + LLAMA8, CATALOG
    )
    assert {r["model"] for r in rows_of(reply)} == {"deepseek-r1-distill-llama-8b"}


def test_two_models_in_one_table_get_a_header_each() -> None:
    reply = pasted_bench_answer("4090 is this normal?\n" + LLAMA8 + GEMMA27.split("\n", 2)[2], CATALOG)
    assert [r["model"] for r in rows_of(reply)] == ["llama-3.1-8b"] * 2 + ["gemma-3-27b"] * 2
    assert reply is not None and reply.text.count("RTX 4090 ·") == 2


def test_the_causes_fit_the_machine() -> None:
    linux = pasted_bench_answer(GEMMA27 + "3090 on linux, is this normal?", CATALOG)
    assert linux is not None and translate("pasted_bench.low_causes.linux", "en") in linux.text
    cpu = table("qwen3 8B Q4_K - Medium", "4.68 GiB", "8.19 B", "CPU", ("tg128", "3.1 ± 0.1"))
    alone = pasted_bench_answer("7950X only, is this normal?\n" + cpu, CATALOG)
    assert alone is not None and translate("pasted_bench.low_causes.cpu", "en") in alone.text


def test_a_partial_offload_is_priced_with_its_layers() -> None:
    partial = GEMMA27.replace("|  99 |", "|  40 |")
    reply = pasted_bench_answer("3060 12gb is this normal?\n" + partial, CATALOG)
    assert reply is not None and translate("pasted_bench.partial", "en", ngl=40, layers=62) in reply.text


def test_a_model_bigger_than_the_card_is_priced_as_fit_would_run_it() -> None:
    big = table("gpt-oss 120B MXFP4 MoE", "59.02 GiB", "116.83 B", "CUDA", ("tg128", "32.10 ± 0.40"))
    reply = pasted_bench_answer("4090 + 64gb ram, -ncmoe 26: is this normal?\n" + big, CATALOG)
    assert reply is not None and reply.status == "answer"
    assert translate("pasted_bench.fitted", "en") in reply.text
    assert rows_of(reply)[0]["mid"] is not None


def test_community_anchors_on_the_card_calibrate_the_range() -> None:
    from tests.core.anchors.builders import index_of, make

    subs = [make(i, 96.0 + i, name=f"u{i}", gpu="rtx-3090", model="qwen3-30b-a3b") for i in range(1, 5)]
    question = QWEN3_3090 + "is this normal for my 3090?"
    plain = rows_of(pasted_bench_answer(question, CATALOG))
    calibrated = pasted_bench_answer(question, CATALOG, anchors=index_of(*subs))
    assert calibrated is not None and rows_of(calibrated)[1]["mid"] < plain[1]["mid"]
    assert "calibrated" in calibrated.text


# --- what stays as it was ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "question",
    ["what about 70b?", "and gemma 3 27b on my 3090?", "3090 能跑 70b 吗", "is qwen3 32b good on my 3090?"],
)
def test_a_table_with_another_question_goes_the_usual_way(question: str) -> None:
    assert pasted_bench_answer(QWEN3_3090 + question, CATALOG) is None


@pytest.mark.parametrize(
    "text",
    ["is this normal for my 3090?", "4090 正常吗", "", "| model | test | t/s |", "4090 qwen3 32b q4 32k"],
)
def test_no_paste_no_comparison(text: str) -> None:
    assert pasted_bench_answer(text, CATALOG) is None


def test_submit_still_reads_the_paste() -> None:
    parsed = parse_submission("my 3090\n" + QWEN3_3090, CATALOG)
    assert len(parsed.runs) == 1
    run = parsed.runs[0]
    assert run.fields["quant"] == "Q4_K_M" and run.fields["decode"] == "98.71"
    assert run.resolved["model"].best_id == "qwen3-30b-a3b"


def test_read_pasted_is_unchanged_for_csv_and_the_records_reader_reads_it() -> None:
    csv = (
        "model_type,model_size,model_n_params,backends,gpu_info,n_gpu_layers,n_prompt,n_gen,n_depth,avg_ts\n"
        '"llama 8B Q4_K - Medium","4920734720","8030261248","CUDA","NVIDIA GeForce RTX 4090",'
        '"99","0","128","0","150.5"\n'
    )
    assert read_pasted(csv, CATALOG) is None  # /submit reads what it read before
    pasted = read_bench_records(csv, CATALOG)
    assert pasted is not None and pasted.gpu == "NVIDIA GeForce RTX 4090"
    (run,) = pasted.runs
    assert run.tool == "llama-bench" and run.decode_tps == pytest.approx(150.5) and run.gen_tokens == 128
    assert run.quant == "Q4_K_M" and run.params_b == pytest.approx(8.03, abs=0.01)


def test_question_words_leave_the_tool_output_out() -> None:
    log = (
        "ggml_cuda_init: found 1 CUDA devices:\n  Device 0: NVIDIA GeForce RTX 3090, compute capability 8.6\n"
    )
    words = question_words(log + QWEN3_3090 + "\nbuild: 5a32f10a (7340)\nis this normal?")
    assert words == "is this normal?"


@pytest.mark.parametrize("target", ["plain", "telegram", "discord"])
def test_every_target_gets_one_message(target: str) -> None:
    from core.render.doc import fits

    reply = pasted_bench_answer(QWEN3_3090 + "is this normal for my 3090?", CATALOG, target=target)
    assert reply is not None and fits(reply.text, target)


def test_hostile_inputs_never_raise() -> None:
    for text in (
        HEADER * 500,
        QWEN3_3090 * 200 + "normal?",
        "[" * 5000 + '"avg_ts"',
        "{\n" * 3000 + "avg_ts",
    ):
        got = pasted_bench_answer(text, CATALOG)
        assert got is None or isinstance(got, BenchAnswer)
