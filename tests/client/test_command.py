"""The ``chat`` subcommand's options and the session's WebSocket URL."""

from __future__ import annotations

import argparse
import subprocess
import sys

import pytest

from app.client.command import register, socket_url
from app.client.rest import DEFAULT_URL


def parse(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="planwright")
    register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(["chat", *argv])


def test_options_and_their_defaults(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PLANWRIGHT_URL", raising=False)
    monkeypatch.delenv("PLANWRIGHT_TOKEN", raising=False)
    args = parse("--new", "Intake", "--read-only")
    assert (args.url, args.token, args.new, args.read_only) == (DEFAULT_URL, None, "Intake", True)
    with pytest.raises(SystemExit):
        parse("--new", "a", "--workflow", "b")  # one or the other
    assert parse("--workflow", "w1").review is False
    resumed = parse("--session", "s1", "--review")
    assert (resumed.session, resumed.review, resumed.workflow) == ("s1", True, None)
    with pytest.raises(SystemExit):
        parse("--session", "s1", "--workflow", "w1")  # a session is on its own workflow


@pytest.mark.parametrize(
    ("base", "token", "url"),
    [
        ("http://127.0.0.1:8000", None, "ws://127.0.0.1:8000/v1/sessions/s1/ws"),
        (
            "https://plan.example/api/",
            "a b/c",
            "wss://plan.example/api/v1/sessions/s1/ws?token=a%20b%2Fc",
        ),
    ],
)
def test_socket_url(base: str, token: str | None, url: str) -> None:
    assert socket_url(base.rstrip("/"), "/v1/sessions/s1/ws", token) == url


def test_the_client_imports_nothing_of_the_server() -> None:
    code = (
        "import sys, app.client\n"
        "bad = sorted(m for m in sys.modules if m.split('.')[0] in ('agents', 'evals')\n"
        "             or (m.startswith('app.') and not m.startswith('app.client')))\n"
        "print(bad)\n"
    )
    found = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert found.stdout.strip() == "[]"
