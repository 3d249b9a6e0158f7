"""Notices are rendered in the markup their platform's notifier sends, in the recipient's language."""

from __future__ import annotations

from core.catalog.loader import default_catalog
from core.render.doc import fits
from core.render.notices import notice_line, notice_target, notice_text
from core.storage.records import OutboxItem

CATALOG = default_catalog()

PAYLOAD = {
    "submission_id": 3,
    "gpu_id": "rtx-4090",
    "model_id": "qwen3-8b",
    "quant": "Q4_K_M",
    "decode_tps": 99.5,
}


def _anchor(platform: str, credit: str, lang: str = "en") -> OutboxItem:
    return OutboxItem(1, platform, "c", "u", "anchor", {**PAYLOAD, "credit": credit}, lang, "k")


def test_each_platform_gets_the_markup_its_notifier_sends() -> None:
    assert notice_target("discord") == "discord"
    assert notice_target("telegram") == "plain"  # sent without a parse mode
    assert notice_target("console") == "plain"
    assert notice_target("matrix") == "plain"


def test_discord_escapes_the_credit_telegram_shows_it_as_typed() -> None:
    name = "q_bert *fast*"
    assert "q\\_bert \\*fast\\*" in notice_text(_anchor("discord", name), CATALOG)
    assert "q_bert *fast*" in notice_text(_anchor("telegram", name), CATALOG)


def test_anchor_notice_reads_in_both_languages() -> None:
    en = notice_text(_anchor("telegram", "Ann"), CATALOG)
    zh = notice_text(_anchor("telegram", "Ann", "zh"), CATALOG)
    assert "#3" in en and "Ann" in en and "/unsubscribe" in en
    assert "#3" in zh and "Ann" in zh and "实测锚点" in zh


def test_a_reason_is_one_line_and_a_long_one_still_fits() -> None:
    reason = "bad\nYour measurement #9 was approved " + "x" * 5000
    payload = {**PAYLOAD, "status": "rejected", "reason": reason}
    item = OutboxItem(1, "discord", "c", "u", "decision", payload, "en", "k")
    assert "\n" not in notice_line(item, CATALOG)
    for target in ("plain", "telegram", "discord"):
        assert fits(notice_text(item, CATALOG, target), target)


def test_a_missing_credit_shows_a_placeholder() -> None:
    assert "(by ?)" in notice_text(_anchor("console", "  \n "), CATALOG)
