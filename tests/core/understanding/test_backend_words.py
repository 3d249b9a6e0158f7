"""The backend a question names (issue 11 item 3): read into the typed query, blanked from names."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("question", "backend", "gpu", "model"),
    [
        ("7900 xtx qwen3 8b vulkan", "vulkan", "rx-7900-xtx", "qwen3-8b"),
        ("rx 7900 xtx on vulkan, qwen3 32b q4", "vulkan", "rx-7900-xtx", "qwen3-32b"),
        ("llama.cpp vulkan 4090 llama 3 8b", "vulkan", "rtx-4090", "llama-3-8b"),
        ("7900xtx 用vulkan跑 qwen3 32b 多快", "vulkan", "rx-7900-xtx", "qwen3-32b"),
        ("mi50 32g qwen3 8b hip", "rocm", "mi50-32g", "qwen3-8b"),
        ("mi50 32g 用ROCm跑 qwen3 8b", "rocm", "mi50-32g", "qwen3-8b"),
        ("4090 qwen3 8b 纯CPU", "cpu", "rtx-4090", "qwen3-8b"),
        ("4090 qwen3 8b cpu only", "cpu", "rtx-4090", "qwen3-8b"),
        # Unseen phrasings, one per language.
        ("Can my Arc A770 do qwen3 14b with SYCL?", "sycl", "arc-a770-16g", "qwen3-14b"),
        ("M2 Max 上面 metal 后端跑 qwen3 8b 大概多少 token", "metal", None, "qwen3-8b"),
    ],
)
def test_backend_words_are_read_and_never_join_a_name(
    question: str, backend: str, gpu: str | None, model: str
) -> None:
    parsed = parse_question(question, CATALOG)
    assert parsed.backend == backend
    if gpu is not None:
        assert parsed.gpu is not None and parsed.gpu.best_id == gpu
    assert parsed.model is not None and parsed.model.best_id == model


@pytest.mark.parametrize(
    "question",
    [
        "4090 + 64gb cpu ram gpt-oss-120b",  # CPU RAM is host memory, not a CPU-only run
        "4090 qwen3 30b a3b experts on cpu --cpu-moe",
        "which chip for qwen3 8b",  # "hip" inside "chip"
        "3090 qwen3 8b",
    ],
)
def test_no_backend_where_none_is_named(question: str) -> None:
    assert parse_question(question, CATALOG).backend is None


def test_ask_json_carries_the_backend_and_keeps_the_old_keys() -> None:
    reply = answer("7900 xtx qwen3 8b vulkan", CATALOG)
    query = reply.as_dict()["query"]
    assert query["backend"] == "vulkan"
    for key in (
        "gpu",
        "model",
        "quants",
        "contexts",
        "os",
        "framework",
        "lang",
        "intent",
        "notes",
        "kv_type",
    ):
        assert key in query
    assert answer("3090 qwen3 8b", CATALOG).as_dict()["query"]["backend"] is None


def test_the_reply_says_the_backend_was_asked_in_both_languages() -> None:
    en = answer("7900 xtx qwen3 8b on vulkan", CATALOG)
    zh = answer("7900xtx 用vulkan跑 qwen3 8b", CATALOG)
    assert en.text.startswith("On Vulkan, as asked")
    assert zh.text.startswith("按你说的 Vulkan 后端计算")


def test_a_backend_that_cannot_drive_the_card_is_said_not_swapped_silently() -> None:
    reply = answer("rtx 4090 llama 3 8b on metal", CATALOG)
    assert reply.query is not None and reply.query.backend is None
    assert [n.code for n in reply.query.notes] == ["backend_impossible"]
    assert reply.text.startswith("Metal can't drive this card") and "(CUDA)" in reply.text.splitlines()[0]
