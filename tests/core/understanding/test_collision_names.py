"""Names that collide with a neighbour (Ministral 3 vs Ministral-8B-2410, Mistral Large vs the word
"large", RX 7600 vs the i5-7600 / Ryzen 5 7600 CPUs, ChatGLM3-6B vs its -32k / -128k releases,
Baichuan2 vs Baichuan): each is answered when named, and never a silent swap for the neighbour."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.hub_rule import model_need
from core.understanding.parse import parse_question
from core.understanding.resolve import resolve_model

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("ministral 3 8b", "ministral-3-8b"),
        ("ministral-3-14b", "ministral-3-14b"),
        ("ministral 3 14b 2512", "ministral-3-14b"),
        ("Ministral-3-3B-Instruct-2512", "ministral-3-3b"),
        ("mistral large 2", "mistral-large-2407"),
        ("mistral-large-2407", "mistral-large-2407"),
        ("mistral large 123b", "mistral-large-2407"),
        ("Mistral-Large-Instruct-2411", "mistral-large-2411"),
        ("chatglm3", "chatglm3-6b"),
        ("chatglm3-6b-128k", "chatglm3-6b-128k"),
        ("chatglm3 6b 32k", "chatglm3-6b-32k"),
        ("glm4 9b", "glm-4-9b"),
        ("glm-4-9b-chat-1m", "glm-4-9b-1m"),
        ("百川2 13b", "baichuan2-13b"),
        ("baichuan2-7b", "baichuan2-7b"),
        ("ministral3 8b instruct", "ministral-3-8b"),  # unseen
        ("Mistral Large 2411 awq", "mistral-large-2411"),  # unseen
        ("百川2 7b", "baichuan2-7b"),  # unseen
        ("r1 1.5b", "deepseek-r1-distill-qwen-1.5b"),
        ("deepseek-r1:1.5b", "deepseek-r1-distill-qwen-1.5b"),
        ("r1蒸馏1.5b", "deepseek-r1-distill-qwen-1.5b"),  # unseen
        ("yi 1.5 34b", "yi-1.5-34b"),
        ("Yi-1.5-9B-Chat", "yi-1.5-9b"),
        ("yi1.5 9b", "yi-1.5-9b"),  # unseen
        ("yi 34b", "yi-34b"),  # the first Yi keeps its name
        ("Ministral-8B-Instruct-2410", "ministral-8b-2410"),
        ("ministral 8b 2410", "ministral-8b-2410"),
        ("deepseek coder 33b", "deepseek-coder-33b"),
        ("deepseek-coder:33b", "deepseek-coder-33b"),
        ("Codestral-22B-v0.1", "codestral-22b"),
        ("codestral", "codestral-22b"),
        ("DeepSeek-Coder-33B-Instruct q4_k_m", "deepseek-coder-33b"),  # unseen
    ],
)
def test_each_new_name_resolves(text: str, model_id: str) -> None:
    res = resolve_model(text, CATALOG)
    assert res.best_id == model_id and res.confident, (text, res)


@pytest.mark.parametrize(
    "text",
    [
        "ministral 8b",
        "ministral 14b",
        "baichuan 13b",
        "Baichuan-13B-Chat",
        "yi 9b",
        "ministral 3b q4",
    ],  # last unseen
)
def test_a_family_without_its_version_is_asked_back(text: str) -> None:
    # Ministral-8B-2410 / Baichuan-13B are other releases the catalog lacks: candidates, not an answer.
    res = resolve_model(text, CATALOG)
    assert res.best_id is None and not res.confident and res.candidates, res
    assert res.candidates[0][0].startswith(("ministral-", "baichuan2", "yi-1.5"))


@pytest.mark.parametrize(
    "text",
    [
        "I am running large llms on my 3070 ti",
        "a large model on a 3090",
        "能跑 large 模型吗 4090",
        "small models for a 4060",
        "what large language model fits 24g",  # unseen
    ],
)
def test_the_word_large_names_no_model(text: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.model is None or parsed.model.best_id is None, parsed.model


def test_chatglm3_128k_keeps_its_release_and_its_context() -> None:
    parsed = parse_question("chatglm3-6b-128k 用两张3090够吗", CATALOG)  # unseen
    assert parsed.model is not None and parsed.model.best_id == "chatglm3-6b-128k"
    assert parsed.contexts == (131072,)
    # A context after a model whose -NNk release the catalog lacks still reads as the context.
    other = parse_question("qwen3-8b-128k on 4090", CATALOG)
    assert other.model is not None and other.model.best_id == "qwen3-8b" and other.contexts == (131072,)


@pytest.mark.parametrize(
    ("text", "gpu_id"),
    [
        ("rx 7600 跑 qwen3 8b", "rx-7600"),
        ("7600xt", "rx-7600-xt"),
        ("7600 xt 16g qwen3 14b", "rx-7600-xt"),
        ("RX7600 8GB 能跑 glm4 9b 吗", "rx-7600"),  # unseen
        ("radeon 7600 with llama 3 8b", "rx-7600"),  # unseen
    ],
)
def test_the_cards_are_read(text: str, gpu_id: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is not None and parsed.gpu.best_id == gpu_id


@pytest.mark.parametrize(
    "text",
    [
        "i5-7600K 16g ram qwen3 8b",
        "i5 7600 跑 qwen3 4b",
        "ryzen 5 7600 qwen3 8b",
        "7600x + 32g ddr5 qwen3 8b",
        "Core i5 7600 with 32GB, can it run llama 3 8b?",  # unseen
        "ryzen 5 7600 cpu only 能跑 qwen3 14b 吗",  # unseen
    ],
)
def test_a_cpu_name_is_not_the_card(text: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is None, parsed.gpu


def test_an_igpu_named_by_its_cpu_is_still_the_card() -> None:
    parsed = parse_question("Ryzen 7 7840HS 跑 qwen3 8b", CATALOG)
    assert parsed.gpu is not None and parsed.gpu.best_id == "radeon-780m"


def test_a_cpu_and_a_card_together() -> None:
    parsed = parse_question("ryzen 5 7600 + rx 7600 xt, qwen3 14b speed", CATALOG)  # unseen
    assert parsed.gpu is not None and parsed.gpu.best_id == "rx-7600-xt"


def test_ministral_8b_in_a_question_is_not_answered_as_ministral_3() -> None:
    raw = "running ministral 8b on a 4060, slow"
    parsed = parse_question(raw, CATALOG)
    after, _need = model_need(raw, parsed.model, CATALOG)
    assert after is None or not after.confident


def test_a_bare_size_keeps_the_established_row() -> None:
    # New rows sit 10 popularity below the established one of their size: offered, not picked.
    for text, established in (
        ("1.5b", "qwen2.5-1.5b"),
        ("13b", "llama-2-13b"),
        ("7b", "qwen2.5-7b"),
        ("34b", "yi-34b"),
    ):
        res = resolve_model(text, CATALOG)
        assert res.best_id == established, (text, res)


def test_ministral_8b_names_both_releases_and_is_asked_back() -> None:
    res = resolve_model("ministral 8b", CATALOG)
    assert res.best_id is None and not res.confident
    assert {"ministral-8b-2410", "ministral-3-8b"} <= {mid for mid, _score in res.candidates}


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("Ministral-8B-Instruct-2410 on a 4060", "ministral-8b-2410"),
        ("Ministral-3-8B-Instruct-2512 跑 5060 ti 16g", "ministral-3-8b"),  # unseen
        ("Qwen3-30B-A3B-Instruct-2507 on a 4090", "qwen3-30b-a3b-2507"),  # the date after "instruct"
    ],
)
def test_a_full_repo_name_keeps_its_date(text: str, model_id: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.model is not None and parsed.model.best_id == model_id and parsed.model.confident
