"""The warm cache (core/cache/warm.py): what a process reads back answers exactly as what it
would have built, a changed catalog is never read stale, and a broken or unwritable cache only costs
time. The suite runs with the cache off (tests/conftest.py); these tests turn it on in a folder of
their own, in child processes so the cache's process-wide state starts empty each time."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from core.cache import warm as warm_cache

ROOT = Path(__file__).resolve().parents[3]

PATTERNS = [
    (r"(?<![a-z0-9])(?:rtx\s*)?(?P<num>\d{4})(?:\s*ti)?(?![a-z0-9])", 0),
    (r"(\d+)\s*(?:x|×)\s*(a100|h100)", re.I),
    (r"^\s*[x*]\s*(\d{1,2})(?![0-9a-z])", 0),
    (r"显存|内存|[动起]来|(?:能|可以).{0,6}吗", 0),
    (r"a|b|(c)(d)?", 0),
]
TEXTS = ["RTX 4090 ti", "2 x A100", " x8 cards", "能跑起来吗 显存", "abcd", "cd", "", "7950X3D"]


def _same(a: re.Pattern[str], b: re.Pattern[str]) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups, b.groupindex)
    for text in TEXTS:
        assert [m.span() for m in a.finditer(text)] == [m.span() for m in b.finditer(text)]
        assert [m.groups() for m in a.finditer(text)] == [m.groups() for m in b.finditer(text)]
        assert a.sub("_", text) == b.sub("_", text)


@pytest.mark.parametrize(("pattern", "flags"), PATTERNS)
def test_a_pattern_compiled_or_rebuilt_from_its_program_matches_as_re_compile_does(
    pattern: str, flags: int
) -> None:
    expected = re.compile(pattern, flags)
    first = warm_cache.compile_pattern(pattern, flags)
    _same(first, expected)
    assert (pattern, int(flags)) in warm_cache._STATE.programs
    again = warm_cache.compile_pattern(pattern, flags)  # now from the kept program
    _same(again, expected)


_CHILD = r"""
import json, sys
from core.cache import warm as warm_cache
from core.catalog.loader import default_catalog
from core.understanding.parse import parse_question
catalog = default_catalog()
read = sorted(warm_cache._STATE.artifacts)
out = [repr(parse_question(q, catalog)) for q in sys.argv[1:]]
print(json.dumps({"read": read, "answers": out}))
"""

QUESTIONS = [
    "4090 qwen3 32b q4 32k",
    "双3090 跑 llama3 70b q4 速度",
    "7950X qwen3 30b a3b 纯CPU",
    "on vulkan 7900xtx",
]


def _child(cache: Path, *questions: str) -> dict[str, list[str]]:
    env = {**os.environ, "TOKBOT_CACHE_DIR": str(cache), "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *questions], env=env, cwd=ROOT, capture_output=True, text=True,
        timeout=120, check=True,
    )  # fmt: skip
    result: dict[str, list[str]] = json.loads(done.stdout)
    return result


def test_a_second_process_reads_what_the_first_built_and_answers_the_same(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _child(cache, *QUESTIONS)
    assert first["read"] == []  # nothing to read yet
    files = list(cache.glob("warm-*.pickle"))
    assert len(files) == 1
    second = _child(cache, *QUESTIONS)
    assert "understanding.name_index" in second["read"] and "understanding.parse" in second["read"]
    assert second["answers"] == first["answers"]
    assert list(cache.glob("warm-*.pickle")) == files  # nothing new built, nothing rewritten


def test_the_cache_off_builds_everything_and_answers_the_same(tmp_path: Path) -> None:
    env_off = _child(Path("off"), *QUESTIONS)  # "off" as the folder's name is the switch
    cache = tmp_path / "c"
    _child(cache, *QUESTIONS)
    assert _child(cache, *QUESTIONS)["answers"] == env_off["answers"]
    assert not Path(ROOT / "off").exists()


def test_a_broken_cache_file_is_rebuilt_and_an_unwritable_folder_only_costs_time(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = _child(cache, QUESTIONS[0])
    (path,) = cache.glob("warm-*.pickle")
    path.write_bytes(path.read_bytes()[:1000])  # truncated mid-write
    again = _child(cache, QUESTIONS[0])
    assert again["read"] == [] and again["answers"] == first["answers"]
    assert _child(cache, QUESTIONS[0])["read"]  # the rebuilt file is whole again
    blocked = tmp_path / "file-not-folder"
    blocked.write_text("x")
    assert _child(blocked, QUESTIONS[0])["answers"] == first["answers"]


def test_a_changed_catalog_file_or_core_module_changes_the_key(tmp_path: Path) -> None:
    catalogs = tmp_path / "catalogs"
    catalogs.mkdir()
    (catalogs / "gpus.toml").write_text("[[gpu]]\n")
    before = warm_cache._fingerprint(catalogs)
    assert warm_cache._fingerprint(catalogs) == before
    (catalogs / "gpus.toml").write_text("[[gpu]]\n# an edit\n")
    assert warm_cache._fingerprint(catalogs) != before


@pytest.mark.parametrize("value", ["off", "", "0", "none", " OFF "])
def test_off_words_turn_the_cache_off(monkeypatch: pytest.MonkeyPatch, value: str) -> None:
    monkeypatch.setenv("TOKBOT_CACHE_DIR", value)
    assert warm_cache.cache_dir() is None


def test_the_default_folder_follows_xdg(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("TOKBOT_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert warm_cache.cache_dir() == tmp_path / "tokbot"


def test_per_catalog_builds_once_per_catalog_object() -> None:
    built: list[object] = []

    @warm_cache.per_catalog("test.counting")
    def count(catalog: object) -> int:
        built.append(catalog)
        return len(built)

    a, b = object(), object()
    assert (count(a), count(a), count(b), count(a)) == (1, 1, 2, 1)


def test_the_settings_folder_counts_over_the_environment_before_the_first_read(tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from core.cache import warm\n"
        "warm.configure(sys.argv[1])\n"
        "print(warm.cache_dir())\n"
        "from core.catalog.loader import default_catalog\n"
        "default_catalog()\n"
        "warm.configure('off')  # too late: the file was already looked for\n"
        "print(warm._STATE.path.parent)\n"
    )
    env = {**os.environ, "TOKBOT_CACHE_DIR": "off", "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "set")],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert done.stdout.split() == [str(tmp_path / "set")] * 2
