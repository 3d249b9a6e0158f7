"""The intent replies: each answers its question in both languages, fits a phone and one message,
and carries its rows for `ask --json`. Figures come from the estimator; these tests check shape and
ordering, not the estimator's numbers."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.estimator.usable_pick import pick_rules, worth
from core.render.doc import LIMITS, NARROW, display_width
from core.render.intent_rows import config

CATALOG = default_catalog()


def _blocks(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith(("model ", "option ", "quant ", "card "))]


@pytest.mark.parametrize(
    ("question", "intent"),
    [
        ("what can I run on a 3090", "which_model"),
        ("RTX 4080Super 16G 内存64G 能跑多少B的模型", "which_model"),
        ("what gpu do i need for 70b", "which_hardware"),
        ("140亿模型需要多大显存", "which_hardware"),
        ("how many A800 80G to deploy DeepSeek-V3 with vllm", "cards_needed"),
        ("4090 vs 5090 for qwen3 32b", "compare"),
        ("qwen3 32b 和 gemma3 27b 哪个快", "compare"),
        ("首 token 要多久 prompt 8k", "ttft"),
        ("16并发下 ttft 和吞吐量", "concurrency"),
        ("I have a 16GB GPU", "which_model"),
    ],
)
def test_intent_reply(question: str, intent: str) -> None:
    for target in ("plain", "discord"):
        reply = answer(question, CATALOG, target=target)
        assert reply.status == "answer", reply.text
        assert reply.query is not None and reply.query.intent == intent
        assert reply.rows, "an intent reply carries its rows"
        assert reply.as_dict()["rows"] == [dict(r) for r in reply.rows]
        assert len(reply.text) <= LIMITS[target]
    lines = _blocks(answer(question, CATALOG).text)
    assert lines and all(display_width(line) <= NARROW for line in lines)


def test_which_model_lists_large_first_and_says_the_next_size() -> None:
    reply = answer("what can I run on a 3090", CATALOG)
    on_card = [r for r in reply.rows if r["placement"] == "gpu"]
    # Largest first, a size weighed by its pace and headroom (core/estimator/usable_pick.py `worth`:
    # on a 3090 every dense 27-32B streams, so they lead; a MoE counts below its total size).
    rules = pick_rules(config(CATALOG, "which_model").get("pick", {}))
    worths = [
        worth(m.params_b, m.active_params_b, float(r["decode_tps"]), rules, bool(r["tight"]))
        for r in on_card
        for m in (CATALOG.models[r["model"]],)
    ]
    assert worths == sorted(worths, reverse=True)
    assert CATALOG.models[on_card[0]["model"]].params_b >= 30
    assert all(r["total_gib"] <= 24 for r in on_card)
    assert "Next size up" in reply.text
    zh = answer("3090 能跑什么模型", CATALOG)
    assert "再大一档" in zh.text and "能跑的模型" in zh.text


@pytest.mark.parametrize(
    ("question", "words"),
    [
        ("8GB VRAM what's the biggest model I can run", "experts in the 32 GiB of RAM"),
        ("3060 12g 能跑什么模型 64g内存", "专家放内存(64 GiB)"),
        ("what models can a 4060 ti 16gb run with 96gb ram", "experts in the 96 GiB of RAM"),
    ],
)
def test_which_model_names_the_moe_that_run_with_experts_in_ram(question: str, words: str) -> None:
    """A small card and plenty of RAM: a 30B-A3B MoE with its experts in RAM outpaces a 3-bit 12B
    fully on the card; the reply names those that reach a chat pace, each bigger than what fits."""
    reply = answer(question, CATALOG)
    assert words in reply.text, reply.text
    experts = [r for r in reply.rows if r["placement"] == "experts"]
    biggest = max(CATALOG.models[r["model"]].params_b for r in reply.rows if r["placement"] == "gpu")
    assert experts and all(r["decode_tps"] >= 10 for r in experts)
    assert all(
        CATALOG.models[r["model"]].is_moe and CATALOG.models[r["model"]].params_b > biggest for r in experts
    )


def test_which_hardware_cheapest_kind_first() -> None:
    reply = answer("what gpu do i need for 70b", CATALOG)
    kinds = [r["kind"] for r in reply.rows]
    order = [
        "one_card",
        "offload",
        "multi_card",
        "strix_halo",
        "mac",
        "workstation",
        "datacenter",
        "datacenter_fp8",
    ]
    assert kinds == sorted(kinds, key=order.index)
    assert "multi_card" in kinds and "datacenter" in kinds
    small = answer("140亿模型需要多大显存", CATALOG)
    assert small.rows[0]["kind"] == "one_card"
    assert "multi_card" not in [r["kind"] for r in small.rows]  # one card holds it: no second card


def test_cards_needed_counts_the_card_asked() -> None:
    reply = answer("how many A800 80G to deploy DeepSeek-V3 with vllm", CATALOG)
    assert reply.rows and all(r["cards"] is None or r["cards"] > 1 for r in reply.rows)
    assert "FP8" not in [r["quant"] for r in reply.rows]  # Ampere has no FP8 kernels


def test_compare_two_cards_one_model() -> None:
    reply = answer("4090 vs 5090 for qwen3 32b", CATALOG)
    assert reply.query is not None and reply.query.other_card is not None
    assert reply.query.other_card.gpu_id == "rtx-5090" and reply.query.model_id == "qwen3-32b"
    assert "A = GeForce RTX 4090 · B = GeForce RTX 5090" in reply.text


def test_compare_one_card_two_models() -> None:
    reply = answer("on a 4090: gemma 3 27b versus qwen3 30b a3b", CATALOG)
    assert reply.query is not None and reply.query.other_model_id == "qwen3-30b-a3b"
    assert reply.query.gpu_id == "rtx-4090"


def test_concurrency_gives_aggregate_and_per_user_speed_from_the_engine() -> None:
    reply = answer("4090 qwen3 32b 16并发 吞吐", CATALOG)
    assert "16 个并发" in reply.text and "总吞吐约" in reply.text and "每用户约" in reply.text
    assert reply.query is not None and reply.query.users == 16
    en = answer("a100 80g llama 3.1 8b with 32 concurrent users throughput", CATALOG)
    import re

    m = re.search(r"32 users at once .*?~(\d+) tok/s in all, ~(\d+) tok/s each", en.text)
    assert m, en.text
    total, each = float(m.group(1)), float(m.group(2))
    # Batching: the aggregate beats one user's speed, and each user gets less than alone.
    single = next(r["decode_tps"] for r in en.rows if r["decode_tps"])
    assert total > single > each > 0


def test_concurrency_without_a_card_stays_single_user() -> None:
    reply = answer("16并发下 ttft 和吞吐量", CATALOG)
    assert "单用户" in reply.text and "暂不估算" in reply.text


def test_ttft_uses_the_prompt() -> None:
    short = answer("4090 qwen3 8b time to first token prompt 1k", CATALOG)
    long = answer("4090 qwen3 8b time to first token prompt 32k", CATALOG)
    assert short.query is not None and short.query.prompt == 1024
    t_short = next(r["ttft_s"] for r in short.rows if r["ttft_s"])
    t_long = next(r["ttft_s"] for r in long.rows if r["ttft_s"])
    assert t_long > t_short * 10


def test_card_known_only_by_memory_says_which_card() -> None:
    reply = answer("我只有一张48G的显卡，请问如何才能推理72B的模型", CATALOG)
    assert reply.status == "answer" and reply.query is not None
    assert reply.query.hardware.first.assumed and reply.query.gpu_id == "rtx-a6000"
    assert "RTX A6000" in reply.text.splitlines()[0]
    assert reply.query.as_json()["gpu_assumed"] is True


def test_ordinary_answers_have_no_rows() -> None:
    reply = answer("4090 qwen3 32b q4 32k", CATALOG)
    assert reply.rows == () and "rows" not in reply.as_dict()


def test_chart_labels_in_the_language_the_server_can_draw(monkeypatch: pytest.MonkeyPatch) -> None:
    from core.render import chart

    monkeypatch.setattr(chart, "cjk_font", lambda: None)
    assert chart.label_language("zh") == ("en", None)  # no CJK font: English, not boxes
    monkeypatch.setattr(chart, "cjk_font", lambda: "Noto Sans CJK SC")
    assert chart.label_language("zh") == ("zh", "Noto Sans CJK SC")
    assert chart.label_language("en") == ("en", None)


@pytest.mark.parametrize(
    ("question", "users"),
    [
        ("L40S 上 llama 3.1 8b 同时 20 个人用 每人多少 token/s", 20),
        ("serving 8 users at once on 2x 3090 with qwen2.5 32b, total throughput?", 8),
        ("llama-server -np 4 on 4090 qwen3 14b", 4),
    ],
)
def test_concurrency_phrasings_get_the_batched_figures(question: str, users: int) -> None:
    reply = answer(question, CATALOG)
    assert reply.query is not None and reply.query.intent == "concurrency" and reply.query.users == users
    assert f"{users} users at once" in reply.text or f"{users} 个并发" in reply.text


def test_concurrency_with_a_serving_framework_prices_its_checkpoints() -> None:
    """vLLM named: the rows are the checkpoints it serves (FP8, AWQ), not GGUF quants, and the
    aggregate line is priced on the rows' framework."""
    reply = answer("4090 qwen3 8b vllm 20 concurrent users", CATALOG)
    quants = [r["quant"] for r in reply.rows]
    assert {"FP8", "AWQ"} <= set(quants) and all(CATALOG.quants[q].format == "serving" for q in quants)
    # the best checkpoint that holds 20 users' caches (FP8's weights leave too little for them)
    assert "20 users at once (AWQ" in reply.text
    zh = answer("4090 上用 sglang 跑 qwen3 8b 20个人同时用", CATALOG)
    assert zh.query is not None and zh.query.users == 20 and zh.query.hardware.first.count == 1
    assert {"FP8", "AWQ"} <= {r["quant"] for r in zh.rows}


def test_concurrency_on_a_named_backend_uses_it() -> None:
    cuda = answer("4090 qwen3 8b 20 concurrent users", CATALOG)
    vulkan = answer("4090 qwen3 8b 20 concurrent users on vulkan", CATALOG)
    assert vulkan.query is not None and vulkan.query.backend == "vulkan"
    assert [r["decode_tps"] for r in vulkan.rows] != [r["decode_tps"] for r in cuda.rows]


def test_prefill_speed_questions_get_the_prefill_table_in_the_native_quant() -> None:
    """'prefill 速度' / 'prompt processing speed' ask for prefill: the TTFT table; gpt-oss is published
    in MXFP4 only, so that is its one row (no Q8_0 / Q4_K_M of the same bytes)."""
    reply = answer("DGX Spark gpt-oss-120b prefill 速度", CATALOG)
    assert reply.query is not None and reply.query.intent == "ttft"
    assert [r["quant"] for r in reply.rows] == ["MXFP4"]
    en = answer("4090 qwen3 32b prompt processing speed", CATALOG)
    assert en.query is not None and en.query.intent == "ttft"
    assert [r["quant"] for r in en.rows] == ["Q8_0", "Q4_K_M"]
