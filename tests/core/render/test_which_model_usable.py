"""The which-model list picks what a practitioner would run (a practitioner audit): each model at a
quant that keeps it usable (Q4_K_M, bigger only while fast), 3-bit files after every 4-bit pick,
crawls named in one line instead of rows, the fast ones first; names a phone can read and never cut
into another model's; the task words for RAG (sized at 32K), translation and roleplay; a `$`
command for the top pick. Written before the change."""

from __future__ import annotations

import re
from typing import Any

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.estimator.usable_pick import pick_rules
from core.render import which_model
from core.render.doc import LIMITS
from core.render.intent_rows import config, setup_for
from core.render.model_names import short_name
from core.understanding.intent import read_task

CAT = default_catalog()
CFG = config(CAT, "which_model")
RULES = pick_rules(CFG.get("pick", {}))
SIZE = re.compile(r"(?<![a-z0-9.])(?:\d+x)?(?:e|a)?\d+(?:\.\d+)?[bm](?![a-z])", re.IGNORECASE)


def _bpw(quant: str) -> float:
    return CAT.quants[quant].bpw


def _gpu_rows(rows: tuple[dict[str, Any], ...]) -> list[dict[str, Any]]:
    return [r for r in rows if r.get("placement") == "gpu"]


def _native(row: dict[str, Any]) -> bool:
    return CAT.models[str(row["model"])].native_quant == row["quant"]


def assert_usable_list(rows: list[dict[str, Any]]) -> None:
    """What every list must hold whatever the card: no crawl, no bigger quant that costs the pace,
    3-bit picks after every 4-bit one."""
    assert rows
    base = _bpw(RULES.baseline)
    low = [_bpw(str(r["quant"])) < RULES.four_bit_bpw and not _native(r) for r in rows]
    assert low == sorted(low), rows  # every 3-bit row after every 4-bit row
    for row in rows:
        assert float(row["decode_tps"]) >= RULES.crawl_tps, row
        if _bpw(str(row["quant"])) > base and not _native(row):
            assert float(row["decode_tps"]) >= RULES.upgrade_tps and not row["tight"], row


def test_the_m4_pro_translation_list_keeps_dense_models_usable() -> None:
    reply = answer("M4 Pro 48G 最适合跑什么模型 主要做翻译", CAT)
    assert reply.query is not None and reply.query.intent == "which_model"
    assert reply.query.task == "translate"
    rows = _gpu_rows(reply.rows)
    assert_usable_list(rows)
    by_model = {r["model"]: r for r in rows}
    for dense in ("qwen3-32b", "gemma-3-27b"):
        if dense in by_model:
            assert by_model[dense]["quant"] in ("Q4_K_M", "IQ4_XS"), by_model[dense]
    first = rows[0]
    assert CAT.models[str(first["model"])].is_moe and first["decode_tps"] >= 25, rows
    assert "翻译" in reply.text.split("\n")[0]
    assert "llama-3.3-70b" not in by_model  # a crawl (~6 tok/s at 3 bits): named, not listed
    assert "Llama-3.3-70B" in reply.text


def test_the_4070_coding_list_leads_with_a_4_bit_coder_and_names_it_whole() -> None:
    reply = answer("4070 12GB best model for coding? i mostly do python", CAT)
    assert reply.query is not None and reply.query.task == "code"
    rows = _gpu_rows(reply.rows)
    assert_usable_list(rows)
    assert _bpw(str(rows[0]["quant"])) >= RULES.four_bit_bpw, rows
    assert "code" in CAT.models[str(rows[0]["model"])].uses
    assert any(r["model"] == "qwen2.5-coder-14b" and r["quant"] == "Q4_K_M" for r in rows[:3]), rows
    assert "Qwen2.5-Coder-14B" in reply.text
    assert "qwen2.5-coder-1 " not in reply.text


def test_the_rag_list_is_sized_at_32k_and_says_so() -> None:
    reply = answer("laptop 4060 8gb what llm can i run for rag, 32gb ram", CAT)
    assert reply.query is not None and reply.query.task == "rag"
    title = reply.text.split("\n")[0]
    assert "32K" in title and "RAG" in title, reply.text
    rows = _gpu_rows(reply.rows)
    assert_usable_list(rows)
    assert _bpw(str(rows[0]["quant"])) >= RULES.four_bit_bpw, rows
    setup = setup_for(CAT, "rtx-4060-laptop", 1, None, None, 32.0)
    assert which_model.which_models(CAT, setup, 32768, "f16", "rag").ctx == 32768


def test_an_asked_context_wins_over_the_tasks_own() -> None:
    reply = answer("3090 what can i run for rag at 16k", CAT)
    assert reply.query is not None and reply.query.task == "rag"
    assert "16K" in reply.text.split("\n")[0], reply.text


@pytest.mark.parametrize(
    ("text", "task"),
    [
        ("best model for translation on a 4090", "translate"),
        ("3090 翻译用什么模型", "translate"),
        ("what model for roleplay on a 3090", "roleplay"),
        ("4060 8g 角色扮演 用什么模型", "roleplay"),
        ("sillytavern rp model for 16gb", "roleplay"),
        ("4090 知识库 推荐模型", "rag"),
        ("what can i run for long documents on a 3090", "rag"),
        ("what can i run on a 3090", None),
        ("ZLUDA translation layer, what can a 7900 xtx run", None),
    ],
)
def test_task_words(text: str, task: str | None) -> None:
    assert read_task(text, CAT) == task


def test_roleplay_puts_no_reasoning_model_first() -> None:
    reply = answer("best model for roleplay on a 3090", CAT)
    assert reply.query is not None and reply.query.task == "roleplay"
    rows = _gpu_rows(reply.rows)
    assert_usable_list(rows)
    thinks = ["reasoning" in CAT.models[str(r["model"])].uses for r in rows]
    assert thinks == sorted(thinks), rows
    assert not thinks[0]


def test_the_top_pick_gets_a_launch_command() -> None:
    reply = answer("what can I run on a 3090", CAT)
    rows = _gpu_rows(reply.rows)
    commands = [line for line in reply.text.split("\n") if line.startswith("$ ")]
    assert len(commands) == 1, reply.text
    assert reply.plan is not None and reply.plan["command"] == commands[0][2:]
    assert reply.plan["quant"] == rows[0]["quant"]
    for target in ("discord", "telegram"):
        assert len(answer("what can I run on a 3090", CAT, target=target).text) <= LIMITS[target]


def test_short_names_keep_the_size_and_never_meet_another_models() -> None:
    seen: dict[str, str] = {}
    for model in CAT.models.values():
        label = short_name(model, CAT, 20)
        assert len(label) <= 20, label
        sizes = SIZE.findall(re.sub(r"\(.*?\)", "", model.name))  # the size the name itself shows
        if sizes:
            assert SIZE.search(label), (model.id, label)
        key = re.sub(r"[-_ .]", "", label.lower())
        assert key not in seen, (label, model.id, seen.get(key))
        seen[key] = model.id
    assert short_name(CAT.models["qwen2.5-coder-14b"], CAT, 20) == "Qwen2.5-Coder-14B"
    assert short_name(CAT.models["qwen3-coder-30b-a3b"], CAT, 20) == "Qwen3-Coder-30B-A3B"


def test_a_moe_and_a_dense_model_of_one_size_are_both_kept() -> None:
    setup = setup_for(CAT, "rtx-5090", 1, None, None, None)
    ids = [f.model_id for f in which_model.which_models(CAT, setup, 8192).fits]
    assert "qwen3-30b-a3b" in ids and "gemma-4-31b" in ids, ids


def test_the_plain_list_json_keeps_its_keys() -> None:
    reply = answer("what can I run on a 3090", CAT)
    keys = {"model", "quant", "total_gib", "decode_tps", "tight", "beyond_native_context", "placement"}
    assert all(set(r) == keys for r in reply.rows), reply.rows
