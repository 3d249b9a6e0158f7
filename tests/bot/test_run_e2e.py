"""`python -m bot run` as a real process against the fake Telegram Bot API on 127.0.0.1: it answers,
serves /healthz and /metrics, logs JSON without the token, and exits 0 on SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import sys
from pathlib import Path

from aiohttp import ClientSession

ROOT = Path(__file__).resolve().parents[2]
from tests.fakes.telegram_api import FakeTelegram  # noqa: E402


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def wait_http(url: str, proc: asyncio.subprocess.Process, timeout: float = 60.0) -> tuple[int, str]:
    async with ClientSession() as http:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            if proc.returncode is not None:
                raise AssertionError(f"bot exited early with {proc.returncode}")
            try:
                async with http.get(url) as resp:
                    return resp.status, await resp.text()
            except OSError:
                if asyncio.get_running_loop().time() > deadline:
                    raise
                await asyncio.sleep(0.1)


async def test_run_with_a_telegram_token_serves_and_stops_on_sigterm(tmp_path):
    fake = FakeTelegram()
    await fake.start()
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKBOT_")} | {
        "PYTHONPATH": str(ROOT),
        "TOKBOT_TELEGRAM_TOKEN": fake.token,
        "TOKBOT_TELEGRAM_API_URL": fake.base_url,
        "TOKBOT_TELEGRAM_FILE_URL": fake.file_url,
        "TOKBOT_DB_PATH": str(tmp_path / "bot.db"),
        "TOKBOT_METRICS_PORT": str(port),
        "TOKBOT_LOG_LEVEL": "DEBUG",  # the most talkative level must still not leak the token
    }
    # Logs go to a file, not a pipe: a DEBUG-level bot fills a pipe nobody reads yet and blocks.
    log_path = tmp_path / "stderr.log"
    with log_path.open("wb") as log_file:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bot",
            "run",
            cwd=tmp_path,
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=log_file,
        )
    try:
        status, body = await wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        for _ in range(100):  # the adapter may still be connecting when the server first answers
            if json.loads(body)["adapters"].get("telegram"):
                break
            await asyncio.sleep(0.1)
            status, body = await wait_http(f"http://127.0.0.1:{port}/healthz", proc)
        health = json.loads(body)
        assert status == 200 and health["status"] == "ok" and health["adapters"] == {"telegram": True}
        assert health["db"] is True and health["worker"] is True

        alice = fake.user(1001, "Alice")
        fake.message(alice, "V100 32G gemma 3 27b")
        [reply] = await fake.wait_sent(1, timeout=30)
        assert "llama-server" in reply.text

        _, metrics = await wait_http(f"http://127.0.0.1:{port}/metrics", proc)
        assert 'tokbot_questions_total{command="ask",platform="telegram",status="ok"} 1.0' in metrics
        assert 'tokbot_adapter_up{platform="telegram"} 1.0' in metrics

        proc.send_signal(signal.SIGTERM)
        await asyncio.wait_for(proc.wait(), 60)
    finally:
        if proc.returncode is None:
            proc.kill()
            await proc.wait()
        await fake.stop()
    log = log_path.read_text(encoding="utf-8")
    assert proc.returncode == 0, log[-3000:]
    assert fake.token not in log and fake.token.split(":")[1] not in log
    lines = [json.loads(line) for line in log.splitlines() if line.startswith("{")]
    assert lines and all({"ts", "level", "logger", "msg"} <= set(entry) for entry in lines)
    messages = [entry["msg"] for entry in lines]
    assert "tokbot running" in messages and messages[-1] == "tokbot stopped"
    assert "Traceback" not in log
