"""The console runs the whole command set over one database, one user at a time, like a chat."""

from __future__ import annotations

import asyncio
import io
from argparse import Namespace

import pytest

from bot.cli.console import run_console


@pytest.fixture
def db(tmp_path, monkeypatch):
    monkeypatch.setenv("TOKBOT_MODERATORS", "console:bob")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("TOKBOT_OUT_DIR", str(tmp_path / "out"))
    return str(tmp_path / "t.db")


def session(db: str, user: str, *lines: str) -> str:
    out = io.StringIO()
    stdin = io.StringIO("".join(f"{line}\n" for line in lines))
    assert run_console(Namespace(user=user, db=db), stdin, out) == 0
    return out.getvalue()


def test_questions_help_and_quit(db):
    text = session(db, "alice", "V100 32G 27B 多少 token", "/help", "/bogus", "/quit", "never read")
    assert "gemma-3-27b" in text and "llama-server" in text
    assert "/submit key=value" in text and "/subscribe" in text
    assert "There is no /bogus command." in text
    assert "never read" not in text


def test_submit_review_approve_notify_flow(db):
    assert "Subscribed" in session(db, "carol", "/subscribe V100 32G")
    out = session(db, "alice", '/submit gpu="V100 32G" model="gemma 3 27b" quant=Q4_K_M ctx=8k decode=21.5')
    assert "Received as #" in out
    sid = out.split("Received as #")[1].split(":")[0]
    refused = session(db, "alice", f"/approve {sid}")
    assert "Only moderators" in refused
    review = session(db, "bob", "/review", "!1")
    assert f"#{sid}" in review and f"Approved #{sid}" in review
    carol = session(db, "carol", "")
    assert f"New measured anchor #{sid}" in carol and "(by alice)" in carol
    assert "New measured anchor" not in session(db, "carol", ""), "a notice is shown once"
    alice = session(db, "alice", "V100 32G gemma 3 27b")
    assert f"Your measurement #{sid} was approved" in alice
    assert "by alice" in alice and "calibrated by 1 community measurement" in alice


def test_reject_prompt_takes_next_line_as_reason(db):
    out = session(db, "alice", '/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M decode=120')
    sid = out.split("Received as #")[1].split(":")[0]
    bob = session(db, "bob", f"/reject {sid}", "no command line given")
    assert "Why reject" in bob and f"Rejected #{sid}" in bob
    assert "not approved: no command line given" in session(db, "alice", "")


def test_guided_submit_dialogue(db):
    out = session(db, "dave", "/submit", "RTX 4090", "llama 3 8b", "Q4_K_M", "131")
    assert "Which card" in out and "Which model" in out and "Which quantization" in out
    assert "Received as #" in out


def test_export_writes_file_for_moderators(db, tmp_path):
    out = session(db, "bob", "/export json")
    assert "measured anchors as JSON" in out
    assert (tmp_path / "out" / "tokbot-anchors.json").stat().st_size > 1000
    assert not (tmp_path / "tokbot-anchors.json").exists(), "never the working directory"


def test_backslash_continues_a_pasted_llama_bench_table(db):
    table = [
        '/submit gpu=4090 model="llama 3.1 8b" \\',
        "| model                          |       size |     params | backend    | ngl |            test |"
        "                  t/s | \\",
        "| ------------------------------ | ---------: | ---------: | ---------- | --: | --------------: |"
        " -------------------: | \\",
        "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           pp512 |"
        "      9273.25 ± 23.57 | \\",
        "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 |           tg128 |"
        "        127.41 ± 0.15 |",
    ]
    out = session(db, "erin", *table)
    assert "Received as #" in out and "Q4_K_M" in out and "decode 127.41 tok/s" in out


async def test_a_running_bot_picks_up_anchors_approved_elsewhere(db):
    from pathlib import Path

    from bot.app import build_app, refresh_anchors
    from bot.settings import Settings

    settings = Settings(_env_file=None, db_path=Path(db), moderators="console:bob")  # type: ignore[call-arg]
    app = build_app(settings)
    await app.start()
    try:
        before = len(app.bot.anchors)
        assert await refresh_anchors(app) is False, "nothing changed yet"
        # Another process (the console of a moderator) approves a submission on the same database.
        # (A console session runs its own event loop: in a thread here, as it would be another process.)
        line = '/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M decode=120'
        out = await asyncio.to_thread(session, db, "alice", line)
        sid = out.split("Received as #")[1].split(":")[0]
        await asyncio.to_thread(session, db, "bob", f"/approve {sid}")
        assert await refresh_anchors(app) is True
        assert len(app.bot.anchors) == before + 1 and int(sid) in app.bot.anchors
    finally:
        await app.close()


def test_a_command_typed_instead_of_the_prompts_answer_runs_and_drops_the_question(db):
    out = session(db, "alice", '/submit gpu=4090 model="llama 3 8b" quant=Q4_K_M decode=120')
    sid = out.split("Received as #")[1].split(":")[0]
    bob = session(db, "bob", f"/reject {sid}", "/help", "no command line given")
    assert "Why reject" in bob and "/submit" in bob, "/help ran as a command"
    assert f"Rejected #{sid}" not in bob, "the question was dropped: the last line is a question to tokbot"


def test_an_answer_keeps_its_buttons_after_one_is_pressed(db):
    # A V100 runs headless Linux: no OS switch among its buttons, so 👍 / 👎 are !7 / !8.
    out = session(db, "alice", "V100 32G gemma 3 27b", "!2", "!3", "!7", "!8", "!2")
    assert "[!7 👍 Helpful] [!8 👎 Not helpful]" in out
    assert "no button" not in out, "every button of the answer still works after the first press"
    assert "Thanks: noted as helpful." in out and "Changed: now noted as not helpful" in out
    assert out.count("llama-server") >= 3, "the frameworks view, twice"


def test_review_cards_stay_until_each_is_decided(db):
    sids = []
    for model, decode in (("llama 3 8b", 120), ("qwen2.5 7b", 130), ("gemma 3 27b", 40)):
        out = session(db, "alice", f'/submit gpu=4090 model="{model}" quant=Q4_K_M decode={decode}')
        sids.append(out.split("Received as #")[1].split(":")[0])
    # Cards: #1 [!1 approve][!2 reject], #2 [!3][!4], #3 [!5][!6]. Approve the first, reject the third
    # (its reason on the next line), then approve the second: each card's buttons outlive the others'.
    bob = session(db, "bob", "/review", "!1", "!6", "no log attached", "!3", "!1")
    assert f"Approved #{sids[0]}" in bob and f"Rejected #{sids[2]}" in bob and f"Approved #{sids[1]}" in bob
    assert bob.rstrip().endswith("no button !1"), "a decided card's buttons are gone"
