"""The README's sample reply ("A taste") is what the bot prints for that question now.

The sample's first line is the command (`$ echo "QUESTION" | bash scripts/run.sh`: the console on a
pipe, which prints what `python -m bot ask` prints); the rest is the reply, compared line by line
with `python -m bot ask --target plain QUESTION` run in this process on a fresh setup: no database
(the published anchors only), no Hub, no TOKBOT_* settings. A change to the reply fails here until
the README shows the new one.
"""

from __future__ import annotations

import io
import os
import re
from pathlib import Path

import pytest

from bot.cli.ask import run_ask
from bot.cli.main import build_parser

README = Path(__file__).resolve().parents[1] / "README.md"
_COMMAND = re.compile(r'^\$ echo "(?P<question>[^"]+)" \| bash scripts/run\.sh$')


def taste() -> tuple[str, list[str]]:
    """(the question, the reply's lines) of the README's "A taste" sample."""
    text = README.read_text(encoding="utf-8")
    section = text.split("\n## A taste\n", 1)[1]
    block = section.split("```\n", 2)[1]  # the first fenced block of the section
    command, *reply = block.rstrip("\n").split("\n")
    found = _COMMAND.match(command)
    assert found, f"the sample's first line is not the run.sh command: {command!r}"
    return found["question"], reply


def test_the_sample_reply_is_what_the_bot_prints(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    question, sample = taste()
    for name in list(os.environ):
        if name.startswith("TOKBOT_") and name != "TOKBOT_CACHE_DIR" or name.startswith("HF_"):
            monkeypatch.delenv(name)
    monkeypatch.chdir(tmp_path)  # no .env, no tokbot.db: the setup a first run has
    db = str(tmp_path / "absent.db")
    args = build_parser().parse_args(["ask", "--target", "plain", "--db", db, question])
    out = io.StringIO()
    assert run_ask(args, out) == 0  # what `python -m bot ask` runs, printing into `out`
    printed = out.getvalue().rstrip("\n").split("\n")
    for number, (want, got) in enumerate(zip(sample, printed, strict=False), start=1):
        assert got == want, f"README sample line {number} differs from the bot's reply"
    assert len(printed) == len(sample), "README sample and the bot's reply differ in length"
    assert not (tmp_path / "absent.db").exists(), "ask created a database"
