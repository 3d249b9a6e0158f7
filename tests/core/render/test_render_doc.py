"""Escaping and alignment per chat target: nothing a user typed can break a block or ping anyone."""

from __future__ import annotations

from core.render.doc import ZWSP, Cmd, Para, Pre, display_width, fits, pad_block, render, truncate


def test_pad_block_makes_a_rectangle() -> None:
    lines = pad_block(["ab", "abcd  ", "a"])
    assert {display_width(line) for line in lines} == {4}


def test_display_width_counts_wide_characters() -> None:
    assert display_width("装不下") == 6
    assert display_width("ab\x07") >= 2  # control characters never make the width negative


def test_telegram_escapes_html_everywhere() -> None:
    doc = (Para("<b>hi</b> & <script>"), Pre(("a<b",)), Cmd("echo '<x>' && ls"))
    text = render(doc, "telegram")
    assert "<b>hi" not in text and "&lt;b&gt;hi&lt;/b&gt; &amp; &lt;script&gt;" in text
    assert "<pre>a&lt;b</pre>" in text
    assert "&amp;&amp;" in text
    assert text.count("<pre>") == text.count("</pre>") == 2


def test_discord_defuses_mentions_in_prose_and_blocks() -> None:
    doc = (Para("@everyone @here <@123> <@&9> <#5>"), Pre(("@everyone",)), Cmd("<@42>"))
    text = render(doc, "discord")
    for raw in ("@everyone", "@here", "<@123>", "<@&9>", "<#5>", "<@42>"):
        assert raw not in text
    assert f"@{ZWSP}everyone" in text


def test_discord_backticks_cannot_close_a_block() -> None:
    text = render((Pre(("```", "a`b")), Para("```evil```")), "discord")
    # Exactly the fences we opened: one block, two fence lines.
    assert text.count("```") == 2
    assert "\\`\\`\\`evil" in text


def test_discord_escapes_markdown_in_prose() -> None:
    text = render((Para("Q4_K_M *bold* ~~x~~ [link](http://a) > quote"),), "discord")
    assert "Q4\\_K\\_M" in text and "\\*bold\\*" in text and "\\[link\\]" in text


def test_control_and_bidi_characters_are_dropped() -> None:
    text = render((Para("a\x00b\u202ec"),), "plain")
    assert text == "abc"


def test_truncate_respects_the_limit() -> None:
    doc = tuple(Para("x" * 300) for _ in range(20))
    for target in ("discord", "telegram", "plain"):
        assert fits(truncate(doc, target), target)
    assert fits(truncate((Para("y" * 10_000),), "discord"), "discord")
