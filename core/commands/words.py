"""Words the command layer recognises in what people type, each list in one place."""

from __future__ import annotations

# End a guided /submit: typed as a line, or as a command ("/cancel", "/stop").
CANCEL_WORDS: frozenset[str] = frozenset({"cancel", "stop", "quit", "取消", "算了", "退出"})
# "Every new anchor" for /subscribe and /unsubscribe; the first is what completion offers.
EVERYTHING = "all"
EVERYTHING_WORDS: frozenset[str] = frozenset({EVERYTHING, "everything", "*", "全部", "所有", "全部订阅"})
# /review's argument for the audit log instead of the pending queue.
AUDIT_WORDS: frozenset[str] = frozenset({"audit", "log", "日志"})
# After it, which entries: only the decisions, or only the refused attempts (else both).
AUDIT_DECISION_WORDS: frozenset[str] = frozenset({"decisions", "decision", "decided", "决定", "审核"})
AUDIT_REFUSED_WORDS: frozenset[str] = frozenset({"refused", "refusals", "denied", "拒绝", "越权"})

# A question that is only a call for help ("帮助", "help"): answered with /help's whole list.
HELP_WORDS: frozenset[str] = frozenset({"help", "帮助", "说明", "怎么用", "使用说明", "?", "？", "/?"})


def is_help_word(text: str) -> bool:
    return text.strip().lower().rstrip("!！。.") in HELP_WORDS


def is_cancel(text: str) -> bool:
    return text.strip().lower().removeprefix("/") in CANCEL_WORDS
