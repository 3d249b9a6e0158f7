"""Reading the CPU a question names (core/understanding/cpu_words.py and its parse hook)."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.cpu_words import find_cpus, read_cpu, resolve_cpu
from core.understanding.parse import parse_question

CATALOG = default_catalog()


def _cpus(text: str) -> list[tuple[str, int | None]]:
    return [(m.cpu_id, m.sockets) for m in find_cpus(text, CATALOG)]


@pytest.mark.parametrize(
    ("text", "cpu_id", "sockets"),
    [
        ("7950X 64G ddr5 能跑 qwen3 30b 吗", "ryzen-9-7950x", None),
        ("i9-13900K + 4090", "core-i9-13900k", None),
        ("EPYC 9654 能跑 deepseek 吗", "epyc-9654", None),
        ("双路 Xeon Gold 6138 跑 deepseek", "xeon-gold-6138", 2),
        ("2x EPYC 7763", "epyc-7763", 2),
        ("Threadripper 7980X", "threadripper-7980x", None),
        ("i7 1165g7 laptop", "core-i7-1165g7", None),
        ("Ryzen 9 7950X3D", "ryzen-9-7950x3d", None),  # the longer name wins over 7950X
        ("epyc 9654 x2", "epyc-9654", 2),
        ("2颗 EPYC 9654", "epyc-9654", 2),
        ("dual epyc 7b13", "epyc-7b13", 2),
        ("e5-2680v4 双路", "xeon-e5-2680-v4", 2),
        ("Xeon w9-3495X workstation", "xeon-w9-3495x", None),
        ("ryzen ai 9 hx 370 laptop", "ryzen-ai-9-hx-370", None),
        ("AMD Ryzen Threadripper PRO 7995WX", "threadripper-pro-7995wx", None),
        ("intel core i5-12400f", "core-i5-12400", None),
    ],
)
def test_cpu_names_as_typed(text: str, cpu_id: str, sockets: int | None) -> None:
    assert _cpus(text) == [(cpu_id, sockets)]


@pytest.mark.parametrize(
    "text",
    [
        "Ryzen AI Max+ 395 128G qwen3 30b",  # a unified-memory chip: a card in gpus.toml
        "RX 7900 XTX 24G",  # the card, not the Ryzen 9 7900X
        "rx 7900xtx",
        "7900 xt 20g",
        "RX 5700 XT",
        "ctx 9654 tokens",  # a bare number is no CPU in free text
        "M4 Max 128G",
    ],
)
def test_what_is_no_cpu(text: str) -> None:
    assert _cpus(text) == []


@pytest.mark.parametrize(
    ("text", "cpu_id"),
    [
        ("9654", "epyc-9654"),
        ("7950x", "ryzen-9-7950x"),
        ("xeon 6138", "xeon-gold-6138"),
        ("xeon-platinum-8480", "xeon-platinum-8480"),  # a catalog id
        ("Intel Xeon Platinum 8480 ES", "xeon-platinum-8480"),  # its own name's words around an alias
        ("TR PRO 7975WX", "threadripper-pro-7975wx"),
    ],
)
def test_resolve_by_name_takes_bare_numbers_too(text: str, cpu_id: str) -> None:
    assert resolve_cpu(text, CATALOG).cpu_id == cpu_id


def test_by_name_other_family_words_make_it_unsure() -> None:
    res = resolve_cpu("Ryzen 9 7960X", CATALOG)
    assert res.cpu_id is None and res.candidates[0] == "threadripper-7960x"
    assert resolve_cpu("AMD Ryzen 7 7950X", CATALOG).cpu_id is None  # a 7950X is a Ryzen 9
    sure = resolve_cpu("2x AMD EPYC 9654 CPU", CATALOG)
    assert (sure.cpu_id, sure.sockets) == ("epyc-9654", 2)


def test_an_unknown_cpu_comes_back_with_the_closest() -> None:
    res = resolve_cpu("ryzen 7950", CATALOG)
    assert res.cpu_id is None and res.candidates[0] == "ryzen-9-7950x"
    # An i9-14900 (no K) is not listed: priced as its family's typical part, and said to be.
    family = resolve_cpu("i9 14900", CATALOG)
    assert (family.cpu_id, bool(family.platform)) == ("core-i9-14900k", True)


def test_a_bare_size_is_the_ram_only_with_no_card() -> None:
    assert read_cpu("epyc 9654 768gb deepseek v3", CATALOG, has_card=False).ram_gib == 768.0
    assert read_cpu("2x EPYC 7763 1TB qwen3 235b", CATALOG, has_card=False).ram_gib == 1024.0
    assert read_cpu("4090 + 7950X 96G", CATALOG, has_card=True).ram_gib is None
    assert read_cpu("dual EPYC 9654 with 1.5TB", CATALOG, has_card=False).ram_gib == 1536.0


@pytest.mark.parametrize(
    ("text", "cpu_id", "sockets", "ram", "model"),
    [
        # Unseen phrasings (written for this test, not in the corpus), English and Chinese.
        ("我的 5950X 配 128G 内存,能跑 qwen2.5 72b 吗", "ryzen-9-5950x", None, 128.0, "qwen2.5-72b"),
        (
            "Threadripper PRO 7995WX w/ 512GB, llama 3.1 405b q4 speed?",
            "threadripper-pro-7995wx",
            None,
            512.0,
            None,
        ),
        ("两路 EPYC 9355 1.5T 内存 跑 deepseek r1 多快", "epyc-9355", 2, None, "deepseek-r1"),
        (
            "only a Core Ultra 7 155H laptop with 32GB, can it run gemma 3 12b",
            "core-ultra-7-155h",
            None,
            32.0,
            None,
        ),
        (
            "纯 cpu 推理, 14900K, 96G DDR5, qwen3 30b a3b 速度多少",
            "core-i9-14900k",
            None,
            96.0,
            "qwen3-30b-a3b",
        ),
    ],
)
def test_parse_reads_a_cpu_only_box(
    text: str, cpu_id: str, sockets: int | None, ram: float | None, model: str | None
) -> None:
    parsed = parse_question(text, CATALOG)
    assert parsed.gpu is None
    assert (parsed.cpu, parsed.cpu_sockets) == (cpu_id, sockets)
    if ram is not None:
        assert parsed.host_ram_gib == ram
    if model is not None:
        assert parsed.model is not None and parsed.model.best_id == model


def test_with_a_card_the_cpu_is_the_host() -> None:
    parsed = parse_question("4090 + 7950X 跑 qwen3 235b", CATALOG)
    assert parsed.gpu is not None and parsed.gpu.best_id == "rtx-4090"
    assert parsed.cpu == "ryzen-9-7950x"


def test_no_cpu_named_leaves_the_question_as_it_was() -> None:
    parsed = parse_question("3090 能跑 qwen3 32b 吗", CATALOG)
    assert parsed.cpu is None and parsed.cpu_sockets is None
