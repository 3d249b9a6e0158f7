"""`python -m bot run`: start every adapter that has a token, else the local console."""

from __future__ import annotations

import argparse


def run_bot(args: argparse.Namespace) -> int:
    from bot.cli.console import run_console

    return run_console(args)
