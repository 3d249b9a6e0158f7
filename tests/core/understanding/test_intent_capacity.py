"""A "how many users" question with no number is a capacity question (concurrency, users to be
found), not a single-user table and not a card count. Written before the code was changed."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.intent import intent_details
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    "question",
    [
        "L40S 48GB vllm serve qwen3-32b fp8 max-model-len 32k how many concurrent users",
        "H200 gpt-oss-120b vllm, how many users can I serve?",
        "how many users can one H100 serve with qwen3-8b",
        "H100 跑 qwen3-32b 能同时服务多少人",
        "4090 vllm qwen3 8b awq 最多多少并发",
        "H200 sglang qwen3-32b 最大并发多少",
        "what's the max concurrency of qwen3 8b on an L40S",
    ],
)
def test_capacity_read(question: str) -> None:
    assert parse_question(question, CATALOG).intent == "concurrency"
    details = intent_details(question, CATALOG)
    assert details.capacity and details.users is None


@pytest.mark.parametrize(
    ("question", "users"),
    [
        ("L40S qwen3-32b fp8 vllm 20 users", 20),
        ("H100 部署 qwen3-32b，100 个并发用户，吞吐大概多少", 100),
        ("how many users can one H100 serve with qwen3-8b, is 50 users ok?", 50),
    ],
)
def test_a_number_is_users_not_capacity(question: str, users: int) -> None:
    details = intent_details(question, CATALOG)
    assert details.users == users and not details.capacity


@pytest.mark.parametrize(
    "question",
    ["how many H100 do I need for deepseek v3", "how many tokens per second on a 4090 with qwen3 8b"],
)
def test_not_capacity(question: str) -> None:
    details = intent_details(question, CATALOG)
    assert details.users is None and not details.capacity
