"""The which-model list for a task ("best model for coding on a 4090"): the code-tuned models that
fit come first (every code-tuned catalog entry is a candidate, not only the most popular), then the
general ones, every 3-bit pick after them; the title says it is for coding; `ask --json` carries the
task. A question without a task, and a single-model question that says coding, answer as before.
Written before the change."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.render import which_model
from core.render.doc import LIMITS
from core.render.intent_rows import setup_for

CAT = default_catalog()


def _code(model_id: str) -> bool:
    return "code" in CAT.models[model_id].uses


def _low_bit(row: dict[str, object]) -> bool:
    quant = str(row["quant"])
    return CAT.quants[quant].bpw < 4.0 and CAT.models[str(row["model"])].native_quant != quant


def _on_card(rows: tuple[dict[str, object], ...]) -> list[dict[str, object]]:
    return [r for r in rows if r.get("placement") == "gpu"]


def _assert_code_first(question: str) -> None:
    reply = answer(question, CAT)
    assert reply.status == "answer", reply.text
    assert reply.query is not None and reply.query.intent == "which_model", reply.text
    assert reply.query.task == "code"
    assert reply.as_dict()["query"]["task"] == "code"
    rows = _on_card(reply.rows)
    assert rows and _code(str(rows[0]["model"])), reply.text
    # Every code-tuned row before every general one, among the ~4-bit picks; a 3-bit file (only way
    # that model fits) after every 4-bit pick, code-tuned or not (a practitioner audit: two 22-24B
    # coders at IQ3_XXS led a 12 GB card's list above a 14B coder at Q4_K_M).
    low = [_low_bit(r) for r in rows]
    assert low == sorted(low), rows
    flags = [bool(r["for_task"]) for r, is_low in zip(rows, low, strict=True) if not is_low]
    assert flags == sorted(flags, reverse=True), rows
    assert all(_code(str(r["model"])) == bool(r["for_task"]) for r in rows)
    word = "写代码" if reply.query.lang == "zh" else "coding"
    assert word in reply.text.split("\n")[1 if reply.query.hardware.first.assumed else 0], reply.text
    for target in ("discord", "telegram"):
        assert len(answer(question, CAT, target=target).text) <= LIMITS[target]


BRIEF = [
    "best model for coding on a 4090",
    "what can I run for coding with 16gb vram",
    "3090 写代码用什么模型",
    "编程用哪个模型 24G 显存",
    "which coder model fits my 4070 ti super",
    "agentic coding model for 2x3090",
]
NEW = [
    "good coding llm for rtx 3060 12gb",
    "best local model for programming on my 4080",
    "which llm for code completion on a 3060",
    "recommend a model for coding, I have a 7900 xtx",
    "what should I run for agentic coding on a 5090",
    "4090 编程模型推荐",
    "12G显存 写代码 推荐什么模型",
    "用3090跑代码模型,选哪个",
    "M4 Max 64GB best model for coding",
    "what coding model can a 16gb gpu run",
    "best model for vs code copilot on 4070",
]


@pytest.mark.parametrize("question", BRIEF)
def test_the_briefs_questions_list_code_models_first(question: str) -> None:
    _assert_code_first(question)


@pytest.mark.parametrize("question", NEW)
def test_new_phrasings_list_code_models_first(question: str) -> None:
    _assert_code_first(question)


def test_general_models_follow_and_less_popular_code_models_are_candidates() -> None:
    reply = answer("best model for coding on a 4090", CAT)
    rows = _on_card(reply.rows)
    assert any(not r["for_task"] for r in rows), "general models follow the code-tuned ones"
    top = sorted(CAT.models.values(), key=lambda m: (-m.popularity, m.id))[:40]
    popular = {m.id for m in top}
    assert any(r["for_task"] and r["model"] not in popular for r in rows), rows


def test_a_code_moe_with_its_experts_in_ram_is_named() -> None:
    setup = setup_for(CAT, "rtx-4060", 1, None, None, None)
    result = which_model.which_models(CAT, setup, 8192, "f16", "code")
    assert "qwen3-coder-30b-a3b" in [f.model_id for f in result.experts], result.experts
    reply = answer("best coding model for an rtx 4060 8gb", CAT)
    experts = [r["model"] for r in reply.rows if r.get("placement") == "experts"]
    assert "qwen3-coder-30b-a3b" in experts, reply.text


def test_no_code_model_fits_says_so_and_lists_general_models() -> None:
    setup = setup_for(CAT, "rtx-3050-laptop", 1, None, None, None)
    result = which_model.which_models(CAT, setup, 8192, "f16", "code")
    assert result.fits and not any(f.for_task for f in result.fits)
    en = answer("best model for coding on a rtx 3050 laptop 4gb", CAT)
    assert "No code-tuned model fits" in en.text, en.text
    assert _on_card(en.rows)
    zh = answer("笔记本 3050 4g 写代码用什么模型", CAT)
    assert "没有专为写代码调优的模型" in zh.text, zh.text


def test_the_task_is_a_cache_key() -> None:
    setup = setup_for(CAT, "rtx-3090", 1, None, None, None)
    plain = which_model.which_models(CAT, setup, 8192)
    code = which_model.which_models(CAT, setup, 8192, "f16", "code")
    before = which_model.which_models.cache_info().hits
    assert which_model.which_models(CAT, setup, 8192, "f16", "code") is code
    assert which_model.which_models.cache_info().hits == before + 1
    assert plain.task is None and code.task == "code"
    assert [f.model_id for f in plain.fits] != [f.model_id for f in code.fits]


def test_no_task_keeps_the_list_and_its_json() -> None:
    reply = answer("what can I run on a 3090", CAT)
    assert reply.query is not None and reply.query.task is None
    assert "task" not in reply.as_dict()["query"]
    assert all("for_task" not in r for r in reply.rows)
    assert "coding" not in reply.text


@pytest.mark.parametrize(
    ("question", "plain"),
    [
        ("qwen3 coder 30b on 3090 for coding", "qwen3 coder 30b on 3090"),
        ("devstral small on a 4090 for agentic coding", "devstral small on a 4090"),
        ("how fast is qwen3 32b for coding on a 3090", "how fast is qwen3 32b on a 3090"),
    ],
)
def test_a_single_model_question_that_says_coding_is_unchanged(question: str, plain: str) -> None:
    with_task, without = answer(question, CAT), answer(plain, CAT)
    assert with_task.query is not None and with_task.query.task is None
    assert "task" not in with_task.as_dict()["query"]
    assert with_task.text == without.text


@pytest.mark.parametrize(
    "question",
    ["error code 43 on my 3060, what models can I run", "decode speed 4090 what can i run"],
)
def test_look_alike_words_keep_the_general_list(question: str) -> None:
    reply = answer(question, CAT)
    assert reply.query is not None and reply.query.intent == "which_model"
    assert reply.query.task is None and "coding" not in reply.text
