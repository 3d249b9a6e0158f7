"""The console's input as chat messages: one line is one message, a pasted block is one message.

A chat sends a pasted llama-bench table as one message; a terminal delivers it line by line. So:
- a terminal (a tty): lines that arrive together (within PASTE_GAP_S of each other, far faster than
  anyone types Enter and a new line) are one message, and so is everything between a terminal's
  bracketed-paste markers (ESC[200~ ... ESC[201~, switched on by the console where the terminal has
  them); a blank line ends a message;
- piped input (not a tty, no timing to go by): one message per line, except that a line that looks
  like tool output (a table row, a llama.cpp / ollama / vLLM log line) starts a pasted block that runs
  while the lines are still that tool's output, across blank lines too (llama-bench's `build: ...`
  line comes after a blank one): the first line that is not ends it, and is the next message;
- either way, a line ending in a backslash continues on the next one (scripts written for that).
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import TextIO

PASTE_GAP_S = 0.08
PASTE_START, PASTE_END = "\x1b[200~", "\x1b[201~"
BRACKETED_PASTE_ON, BRACKETED_PASTE_OFF = "\x1b[?2004h", "\x1b[?2004l"

# What the first line of pasted tool output looks like (the outputs core.community.pasted reads).
_TOOL_OUTPUT = re.compile(
    r"""^\s*(?:
        \|.*\|                                   # a markdown table row (llama-bench)
      | (?:ggml_|llama_|llm_load_|load_tensors|print_info|print_timing|system_info|main:|srv\s|slot\s)
      | build:\s*[0-9a-f]+
      | Device\s+\d+:
      | using\s+device\s
      | (?:prompt\s+)?eval\s+(?:time|count|duration|rate)\s*[:=]
      | (?:total|load)\s+duration:
      | =+\s*Serving\s+Benchmark
      | (?:Avg\s+latency|Throughput|Successful\s+requests|Mean\s+TTFT|Output\s+token\s+throughput)\b.*:
      | \$\s*(?:llama-bench|llama-server|llama-cli|\./llama|ollama\s+run|vllm\s|python3?\s+-m\s+vllm)
    )""",
    re.VERBOSE | re.IGNORECASE,
)


# What a line inside such output may look like besides those: "Mean TTFT (ms): 41.2" (a vLLM summary),
# "      total time = ..." (llama.cpp timings), a rule of = or - (block headers).
_TOOL_OUTPUT_MORE = re.compile(
    r"^\s*(?:[A-Za-z][\w /()%.,-]*\s*[:=]\s*[-+\d.]+|[=\-_*#]{3,}.*|total\s+time\s*=)", re.IGNORECASE
)


_Arrived = tuple[float, str | None]  # (time.monotonic() when read, the raw line or None at the end)


def looks_like_tool_output(line: str) -> bool:
    """Whether a line can start pasted tool output."""
    return bool(_TOOL_OUTPUT.match(line))


def continues_tool_output(line: str) -> bool:
    """Whether a line can be part of pasted tool output that already started."""
    return bool(_TOOL_OUTPUT.match(line) or _TOOL_OUTPUT_MORE.match(line))


def _clean(line: str) -> str:
    return line.replace(PASTE_START, "").replace(PASTE_END, "").rstrip("\r\n")


class _Continuation:
    """Backslash-continued lines and the joining of a message's lines."""

    @staticmethod
    def join(lines: list[str]) -> str:
        while lines and not lines[-1].strip():
            lines.pop()
        return "\n".join(lines)


class PipedMessages:
    """Messages from input that is not a terminal: read ahead one line to see where a paste ends."""

    def __init__(self, stdin: TextIO):
        self.stdin = stdin
        self._ahead: deque[str | None] = deque()

    def _next(self) -> str | None:
        if self._ahead:
            return self._ahead.popleft()
        raw = self.stdin.readline()
        return _clean(raw) if raw else None

    def _peek_non_blank(self) -> str | None:
        """The next non-blank line, left in place (None at the end)."""
        while True:
            for line in self._ahead:
                if line is None or line.strip():
                    return line
            raw = self.stdin.readline()
            self._ahead.append(_clean(raw) if raw else None)

    def read(self) -> str | None:
        """The next message; None at the end of the input."""
        first = self._next()
        if first is None:
            return None
        lines = [first]
        while lines[-1].endswith("\\"):
            lines[-1] = lines[-1][:-1]
            more = self._next()
            if more is None:
                break
            lines.append(more)
        if len(lines) == 1 and looks_like_tool_output(first):
            self._read_paste(lines)
        return _Continuation.join(lines)

    def _read_paste(self, lines: list[str]) -> None:
        """The rest of a pasted block: while lines are the tool's output, across blank lines too
        (llama-bench's `build:` line); anything else is the next message."""
        while True:
            upcoming = self._peek_non_blank()
            if upcoming is None or not continues_tool_output(upcoming):
                return
            while self._ahead and self._ahead[0] is not None and not self._ahead[0].strip():
                self._next()
            line = self._next()
            assert line is not None
            lines.append(line)


class TerminalMessages:
    """Messages from a terminal: a thread reads lines as they come, each with the time it arrived;
    lines that arrived together (however late they are read), or inside bracketed-paste markers,
    are one message."""

    def __init__(
        self, stdin: TextIO, gap_s: float = PASTE_GAP_S, clock: Callable[[], float] = time.monotonic
    ):
        self.gap_s = gap_s
        self._clock = clock  # when a line arrived (seconds; tests pass a clock of their own)
        self._lines: queue.Queue[_Arrived] = queue.Queue()
        self._back: deque[_Arrived] = deque()
        self._last = 0.0  # when the line read last arrived
        self._reader = threading.Thread(target=self._read_all, args=(stdin,), daemon=True)
        self._reader.start()

    def _read_all(self, stdin: TextIO) -> None:
        while True:
            try:
                raw = stdin.readline()
            except (OSError, ValueError):  # the terminal went away (EIO) or stdin was closed
                raw = ""
            self._lines.put((self._clock(), raw if raw else None))
            if not raw:
                return

    def _get(self, within: float | None) -> str | None:
        """The next raw line; with `within`, only one that arrived at most that long after the last
        one read ("" otherwise: nothing more came together with it). None at the end."""
        if self._back:
            item = self._back.popleft()
        elif within is None:
            item = self._lines.get()
        else:
            try:
                item = self._lines.get(timeout=max(0.0, self._last + within - self._clock()))
            except queue.Empty:
                return ""
        arrived, raw = item
        if within is not None and raw is not None and arrived - self._last > within:
            self._back.appendleft(item)  # it came later: the next message's
            return ""
        self._last = arrived
        return raw

    def read(self) -> str | None:
        """The next message (blocking; run it off the event loop); None at the end of the input."""
        raw = self._get(None)
        if raw is None:
            return None
        bracketed = PASTE_START in raw and PASTE_END not in raw
        lines = [_clean(raw)]
        while True:
            continued = lines[-1].endswith("\\")
            if continued:
                lines[-1] = lines[-1][:-1]
            raw = self._get(None if continued or bracketed else self.gap_s)
            if raw is None:
                self._back.append((self._last, None))  # the end, seen again by the next read
                break
            if raw == "":
                break  # nothing more arrived together with it: the message is complete
            if bracketed:
                bracketed = PASTE_END not in raw
            elif not raw.strip() and not self._goes_on():
                break  # a blank line ends the message
            lines.append(_clean(raw))
        return _Continuation.join(lines)

    def _goes_on(self) -> bool:
        """After a blank line in a pasted block: whether the tool's output goes on (llama-bench's
        `build:` line). A line that isn't is left for the next message."""
        raw = self._get(self.gap_s)
        if raw:
            self._back.append((self._last, raw))
        return raw is not None and raw != "" and continues_tool_output(_clean(raw))
