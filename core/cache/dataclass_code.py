"""The compiled methods of every dataclass, kept between processes.

A frozen dataclass is built at import by writing the source of its `__init__`, `__repr__`, `__eq__`,
`__hash__`, `__setattr__` and `__delattr__` and compiling it: a few hundred dataclasses made that
a third of a cold `python -m bot ask` (~170 ms of ~500 on this project's 2-core machines). The source
a dataclass writes is the same every run (field names and options only; defaults and types are
passed in as values, never written into it), so its compiled code is too. `install()` gives the
dataclasses module an `exec` that looks each source up in a table read from disk and compiles only
what it has not seen; the table is written back at exit when something new was compiled.

Only the dataclasses module sees this `exec`, and only for a source string it was given: the code
object run is the one `compile(source, "<string>", "exec")` returns, which is what `exec(source)`
runs. The table's file is named by the interpreter's bytecode magic number, so another Python never
reads it. The entry points install it (bot/__main__.py) before any module defines a dataclass; the
tests don't, except this module's own. The folder is the warm cache's (TOKBOT_CACHE_DIR; "off" is
off); a folder that can't be written only costs the time it would have saved.
"""

from __future__ import annotations

import atexit
import builtins
import dataclasses
import importlib.util
import logging
import marshal
import os
import threading
from pathlib import Path
from types import CodeType
from typing import Any

from core.cache.warm import cache_dir

log = logging.getLogger(__name__)

_LOCK = threading.Lock()
_KNOWN: dict[str, CodeType] = {}
_NEW: dict[str, CodeType] = {}
_USED: set[str] = set()  # sources this process ran: what the table keeps (old classes drop out)
_INSTALLED: list[Path] = []  # the table's file, once installed


def table_file(folder: Path) -> Path:
    return folder / f"dataclass-code-{importlib.util.MAGIC_NUMBER.hex()}.marshal"


def _exec(source: Any, globals: Any = None, locals: Any = None) -> None:
    if isinstance(source, str):
        code = _KNOWN.get(source)
        if code is None:
            code = compile(source, "<string>", "exec")
            with _LOCK:
                _KNOWN[source] = _NEW[source] = code
        _USED.add(source)
        source = code
    builtins.exec(source, globals, locals)


def install() -> bool:
    """Serve the dataclasses module's compiles from the table; False when the cache is off."""
    if _INSTALLED:
        return True
    folder = cache_dir()
    if folder is None:
        return False
    path = table_file(folder)
    try:
        table = marshal.loads(path.read_bytes())
        if isinstance(table, dict):
            _KNOWN.update((k, v) for k, v in table.items() if isinstance(k, str) and isinstance(v, CodeType))
    except (OSError, ValueError, EOFError, TypeError):
        pass  # no table yet, or one this interpreter can't read: compile as usual and write one
    dataclasses.exec = _exec  # type: ignore[attr-defined]
    _INSTALLED.append(path)
    atexit.register(save)
    return True


def save() -> None:
    """Write the table if this process compiled a source it didn't have."""
    if not _INSTALLED or not _NEW:
        return
    path = _INSTALLED[0]
    tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        with _LOCK:
            data = marshal.dumps({k: _KNOWN[k] for k in _USED})
            _NEW.clear()
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(data)
        os.replace(tmp, path)
    except (OSError, ValueError):
        log.debug("dataclass code table not written to %s", path, exc_info=True)
        tmp.unlink(missing_ok=True)
