"""The Sources view (the seed page's 来源链接): every figure's origin, in the asker's language."""

from __future__ import annotations

from core.ask.answer import answer, follow_up
from core.catalog.loader import default_catalog
from tests.core.anchors.builders import index_of, make

CATALOG = default_catalog()


def test_sources_name_the_card_model_gguf_and_method() -> None:
    reply = answer("V100 32G gemma 3 27b", CATALOG)
    assert reply.query is not None
    view = follow_up(reply.query, "sources", CATALOG)
    assert view.status == "answer"
    assert "https://huggingface.co/google/gemma-3-27b-it/blob/main/config.json" in view.text
    assert "bartowski" in view.text and "GGUF" in view.text
    assert "Tesla V100" in view.text and "measurements" in view.text
    zh_reply = answer("V100 32G 跑 gemma 3 27b", CATALOG)
    assert zh_reply.query is not None
    zh = follow_up(zh_reply.query, "sources", CATALOG)
    assert "数据来源" in zh.text and "我们只整理,不抄数字" in zh.text


def test_sources_link_each_measured_anchor_shown() -> None:
    index = index_of(make(1, 21.0, origin="published", name="benchlab"), make(2, 22.0, name="alice"))
    reply = answer("V100 32G gemma 3 27b", CATALOG, anchors=index)
    assert reply.query is not None
    view = follow_up(reply.query, "sources", CATALOG, anchors=index)
    assert "benchlab 2024-05: https://example.org/bench" in view.text
    assert "alice" in view.text and "reviewed by a moderator" in view.text


def test_sources_name_where_the_file_sizes_were_read() -> None:
    """The weights column uses published GGUF sizes where a repo lists them: the Sources view says
    which repo, and for which of the table's quants."""
    reply = answer("3090 qwq 32b", CATALOG)
    assert reply.query is not None
    view = follow_up(reply.query, "sources", CATALOG)
    line = next(ln for ln in view.text.splitlines() if "File sizes" in ln)
    assert "Q4_K_M" in line and "https://huggingface.co/" in line
    zh_reply = answer("3090 跑 qwq-32b", CATALOG)
    assert zh_reply.query is not None
    assert "文件大小" in follow_up(zh_reply.query, "sources", CATALOG).text
