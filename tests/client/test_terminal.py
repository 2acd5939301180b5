"""Writing and reading lines: spinners settle in place on a terminal only."""

from __future__ import annotations

import asyncio
import io

import pytest

from app.client.terminal import LineReader, Output, ask


class Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_spinner_lines_settle_in_place_on_a_terminal() -> None:
    stream = Tty()
    out = Output(stream)
    out.color = False
    out.spinner("Adding a step…")
    out.settled("Added 1 step")
    assert stream.getvalue() == "  … Adding a step…\r\x1b[K  ✓ Added 1 step\n"


def test_spinner_lines_stay_as_lines_elsewhere() -> None:
    stream = io.StringIO()
    out = Output(stream)
    out.spinner("Adding a step…")
    out.settled("Added 1 step")
    out.partial("planner> Done")
    out.line("next")
    assert stream.getvalue() == "  … Adding a step…\n  ✓ Added 1 step\nplanner> Done\nnext\n"
    assert out.paint("x", "red") == "x"  # no colours off a terminal


def test_colours_on_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert Output(Tty()).paint("x", "red") == "\x1b[31mx\x1b[0m"
    monkeypatch.setenv("NO_COLOR", "1")
    assert Output(Tty()).paint("x", "red") == "x"


async def test_ask_echoes_scripted_input_and_ends_at_end_of_input() -> None:
    stream = io.StringIO()
    out = Output(stream)
    lines = LineReader(io.StringIO("hello\r\n"), asyncio.get_running_loop())
    try:
        assert await ask(out, lines, "you> ") == "hello"
        assert await ask(out, lines, "you> ") is None
        assert await lines.read() is None  # stays at end of input
    finally:
        lines.close()
    assert stream.getvalue() == "you> hello\nyou> \n\n"  # the open prompt line, then a blank
