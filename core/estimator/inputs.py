"""Turn (model, quant, depth) into the byte counts the speed model consumes.

Shared by the estimator and the calibration fit, so the fit sees exactly the inputs that the
estimator will later feed it.
"""

from __future__ import annotations

from core.catalog.loader import Catalog
from core.catalog.model import Model
from core.estimator.memory import GIB, kv_read_bytes
from core.estimator.speed import DecodeInputs
from core.estimator.weights import weight_breakdown


def _norm(text: str) -> str:
    return text.strip().upper().replace("-", "_").replace(" ", "_")


def resolve_quant_id(text: str, catalog: Catalog) -> str | None:
    """Exact quant id or alias (case-insensitive); None when unknown. Free text goes through
    core.understanding's resolver instead: this is for names that are already canonical."""
    key = _norm(text)
    for quant in catalog.quants.values():
        if _norm(quant.id) == key or any(_norm(a) == key for a in quant.aliases):
            return quant.id
    return None


def decode_inputs_for(
    model: Model,
    quant_id: str,
    depth: int,
    kv_type: str,
    catalog: Catalog,
    measured_size_gib: float | None = None,
) -> DecodeInputs:
    """Bytes one decoded token reads on the GPU with every layer offloaded.

    `measured_size_gib` (calibration only) rescales our weight estimate to the file actually run.
    """
    weights = weight_breakdown(model, catalog.quants[quant_id], catalog)
    active = weights.active_bytes_per_token
    if measured_size_gib:
        active *= measured_size_gib * GIB / weights.total_bytes
    return DecodeInputs(
        layers=model.layers,
        gpu_bytes=active + kv_read_bytes(model, depth, kv_type, catalog),
        moe=model.is_moe,
        quant_id=quant_id,
    )
