"""A "how many users" question (no number) is carried by `AskQuery.capacity`, not by a users count
above any a question can set: `ask --json` shows `"capacity": true` and `"users": null`, a numbered
question keeps its users with the flag off, and the capacity reply itself is unchanged. Written
before the sentinel was replaced."""

from __future__ import annotations

from core.ask.answer import answer
from core.catalog.loader import default_catalog

CATALOG = default_catalog()

CAPACITY_QUESTION = "H200 gpt-oss-120b vllm, how many users can I serve?"
# The reply's first line as the sentinel version gave it (the flag must not change the answer).
CAPACITY_HEAD = (
    "NVIDIA H200 SXM 141GB · gpt-oss-120b with vLLM (HF-MXFP4): room for ~216 users at once at 8K "
    "each (8K per user assumed: name a context to change it); at 216: ~7775 tok/s in all, ~36 tok/s "
    "each (batched model, each chat ~1K deep; likely 5505–12689 in all, 26–59 each)"
)


def test_json_shows_capacity_and_no_users() -> None:
    query = answer(CAPACITY_QUESTION, CATALOG).as_dict()["query"]
    assert query["capacity"] is True
    assert query["users"] is None


def test_numbered_question_is_not_capacity() -> None:
    reply = answer("L40S qwen3-32b fp8 vllm 20 users", CATALOG)
    assert reply.query is not None
    query = reply.query.as_json()
    assert query["capacity"] is False
    assert query["users"] == 20


def test_capacity_reply_unchanged() -> None:
    reply = answer(CAPACITY_QUESTION, CATALOG)
    assert reply.text.splitlines()[0] == CAPACITY_HEAD
