"""The console answers piped lines one by one, like a scripted chat."""

from __future__ import annotations

import io
from argparse import Namespace

from bot.cli.console import reply_for, run_console


def test_piped_session_answers_each_line():
    stdin = io.StringIO("V100 32G 27B 多少 token\n/help\n/bogus\n/quit\nnever read\n")
    out = io.StringIO()
    assert run_console(Namespace(user="alice"), stdin, out) == 0
    text = out.getvalue()
    assert "gemma-3-27b" in text and "llama-server" in text
    assert "/ask TEXT" in text and "/bogus: not available" in text
    assert "never read" not in text


def test_blank_and_quit_lines():
    assert reply_for("   ") == ""
    assert reply_for("/quit") is None
