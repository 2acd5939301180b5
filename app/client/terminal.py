"""The terminal side: lines read from a blocking stream, and lines written with
colours and in-place spinners when the output is a terminal.

A pasted block is one input, as on the web page: on a terminal the client turns on
bracketed paste (``ESC[?2004h``), so the terminal wraps what is pasted in
``ESC[200~`` … ``ESC[201~``, and :meth:`LineReader.read` returns everything between
the two marks (and what was typed after the end mark on its line) as one text with
its line breaks; the user presses Enter to send it. ``/paste`` (or any terminal)
reads lines up to one holding only ``.`` (:func:`read_block`)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import threading
from collections.abc import Iterable, Iterator
from typing import Any, TextIO

try:  # POSIX terminals only; elsewhere the echo is left as it is
    import termios
except ImportError:  # pragma: no cover - not POSIX
    termios = None  # type: ignore[assignment]

PASTE_START = "\x1b[200~"
PASTE_END = "\x1b[201~"
BRACKETED_PASTE_ON = "\x1b[?2004h"
BRACKETED_PASTE_OFF = "\x1b[?2004l"


@contextlib.contextmanager
def unechoed_paste_marks(stream: Any) -> Iterator[None]:
    """While the session runs, a terminal in line mode echoes control characters as
    text (``^[[200~`` around every paste): ``ECHOCTL`` off, restored on the way out."""
    try:
        fd = stream.fileno()
        before = termios.tcgetattr(fd)
    except (AttributeError, OSError, ValueError, termios.error):
        yield
        return
    quiet = list(before)
    quiet[3] &= ~termios.ECHOCTL
    termios.tcsetattr(fd, termios.TCSANOW, quiet)
    try:
        yield
    finally:
        with contextlib.suppress(termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, before)


class LineReader:
    """Lines from a blocking text stream, read on a daemon thread (so a pending read
    never keeps the process alive) and handed to the event loop through a queue."""

    def __init__(self, stream: TextIO, loop: asyncio.AbstractEventLoop) -> None:
        self.stream = stream
        self.interactive = _isatty(stream)
        self._loop = loop
        self._queue: asyncio.Queue[str | None] = asyncio.Queue()
        self._closed = False
        self._thread = threading.Thread(target=self._pump, name="chat-stdin", daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        try:
            while not self._closed:
                line = self.stream.readline()
                self._put(line if line else None)
                if not line:
                    return
        except (OSError, ValueError):
            self._put(None)

    def _put(self, item: str | None) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is listening
            self._loop.call_soon_threadsafe(self._queue.put_nowait, item)

    async def _next(self) -> str | None:
        line = await self._queue.get()
        if line is None:
            self._queue.put_nowait(None)  # stay at end of input
        return line

    async def read(self) -> str | None:
        """The next line without its newline, or None at end of input; a bracketed
        paste is one "line" holding the pasted line breaks."""
        line = await self._next()
        if line is None:
            return None
        if PASTE_START not in line:
            return line.rstrip("\r\n")
        parts: list[str] = []
        text = line.replace(PASTE_START, "", 1)
        # A terminal in line mode hands the paste over line by line; the end mark comes
        # with the line the user ends with Enter (after a paste that ended in a newline,
        # a line of its own).
        while PASTE_END not in text:
            parts.append(text.rstrip("\r\n"))
            following = await self._next()
            if following is None:
                return "\n".join(parts)
            text = following.replace(PASTE_START, "")
        before, _, after = text.partition(PASTE_END)
        parts.append((before + after).replace(PASTE_END, "").rstrip("\r\n"))
        return "\n".join(parts).rstrip("\n")

    def close(self) -> None:
        self._closed = True


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Output:
    """Writes lines; on a terminal, spinner lines are overwritten when they settle."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.tty = _isatty(stream)
        self.color = self.tty and not os.environ.get("NO_COLOR")
        self._open = False  # the cursor is at the end of an unfinished line

    def paint(self, text: str, style: str) -> str:
        if not self.color:
            return text
        codes = {"dim": "2", "bold": "1", "red": "31", "green": "32", "yellow": "33", "cyan": "36"}
        return f"\x1b[{codes[style]}m{text}\x1b[0m"

    def write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def end_line(self) -> None:
        if self._open:
            self.write("\n")
            self._open = False

    def line(self, text: str = "") -> None:
        self.end_line()
        self.write(text + "\n")

    def lines(self, texts: Iterable[str]) -> None:
        for text in texts:
            self.line(text)

    def partial(self, text: str) -> None:
        """Text that the next output continues (streamed answers, prompts)."""
        self.write(text)
        self._open = not text.endswith("\n")

    def echo(self, text: str) -> None:
        self.write(text + "\n")
        self._open = False

    def typed(self) -> None:
        """The user typed a line after a prompt: the cursor is on a fresh line."""
        self._open = False

    def spinner(self, text: str) -> None:
        self.end_line()
        if self.tty:
            self.write(f"  {self.paint('…', 'yellow')} {text}")
            self._open = True
        else:
            self.write(f"  … {text}\n")

    def settled(self, text: str, mark: str = "✓") -> None:
        mark = self.paint(mark, "green" if mark == "✓" else "red")
        if self.tty and self._open:
            self.write(f"\r\x1b[K  {mark} {text}\n")
            self._open = False
        else:
            self.line(f"  {mark} {text}")


async def read_block(out: Output, lines: LineReader) -> str:
    """The lines read up to one holding only ``.`` (or the end of input), as one text."""
    block: list[str] = []
    while (line := await lines.read()) is not None and line.strip() != ".":
        if not lines.interactive:
            out.echo(line)  # scripted input: keep the transcript readable
        block.append(line)
    return "\n".join(block)


async def ask(out: Output, lines: LineReader, prompt: str) -> str | None:
    out.partial(prompt)
    line = await lines.read()
    if line is None:
        out.line()
        return None
    if lines.interactive:
        out.typed()  # the user's Enter ended the line
    else:
        out.echo(line)  # scripted input: echo it so the transcript reads naturally
    return line
