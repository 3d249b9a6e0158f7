"""Load a script of scripts/ (a benchmark or fit, not a package) as a module, for the tests of it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


def load_script(name: str, reuse: bool = False) -> ModuleType:
    """scripts/`name`.py as module `name` (the scripts import each other by bare name, so their folder
    goes on sys.path), executed afresh; `reuse`: the one already loaded, if any."""
    if str(SCRIPTS) not in sys.path:
        sys.path.insert(0, str(SCRIPTS))
    if reuse and name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module
