"""Chinese family names (catalogs/understanding.toml [model_words]) fold into the family word the
aliases use: a name said in Chinese is that family, never the most popular model of its size."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.understanding.normalize import clean

CATALOG = default_catalog()


def test_names_fold_with_a_glued_version_kept_and_a_glued_size_split() -> None:
    assert clean("百川2 13b") == "baichuan2 13b"
    assert clean("跑百川13b") == "跑 baichuan 13b"
    assert clean("通义千问3 32b") == "qwen3 32b"
    assert clean("文心4.5 21b") == "ernie4.5 21b"
    assert clean("4090 32g") == "4090 32g", "a question with no Chinese name is untouched"


def test_a_chinese_family_name_without_its_version_is_no_other_families_model() -> None:
    # Was: "百川 13b" answered Llama-2-13B by popularity (the Chinese word was dropped).
    reply = answer("百川 13b 4090 能跑吗", CATALOG)
    assert reply.query is not None and reply.query.model_id != "llama-2-13b"
    assert "baichuan2-13b" in reply.candidates["model"]


@pytest.mark.parametrize(
    ("text", "model_id"),
    [
        ("百川2 13b 在 v100 32g 上跑", "baichuan2-13b"),
        ("3090能跑通义千问3 32b吗", "qwen3-32b"),  # unseen phrasing: glued, full product name
        ("4090 混元 a13b 速度", "hunyuan-a13b"),
        ("a100 跑 文心4.5 300b 要几张", "ernie-4.5-300b-a47b-pt"),
    ],
)
def test_chinese_family_names_resolve(text: str, model_id: str) -> None:
    reply = answer(text, CATALOG)
    assert reply.query is not None and reply.query.model_id == model_id, (text, reply.candidates)
