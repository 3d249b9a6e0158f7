"""The machine's words: host RAM is not VRAM, the KV type is not the weights, mixes, machines,
laptops, sizes in 亿, and out-of-range values kept as notes."""

from __future__ import annotations

import pytest

from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question

CATALOG = default_catalog()


@pytest.mark.parametrize(
    ("text", "ram", "ram_type", "memory"),
    [
        ("4090 + 64gb ram gpt-oss-120b", 64.0, None, None),
        ("4090 跑 glm-4.5-air 行不行,内存 128G", 128.0, None, None),
        ("3090 with 128gb ddr5 qwen3 30b a3b", 128.0, "DDR5", None),
        ("My DRAM is 64G, 4090", 64.0, None, None),
        ("4090 24G 内存64G qwen3 32b", 64.0, None, 24.0),
        ("4090 24g vram qwen3 32b", None, None, 24.0),
    ],
)
def test_host_ram_is_not_the_cards_memory(
    text: str, ram: float | None, ram_type: str | None, memory: float | None
):
    p = parse_question(text, CATALOG)
    assert p.gpu is not None and p.gpu.best_id == "rtx-4090" or "3090" in text
    assert p.host_ram_gib == ram and p.host_ram_type == ram_type
    assert p.gpu is not None and p.gpu.memory_gib == memory


@pytest.mark.parametrize(
    ("text", "kv", "quants"),
    [
        ("qwen3 32b on 4090 with q8 kv", "q8_0", ()),
        ("4090 qwen3 32b q4 kv q8", "q8_0", ("Q4_K_M",)),
        ("4090 qwen3 32b -ctk q4_0 -ctv q4_0", "q4_0", ()),
        ("4090 qwen3 32b q8", None, ("Q8_0",)),
    ],
)
def test_kv_type_is_not_the_weight_quant(text: str, kv: str | None, quants: tuple[str, ...]):
    p = parse_question(text, CATALOG)
    assert p.kv_type == kv and p.quants == quants


def test_mixed_cards_keep_each_kind_and_count():
    p = parse_question("一张4090加两张3090 跑 qwen3 235b q2", CATALOG)
    assert [(c.res.best_id, c.count, c.joiner) for c in p.cards] == [
        ("rtx-4090", 1, ""),
        ("rtx-3090", 2, "+"),
    ]


def test_either_card_is_not_a_mix_and_shares_the_memory():
    p = parse_question("两张A100/A800 80G 跑 qwen3 235b", CATALOG)
    assert p.gpu is not None and p.gpu.memory_gib == 80.0 and p.gpu_count == 2
    assert [c.joiner for c in p.cards] == ["", "/"]


def test_machines_times_cards():
    p = parse_question("3台8*L20 跑 deepseek r1", CATALOG)
    assert p.machines == 3 and p.gpu_count == 8 and p.gpu is not None and p.gpu.best_id == "l20"


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("1000x 4090 qwen3 32b", "count_out_of_range"),
        ("-2x 4090 qwen3 32b", "count_out_of_range"),
        ("0 cards 4090 qwen3 32b", "count_out_of_range"),
        ("4090 qwen3 32b ctx 999999999999", "context_out_of_range"),
        ("4090 0G qwen3 32b", "memory_out_of_range"),
        ("4090 + 0gb ram qwen3 8b", "ram_out_of_range"),
    ],
)
def test_out_of_range_values_are_notes(text: str, code: str):
    p = parse_question(text, CATALOG)
    assert code in [c for c, _ in p.notes]
    assert p.gpu_count == 1


def test_laptop_word_and_smaller_memory_point_to_the_laptop_row():
    assert parse_question("我的笔记本是4090 跑 qwen3 14b", CATALOG).gpu.best_id == "rtx-4090-laptop"  # type: ignore[union-attr]
    five = parse_question("5090 24G qwen3 32b", CATALOG).gpu
    assert five is not None and not five.confident
    assert {g for g, _ in five.candidates} == {"rtx-5090-laptop", "rtx-5090d-v2"}
    assert parse_question("2080ti 22g qwen3 32b", CATALOG).gpu.memory_gib == 22.0  # type: ignore[union-attr]


def test_sizes_in_yi():
    p = parse_question("140亿模型需要多大显存", CATALOG)
    assert p.size_b == 14.0
    assert parse_question("6710亿 deepseek", CATALOG).size_b == 671.0


def test_unknown_model_with_a_size_is_named_not_dropped():
    p = parse_question("4090 openpangu a7b", CATALOG)  # a family the catalog lacks, with its MoE label
    assert p.model is not None and p.model.best_id is None


@pytest.mark.parametrize(
    ("text", "ram", "ram_type", "channels"),
    [
        ("5080 16g, 2x24gb ddr5 6400, qwen3 30b a3b", 48.0, "DDR5-6400", None),
        ("96gb (2x48) ram + 3090 glm-4.5-air", 96.0, None, None),
        ("3060 插了两根16g内存 qwen3 14b", 32.0, None, None),
        ("四通道 8x32G DDR4 2666 + P40 deepseek v3", 256.0, "DDR4-2666", 4),
        ("12-channel ddr5 768g epyc + 4090 kimi k2", 768.0, "DDR5", 12),
    ],
)
def test_dimm_notation_is_the_host_ram(text: str, ram: float, ram_type: str | None, channels: int | None):
    p = parse_question(text, CATALOG)
    assert (p.host_ram_gib, p.host_ram_type, p.host_ram_channels) == (ram, ram_type, channels)
    assert p.gpu is not None and p.gpu_count == 1 and p.intent != "memory"


def test_count_times_size_without_a_ram_word_is_the_cards():
    p = parse_question("4x 48gb a6000 llama 3.3 70b fp16", CATALOG)
    assert p.gpu is not None and p.gpu.best_id == "rtx-a6000" and p.gpu_count == 4
    assert p.host_ram_gib is None


def test_a_card_number_after_ddr_is_no_speed():
    p = parse_question("64g ddr4 3080 qwen3 14b", CATALOG)
    assert p.host_ram_type == "DDR4" and p.gpu is not None and p.gpu.best_id.startswith("rtx-3080")


@pytest.mark.parametrize(
    ("text", "ram"),
    [
        ("4090 with 1TB ram kimi k2", 1024.0),
        ("4090 + 1.5TB 内存 deepseek r1", 1536.0),
        ("4090 1T内存 跑 kimi k2", 1024.0),
        ("2t ram epyc + 3090 deepseek v3", 2048.0),
    ],
)
def test_terabytes_of_ram(text: str, ram: float) -> None:
    assert parse_question(text, CATALOG).host_ram_gib == ram


def test_a_bare_t_counts_parameters_not_memory() -> None:
    parsed = parse_question("kimi k2 1t on 8x h100", CATALOG)
    assert parsed.host_ram_gib is None and parsed.model is not None and parsed.model.best_id == "kimi-k2"
