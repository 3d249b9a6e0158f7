"""A golden snapshot of what the bot says: replies, follow-up views, `ask --json`, `estimate --json`
and a scripted community flow, as one JSONL file. Refactors that must not change behaviour are
checked by writing a snapshot before and after and diffing the two.

    .venv/bin/python scripts/golden_snapshot.py OUT.jsonl
    .venv/bin/python scripts/golden_snapshot.py --compare BEFORE.jsonl AFTER.jsonl

Responses are recorded by what a person sees (text, buttons, whether it is private, a prompt, a
photo or file by size), not by the adapter's routing fields, so a typed delivery intent replacing a
string flag does not count as a change.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

CORPUS = ROOT / "tests" / "core" / "understanding" / "corpus.jsonl"
EXTRA = [
    "4090跑qwen3-coder-30b-a3b",
    "mistral small 3.2",
    "devstral small",
    "glm-4.6",
    "qwen2.5-vl-32b",
    "4090 hunyuan a13b",
    "4090 跑 seed-oss-36b",
    "4090 + 64gb ram gpt-oss-120b",
    "Can I run Kimi K2 on 4x 3090 + 512GB RAM",
    "4090 跑 glm-4.5-air 行不行,内存 128G",
    "qwen 3 32b on 4090 at 128k context with q8 kv",
    "部署需要几张A100的80G的卡",
    "两张A100/A800 80G",
    "My graphics card is 4060ti, can 16G run",
    "M4 Max 64G llama 3.3 70b",
    "RTX 3050 6G llama 3 8b",
    "Any chance to run 34b model on 3x4090",
    "8GB VRAM what's the biggest model I can run",
    "what gpu do i need for 70b",
    "4090 vs 5090 for qwen3 32b",
    "首 token 要多久 prompt 8k",
    "gemma 3 12b on rtx 2060 6gb",
    "5090 qwen3-235b-a22b",
    "M2 Ultra 192G deepseek v3",
    "1000x 4090 llama 3 8b",
    "4090 0G qwen3 8b",
    "",
    "help",
    "你好",
    "llama",
    "4090 llama speed",
    "RTX 9999 qwen3 8b",
    "V100 32G 27B 多少 token",
    "双3090 跑 llama3 70b q4 速度",
]
ESTIMATES: list[dict[str, Any]] = [
    {"gpu": "4090", "model": "qwen3 32b"},
    {"gpu": "4090", "model": "qwen3 32b", "quant": "Q4_K_M", "ctx": "32k", "kv_type": "q8_0"},
    {"gpu": "V100 32G", "model": "gemma 3 27b", "os": "linux"},
    {"gpu": "3090", "model": "llama 3 70b", "count": 2, "quant": "Q4_K_M"},
    {"gpu": "4090", "model": "gpt-oss-120b", "ram": 64},
    {"gpu": "M4 Max", "model": "llama 3.3 70b", "memory": 128},
    {"gpu": "A100 80G", "model": "deepseek v3", "count": 8, "framework": "vllm"},
    {"gpu": "rtx 2060", "model": "gemma 3 12b", "depth": 4096, "prompt": 2048},
    {"gpu": "RTX 6090", "model": "qwen3 8b"},
    {"gpu": "4090", "model": "nonexistent model 9000"},
    {"gpu": "4090"},
    "not an object",
]
FLOW = [
    ("carol", "/subscribe V100 32G"),
    ("carol", "/subscriptions"),
    ("alice", '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode=21.5 prefill=480'),
    ("alice", '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M decode=4000'),
    ("alice", '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M decode=6'),
    ("alice", '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode=21.5 prefill=480'),
    ("dave", '/submit gpu="2x 3090" model="qwen2.5 72b" quant=Q4_K_M decode=16.2'),
    ("dave", "/submit"),
    ("dave", "RTX 4090"),
    ("dave", "llama 3 8b"),
    ("dave", "Q4_K_M"),
    ("dave", "130"),
    ("erin", "/submit"),
    ("erin", "cancel"),
    ("erin", "/cancel"),
    (
        "frank",
        "| model | size | params | backend | ngl | test | t/s |\n"
        "| --- | --- | --- | --- | --- | --- | --- |\n"
        "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | pp512 | 11000.5 ± 20 |\n"
        "| llama 8B Q4_K - Medium | 4.58 GiB | 8.03 B | CUDA | 99 | tg128 | 150.2 ± 0.5 |",
    ),
    ("frank", "/submit 我的4090跑qwen3 8b q4_k_m 每秒 120 token"),
    ("bob", "/review"),
    ("bob", "/approve 1"),
    ("bob", "/reject 2 typo"),
    ("bob", "/review audit"),
    ("alice", "/approve 3"),
    ("bob", "/withdraw 1 measured with another build"),
    ("carol", "/accuracy"),
    ("carol", "/accuracy V100 32G"),
    ("bob", "/export csv"),
    ("bob", "/export json"),
    ("carol", "/export"),
    ("carol", "/help"),
    ("carol", "/help submit"),
    ("carol", "/帮助"),
    ("carol", "/nosuch"),
    ("carol", "V100 32G gemma 3 27b"),
    ("carol", "/unsubscribe V100 32G"),
    ("carol", "/subscribe all"),
    ("carol", "/unsubscribe all"),
    ("carol", "/subscribe 不存在的卡"),
]


def _response(r: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"text": r.text, "status": r.status}
    if r.buttons:
        out["buttons"] = [[(b.label, b.action, b.style) for b in row] for row in r.buttons]
    for name in ("private", "edit"):
        if getattr(r, name, False):
            out[name] = True
    prompt = getattr(r, "prompt", None)
    if prompt is not None:
        out["prompt"] = [prompt.title, prompt.command, prompt.placeholder]
    if getattr(r, "photo", None):
        out["photo"] = len(r.photo) > 0
    att = getattr(r, "attachment", None)
    if att is not None:
        out["attachment"] = [att.filename, att.mime, hashlib.sha256(att.data).hexdigest()[:16]]
    return out


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


async def _bot(catalog: Any, with_published: bool) -> Any:
    from core.anchors.anchor_index import AnchorIndex
    from core.anchors.seed import published_anchors
    from core.commands.context import BotContext, BotLimits
    from core.commands.router import CommandRouter
    from core.community.moderators import ModeratorPolicy
    from core.storage.memory import MemoryStorage

    storage = MemoryStorage()
    await storage.open()
    anchors = AnchorIndex.from_submissions([], catalog)
    if with_published:
        await storage.add_published(published_anchors(catalog))
        anchors = AnchorIndex.from_submissions(await storage.submissions(status="approved"), catalog)
    bot = BotContext(
        catalog=catalog,
        storage=storage,
        moderators=ModeratorPolicy.parse("console:bob,telegram:900"),
        limits=BotLimits.from_catalog(catalog),
        clock=Clock(),
        anchors=anchors,
    )
    return bot, CommandRouter(bot)


def _questions() -> list[str]:
    qs = [json.loads(line)["q"] for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return qs + EXTRA


async def snapshot(out: Any) -> int:
    from bot.cli.estimate import answer as estimate_answer
    from core.ask.answer import answer
    from core.catalog.loader import default_catalog
    from core.commands.types import Invocation, Where
    from core.render.notices import notice_text
    from core.storage.records import Actor

    catalog = default_catalog()
    bot, router = await _bot(catalog, with_published=True)
    n = 0

    def emit(kind: str, key: Any, value: Any) -> None:
        nonlocal n
        out.write(
            json.dumps({"kind": kind, "key": key, "value": value}, ensure_ascii=False, default=str) + "\n"
        )
        n += 1

    actor = Actor("console", "q", "Q")
    for q in _questions():
        emit("ask_json", q, answer(q, catalog).as_dict())
        for target in ("plain", "telegram", "discord"):
            responses = await router.handle_text(actor, Where("q", True), q, target=target)
            emit("reply", [q, target], [_response(r) for r in responses])
            if target != "plain":
                continue
            for button in (b for r in responses for row in r.buttons for b in row):
                pressed = await router.handle_action(Invocation(actor, Where("q", True), "", button.action))
                emit("button", [q, button.label], [_response(r) for r in pressed])
    for lang in ("en", "zh"):
        for req in ESTIMATES:
            emit("estimate_json", [lang, req], estimate_answer(req, lang))
    for lang in ("en", "zh"):
        bot, router = await _bot(catalog, with_published=False)
        for user, text in FLOW:
            platform = "telegram" if user == "dave" else "console"
            who = Actor(platform, "900" if (user == "bob" and platform == "telegram") else user, user.title())
            responses = await router.handle(router.parse(who, Where(user, True), text, lang=lang))
            emit("flow", [lang, user, text], [_response(r) for r in responses])
            for r in responses:
                if r.prompt is not None:
                    follow = await router.handle_text(who, Where(user, True), f"/{r.prompt.command} because")
                    emit("flow_prompt", [lang, user, text], [_response(x) for x in follow])
        for platform in ("console", "telegram"):
            items = await bot.storage.claim_outbox(platform, bot.clock() + timedelta(days=1), 1000)
            emit("outbox", [lang, platform], [(o.chat_id, o.kind, notice_text(o, catalog)) for o in items])
    return n


# Follow-up button keys are random (core.commands.context.FollowUps): "v:<view>:<key>[:<arg>]" is
# compared with the key replaced by a placeholder, so the same buttons compare equal.
_FOLLOWUP_KEY = re.compile(r'"v:([a-z]):[^:"]+')


# The 👍 / 👎 buttons carry a random key per answer ("h:u:1xZnOwN6"): no two runs share them.
_FEEDBACK_KEY = re.compile(r'"h:([ud]):[^"]*"')


def _normalised(line: str) -> str:
    return _FEEDBACK_KEY.sub(r'"h:\1:<key>"', _FOLLOWUP_KEY.sub(r'"v:\1:<key>', line))


def compare(before: Path, after: Path) -> int:
    a = [_normalised(line) for line in before.read_text(encoding="utf-8").splitlines()]
    b = [_normalised(line) for line in after.read_text(encoding="utf-8").splitlines()]
    diffs = [(i, x, y) for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y]
    for i, x, y in diffs[:10]:
        print(f"line {i + 1} differs:\n  before: {x[:400]}\n  after:  {y[:400]}")
    if len(a) != len(b):
        print(f"line counts differ: {len(a)} vs {len(b)}")
    print(f"{len(a)} records before, {len(b)} after, {len(diffs)} differ")
    return 1 if diffs or len(a) != len(b) else 0


def freeze_data(directory: Path) -> None:
    """Answer from `directory`'s gpus.toml and models.toml (and the live rest of catalogs/), so that
    a refactor can be checked while others add cards and models to the live catalog."""
    import shutil
    import tempfile

    from core.catalog import loader

    mixed = Path(tempfile.mkdtemp(prefix="golden-catalog-"))
    shutil.copytree(loader.CATALOG_DIR, mixed, dirs_exist_ok=True)
    for name in ("gpus.toml", "models.toml"):
        shutil.copy(directory / name, mixed / name)
    frozen = loader.load_catalog(mixed)
    loader.default_catalog = lambda: frozen  # type: ignore[assignment]


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?")
    ap.add_argument("--freeze-data", type=Path, metavar="DIR", help="gpus.toml and models.toml from DIR")
    ap.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"))
    args = ap.parse_args()
    if args.compare:
        return compare(Path(args.compare[0]), Path(args.compare[1]))
    if not args.out:
        ap.error("give OUT.jsonl or --compare BEFORE AFTER")
    if args.freeze_data:
        freeze_data(args.freeze_data)
    with open(args.out, "w", encoding="utf-8") as fh:
        n = asyncio.run(snapshot(fh))
    print(f"{n} records written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
