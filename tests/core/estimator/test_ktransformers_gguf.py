"""KTransformers' classic DeepSeek-R1/V3 recipe loads GGUF experts (--gguf_path, Q4_K_M; experts on
the CPU, attention on the GPU): ~10-15 tok/s on a 4090 with 382 GB+ of DDR5 (the tutorial's rows in
catalogs/measurements/published_extra.csv are Q4_K_M). Questions written before the change."""

from __future__ import annotations

import re

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.estimator.frameworks import FrameworkQuery, framework_options

CAT = default_catalog()
_CMD = re.compile(r"^\$ (.+)$", re.MULTILINE)


def _kt(quant: str):
    q = FrameworkQuery(
        gpu=CAT.gpus["rtx-4090"],
        model=CAT.models["deepseek-r1"],
        quant=CAT.quants[quant],
        context=32768,
        os="linux",
        fits_on_gpu=False,
    )
    return {o.framework: o for o in framework_options(q, CAT)}["ktransformers"]


@pytest.mark.parametrize("quant", ["Q4_K_M", "IQ4_XS", "Q2_K", "UD-Q2_K_XL"])
def test_gguf_quants_load_with_gguf_path(quant: str) -> None:
    kt = _kt(quant)
    assert kt.runnable, kt.notes
    assert "--gguf_path" in kt.command and "--model_path deepseek-ai/DeepSeek-R1" in kt.command
    assert "{" not in kt.command, kt.command


def test_fp8_keeps_the_sglang_command() -> None:
    kt = _kt("FP8")
    assert "sglang.launch_server" in kt.command and "--gguf_path" not in kt.command


@pytest.mark.parametrize(
    "question",
    [
        "ktransformers deepseek r1 on a 4090 with 512gb ram, expected speed?",
        "ktransformers 在 4090 和 512gb 内存上跑 deepseek r1 能有多快",
    ],
)
def test_named_ktransformers_runs_r1_gguf_in_512gb(question: str) -> None:
    text = answer(question, CAT).text
    assert "not on this setup" not in text and "不能在这套配置" not in text, text
    assert "Q4_K_M" in text, text


@pytest.mark.parametrize(
    "question",
    [
        "ktransformers deepseek r1 q4_k_m on 4090 with 512gb ram",
        "ktransformers 跑 deepseek r1 q4_k_m，4090 加 512g 内存",
    ],
)
def test_named_gguf_quant_gets_a_gguf_path_command(question: str) -> None:
    text = answer(question, CAT).text
    assert "safetensors" not in text, text
    commands = _CMD.findall(text)
    assert commands and "--gguf_path" in commands[0], text


# Held out: written after the change, run once.
@pytest.mark.parametrize(
    "question",
    [
        "ktransformers deepseek v3 ud-q2_k_xl on a 3090 with 256gb ram",
        "ktransformers 跑 deepseek v3 iq4_xs，4090，512g 内存",
    ],
)
def test_held_out_other_gguf_quants(question: str) -> None:
    text = answer(question, CAT).text
    commands = _CMD.findall(text)
    assert (
        commands and "--gguf_path" in commands[0] and "--model_path deepseek-ai/DeepSeek-V3" in commands[0]
    ), text
