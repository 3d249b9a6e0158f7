"""The which-model list marks a model asked beyond its native context ("^"), as the single-model
table does, and says once that it needs rope scaling (YaRN): a reader would otherwise launch
`-c 131072` on a 40K-native Qwen3 without YaRN. A model the catalog gives no rope-scaled context
reaching the ask is not listed as running there at all."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.render.fmt import ROPE

CATALOG = default_catalog()


def _table_lines(text: str) -> list[str]:
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("model "))
    out: list[str] = []
    for line in lines[start + 1 :]:
        if not line or not line[0].isascii() or " GiB" in line or ":" in line:
            break
        out.append(line)
    return out


def _marked(text: str) -> set[str]:
    return {line.split()[0] for line in _table_lines(text) if line.rstrip().endswith(ROPE)}


def _ask(question: str, ctx: int) -> tuple[str, list[dict[str, object]]]:
    reply = answer(question, CATALOG)
    assert reply.status == "answer", reply.text
    assert reply.query is not None and reply.query.intent == "which_model", reply.text
    rows = [dict(r) for r in reply.rows if r["placement"] == "gpu"]
    # every row listed at this context is marked exactly when its native window is below it
    for row in rows:
        model = CATALOG.models[str(row["model"])]
        assert row["beyond_native_context"] == (ctx > model.max_context), row
        assert max(model.max_context, model.rope_scaled_context or 0) >= ctx, row
    return reply.text, rows


@pytest.mark.parametrize(
    ("question", "ctx", "rope_line"),
    [
        ("5090 32gb, best model for 128k context?", 131072, "needs rope scaling (YaRN)"),
        ("best model for 24gb vram with 64k context and q8 kv cache", 65536, "needs rope scaling (YaRN)"),
        # A 5090: the 4090's 128K list is now models native to 128K (the 3-bit gemma-3-27b and the
        # tight Qwen3-8B IQ4_XS that needed YaRN there rank below them).
        ("5090 最适合跑什么模型 128k 上下文", 131072, "rope 外推(YaRN)"),
    ],
)
def test_which_model_marks_models_beyond_native(question: str, ctx: int, rope_line: str) -> None:
    text, rows = _ask(question, ctx)
    beyond = [r for r in rows if r["beyond_native_context"]]
    assert beyond, text
    # each beyond-native row shown carries the mark, the legend names it, the YaRN line comes once
    assert len(_marked(text)) == len(beyond), text
    assert ROPE + " = " in text, text
    assert text.count(rope_line) == 1, text


def test_which_model_30b_a3b_marked_at_128k() -> None:
    text, _rows = _ask("5090 32gb, best model for 128k context?", 131072)
    marked = _marked(text)
    assert "Qwen3-30B-A3B" in marked, text
    assert "gpt-oss-20b" not in marked and "Llama-3.1-8B" not in marked, text


def test_which_model_no_mark_when_all_native() -> None:
    text, rows = _ask("what can I run on a 3090 with 32k context", 32768)
    assert rows and not any(r["beyond_native_context"] for r in rows)
    assert not _marked(text), text
    assert "rope" not in text.lower() and "YaRN" not in text, text


@pytest.mark.parametrize(
    ("question", "ctx", "rope_line"),
    [
        ("which models can a 4090 run at 96k context", 98304, "needs rope scaling (YaRN)"),
        ("5090 能跑哪些模型 128k", 131072, "rope 外推(YaRN)"),
    ],
)
def test_which_model_marks_held_out_phrasings(question: str, ctx: int, rope_line: str) -> None:
    text, rows = _ask(question, ctx)
    beyond = [r for r in rows if r["beyond_native_context"]]
    assert beyond and len(_marked(text)) == len(beyond), text
    assert text.count(rope_line) == 1, text
