"""Which inference frameworks run a setup, with what caveats, overhead and a filled launch command.

Hard gates (OS, a backend for the GPU's vendor on that OS, minimum CUDA compute, quant format) are
read from the Framework fields; combination-specific caveats ("FP8 below compute 8.9 is
weight-only", "BF16 on Volta -> --dtype half") are `Rule`s in catalogs/frameworks.toml, so adding
one is a data edit with its source. Everything the user reads is a `Note` (catalogs/messages/
frameworks.toml); this package never builds sentences.

Commands are `str.format` templates from the catalog. Their field names are parsed once per
template (cached) and the values are plain string operations, so rendering a whole grid of
answers stays cheap.

The modules, one job each (callers import from here):

- `query`: the value types (FrameworkQuery, FrameworkOption, Recommendation);
- `backends`: backend ids and names, which backend drives a card, checking a named one;
- `quant_match`, `rules`, `gates`: which frameworks run the setup and why not;
- `commands`: the launch command, one module per framework family;
- `notes`: notes computed from the setup's numbers;
- `judge`: one framework judged for a query (`evaluate`), every framework (`framework_options`);
- `recommend`: the framework to suggest.
"""

from __future__ import annotations

from core.estimator.frameworks.backends import (
    BACKEND_VENDORS,
    BackendCheck,
    backend_id,
    backend_names,
    card_backends,
    check_backend,
)
from core.estimator.frameworks.commands.template import PLACEHOLDERS, render_command, template_fields
from core.estimator.frameworks.gates import runs
from core.estimator.frameworks.judge import evaluate, framework_options
from core.estimator.frameworks.quant_match import loads
from core.estimator.frameworks.query import FrameworkOption, FrameworkQuery, OsName, Recommendation
from core.estimator.frameworks.recommend import recommend
from core.estimator.frameworks.rules import rule_matches

__all__ = [
    "BACKEND_VENDORS",
    "PLACEHOLDERS",
    "BackendCheck",
    "FrameworkOption",
    "FrameworkQuery",
    "OsName",
    "Recommendation",
    "backend_id",
    "backend_names",
    "card_backends",
    "check_backend",
    "evaluate",
    "framework_options",
    "loads",
    "recommend",
    "render_command",
    "rule_matches",
    "runs",
    "template_fields",
]
