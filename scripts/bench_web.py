"""Server time per answer page (prints figures; never a test).

    .venv/bin/python scripts/bench_web.py [--n 200] [--rounds 2]

The first N questions of tests/core/understanding/corpus.jsonl that get a full answer page are asked
as `GET /ask?q=…` through the real ASGI app (bot/web, the published anchors loaded, an in-memory
store), in-process via httpx's ASGITransport, so no socket or browser time is counted. Reports the
server's own time per page (the `Server-Timing: app;dur=` header: request in to first byte out),
p50 / p99 / max, for the first time each question is asked ("new": reading, estimate, page, render)
and again ("repeat": the core's caches warm). The chart (an image loaded by the page on its own)
and /accuracy are timed once each for scale.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("TOKBOT_CACHE_DIR", "off")

CORPUS = ROOT / "tests" / "core" / "understanding" / "corpus.jsonl"


def questions() -> list[str]:
    return [json.loads(line)["q"] for line in CORPUS.read_text(encoding="utf-8").splitlines() if line.strip()]


def pct(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(p / 100 * (len(ordered) - 1))))]


def server_ms(response: object) -> float:
    timing = response.headers["server-timing"]  # type: ignore[attr-defined]
    return float(timing.split("dur=")[1])


async def bench(n: int, rounds: int) -> None:
    import httpx

    from bot.app import build_app
    from bot.settings import load_settings
    from bot.web.app import create_app
    from core.storage.memory import MemoryStorage

    app = build_app(load_settings(), storage=MemoryStorage())
    await app.start()
    web = create_app(app)
    transport = httpx.ASGITransport(app=web)
    async with httpx.AsyncClient(transport=transport, base_url="http://bench") as client:
        chosen: list[str] = []
        for q in questions():  # the questions whose page is a full answer (a table, a plan)
            r = await client.get("/ask", params={"q": q})
            if 'id="table"' in r.text:
                chosen.append(q)
            if len(chosen) == n:
                break
        from core.ask.answer import clear_caches

        for label in ("new", *(["repeat"] * (rounds - 1))):
            if label == "new":
                clear_caches()  # the selection pass above warmed them
            times = []
            for q in chosen:
                r = await client.get("/ask", params={"q": q})
                assert r.status_code == 200
                times.append(server_ms(r))
            print(
                f"/ask {label:6} n={len(times)}: p50 {pct(times, 50):.1f} ms, p99 {pct(times, 99):.1f} ms, "
                f"max {max(times):.1f} ms"
            )
        started = time.perf_counter()
        r = await client.get("/chart.svg", params={"q": chosen[0]})
        print(f"/chart.svg (first draw, a thread): {server_ms(r):.0f} ms; cached: ", end="")
        r = await client.get("/chart.svg", params={"q": chosen[0]})
        print(f"{server_ms(r):.1f} ms")
        r = await client.get("/accuracy")
        print(f"/accuracy (first draw): {server_ms(r):.0f} ms; ", end="")
        r = await client.get("/accuracy")
        print(f"again: {server_ms(r):.1f} ms (wall for all of these {time.perf_counter() - started:.1f} s)")
    await app.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    asyncio.run(bench(args.n, args.rounds))
    return 0


if __name__ == "__main__":
    sys.exit(main())
