"""The task a question names ("best model for coding"), read from words kept as data
(catalogs/intents.toml [task]): whole words only, so "decode", "encode" and an "error code" never
read as coding, while "vs code" does (and is no comparison). Written before the implementation."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.intent import intent_details, read_task

CATALOG = default_catalog()


@pytest.mark.parametrize(
    "text",
    [
        "best model for coding on a 4090",
        "which coder model fits my 4070 ti super",
        "agentic coding model for 2x3090",
        "good model for programming",
        "code completion model for a 3060",
        "best model for vs code copilot on 4070",
        "3090 写代码用什么模型",
        "编程用哪个模型 24G 显存",
        "用3090跑代码模型",
        "what can i run for code edits on a 3090",
    ],
)
def test_coding_words_name_the_code_task(text: str) -> None:
    assert read_task(text, CATALOG) == "code"
    assert intent_details(text, CATALOG).task == "code"


@pytest.mark.parametrize(
    "text",
    [
        "what can i run on a 3090",
        "decode speed 4090 what can i run",
        "what can I run on a 3090 to encode subtitles",
        "error code 43 on my 3060, what models can I run",
        "exit code 1 when loading, what model fits a 4090",
        "3090 能跑什么模型,报错代码 43",
        "unicode names, which model fits a 4090",
        "4090 qwen3 32b decode tok/s",
    ],
)
def test_other_words_name_no_task(text: str) -> None:
    assert read_task(text, CATALOG) is None


def test_vs_code_is_an_editor_not_a_comparison() -> None:
    reply = answer("best model for vs code copilot on 4070", CATALOG)
    assert reply.query is not None and reply.query.intent == "which_model", reply.text
    assert reply.query.task == "code"


# Written after the golden snapshot showed them (GitHub-issue questions of the corpus): a project's
# code run on the card is no coding task, and an unknown model named with "coder" keeps its reply.
@pytest.mark.parametrize(
    "text",
    ["Is anyone using a single V100-32G to run this code normally?", "will my 3080 run this code"],
)
def test_running_a_projects_code_is_no_coding_task(text: str) -> None:
    assert read_task(text, CATALOG) is None


def test_refactoring_this_code_is_still_coding() -> None:
    assert read_task("which model should I use on my 3090 to refactor this code", CATALOG) == "code"


def test_an_unknown_coder_model_gets_no_task() -> None:
    reply = answer("Run Qwen3-Coder-Next on 8Gb VRAM", CATALOG)
    assert reply.query is not None and reply.query.task is None
    assert "task" not in reply.as_dict()["query"]
