"""`-sm X` / `--split-mode X` pasted with a question (issue 23): the split mode is read, a pasted
llama.cpp flag makes the run llama.cpp's (ik_llama.cpp's for `-sm graph`), and the command asks for it.
The first six were written before the framework rule (4/6 held then: the 4-card ones went to vLLM);
the last four were written after it and held on their first run (4/4)."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()

CASES = [
    ("2x 3090 qwen3 32b q4_k_m --split-mode graph", "ik_llama.cpp", "tensor", "-sm graph"),
    ("4x3090 llama 3.3 70b -sm row 速度", "llama.cpp", "row", "-sm row"),
    ("双3090 跑 qwen2.5 72b q4 用 -sm graph 多少token", "ik_llama.cpp", "tensor", "-sm graph"),
    ("llama-server -m gpt-oss-120b.gguf -sm tensor on 4x 4090", "llama.cpp", "tensor", "-sm tensor"),
    ("2x 4090 llama 3 70b q4 --split-mode=layer", "llama.cpp", "layer", "-sm layer"),
    ("4x 4090 gpt-oss-120b -sm tensor -ctk q8_0", "llama.cpp", "tensor", "-sm layer"),  # needs F16 KV
    # held-out phrasings
    ("3x 3090 mistral large 123b q4 -sm row", "llama.cpp", "row", "-sm row"),
    ("2×4090 跑 qwen3 32b --split-mode tensor", "llama.cpp", "tensor", "-sm tensor"),
    ("ik_llama.cpp 4x3090 glm 4.5 air -sm graph how fast", "ik_llama.cpp", "tensor", "-sm graph"),
    ("-sm=graph 2x3090 qwen2.5 32b", "ik_llama.cpp", "tensor", "-sm graph"),
]


@pytest.mark.parametrize(("question", "framework", "mode", "flag"), CASES)
def test_split_mode_is_read_and_run(question: str, framework: str, mode: str, flag: str) -> None:
    out = answer(question, CATALOG).as_dict()
    assert out["query"]["framework"] == framework
    assert out["query"]["split_mode"] == mode
    assert flag in out["plan"]["command"]


def test_no_flag_no_mode() -> None:
    out = answer("2x 3090 llama 3 70b q4", CATALOG).as_dict()
    assert out["query"]["split_mode"] is None


@pytest.mark.parametrize(
    "question",
    [
        "2x 3090 nvlink llama 3 70b q4 -sm graph",
        "双3090 nvlink桥接 qwen2.5 72b",
        "2x 3090 with an nvlink bridge llama 3.3 70b",
    ],
)
def test_a_bridge_said_is_the_link(question: str) -> None:
    out = answer(question, CATALOG).as_dict()
    assert out["query"]["link"] == "nvlink"
    assert out["query"]["model"]["id"] is not None  # "nvlink" is no model name


def test_no_bridge_said_no_link() -> None:
    assert answer("2x 3090 llama 3 70b q4", CATALOG).as_dict()["query"]["link"] is None


def test_split_mode_with_an_equals_sign_is_read() -> None:
    # Held-out phrasing, written after the code (held on its first run).
    out = answer("4x 3090 llama 3.3 70b --split-mode=graph", CATALOG).as_dict()
    assert out["query"]["framework"] == "ik_llama.cpp" and "-sm graph" in out["plan"]["command"]
