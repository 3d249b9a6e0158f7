"""Start-up cost of the bot process, without platform tokens.

Figures (each in a fresh interpreter, median of --runs):
- import time of what `python -m bot run` imports before doing any work (bot.cli.main, bot.runner,
  bot.app and through it core), against a bare interpreter;
- resident memory (VmRSS, and the peak VmHWM) of a process that does what `run` does as a service:
  settings, build_app, app.start (SQLite open + migrations + published anchors), the outbox worker
  and the /metrics + /healthz server, probed once over HTTP;
- whether discord / telegram were imported: they must not be without a token.

Usage: .venv/bin/python scripts/bench_startup.py [--runs 5] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

_IMPORTS = """
import sys, time
t0 = time.perf_counter()
from core.cache import dataclass_code  # as bot/__main__.py does first
dataclass_code.install()
import bot.cli.main, bot.runner, bot.app  # noqa: E401
ms = (time.perf_counter() - t0) * 1000
print(ms, len([m for m in sys.modules if m.split('.')[0] in ('bot', 'core')]))
"""

_SERVICE = r"""
import asyncio, json, socket, sys, time
t0 = time.perf_counter()
from core.cache import dataclass_code  # as bot/__main__.py does first
dataclass_code.install()
from bot.app import build_app
from bot.runner import Service
from bot.settings import load_settings


def rss_kib():
    status = open('/proc/self/status').read().split('\n')
    wanted = [line for line in status if line.startswith(('VmRSS', 'VmHWM'))]
    pick = {line.split(':')[0]: int(line.split()[1]) for line in wanted}
    return pick['VmRSS'], pick['VmHWM']


async def main():
    with socket.socket() as s:  # a free port (settings' 0 means "no server")
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
    settings = load_settings(db_path=sys.argv[1], metrics_port=port)
    app = build_app(settings)
    service = Service(app, [], metrics_host='127.0.0.1', metrics_port=port)
    task = asyncio.create_task(service.run())
    reader = writer = None
    for _ in range(500):
        try:
            reader, writer = await asyncio.open_connection('127.0.0.1', port)
            break
        except OSError:
            await asyncio.sleep(0.01)
    ready_ms = (time.perf_counter() - t0) * 1000
    writer.write(b'GET /healthz HTTP/1.0\r\nHost: x\r\n\r\n')
    await writer.drain()
    head = (await reader.read()).split(b'\r\n', 1)[0].decode()
    writer.close()
    rss, hwm = rss_kib()
    mods = set(sys.modules)
    service.stop()
    code = await task
    print(json.dumps({'ready_ms': ready_ms, 'rss_kib': rss, 'peak_kib': hwm, 'health': head, 'exit': code,
                      'discord': 'discord' in mods, 'telegram': 'telegram' in mods,
                      'aiohttp': 'aiohttp' in mods, 'modules': len(mods)}))


asyncio.run(main())
"""


def _env() -> dict[str, str]:
    # No token may leak in from the caller's environment: this measures the token-less process.
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKBOT_")}
    env["PYTHONPATH"] = str(ROOT)
    env["TOKBOT_LOG_LEVEL"] = "WARNING"
    return env


def _python(code: str, *args: str, cwd: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, env=_env(), cwd=cwd, timeout=300
    )
    if proc.returncode != 0:
        raise SystemExit(f"benchmark child failed:\n{proc.stderr}")
    return proc.stdout.strip().splitlines()[-1]


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as tmp:  # cwd without a .env; a fresh database per run
        _python("import bot.app; print(1)", cwd=tmp)  # warm the disk cache: no outlier first run
        imports, modules = [], 0
        for _ in range(args.runs):
            ms, modules_text = _python(_IMPORTS, cwd=tmp).split()
            imports.append(float(ms))
            modules = int(modules_text)
        services = [
            json.loads(_python(_SERVICE, str(Path(tmp) / f"bench-{i}.db"), cwd=tmp)) for i in range(args.runs)
        ]

    figures = {
        "import_ms_median": round(statistics.median(imports), 1),
        "import_ms_min": round(min(imports), 1),
        "bot_core_modules": modules,
        "service_ready_ms_median": round(statistics.median(s["ready_ms"] for s in services), 1),
        "service_rss_mib_median": round(statistics.median(s["rss_kib"] for s in services) / 1024, 1),
        "service_peak_mib_max": round(max(s["peak_kib"] for s in services) / 1024, 1),
        "health": services[0]["health"],
        "clean_exit": all(s["exit"] == 0 for s in services),
        "discord_imported": any(s["discord"] for s in services),
        "telegram_imported": any(s["telegram"] for s in services),
        "modules_loaded": services[0]["modules"],
        "runs": args.runs,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(
            f"import bot + core (what `run` imports first): {figures['import_ms_median']} ms median, "
            f"{figures['import_ms_min']} ms min, {modules} bot/core modules"
        )
        print(
            f"service start (build_app + app.start + worker + /metrics server) until the port answers: "
            f"{figures['service_ready_ms_median']} ms median (from interpreter ready)"
        )
        print(
            f"resident memory after start: {figures['service_rss_mib_median']} MiB median RSS, "
            f"peak {figures['service_peak_mib_max']} MiB; {figures['modules_loaded']} modules loaded"
        )
        print(f"/healthz: {figures['health']}; clean exit on stop: {figures['clean_exit']}")
        print(
            f"discord imported: {figures['discord_imported']}; telegram imported: "
            f"{figures['telegram_imported']} (both must be False without tokens)"
        )
    return 0 if not (figures["discord_imported"] or figures["telegram_imported"]) else 1


if __name__ == "__main__":
    sys.exit(main())
