"""Intent words: questions that run the other way are told apart from fit/speed questions."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.intent import intent_details, read_intent, typical_card
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("8GB VRAM what's the biggest model I can run", "which_model"),
        ("RTX 4080Super 16G 内存64G 能跑多少B的模型", "which_model"),
        ("what can I run on a 3090", "which_model"),
        ("what gpu do i need for 70b", "which_hardware"),
        ("140亿模型需要多大显存", "which_hardware"),
        ("how many A800 80G to deploy DeepSeek-V3 with vllm", "cards_needed"),
        ("4090 vs 5090 for qwen3 32b", "compare"),
        ("qwen3 32b 和 gemma3 27b 哪个快", "compare"),
        ("首 token 要多久 prompt 8k", "ttft"),
        ("16并发下 ttft 和吞吐量", "concurrency"),
        # the old intents keep their words
        ("V100 32G 27B 多少 token", "speed"),
        ("gemma3 27b 需要多少显存", "memory"),
        ("can my 3090 run qwen3 32b", "fit"),
    ],
)
def test_intent(question: str, intent: str) -> None:
    assert parse_question(question, CATALOG).intent == intent


def test_users_are_not_a_card_count() -> None:
    parsed = parse_question("H20 部署 qwen3 32b 50路并发 速度", CATALOG)
    assert parsed.intent == "concurrency" and parsed.gpu_count == 1
    assert intent_details("H20 部署 qwen3 32b 50路并发 速度", CATALOG).users == 50


@pytest.mark.parametrize(
    ("question", "cards", "users"),
    [
        ("4090 qwen3 8b vllm 20个人同时用 速度", 1, 20),  # "20个" counts people here, not cards
        ("3个人一起用 3090 qwen3 14b 够吗", 1, 3),
        ("两张4090 跑 qwen3 32b 50个用户同时访问", 2, 50),
    ],
)
def test_people_counted_with_a_classifier_are_users(question: str, cards: int, users: int) -> None:
    parsed = parse_question(question, CATALOG)
    assert parsed.gpu_count == cards and parsed.intent == "concurrency"
    assert intent_details(question, CATALOG).users == users


def test_details() -> None:
    assert intent_details("首 token 要多久 prompt 8k", CATALOG).prompt == 8192
    assert intent_details("time to first token for a 32k prompt", CATALOG).prompt == 32768
    assert intent_details("I have a 16GB GPU", CATALOG).memory_only_gib == 16
    assert intent_details("我只有一张48G的显卡", CATALOG).memory_only_gib == 48
    assert intent_details("4090 qwen3 32b", CATALOG) == intent_details("", CATALOG)


def test_typical_card_by_memory() -> None:
    assert typical_card(16, CATALOG) == "rtx-4060-ti-16g"
    assert typical_card(48, CATALOG) == "rtx-a6000"
    assert typical_card(50, CATALOG) == "rtx-a6000"  # between sizes: the next size below
    assert typical_card(1, CATALOG) is not None


@pytest.mark.parametrize(
    "question", ["devstral small", "4090 跑 devstral 多快", "canvas app on 3090 qwen3 8b"]
)
def test_comparison_words_stand_alone(question: str) -> None:
    """ "vs" inside a model name (de-vs-tral) is not a comparison."""
    assert read_intent(question, CATALOG)[1] != "compare"


@pytest.mark.parametrize(
    "question",
    [
        "would gemma 3 12b run ok on my 4060",
        "can a 3090 handle qwen3 32b at q4",
        "is it possible to run gpt-oss-120b on 2x 4090",
        "我这 4060ti 跑不跑得动 qwen3 30b a3b",
        "5060 能不能用 qwen3 8b",
        "24g 的卡装得下 gemma 3 27b 吗",
    ],
)
def test_will_it_run_is_a_fit_question(question: str):
    assert parse_question(question, CATALOG).intent == "fit"


@pytest.mark.parametrize(
    ("question", "other"),
    [
        ("titan rtx vs a5000 qwen3 32b", "rtx-a5000"),
        ("3090 还是 Radeon VII 跑 qwen3 14b", "radeon-vii"),
        ("5090 or titan v for gemma 3 27b", "titan-v"),
    ],
)
def test_two_cards_set_against_each_other_are_compared(question: str, other: str):
    p = parse_question(question, CATALOG)
    assert p.intent == "compare" and [c.res.best_id for c in p.cards][1] == other


def test_one_card_under_two_names_is_either_not_compared():
    assert parse_question("H100 or H800 跑 deepseek v3", CATALOG).intent == "general"


def test_a_card_described_by_its_vram_is_no_memory_question():
    assert parse_question("12gb vram 32gb ram, gemma 3 27b q4?", CATALOG).intent == "general"
    assert parse_question("how much vram for gemma 3 27b", CATALOG).intent == "memory"


@pytest.mark.parametrize(
    ("question", "count", "gib"),
    [
        ("两张8g的卡 跑 qwen3 14b", 2, 8.0),
        ("4个gpu，每个24g 跑 qwen2.5 72b", 4, 24.0),
        ("I have two 16GB GPUs, can I run qwen3 32b", 2, 16.0),
        ("4 gpus with 24gb each qwen3 235b", 4, 24.0),
        ("手上有三块12G的显卡 能跑 qwen3 32b 吗", 3, 12.0),  # unseen: 块 and a 12 GB size
    ],
)
def test_several_cards_named_only_by_memory(question: str, count: int, gib: float) -> None:
    details = intent_details(question, CATALOG)
    assert (details.memory_only_count, details.memory_only_gib) == (count, gib)


def test_cards_named_by_memory_are_priced_as_that_many_typical_cards() -> None:
    from core.ask.answer import answer

    reply = answer("2x 24gb gpus llama 70b", CATALOG)
    assert reply.query is not None
    card = reply.query.hardware.first
    assert card.count == 2 and card.memory_gib == 24.0 and card.assumed


@pytest.mark.parametrize(
    ("question", "gpu", "cards", "users"),
    [
        # Written before the 并发 rule was looked at again, in phrasings no test had.
        ("3090 并发 12 跑 llama 3 8b 多快", "rtx-3090", 1, 12),
        ("双卡 5090 并发数 32 qwen3 14b", "rtx-5090", 2, 32),
        ("qwen3 8b 2x 4090 并发=24", "rtx-4090", 2, 24),
        ("12并发 4090 qwen3 32b", "rtx-4090", 1, 12),  # the count before 并发, the card after it
        ("h100 llama 3.1 8b 2000并发", "h100-sxm", 1, 2000),  # four digits alone before 并发: users
    ],
)
def test_a_card_number_next_to_bing_fa_is_the_card_and_the_other_number_the_users(
    question: str, gpu: str, cards: int, users: int
) -> None:
    parsed = parse_question(question, CATALOG)
    assert parsed.gpu is not None and (parsed.gpu.best_id or "").startswith(gpu.split("-sxm")[0])
    assert parsed.gpu_count == cards and parsed.intent == "concurrency"
    assert intent_details(question, CATALOG).users == users
