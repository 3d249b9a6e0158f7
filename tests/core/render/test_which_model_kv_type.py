"""The which-model list prices the KV cache type the question asks ("q8 kv cache"): the header says
"KV cache q8_0, as asked", so the GiB column must be the q8_0 cache's, not an f16 one's. Written
before the change."""

from __future__ import annotations

import pytest

from core.ask.answer import answer
from core.catalog.loader import default_catalog
from core.render import which_model
from core.render.intent_rows import setup_for

CAT = default_catalog()

PAIRS = [
    (
        "best model for 24gb vram with 64k context and q8 kv cache",
        "best model for 24gb vram with 64k context",
    ),
    ("24g显存 64k上下文 q8 kv缓存 推荐什么模型", "24g显存 64k上下文 推荐什么模型"),
]


def _gib(question: str) -> dict[str, tuple[str, float]]:
    rows = answer(question, CAT).rows
    return {r["model"]: (r["quant"], r["total_gib"]) for r in rows if r.get("placement") == "gpu"}


@pytest.mark.parametrize(("with_kv", "plain"), PAIRS)
def test_asked_q8_cache_shrinks_or_upgrades_every_row(with_kv: str, plain: str) -> None:
    q8, f16 = _gib(with_kv), _gib(plain)
    assert q8 and q8 != f16, (q8, f16)
    same_quant = [m for m in q8 if m in f16 and q8[m][0] == f16[m][0]]
    assert all(q8[m][1] < f16[m][1] for m in same_quant), (q8, f16)


def test_which_models_takes_the_kv_type() -> None:
    setup = setup_for(CAT, "rtx-3090", 1, None, None, None)
    f16 = which_model.which_models(CAT, setup, 65536)
    q8 = which_model.which_models(CAT, setup, 65536, "q8_0")
    assert {f.model_id: f.total_gib for f in q8.fits} != {f.model_id: f.total_gib for f in f16.fits}


# Held out: written after the change, run once.
@pytest.mark.parametrize(
    ("with_kv", "plain"),
    [
        (
            "what model fits a 16gb card at 32k context with q4_0 kv cache",
            "what model fits a 16gb card at 32k context",
        ),
        ("12g显存 32k上下文 kv缓存q8 能跑什么模型", "12g显存 32k上下文 能跑什么模型"),
    ],
)
def test_held_out_kv_type_reaches_the_list(with_kv: str, plain: str) -> None:
    q, f16 = _gib(with_kv), _gib(plain)
    same_quant = [m for m in q if m in f16 and q[m][0] == f16[m][0]]
    assert q and q != f16 and all(q[m][1] < f16[m][1] for m in same_quant), (q, f16)
