"""What start-up builds from the shipped catalog, kept on disk between processes.

A one-shot `python -m bot ask` used to spend ~1 s before answering: parsing twenty TOML files,
validating them, building the name indexes and compiling a few hundred regular expressions (the
largest alternations of card, model and CPU names take tens of milliseconds each). None of that
depends on the question, so the first process that builds it writes it down and the next ones read it:

- the validated `Catalog` itself;
- every artifact a `per_catalog` builder made from it (name indexes, intent patterns, ...);
- the compiled programs of the regular expressions those artifacts hold. Python cannot pickle a
  compiled pattern (it pickles the source and compiles it again), so `compile_pattern` keeps the
  program `re` would have built and hands it straight to the regex engine next time.

The file is keyed by the Python build, the regex engine's version and the size and modification
time of every catalog file and every module of `core/`: editing either rebuilds it, and a stale file
is never read. `TOKBOT_CACHE_DIR` chooses the folder (default `$XDG_CACHE_HOME/tokbot`, else
`~/.cache/tokbot`); `off` turns the cache off (the tests do, so a monkeypatched builder never reaches
the disk). A folder that can't be written is skipped silently: the cache only ever saves time.
"""

from __future__ import annotations

import atexit
import hashlib
import importlib
import io
import logging
import os
import pickle
import re
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import MappingProxyType
from typing import Any, TypeVar

log = logging.getLogger(__name__)

# The regex engine and its compiler (typeshed lists neither): a program built by `_parser` and
# `_compiler` is what `_sre.compile` takes, exactly as `re._compiler.compile` passes it.
_sre: Any = importlib.import_module("_sre")
_re_parser: Any = importlib.import_module("re._parser")
_re_compiler: Any = importlib.import_module("re._compiler")

_CORE_DIR = Path(__file__).resolve().parents[1]
# The shipped data files (core/catalog/loader.py reads its CATALOG_DIR from here).
SHIPPED_CATALOG_DIR = _CORE_DIR.parent / "catalogs"
_FORMAT = 1  # bump when what the file holds changes shape

T = TypeVar("T")

# (pattern, flags) -> (flags as compiled, code, groups, groupindex, indexgroup)
Program = tuple[int, list[int], int, dict[str, int], tuple[str | None, ...]]


class _State:
    """The process's view of the cache file: what was read, what was built since, whether to save."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.programs: dict[tuple[str, int], Program] = {}
        self.artifacts: dict[str, Any] = {}  # per_catalog builds of the default catalog, read or built
        self.catalog: Any = None  # the default Catalog, read or built
        self.path: Path | None = None  # the cache file; None when the cache is off
        self.dirty = False
        self.read_done = False  # the cache file was looked for (read or not there)
        self.configured: str | None = None  # the settings' folder (configure), over the environment


_STATE = _State()


def compile_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, from its kept program when a previous process built it."""
    flags = int(flags)
    key = (pattern, flags)
    program = _STATE.programs.get(key)
    if program is not None:
        try:
            return _sre.compile(pattern, *program)  # type: ignore[no-any-return]
        except Exception:  # noqa: BLE001 - a program this engine refuses is simply built again
            log.debug("kept regex program refused; compiling %r again", pattern[:40])
    if flags & (re.DEBUG | re.VERBOSE):
        return re.compile(pattern, flags)
    # The same steps as re._compiler.compile, keeping the program on the way.
    parsed = _re_parser.parse(pattern, flags)
    code = _re_compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    # int(): the opcodes are named int constants of re._constants, which pickle by a name lookup.
    code_ints = [int(c) for c in code]
    program = (flags | parsed.state.flags, code_ints, parsed.state.groups - 1, groupindex, tuple(indexgroup))
    compiled: re.Pattern[str] = _sre.compile(pattern, *program)
    with _STATE.lock:
        _STATE.programs[key] = program
        _STATE.dirty = True
    return compiled


def _reduce_pattern(p: re.Pattern[str]) -> tuple[Callable[..., re.Pattern[str]], tuple[str, int]]:
    if not isinstance(p.pattern, str):
        raise pickle.PicklingError("bytes patterns are not kept")
    # Compiled again through compile_pattern, whose programs are read before the artifacts.
    compile_pattern(p.pattern, p.flags)
    return compile_pattern, (p.pattern, p.flags)


def _proxy(items: dict[Any, Any]) -> MappingProxyType[Any, Any]:
    return MappingProxyType(items)


def _reduce_proxy(
    view: MappingProxyType[Any, Any],
) -> tuple[Callable[[dict[Any, Any]], MappingProxyType[Any, Any]], tuple[dict[Any, Any]]]:
    # Pickle can't name the mappingproxy type itself; a function of this module rebuilds it.
    return _proxy, (dict(view),)


def configure(folder: str | None) -> None:
    """The folder the deployment's settings name (TOKBOT_CACHE_DIR, also from .env); it counts only
    before the cache file is first looked for, which the composition root does before the catalog."""
    with _STATE.lock:
        if _STATE.read_done:
            log.debug("warm cache folder set after the cache was read; kept %s", _STATE.path)
            return
        _STATE.configured = folder


def cache_dir() -> Path | None:
    """The folder of the cache file, or None when the cache is off."""
    chosen = _STATE.configured if _STATE.configured is not None else os.environ.get("TOKBOT_CACHE_DIR")
    if chosen is not None:
        chosen = chosen.strip()
        return None if chosen.lower() in {"", "off", "0", "none"} else Path(chosen)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tokbot"


def _fingerprint(catalog_dir: Path) -> str:
    """Python build, regex engine and every catalog file and core module by size and mtime."""
    h = hashlib.sha256()
    h.update(f"{_FORMAT}|{sys.version}|{_sre.MAGIC}|{_sre.CODESIZE}|{catalog_dir}".encode())
    for root in (catalog_dir, _CORE_DIR):
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                if name.endswith((".pyc", ".tmp")):
                    continue
                st = os.stat(os.path.join(dirpath, name))
                h.update(f"{dirpath}/{name}|{st.st_size}|{st.st_mtime_ns}\n".encode())
    return h.hexdigest()[:24]


def _file_for(catalog_dir: Path) -> Path | None:
    folder = cache_dir()
    if folder is None:
        return None
    try:
        return folder / f"warm-{_fingerprint(catalog_dir)}.pickle"
    except OSError:
        return None


def load_default(catalog_dir: Path, build: Callable[[], T]) -> T:
    """The default catalog: from the cache file when it is current, else `build()` (and kept)."""
    with _STATE.lock:
        if _STATE.catalog is not None:
            return _STATE.catalog  # type: ignore[no-any-return]
        _ensure_read(catalog_dir)
        if _STATE.catalog is None:
            _STATE.catalog = build()
            _STATE.dirty = True
        return _STATE.catalog  # type: ignore[no-any-return]


def _ensure_read(catalog_dir: Path) -> None:
    """Read the cache file once per process, if the cache is on and the file is there."""
    with _STATE.lock:
        if _STATE.read_done:
            return
        _STATE.read_done = True
        path = _file_for(catalog_dir)
        if path is None:
            return
        _STATE.path = path
        _read(path)
        atexit.register(save)


def _read(path: Path) -> bool:
    try:
        with path.open("rb") as fh:
            programs = pickle.load(fh)  # first the regex programs: the artifacts' patterns use them
            _STATE.programs.update(programs)
            catalog, artifacts = pickle.load(fh)
    except FileNotFoundError:
        return False
    except Exception:  # noqa: BLE001 - a truncated or foreign file: build afresh and overwrite it
        log.debug("warm cache %s unreadable; rebuilding", path, exc_info=True)
        return False
    _STATE.catalog = catalog
    _STATE.artifacts.update(artifacts)
    return True


def _dumps(obj: Any) -> bytes:
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    # Read-only views (the vocabulary's tables) pickle as the dict they show, wrapped again on load.
    pickler.dispatch_table = {re.Pattern: _reduce_pattern, MappingProxyType: _reduce_proxy}
    pickler.dump(obj)
    return buffer.getvalue()


def _body() -> bytes | None:
    """The catalog and the artifacts as one pickle (objects they share stay shared); an artifact that
    can't be pickled is left out and built again by each process."""
    try:
        return _dumps((_STATE.catalog, _STATE.artifacts))
    except Exception:  # noqa: BLE001 - find the artifact at fault below
        log.debug("warm cache: an artifact is not picklable", exc_info=True)
    for name, value in list(_STATE.artifacts.items()):
        try:
            _dumps(value)
        except Exception:  # noqa: BLE001
            del _STATE.artifacts[name]
    try:
        return _dumps((_STATE.catalog, _STATE.artifacts))
    except Exception:  # noqa: BLE001 - nothing worth keeping
        return None


def save() -> None:
    """Write the cache file if this process built anything new (at exit; a long-running bot may
    call it after its first answers)."""
    with _STATE.lock:
        path = _STATE.path
        if path is None or not _STATE.dirty or _STATE.catalog is None:
            return
        # Pickling the body records the program of every pattern it holds, so it is pickled first
        # and written after the programs, which the reader needs before it.
        body = _body()
        if body is None:
            return
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with tmp.open("wb") as fh:
                pickle.dump(dict(_STATE.programs), fh, protocol=pickle.HIGHEST_PROTOCOL)
                fh.write(body)
            os.replace(tmp, path)
            for stale in path.parent.glob("warm-*.pickle"):
                if stale != path:
                    stale.unlink(missing_ok=True)
        except OSError:
            log.debug("warm cache not written to %s", path, exc_info=True)
            tmp.unlink(missing_ok=True)
        _STATE.dirty = False


_Catalog = TypeVar("_Catalog")


def _kept_or_built(name: str, build: Callable[[], T]) -> T:
    """The artifact `name` as the cache file holds it, else built now and kept for the next save."""
    value: T | None = _STATE.artifacts.get(name)
    if value is None:
        value = build()
        if _STATE.path is not None:
            with _STATE.lock:
                _STATE.artifacts[name] = value
                _STATE.dirty = True
    return value


def per_catalog(name: str) -> Callable[[Callable[[_Catalog], T]], Callable[[_Catalog], T]]:
    """Build once per catalog object (by identity: a Catalog holds dicts and is not hashable); for the
    shipped catalog, read from and kept in the cache file. `name` must be unique per builder."""

    def wrap(build: Callable[[_Catalog], T]) -> Callable[[_Catalog], T]:
        memo: dict[int, tuple[object, T]] = {}
        lock = threading.Lock()

        def get(catalog: _Catalog) -> T:
            hit = memo.get(id(catalog))
            if hit is not None and hit[0] is catalog:
                return hit[1]
            with lock:
                hit = memo.get(id(catalog))
                if hit is not None and hit[0] is catalog:
                    return hit[1]
                if catalog is _STATE.catalog:
                    value = _kept_or_built(name, lambda: build(catalog))
                else:
                    value = build(catalog)
                if len(memo) > 16:  # tests build many small catalogs; keep memory bounded
                    memo.clear()
                # The stored reference keeps the id from being reused by another object.
                memo[id(catalog)] = (catalog, value)
                return value

        get.__wrapped__ = build  # type: ignore[attr-defined]
        get.__doc__ = build.__doc__
        return get

    return wrap


def shipped(name: str) -> Callable[[Callable[[], T]], Callable[[], T]]:
    """Build once per process a value read only from the shipped files under catalogs/ (the message
    templates); kept in the cache file beside the catalog's artifacts."""

    def wrap(build: Callable[[], T]) -> Callable[[], T]:
        box: list[T] = []
        lock = threading.Lock()

        def get() -> T:
            if box:
                return box[0]
            _ensure_read(SHIPPED_CATALOG_DIR)
            with lock:
                if not box:
                    box.append(_kept_or_built(name, build))
            return box[0]

        get.__wrapped__ = build  # type: ignore[attr-defined]
        get.__doc__ = build.__doc__
        return get

    return wrap
