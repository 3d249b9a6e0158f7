"""`python -m bot ask`: prints the chat reply; --json prints the stable shape."""

from __future__ import annotations

import io
import json

import pytest

from bot.cli.ask import run_ask
from bot.cli.main import build_parser


@pytest.fixture(autouse=True)
def elsewhere(tmp_path, monkeypatch):
    """Run where nothing is: `ask` must not create a database (or anything) in the working directory."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOKBOT_DB_PATH", raising=False)
    monkeypatch.delenv("TOKBOT_DATABASE_URL", raising=False)
    yield
    left = {p.name for p in tmp_path.iterdir()}
    assert left <= {"t.db", "t.db-wal", "t.db-shm"}, "nothing but a database it was given"


def _run(*argv: str) -> tuple[int, str]:
    args = build_parser().parse_args(["ask", *argv])
    out = io.StringIO()
    code = run_ask(args, out)
    return code, out.getvalue()


def test_json_shape() -> None:
    code, out = _run("V100 32G 27B 多少 token", "--json")
    assert code == 0
    data = json.loads(out)
    assert {"status", "query", "candidates", "reply"} <= set(data), "fields may be added, never dropped"
    assert data["status"] == "answer"
    q = data["query"]
    # A stable interface: fields may be added, never renamed or dropped.
    assert {"gpu", "model", "quants", "contexts", "os", "framework", "lang", "intent"} <= set(q)
    assert {"id", "count", "memory_gib"} <= set(q["gpu"]) and {"id"} <= set(q["model"])
    assert q["gpu"]["id"] == "tesla-v100-32g-pcie" and q["gpu"]["memory_gib"] == 32.0
    assert q["model"]["id"] == "gemma-3-27b"
    assert q["quants"] == [] and q["contexts"] == [] and q["lang"] == "zh"
    assert set(data["candidates"]) == {"gpu", "model"}
    assert "gemma-2-27b" in data["candidates"]["model"]


def test_json_lists_what_was_asked() -> None:
    _, out = _run("双3090 跑 llama3 70b q4 32k", "--json")
    q = json.loads(out)["query"]
    assert q["quants"] == ["Q4_K_M"] and q["contexts"] == [32768] and q["gpu"]["count"] == 2


def test_targets_and_lang() -> None:
    _, discord = _run("V100 32G 27B 多少 token", "--target", "discord", "--lang", "en")
    assert discord.count("```") >= 2 and "Usable" in discord
    _, telegram = _run("V100 32G 27B", "--target", "telegram")
    assert "<pre>" in telegram


def test_help_exit_code() -> None:
    code, out = _run("hello there")
    assert code == 1 and out.strip()


def test_the_published_anchors_are_shown_as_in_a_chat() -> None:
    code, out = _run("4090 llama 2 7b")
    assert code == 0
    assert "Measured: 3 runs" in out and "no measurement yet" not in out
    assert "[!1 " in out and "👍 Helpful] [!" in out, "buttons listed as in the console"


def test_the_approved_community_anchors_of_the_database_are_shown(tmp_path, monkeypatch) -> None:
    from argparse import Namespace

    from bot.cli.console import run_console

    monkeypatch.setenv("TOKBOT_MODERATORS", "console:bob")
    db = str(tmp_path / "t.db")
    said = io.StringIO()
    line = '/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M decode=120\n'
    run_console(Namespace(user="alice", db=db), io.StringIO(line), said)
    sid = said.getvalue().split("Received as #")[1].split(":")[0]
    run_console(Namespace(user="bob", db=db), io.StringIO(f"/approve {sid}\n"), io.StringIO())
    code, text = _run("4090 llama 3 8b", "--db", db)
    assert code == 0 and "by alice" in text
