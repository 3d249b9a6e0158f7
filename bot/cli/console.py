"""`python -m bot console` / `python -m bot run` without tokens: the bot in a terminal.

Reads one line at a time (interactively or piped) and prints each reply exactly as the chat would
show it. Today it answers questions (`/ask TEXT` or plain text) and `/help`; the community commands
(/submit, /review, /subscribe, ...) arrive with the storage layer.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

PROMPT = "tokbot> "
HELP = """Ask in English or Chinese, e.g.
  V100 32G 27B 多少 token
  双3090 跑 llama3 70b q4 速度
  can my 4070 super run gemma 3 27b?
Commands: /ask TEXT, /help, /quit"""


def reply_for(line: str) -> str | None:
    """The reply to one console line; None means quit."""
    from core.answer import answer
    from core.catalog.loader import default_catalog

    text = line.strip()
    if not text:
        return ""
    if text in ("/quit", "/exit"):
        return None
    if text == "/help":
        return HELP
    if text.startswith("/ask"):
        text = text[4:].strip()
    elif text.startswith("/"):
        command = text.split()[0]
        return f"{command}: not available in this version. {HELP}"
    return answer(text, default_catalog()).text


def run_console(args: argparse.Namespace, stdin: TextIO | None = None, out: TextIO | None = None) -> int:
    stdin = stdin or sys.stdin
    out = out or sys.stdout
    interactive = stdin.isatty()
    if interactive:
        print(f"tokbot console ({args.user}). {HELP}", file=out)
    while True:
        if interactive:
            print(PROMPT, end="", file=out, flush=True)
        line = stdin.readline()
        if not line:
            return 0
        reply = reply_for(line)
        if reply is None:
            return 0
        if reply:
            print(reply, file=out, flush=True)
