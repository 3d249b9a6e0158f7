"""Questions naming ik_llama.cpp, its quants, or an EXL2/EXL3 bpw (unseen phrasings, en and zh)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "framework", "quants", "model", "gpu", "count"),
    [
        ("ik_llama 跑 deepseek r1 IQ2_K_R4 4090+256g", "ik_llama.cpp", ("IQ2_K_R4",), "deepseek-r1",
         "rtx-4090", 1),
        ("用 ik 版 llama.cpp 跑 Qwen3-235B IQ3_K,5090 + 192G 内存", "ik_llama.cpp", ("IQ3_K",),
         "qwen3-235b-a22b", "rtx-5090", 1),
        ("ubergarm's mix-IQ3_K of qwen3 235b on a 5090 with 128gb ram, ik_llama", "ik_llama.cpp",
         ("MIX-IQ3_K",), "qwen3-235b-a22b", "rtx-5090", 1),
        ("exl2 4.25bpw qwen2.5 72b on 2x3090", "exllamav2", ("EXL2-4.25",), "qwen2.5-72b", "rtx-3090", 2),
        ("tabbyapi 4.65bpw mistral large on 3x 3090", "exllamav2", ("EXL2-4.65",), "mistral-large-2407",
         "rtx-3090", 3),
        ("EXL3 3.0bpw qwen3 30b a3b 单卡3090 多快", "exllamav3", ("EXL3-3.0",), "qwen3-30b-a3b",
         "rtx-3090", 1),
        ("can llama.cpp run ubergarm's IQ2_K_R4 deepseek r1 on a 4090 with 256gb ram?", "llama.cpp",
         ("IQ2_K_R4",), "deepseek-r1", "rtx-4090", 1),
    ],
)  # fmt: skip
def test_framework_quant_and_setup_are_read(
    text: str, framework: str, quants: tuple[str, ...], model: str, gpu: str, count: int
) -> None:
    p = parse_question(text, CATALOG)
    assert p.framework == framework
    assert p.quants == quants
    assert p.model is not None and p.model.best_id == model
    assert p.gpu is not None and (p.gpu.best_id, p.gpu_count) == (gpu, count)


def test_ik_aliases_people_type() -> None:
    for text in (
        "ikllama.cpp deepseek v3 Q2_K_R4 on dual epyc 9654 768gb",
        "ik-llama.cpp qwen3 30b on a 3090",
        "ik llama.cpp vs llama.cpp for qwen3 30b a3b on a 7950x, no gpu",
    ):
        assert parse_question(text, CATALOG).framework == "ik_llama.cpp", text


def test_llama_cpp_with_an_ik_quant_is_refused_with_the_reason_and_the_fork_offered() -> None:
    zh = answer("llama.cpp 能跑 IQ2_K_R4 的 deepseek r1 吗 4090 256g内存", CATALOG).text
    assert "加载不了 IQ2_K_R4" in zh and "只有 ik_llama.cpp 能读" in zh
    assert "-ot exps=CPU" in zh or "--n-cpu-moe" in zh
    en = answer("can llama.cpp run ubergarm's IQ2_K_R4 deepseek r1 on a 4090 with 256gb ram?", CATALOG).text
    assert "can't load IQ2_K_R4" in en and "run it with ik_llama.cpp" in en
    assert "-mla 3 -amb 512" in en and "-fmoe" not in en


def test_an_exl2_bpw_question_is_priced_at_that_bpw() -> None:
    text = answer("exl2 4.25bpw qwen2.5 72b on 2x3090", CATALOG).text
    assert "EXL2-4.25" in text and "ExLlamaV2" in text
    assert "--model-name Qwen2.5-72B-Instruct-exl2-4.25" in text
    lower = answer("exl2 3.0bpw qwen2.5 72b on 2x3090", CATALOG).text
    assert "EXL2-3.0" in lower and "EXL2-4.25" not in lower


@pytest.mark.parametrize(
    ("text", "quants"),
    [
        ("2x 3090 exl2 llama 3.3 70b 4.0bpw", ("EXL2-4.0",)),
        # unseen phrasing: the family word far from its bpw, at the start of the question
        ("exl3 on a 4090 for qwen3 32b, 3.5bpw ok?", ("EXL3-3.5",)),
    ],
)
def test_a_family_word_apart_from_its_bpw_is_that_member_not_a_second_quant(
    text: str, quants: tuple[str, ...]
) -> None:
    assert parse_question(text, CATALOG).quants == quants
