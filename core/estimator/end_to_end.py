"""The end-to-end output rate of "N tokens in, M out" (issue 23): what a serving client measures.

A client that times a whole request sees M tokens over the time to first token plus M decode steps,
so its output rate is M / (ttft + M / decode), below pure decode by the prefill's share. The row's
decode figure is priced at the row's depth, which already stands for the average over a reply, so it
is used as it is (no second depth slowdown). The range pairs the slow ends of both (low) and the fast
ends (high); a row's time to first token is one figure, its spread is the prefill range's.
"""

from __future__ import annotations

from dataclasses import dataclass

from core.estimator.estimate import Range, Row


@dataclass(frozen=True, slots=True)
class EndToEnd:
    output: int  # tokens out
    tps: Range  # output tok/s over the whole request, prefill included
    seconds: float  # the whole request at the mid figures: time to first token + M / decode
    ttft_s: float  # the mid time to first token it was computed with
    decode_mid: float  # the mid decode tok/s it was computed with


def _ttft_range(ttft_s: float, prefill: Range | None) -> tuple[float, float]:
    """(slow, fast) time to first token: the mid seconds scaled by the prefill range's ends."""
    if prefill is None or prefill.mid <= 0 or prefill.low <= 0 or prefill.high <= 0:
        return ttft_s, ttft_s
    return ttft_s * prefill.mid / prefill.low, ttft_s * prefill.mid / prefill.high


def end_to_end(
    output: int, decode: Range | None, ttft_s: float | None, prefill: Range | None
) -> EndToEnd | None:
    """M tokens out after a prompt that waits `ttft_s` for its first token, decoded at `decode`;
    None where nothing runs (no decode or no time to first token) or no output was asked."""
    if output <= 0 or decode is None or ttft_s is None or decode.low <= 0 or decode.mid <= 0:
        return None
    slow, fast = _ttft_range(ttft_s, prefill)
    seconds = ttft_s + output / decode.mid
    tps = Range(
        round(output / (slow + output / decode.low), 2),
        round(output / seconds, 2),
        round(output / (fast + output / max(decode.high, decode.mid)), 2),
    )
    return EndToEnd(output, tps, round(seconds, 2), ttft_s, decode.mid)


def for_row(row: Row, output: int) -> EndToEnd | None:
    """The end-to-end figures of one estimate row (its prompt is the request's)."""
    return end_to_end(output, row.decode_tps, row.ttft_s, row.prefill_tps)
