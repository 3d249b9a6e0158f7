"""What every row of one estimate is priced from, gathered once: the request, the memory it may
use, what runs it and the catalog.

The estimator used to hand these to each row and way out as ten positional arguments (request,
usable, backend, split, framework, calibration, catalog, ...); a `Pricing` carries the ones that stay
fixed across an estimate's grid, and a row's own values (quant, weights, context, depth) travel
beside it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from core.catalog.loader import Catalog
from core.estimator.memory import Usable
from core.estimator.speed import Runtime

if TYPE_CHECKING:  # estimate.py imports memory_fit, which reads this module
    from core.estimator.estimate import EstimateRequest


@dataclass(frozen=True, slots=True)
class Pricing:
    """One estimate's fixed inputs. `request`: the setup (cards, host, OS), model, KV type, placement
    (offload), prompt and depth; `usable`: the memory the engine may fill (system RAM for a CPU-only
    run); `runtime`: the card(s), backend, framework, split and calibration that price a token."""

    request: EstimateRequest
    usable: Usable
    runtime: Runtime
    catalog: Catalog
