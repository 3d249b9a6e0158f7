"""The console reads a pasted block as one message, without trailing backslashes: from a terminal
(lines arriving together, or inside bracketed-paste markers) and from a pipe (a tool-output line
starts a block); ordinary piped lines stay one message each."""

from __future__ import annotations

import io
import os
import pty
import termios
import threading
import time
from argparse import Namespace

import pytest

from bot.cli.console import run_console
from bot.cli.console_input import PASTE_END, PASTE_START, PipedMessages, TerminalMessages

TABLE = [
    "ggml_cuda_init: found 1 CUDA devices:",
    "  Device 0: NVIDIA GeForce RTX 4090, compute capability 8.9, VMM: yes",
    "| model                          |       size |     params | backend    | ngl |  test |           t/s |",
    "| ------------------------------ | ---------: | ---------: | ---------- | --: | ----: | ------------: |",
    "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 | pp512 | 9273.2 ± 23.5 |",
    "| llama 8B Q4_K - Medium         |   4.58 GiB |     8.03 B | CUDA       |  99 | tg128 |  127.41 ± 0.1 |",
    "",
    "build: 1234abcd (4567)",
]


def piped(*lines: str) -> list[str]:
    reader = PipedMessages(io.StringIO("".join(f"{line}\n" for line in lines)))
    out = []
    while (message := reader.read()) is not None:
        out.append(message)
    return out


def test_piped_ordinary_lines_are_one_message_each():
    assert piped("V100 32G 27B", "", "/help", "!3") == ["V100 32G 27B", "", "/help", "!3"]


def test_piped_table_is_one_message_up_to_the_next_line_that_is_not_output():
    messages = piped("/submit", *TABLE, "V100 32G gemma 3 27b")
    assert messages[0] == "/submit"
    assert messages[1].splitlines()[0].startswith("ggml_cuda_init") and "tg128" in messages[1]
    assert messages[1].endswith("build: 1234abcd (4567)"), "past the blank line: still the tool's output"
    assert messages[2:] == ["V100 32G gemma 3 27b"]


def test_piped_ollama_and_vllm_blocks_and_backslashes():
    ollama = [
        "total duration:       4.2s",
        "load duration:        20ms",
        "eval count:           300 token(s)",
        "eval rate:            71.73 tokens/s",
    ]
    vllm = [
        "============ Serving Benchmark Result ============",
        "Successful requests:                     100",
        "Mean TTFT (ms):                          41.2",
        "==================================================",
    ]
    messages = piped(*ollama, "", *vllm, "", "thanks", "a \\", "b")
    assert messages == ["\n".join(ollama) + "\n" + "\n".join(vllm), "", "thanks", "a \nb"]


class Terminal:
    """A real pseudo-terminal: what the test writes to its master arrives on a tty, line by line."""

    def __init__(self) -> None:
        self.master, slave = pty.openpty()
        # No echo: nobody reads the master's side here, and a full echo buffer stalls the input.
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        self.stdin = os.fdopen(slave, "r", encoding="utf-8", errors="replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def close(self) -> None:
        os.close(self.master)  # first: a reader blocked on the tty gets EIO and ends
        time.sleep(0.1)
        self.stdin.close()


@pytest.fixture
def terminal():
    t = Terminal()
    yield t
    t.close()


class Clock:
    """The arrival clock of TerminalMessages, moved by the test: which lines "arrived together" is
    then the test's to say, not the machine's scheduling (a busy machine delays the reader thread)."""

    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def arrived(messages: TerminalMessages, count: int) -> None:
    """Waits (a hang guard) until the reader has stamped `count` lines not read yet."""
    deadline = time.monotonic() + 30
    while messages._lines.qsize() < count and time.monotonic() < deadline:
        time.sleep(0.005)
    assert messages._lines.qsize() >= count, "the reader thread did not read the typed lines"


def test_terminal_lines_arriving_together_are_one_message(terminal):
    assert terminal.stdin.isatty()
    clock = Clock()
    messages = TerminalMessages(terminal.stdin, clock=clock)
    terminal.type("V100 32G 27B\n")
    assert messages.read() == "V100 32G 27B"
    terminal.type("/submit\n" + "\n".join(TABLE) + "\n")  # one paste: all lines at once
    arrived(messages, 1 + len(TABLE))
    pasted = messages.read()
    assert pasted is not None and pasted.startswith("/submit\nggml_cuda_init") and pasted.endswith("(4567)")
    terminal.type("typed\n")
    arrived(messages, 1)
    clock.now += 0.3  # typed by hand: the next line comes well past the paste gap
    terminal.type("apart\n")
    arrived(messages, 2)
    assert (messages.read(), messages.read()) == ("typed", "apart")


def test_terminal_bracketed_paste_is_one_message_even_when_slow(terminal):
    clock = Clock()
    messages = TerminalMessages(terminal.stdin, clock=clock)
    terminal.type(f"{PASTE_START}| a | b |\n")
    arrived(messages, 1)
    clock.now += 5.0  # a slow link: the paste arrives in two pieces, far apart
    terminal.type(f"\n| c | d |{PASTE_END}\n")
    assert messages.read() == "| a | b |\n\n| c | d |"


def test_console_on_a_terminal_submits_a_pasted_table(terminal, tmp_path, monkeypatch):
    monkeypatch.setenv("TOKBOT_OUT_DIR", str(tmp_path / "out"))
    out = io.StringIO()

    def shown(text: str) -> None:
        """Waits (up to a minute: a hang guard) until the console has printed `text`."""
        deadline = time.monotonic() + 60
        while text not in out.getvalue() and time.monotonic() < deadline:
            time.sleep(0.01)

    def keyboard() -> None:
        shown("\x1b[?2004h")  # the console started and switched bracketed paste on
        terminal.type('/submit gpu=4090 model="llama 3.1 8b"\n' + "\n".join(TABLE[2:6]) + "\n")
        shown("Received as #")  # answered: /quit comes as a message of its own, however slow the machine
        terminal.type("/quit\n")

    typist = threading.Thread(target=keyboard)
    typist.start()
    code = run_console(Namespace(user="erin", db=str(tmp_path / "t.db")), terminal.stdin, out)
    typist.join()
    text = out.getvalue()
    assert code == 0 and "\x1b[?2004h" in text, "bracketed paste switched on"
    assert "Received as #" in text and "decode 127.41 tok/s" in text
