"""Argument parsing for every `python -m bot` command; the work is delegated per command."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import TypeAlias

Subparsers: TypeAlias = "argparse._SubParsersAction[argparse.ArgumentParser]"


def _estimate_parser(sub: Subparsers) -> None:
    p = sub.add_parser("estimate", help="memory and speed estimate for a GPU setup and a model")
    p.add_argument("--gpu", help='card name as people type it, e.g. "V100 32G", "4090"')
    p.add_argument("--model", help='model name, e.g. "gemma 3 27b", "qwen3:32b"')
    p.add_argument("--count", type=int, default=None, help="number of cards (default 1)")
    p.add_argument(
        "--memory",
        type=float,
        default=None,
        help="memory per card in GiB where a chip comes in several sizes",
    )
    p.add_argument("--quant", nargs="+", default=None, help="quantizations (default: a ladder)")
    p.add_argument("--ctx", nargs="+", default=None, help="context lengths, e.g. 4096 32k 128K")
    p.add_argument(
        "--depth", type=int, default=None, help="tokens already in context when decode speed is measured"
    )
    p.add_argument("--prompt", type=int, default=None, help="prompt length for prefill (default 512)")
    p.add_argument("--os", default=None, help="linux | windows | macos (default depends on the card)")
    p.add_argument("--framework", default=None, help="llama.cpp | vllm | ollama | lmstudio | ...")
    p.add_argument("--kv-type", default=None, help="KV cache type: f16 | q8_0 | q4_0")
    p.add_argument("--ram", type=float, default=None, help="system RAM in GiB (for CPU offload)")
    p.add_argument(
        "--ram-type", default=None, help="system RAM type and speed, e.g. DDR5-6000, DDR4, LPDDR5X-8533"
    )
    p.add_argument("--ram-channels", type=int, default=None, help="memory channels per socket (desktop: 2)")
    p.add_argument("--sockets", type=int, default=None, help="CPU sockets whose RAM the run uses (NUMA)")
    p.add_argument("--cpu", default=None, help='host CPU, e.g. "7950X", "2x EPYC 9654" (sets RAM defaults)')
    p.add_argument(
        "--offload",
        choices=("auto", "experts", "layers", "cpu"),
        default=None,
        help="run this setup instead of choosing; auto: what llama.cpp's --fit picks (MoE experts, "
        "else layers, in RAM for each row that doesn't fit the card(s))",
    )
    p.add_argument(
        "--cpu-moe-layers", default=None, help="experts: layers whose experts sit in RAM, N or all"
    )
    p.add_argument("--gpu-layers", type=int, default=None, help="layers: layers on the GPU (-ngl N)")
    p.add_argument(
        "--backend",
        default=None,
        help="llama.cpp backend to price: cuda | rocm (hip) | vulkan | metal | sycl | cann | cpu "
        "(default: the one people run on the card); one that can't drive the card is refused",
    )
    p.add_argument(
        "--users",
        type=int,
        default=None,
        help="N users at once (vLLM, llama-server -np N): each row's aggregate and per-user tok/s",
    )
    p.add_argument(
        "--split-mode",
        default=None,
        help="how several cards share the model: layer (llama.cpp default) | row | tensor "
        "(llama.cpp -sm tensor, ik_llama.cpp -sm graph, vLLM TP)",
    )
    p.add_argument(
        "--link",
        choices=("pcie", "nvlink", "xgmi", "network"),
        default=None,
        help="what joins the cards, where it isn't their own (an NVLink-bridged pair: nvlink)",
    )
    p.add_argument(
        "--ubatch",
        type=int,
        default=None,
        help="llama.cpp's physical batch (-ub): its compute buffer and an offloaded prefill's speed",
    )
    p.add_argument(
        "--output",
        type=int,
        default=None,
        help="tokens of reply: each row adds the end-to-end output tok/s (prefill included) beside decode",
    )
    p.add_argument("--lang", choices=("en", "zh"), default="en", help="language of notes")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument("--batch", default=None, help="JSONL file: one request per line, one JSON answer per line")


def _ask_parser(sub: Subparsers) -> None:
    p = sub.add_parser("ask", help="answer a chat question exactly as the bot would")
    p.add_argument("question", nargs="+", help='e.g. "V100 32G 27B 多少 token"')
    p.add_argument("--json", action="store_true", help="print status, query, candidates and reply as JSON")
    p.add_argument(
        "--target",
        choices=("plain", "telegram", "discord"),
        default="plain",
        help="render for this chat (default: plain console text)",
    )
    p.add_argument("--lang", choices=("en", "zh"), default=None, help="reply language (default: as asked)")
    p.add_argument(
        "--db", default=None, help="database with the approved anchors (default: TOKBOT_DB_PATH or tokbot.db)"
    )


def _console_parsers(sub: Subparsers) -> None:
    for name, text in (
        ("console", "the bot in a terminal"),
        ("run", "start the bot: the local console when no platform token is set"),
    ):
        p = sub.add_parser(name, help=text)
        p.add_argument("--user", default="console", help="who is typing (console user name)")
        p.add_argument("--db", default=None, help="SQLite file (default: TOKBOT_DB_PATH or tokbot.db)")


def _web_parser(sub: Subparsers) -> None:
    p = sub.add_parser("web", help="serve the answer pages, the anchors and /accuracy over HTTP")
    p.add_argument(
        "--host", default=None, help="address to listen on (default: TOKBOT_WEB_HOST or 127.0.0.1)"
    )
    p.add_argument("--port", type=int, default=None, help="port (default: TOKBOT_WEB_PORT or 8080)")
    p.add_argument(
        "--db", default=None, help="SQLite file (default: TOKBOT_DATABASE_URL, else TOKBOT_DB_PATH)"
    )


def _data_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("backup", help="consistent copy of the live database (safe while the bot runs)")
    p.add_argument("destination", help="file to write, e.g. backups/tokbot-2026-11-30.db")
    p.add_argument("--db", default=None, help="database to copy (default: TOKBOT_DB_PATH or tokbot.db)")
    p = sub.add_parser("export", help="write every approved measured anchor as CSV or JSON")
    p.add_argument(
        "destination", nargs="?", default=None,
        help="file to write (- for stdout; default: tokbot-anchors.csv in TOKBOT_OUT_DIR or the temp folder)",
    )  # fmt: skip
    p.add_argument("--format", choices=("csv", "json"), default=None, help="default: by file name, else csv")
    p.add_argument("--db", default=None, help="database to read (default: TOKBOT_DB_PATH or tokbot.db)")


def _database_parsers(sub: Subparsers) -> None:
    p = sub.add_parser("migrate", help="apply pending schema migrations and print the schema version")
    p.add_argument(
        "--db", default=None, help="SQLite file (default: TOKBOT_DATABASE_URL, else TOKBOT_DB_PATH)"
    )
    p = sub.add_parser("db", help="move the bot's data between databases")
    actions = p.add_subparsers(dest="db_command", required=True)
    c = actions.add_parser("copy", help="copy everything into an empty database and verify the counts")
    c.add_argument("--from", dest="source", required=True, help="sqlite:///tokbot.db or postgresql://...")
    c.add_argument("--to", dest="target", required=True, help="postgresql://... or sqlite:///copy.db")
    c.add_argument("--from-schema", default=None, help="PostgreSQL schema of the source (default: public)")
    c.add_argument("--to-schema", default=None, help="PostgreSQL schema of the destination (default: public)")


def _sync_discord_parser(sub: Subparsers) -> None:
    p = sub.add_parser(
        "sync-discord", help="register the slash commands with Discord (after an install or update)"
    )
    p.add_argument(
        "--guild",
        action="append",
        default=None,
        metavar="ID",
        help="sync to this server only, visible at once (repeatable, or ID,ID); "
        "without --guild: globally, which Discord may take up to an hour to show",
    )


def _models_parser(sub: Subparsers) -> None:
    p = sub.add_parser("models", help="catalog models: write entries from config.json files")
    actions = p.add_subparsers(dest="models_command", required=True)
    s = actions.add_parser("sync", help="write catalog entries from folders holding a config.json")
    s.add_argument("dirs", nargs="+", help="folders with config.json (and SOURCE.txt)")
    s.add_argument("--catalog", default=None, help="models.toml to update (default: the shipped one)")
    s.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")
    a = actions.add_parser("add", help="read a Hugging Face repo's config.json into a catalog entry")
    a.add_argument("reference", help="org/name or a huggingface.co / hf.co URL (HF_ENDPOINT for a mirror)")
    a.add_argument("--catalog", default=None, help="models.toml to update (default: the shipped one)")
    a.add_argument("--dry-run", action="store_true", help="print what would change, write nothing")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m bot", description="tokbot: does this model fit my GPU, and how fast?"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    _estimate_parser(sub)
    _console_parsers(sub)
    _ask_parser(sub)
    _web_parser(sub)
    _data_parsers(sub)
    _database_parsers(sub)
    _sync_discord_parser(sub)
    _models_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from core.storage.interface import StorageUnavailable

    args = build_parser().parse_args(argv)
    try:
        return _dispatch(args)
    except StorageUnavailable as exc:
        # A database that can't be used is the operator's to fix: one sentence naming the setting,
        # exit 2 (as for any configuration problem), no traceback.
        from bot.storage.select import setting_of

        print(f"tokbot: the database {setting_of(exc)}={exc.where} {exc.why}.", file=sys.stderr)
        return 2


def _dispatch(args: argparse.Namespace) -> int:
    if args.command in ("migrate", "db"):
        from bot.cli.db import run_db, run_migrate

        return run_migrate(args) if args.command == "migrate" else run_db(args)
    if args.command == "estimate":
        from bot.cli.estimate import run_estimate

        return run_estimate(args)
    if args.command == "ask":
        from bot.cli.ask import run_ask

        return run_ask(args)
    if args.command == "console":
        from bot.cli.console import run_console

        return run_console(args)
    if args.command == "run":
        from bot.runner import run_bot

        return run_bot(args)
    if args.command == "web":
        from bot.web.server import run_web

        return run_web(args)
    if args.command == "sync-discord":
        from bot.discord.sync import run_sync

        return run_sync(args)
    if args.command == "backup":
        from bot.cli.backup import run_backup

        return run_backup(args)
    if args.command == "export":
        from bot.cli.export import run_export

        return run_export(args)
    if args.command == "models":
        from bot.cli.models import run_models

        return run_models(args)
    return 2
