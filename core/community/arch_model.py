"""llama-bench's model line ("llama 8B Q4_K - Medium") read with its size and params columns.

llama-bench names the architecture and a rounded size, not the model: "llama 8B" is Llama 3 8B,
Llama 3.1 8B, DeepSeek-R1-Distill-Llama-8B and every other fine-tune of that shape. The printed
parameter count ("8.03 B") and weight size ("4.58 GiB" at Q4_K_M) narrow the name's candidates to
the models they fit; readings that share one architecture (same layers, widths, heads, vocabulary,
experts) give the same estimate and the same anchor, so the best known of them is taken. Only when
candidates of different shapes remain is the submitter asked, with just those.
"""

from __future__ import annotations

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.estimator.weights import weight_breakdown
from core.understanding.resolution import Resolution
from core.understanding.resolve import resolve_model

PARAMS_TOLERANCE = 0.02  # llama-bench prints params to 0.01 B; catalogs round to the same
SIZE_TOLERANCE = 0.05  # the per-tensor weight model is within a few percent of llama-bench's size
# Name readings this far below the best are other architectures the fuzzy match brushed against
# ("qwen2 7B" scores InternLM2.5 7B at 43 against Qwen2.5 7B's 92).
SCORE_WINDOW = 25.0
GIB = 1024**3


def _shape(m: Model) -> tuple[object, ...]:
    """What the estimate depends on: models equal here are one anchor."""
    return (
        m.layers,
        m.hidden,
        m.heads,
        m.kv_heads,
        m.head_dim,
        m.vocab,
        m.intermediate_size,
        m.experts,
        m.experts_active,
        m.attention,
        m.sliding_window,
        m.tied_embeddings,
    )


def _fits(
    model: Model, params_b: float | None, size_gib: float | None, quant: str | None, catalog: Catalog
) -> bool:
    if params_b is not None and abs(model.params_b - params_b) > PARAMS_TOLERANCE * params_b:
        return False
    q = catalog.quants.get(quant or "")
    if size_gib is not None and q is not None:
        try:
            expected = weight_breakdown(model, q, catalog).total_bytes / GIB
        except (KeyError, ValueError, ZeroDivisionError):
            return True  # a quant the weight model can't size: the params decide alone
        if abs(expected - size_gib) > SIZE_TOLERANCE * size_gib:
            return False
    return True


def resolve_arch_model(
    name: str, params_b: float | None, size_gib: float | None, quant: str | None, catalog: Catalog
) -> Resolution | None:
    """The catalog model a llama-bench model line means, or None to leave the name as printed.

    Confident when the candidates that fit the numbers share one architecture; not confident (the
    submitter is asked, with only these) when they differ; None when nothing to check against.
    """
    if (params_b is None and size_gib is None) or len(name) > 200:
        return None  # nothing to check the name against, or not a model line (a hostile cell)
    res = resolve_model(name, catalog)
    ids = list(
        dict.fromkeys([*([res.best_id] if res.best_id else []), *res.also, *(c for c, _ in res.candidates)])
    )
    scores = dict(res.candidates)
    top = max(scores.values(), default=0.0)
    ids = [i for i in ids if scores.get(i, top) >= top - SCORE_WINDOW]
    fitting = [catalog.models[i] for i in ids if i in catalog.models]
    fitting = [m for m in fitting if _fits(m, params_b, size_gib, quant, catalog)]
    if not fitting:
        return None
    shapes = {_shape(m) for m in fitting}
    # Best known first: the one most people run (popularity), then the newest release.
    ranked = sorted(fitting, key=lambda m: (m.popularity, m.release), reverse=True)
    candidates = tuple((m.id, scores.get(m.id, 0.0)) for m in ranked)
    if len(shapes) == 1:
        return Resolution(ranked[0].id, candidates, confident=True)
    return Resolution(ranked[0].id, candidates, confident=False)
