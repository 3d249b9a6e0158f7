"""`python -m bot web`, `python -m bot run` with TOKBOT_WEB_PORT, the chat's "Full page" link and
`帮助` (issue 25)."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _env(tmp: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TOKBOT_")}
    env.update(TOKBOT_CACHE_DIR="off", TOKBOT_DB_PATH=str(tmp / "t.db"), TOKBOT_METRICS_PORT="0", **extra)
    return env


def _get(url: str, timeout: float = 20.0) -> bytes:
    deadline = time.monotonic() + timeout
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return bytes(response.read())
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _serve_and_stop(cmd: list[str], env: dict[str, str], port: int) -> tuple[int, bytes, bytes]:
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        health = _get(f"http://127.0.0.1:{port}/healthz")
        page = _get(f"http://127.0.0.1:{port}/ask?q=4090%20qwen3%2032b")
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=30)
    assert json.loads(health) == {"status": "ok", "db": True}
    return proc.returncode, health, page


def test_bot_web_serves_and_stops_on_sigterm(tmp_path: Path) -> None:
    port = _free_port()
    cmd = [sys.executable, "-m", "bot", "web", "--port", str(port), "--db", str(tmp_path / "w.db")]
    code, _, page = _serve_and_stop(cmd, _env(tmp_path), port)
    assert code == 0 and b"GeForce RTX 4090" in page


def test_bot_run_serves_the_web_when_its_port_is_set(tmp_path: Path) -> None:
    port = _free_port()
    env = _env(tmp_path, TOKBOT_WEB_PORT=str(port))
    code, _, page = _serve_and_stop([sys.executable, "-m", "bot", "run"], env, port)
    assert code == 0 and b'id="table"' in page


def _ask(tmp: Path, question: str, **extra: str) -> str:
    cmd = [sys.executable, "-m", "bot", "ask", question]
    return subprocess.run(cmd, cwd=ROOT, env=_env(tmp, **extra), capture_output=True, text=True).stdout


def test_full_page_link_only_when_the_public_url_is_set(tmp_path: Path) -> None:
    plain = _ask(tmp_path, "V100 32G 27B 多少 token")
    assert "完整页面" not in plain and "Full page" not in plain
    linked = _ask(tmp_path, "V100 32G 27B 多少 token", TOKBOT_PUBLIC_URL="https://tok.example.org/")
    assert "完整页面:https://tok.example.org/ask?q=V100+32G+27B+%E5%A4%9A%E5%B0%91+token&lang=zh" in linked
    assert linked.replace(linked.splitlines()[-4] + "\n", "", 1) == plain  # the link is the one new line


def test_help_word_alone_gets_the_whole_help(tmp_path: Path) -> None:
    text = _ask(tmp_path, "帮助")
    assert "可以这样问" in text and "对比两张卡或两个模型" in text and "/submit" in text
