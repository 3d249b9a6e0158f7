"""`python -m bot ask "V100 32G 27B 多少 token"`: the reply exactly as a chat would show it.

With --json: {"status", "query", "candidates", "reply"} (see core.ask_use_case.Reply.as_dict). The exit
code is 0 for an answer, 1 when the bot asks back, shows help or reports an error, 2 for a broken
catalog.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import TextIO

from core.catalog.loader import CatalogError, default_catalog


def run_ask(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    try:
        catalog = default_catalog()
    except CatalogError as exc:
        print(f"catalog error: {exc}", file=sys.stderr)
        return 2
    from core.ask_use_case import answer

    question = " ".join(args.question)
    reply = answer(question, catalog, lang=args.lang, target=args.target)
    if args.json:
        print(json.dumps(reply.as_dict(), ensure_ascii=False), file=out)
    else:
        print(reply.text, file=out)
    return 0 if reply.status == "answer" else 1
