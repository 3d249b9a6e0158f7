"""Misses found by questions written for this (not from the corpus): each with the question it came
from and a phrasing the fix was not written against, English and Chinese."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.intent import intent_details
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "gpu", "memory"),
    [
        ("glm4.5 air on m4 max 128", "apple-m4-max-40c", 128.0),
        ("M2 Ultra 192 deepseek v3 q2 speed?", "apple-m2-ultra", 192.0),  # unseen
        ("m3 max 48 跑 qwen3 30b 多快", "apple-m3-max-40c", 48.0),  # unseen
        ("m1 max 32 core 64gb llama 3 8b", "apple-m1-max", 64.0),  # a core count is no size
    ],
)
def test_a_bare_size_after_a_unified_memory_chip(text: str, gpu: str, memory: float) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is not None
    assert (parsed.gpu.best_id, parsed.gpu.memory_gib) == (gpu, memory)


def test_a_bare_number_after_a_discrete_card_is_no_size() -> None:
    parsed = parse_question("4090 24 threads qwen3 8b", CATALOG)
    assert parsed.gpu is not None and parsed.gpu.memory_gib is None


@pytest.mark.parametrize(
    ("text", "quants"),
    [
        ("gemma3 27b qat on a 16gb card", ("Q4_0",)),
        ("3060 12g 跑 gemma3 12b qat", ("Q4_0",)),  # unseen
        ("does gemma 3 4b qat fit a 4gb laptop gpu", ("Q4_0",)),  # unseen
        ("gemma3-27b-it-qat q4 3090", ("Q4_K_M",)),  # a quant said beside it is the one asked
    ],
)
def test_qat_alone_is_the_q4_0_release(text: str, quants: tuple[str, ...]) -> None:
    assert parse_question(text, CATALOG).quants == quants


@pytest.mark.parametrize(
    "text",
    [
        "24g显存跑qwen3 32b q4 能开多少上下文",
        "3090 跑 qwen3 32b q4 最多能开到多长的上下文",  # unseen
        "how long a context can the 3090 do with qwen3 32b q4",  # unseen
    ],
)
def test_how_long_a_context_is_a_fit_question(text: str) -> None:
    assert parse_question(text, CATALOG).intent == "fit"


@pytest.mark.parametrize(
    ("text", "gpu"),
    [
        ("i have 4o90 and want to run lama 3 70b", "rtx-4090"),
        ("my 3o90 runs qwen3 32b how fast", "rtx-3090"),  # unseen
        ("4o90跑qwen3 32b多快", "rtx-4090"),  # unseen
    ],
)
def test_an_o_typed_for_a_zero(text: str, gpu: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is not None and parsed.gpu.best_id == gpu


def test_gpt_4o_is_no_card() -> None:
    assert parse_question("gpt-4o vs qwen3 32b", CATALOG).gpu is None


@pytest.mark.parametrize(
    ("text", "model"),
    [
        ("i have 4o90 and want to run lama 3 70b", "llama-3-70b"),
        ("gema 3 27b on 4090", "gemma-3-27b"),  # unseen
        ("4090 跑 lama 3 8b 多快", "llama-3-8b"),  # unseen
    ],
)
def test_a_short_name_word_typed_with_one_double_letter_single(text: str, model: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.model is not None and parsed.model.best_id == model


def test_everyday_short_words_stay_out_of_model_names() -> None:
    # "code" and "mini" are a letter from "coder" / "mini..." but double into no name word.
    parsed = parse_question("4090 run this code with qwen3 8b", CATALOG)
    assert parsed.model is not None and parsed.model.best_id == "qwen3-8b"


def test_a_users_count_never_takes_a_digit_of_a_name() -> None:
    parsed = parse_question("h20 96g 8卡 deepseek r1 并发 32 路", CATALOG)
    assert parsed.model is not None and parsed.model.best_id == "deepseek-r1" and parsed.model.confident
    assert intent_details("h20 96g 8卡 deepseek r1 并发 32 路", CATALOG).users == 32
    # unseen (en): "llama3 concurrent requests" counts no 3 users
    assert intent_details("llama3 concurrent requests on a100", CATALOG).users is None
    assert intent_details("a100 llama 3 8b 16 concurrent users", CATALOG).users == 16


@pytest.mark.parametrize(
    ("text", "gib"),
    [
        ("which model fits 12GB", 12.0),
        ("what's the best model for 8gb", 8.0),  # unseen
        ("which models fit in a 24gb", 24.0),  # unseen
    ],
)
def test_a_size_a_model_fits_in_is_the_cards(text: str, gib: float) -> None:
    assert intent_details(text, CATALOG).memory_only_gib == gib
    reply = answer(text, CATALOG)
    assert reply.status == "answer" and reply.query is not None
    assert reply.query.intent == "which_model" and reply.query.hardware.first.assumed


def test_a_size_for_ram_is_no_card() -> None:
    assert intent_details("which model for 64gb ram", CATALOG).memory_only_gib is None


@pytest.mark.parametrize(
    "text",
    [
        "I have an RTX 4050 6gb and 16gb ram and am running ministral 8b",
        "i got a 4050 6g laptop, qwen3 8b speed?",  # unseen
        "4050 6g 跑 qwen3 8b 多快",  # unseen
    ],
)
def test_a_card_read_by_its_nearest_name_keeps_its_memory(text: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is not None
    assert (parsed.gpu.best_id, parsed.gpu.memory_gib) == ("rtx-4050-laptop", 6.0)


@pytest.mark.parametrize(
    "text",
    [
        "5090 32g跑qwen3 32b fp8能开多长上下文",  # "长上下文" is a context word: only "能开多" is left
        "3090 跑 qwen3 32b 能开多长上下文",  # unseen
        "how big a context could a 3090 hold for qwen3 32b",  # unseen
    ],
)
def test_how_long_a_context_when_the_context_word_took_the_long(text: str) -> None:
    assert parse_question(text, CATALOG).intent == "fit"


def test_open_many_cards_is_no_context_question() -> None:
    assert parse_question("开多卡推理 qwen3 32b 4090", CATALOG).intent != "fit"


@pytest.mark.parametrize(
    ("text", "card"),
    [
        ("p40 x4 96g total qwen2.5 72b q4 速度", ("tesla-p40", 4, 24.0)),
        ("h100 x8 80gb for deepseek v3", ("h100-sxm", 8, 80.0)),  # unseen
        ("v100 x4 32g 跑 qwen2.5 72b", ("tesla-v100-32g-pcie", 4, 32.0)),  # unseen
    ],
)
def test_a_size_after_an_x_count_is_the_cards(text: str, card: tuple[str, int, float]) -> None:
    parsed = parse_question(text, CATALOG)
    assert [(c.res.best_id, c.count, c.res.memory_gib) for c in parsed.cards] == [card]


@pytest.mark.parametrize(
    "text",
    [
        "24g显存 + 128g内存 能跑 deepseek r1 q1 吗",
        "deepseek r1 q1 on 4x 3090 + 256gb ram speed",  # unseen
    ],
)
def test_q1_is_the_smallest_one_bit_gguf(text: str) -> None:
    assert parse_question(text, CATALOG).quants == ("IQ1_S",)


@pytest.mark.parametrize(
    ("text", "other"),
    [
        ("4090和5090跑qwen3 32b差多少", "rtx-5090"),
        ("3090 和 4090 跑 llama 3 70b 相差多少", "rtx-4090"),  # unseen
        ("a100跟h100跑qwen2.5 72b速度差几倍", "h100-sxm"),  # unseen
    ],
)
def test_how_far_apart_two_cards_are_is_a_comparison(text: str, other: str) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.intent == "compare" and parsed.cards[1].res.best_id == other
    reply = answer(text, CATALOG)
    assert reply.query is not None and reply.query.other_card is not None
    assert reply.query.other_card.gpu_id == other


@pytest.mark.parametrize(
    ("text", "cards"),
    [
        (
            "My setup: 4090 + 3090 (48GB total) with 128GB RAM. Can I run Llama 3.3 70B at Q6 with 32k?",
            [("rtx-4090", None), ("rtx-3090", None)],
        ),
        ("3090 + 3060 36gb vram total, qwen3 32b", [("rtx-3090", None), ("rtx-3060-12g", None)]),  # unseen
        ("4090加3090 一共48g 跑 70b", [("rtx-4090", None), ("rtx-3090", None)]),  # unseen
        ("m4 pro 24g, m4 pro 48g which one for qwen3 32b", [("apple-m4-pro", 24.0), ("apple-m4-pro", 48.0)]),
    ],
)
def test_a_total_after_mixed_cards_is_no_cards_size(text: str, cards: list[tuple[str, float | None]]) -> None:
    assert [(c.res.best_id, c.res.memory_gib) for c in parse_question(text, CATALOG).cards] == cards


@pytest.mark.parametrize(
    ("text", "ctx"),
    [
        ("vllm部署qwen3-32b，4张4090，tp=4，max-model-len 32768，吞吐能到多少？", 32768),
        ("vllm serve qwen3 32b awq on 2x 3090 --max-model-len 16384", 16384),  # unseen
        ("vllm 跑 qwen2.5 72b max_model_len=8192 a100", 8192),  # unseen
    ],
)
def test_a_serving_flag_names_the_context(text: str, ctx: int) -> None:
    assert parse_question(text, CATALOG).contexts == (ctx,)


@pytest.mark.parametrize(
    ("text", "card_gib", "ram_gib"),
    [
        ("笔记本 4060 8g 内存 16g，跑 qwen3 8b q4 速度怎么样", 8.0, 16.0),
        ("3060 12g 内存 32g 跑 qwen3 14b", 12.0, 32.0),  # unseen
        ("16g内存 8g显存 跑 qwen3 8b", None, 16.0),  # the word after the size is still its own here
    ],
)
def test_a_chinese_ram_word_takes_the_size_after_it(
    text: str, card_gib: float | None, ram_gib: float
) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.host_ram_gib == ram_gib
    assert (parsed.gpu.memory_gib if parsed.gpu else None) == card_gib


@pytest.mark.parametrize(
    ("text", "framework"),
    [
        # transformers is priced when named (catalogs/frameworks.toml): never read as ktransformers
        ("OOM loading gemma-3-27b-it in bf16 on a single A100 40GB with transformers", "transformers"),
        ("tgi on a100 llama 3 8b throughput", None),  # unseen: a framework the catalog lacks
        ("ktransformers 跑 deepseek r1 4090 + 512g 内存", "ktransformers"),  # the one it has
    ],
)
def test_a_framework_the_catalog_lacks_names_none(text: str, framework: str | None) -> None:
    assert parse_question(text, CATALOG).framework == framework


@pytest.mark.parametrize(
    "text",
    [
        "双路e5 2680v4 256g ddr4 纯cpu跑deepseek r1 q4能有几个token",
        "4090 跑 qwen3 32b 每秒几个token",
    ],  # 2nd unseen
)
def test_how_many_tokens_in_chinese_asks_speed(text: str) -> None:
    assert parse_question(text, CATALOG).intent == "speed"


@pytest.mark.parametrize(
    ("text", "unknown"),
    [
        # ChatGLM3-6B, Baichuan2-13B, Codestral are catalog rows now: models the catalog still lacks stand in.
        ("T4 16G * 2 跑 internlm2 20b 和 qwen2.5 7b 哪个快", "internlm2 20b"),
        ("qwen2.5 7b vs falcon 40b on a 3060, which is faster", "falcon 40b"),  # unseen
    ],
)
def test_a_compared_model_the_catalog_lacks_is_looked_up(text: str, unknown: str) -> None:
    # Answering the known one alone would answer another question than the one asked.
    reply = answer(text, CATALOG)
    assert reply.hub is not None and reply.hub.kind == "search" and reply.hub.name == unknown


def test_known_comparisons_are_not_looked_up() -> None:
    for text in (
        "4090 跑 qwen3 32b 和 llama 3 8b 哪个快",
        "dual 5090 vs single rtx pro 6000 for qwen3 235b q3",
    ):
        reply = answer(text, CATALOG)
        assert reply.hub is None and reply.status == "answer", text
