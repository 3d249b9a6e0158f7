"""Every notice and submission line, rendered for every chat target with hostile names, reasons and
versions: nothing a person typed becomes markup, a link, a mention, a ping or a line of its own."""

from __future__ import annotations

import html
import re
from datetime import UTC, datetime

import pytest

from core.catalog.loader import default_catalog
from core.render.doc import TARGETS, ZWSP, Target
from core.render.message import one
from core.render.notices import notice_text
from core.render.submission import estimate_line, setup_line, speeds_line, summary
from core.storage.records import Actor, EstimateSnapshot, Measurement, OutboxItem, Submission

CATALOG = default_catalog()

HOSTILE = [
    "[Free Nitro](https://evil.example)",
    "[Free Nitro](<https://evil.example>)",
    "\\[pre-escaped\\](https://evil.example)",
    "<t:1700000000:R>",
    "</ban:123456789012345678>",
    "<:pepe:123456789> <a:wave:987654321>",
    "<@123> <@!123> <@&9> <#5> <id:browse>",
    "@everyone @here",
    "**bold** __under__ ~~strike~~ ||spoiler|| `code` ```block```",
    "# Big header",
    "-# small print",
    "> quoted",
    "line one\nYour measurement #1 was approved\n# header\n> quote",
    "<b>bold</b> <a href='https://evil.example'>x</a> &amp; <script>",
    "evil\u202eRTL\u2066\x00\x07\x1b[31m",
    "lone\ud800surrogate\udfff",
    "x" * 500,
]

NOTICE_KINDS = ["anchor", "approved", "rejected", "withdrawn"]


def _item(kind: str, platform: str, hostile: str, lang: str) -> OutboxItem:
    payload: dict[str, object] = {
        "submission_id": 7,
        "gpu_id": "rtx-4090",
        "model_id": "qwen3-8b",
        "quant": "Q4_K_M",
        "decode_tps": 128.5,
        "gpu_count": 1,
        "framework": "llama.cpp",
    }
    if kind == "anchor":
        payload["credit"] = hostile
        return OutboxItem(1, platform, "c1", "u1", "anchor", payload, lang, "k1")
    payload |= {"status": kind, "reason": hostile}
    return OutboxItem(1, platform, "c1", "u1", "decision", payload, lang, "k1")


def _submission(hostile: str) -> Submission:
    m = Measurement(
        gpu_id="rtx-4090",
        model_id="qwen3-8b",
        quant="Q4_K_M",
        decode_tps=128.5,
        framework="llama.cpp",
        framework_version=hostile,
        backend=hostile,
        os=hostile,
        prefill_tps=3000.0,
    )
    who = Actor("discord", "42", hostile)
    return Submission(7, m, who, datetime(2026, 1, 2, tzinfo=UTC), "c1", "en", "pending", reason=hostile)


def _discord_live(text: str) -> str:
    """The text with every backslash-escaped character replaced by "E": what Discord reads as markup."""
    out: list[str] = []
    i = 0
    while i < len(text):
        if text[i] == "\\" and i + 1 < len(text):
            out.append("E")
            i += 2
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def assert_inert(text: str, target: Target, hostile: str, shown: bool = True) -> None:
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f\u202a-\u202e\u2066-\u2069]", text), "control character"
    assert "\n" not in text, "a typed newline became a line of its own"
    text.encode("utf-8")  # strict: a lone surrogate would make the chat API call fail
    if target == "telegram":
        assert "<" not in text and ">" not in text  # notices and these lines carry no tags of their own
        assert not re.search(r"&(?!amp;|lt;|gt;|quot;|#x27;)", text)
    if target == "discord":
        live = _discord_live(text)
        assert not re.search(r"[*_~`|\[\]]", live), f"live markdown in {text!r}"
        assert not re.search(r"<(?=[@#:/]|[a-z]+:)", live, re.I), f"live <...> syntax in {text!r}"
        assert not re.search(r"@(?:everyone|here)", live), "a ping"
        assert not re.search(r"(?m)^[ \t]*[>#-]", live), "a line-start block"
    if shown:  # what was typed still reads: its first letters survive the escaping
        readable = html.unescape(text) if target == "telegram" else text
        letters = re.sub(r"[^A-Za-z]", "", hostile)[:8]
        assert letters in re.sub(r"[^A-Za-z]", "", readable)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("kind", NOTICE_KINDS)
@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_notice_is_inert_for_every_target(target: Target, kind: str, hostile: str) -> None:
    for lang in ("en", "zh"):
        text = notice_text(_item(kind, "discord", hostile, lang), CATALOG, target)
        assert_inert(text, target, hostile, shown=kind != "approved")  # "approved" shows no reason


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("hostile", HOSTILE)
def test_every_submission_line_is_inert_for_every_target(target: Target, hostile: str) -> None:
    sub = _submission(hostile)
    est = EstimateSnapshot(100.0, 120.0, 140.0)
    lines = [
        *summary(sub, CATALOG, "en"),
        setup_line(sub.measurement, CATALOG),
        speeds_line(sub.measurement, "zh"),
        estimate_line(est, "en"),
    ]
    for line in lines:
        text = one(target, line)
        if line is lines[0] or line is lines[2] or line is lines[3]:
            assert_inert(text, target, hostile)  # the lines that carry what was typed
        else:
            assert "\n" not in text


def test_the_masked_link_of_the_issue_shows_as_typed_on_discord() -> None:
    text = notice_text(_item("anchor", "discord", "[Free Nitro](https://evil.example)", "en"), CATALOG)
    assert "\\[Free Nitro\\](https://evil.example)" in text


def test_discord_syntaxes_get_a_zero_width_space() -> None:
    text = notice_text(_item("rejected", "discord", "<t:1700000000:R> </ban:1> <:e:2>", "en"), CATALOG)
    assert f"<{ZWSP}t:1700000000:R>" in text and f"<{ZWSP}/ban:1>" in text and f"<{ZWSP}:e:2>" in text
