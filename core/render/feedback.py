""" "Was this helpful?" as text: the reply's first lines kept with a vote, the helpful share in
/accuracy, and the 👎 answers moderators read in /review feedback."""

from __future__ import annotations

import html
import re

from core.i18n import Lang, translate
from core.render.message import one
from core.storage.records import Feedback, FeedbackCounts

REPLY_LINES = 4  # what a moderator needs to see which answer it was; the question says the rest
REPLY_CHARS = 400
_TAG = re.compile(r"<[^>]+>")
_MARKS = re.compile(r"```\w*|\*\*|__|`")


def plain_head(text: str, target: str, lines: int = REPLY_LINES) -> str:
    """The first non-blank lines of a reply rendered for `target`, as plain text (no HTML, no
    Markdown marks): what is stored with a vote, so it reads the same whichever chat it came from."""
    if target == "telegram":
        text = html.unescape(_TAG.sub("", text))
    elif target == "discord":
        text = _MARKS.sub("", text)
    kept = [line.rstrip() for line in text.splitlines() if line.strip()][:lines]
    return "\n".join(kept)[:REPLY_CHARS]


def helpful_line(counts: FeedbackCounts, lang: Lang) -> str:
    """One line for /accuracy: the readers' verdict on the answers (nothing said without votes)."""
    if counts.total == 0:
        return translate("feedback.share.none", lang)
    share = round(100 * counts.helpful / counts.total)
    return translate("feedback.share", lang, share=share, up=counts.helpful, down=counts.unhelpful)


def unhelpful_text(votes: list[Feedback], total: int, lang: Lang, target: str) -> str:
    """/review feedback: the answers voted 👎, newest first, each with its question and first lines."""
    if not votes:
        return one(target, translate("feedback.review.empty", lang))
    lines = [translate("feedback.review.header", lang, shown=len(votes), total=total)]
    for vote in votes:
        when = vote.at.strftime("%Y-%m-%d %H:%M")
        who = vote.voter.name or vote.voter.user_id
        version = vote.engine_version or "-"
        item = translate(
            "feedback.review.item",
            lang,
            when=when,
            platform=vote.voter.platform,
            who=who,
            question=vote.question,
            version=version,
        )
        lines.append(item)
        lines += [f"    {line}" for line in vote.reply.splitlines()]
    return one(target, *lines)
