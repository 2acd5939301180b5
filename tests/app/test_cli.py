"""``planwright``: one entry point whose eval commands load only when one runs."""

from __future__ import annotations

import subprocess
import sys

import pytest

LOADED = "import sys\nprint(sorted({m.split('.')[0] for m in sys.modules} & {'evals'}))\n"


def _loaded_after(argv: list[str]) -> str:
    code = (
        "import contextlib, io, sys\n"
        "from app.cli import build_parser\n"
        f"parser = build_parser({argv!r})\n"
        "with contextlib.suppress(SystemExit), contextlib.redirect_stdout(io.StringIO()):\n"
        f"    parser.parse_args({argv!r})\n" + LOADED
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return done.stdout.strip()


@pytest.mark.parametrize("argv", [["schema"], ["chat", "--help"], ["--help"], ["serve", "--help"]])
def test_other_commands_do_not_import_evals(argv: list[str]) -> None:
    assert _loaded_after(argv) == "[]"


@pytest.mark.parametrize("argv", [["eval", "run", "--help"], ["prompts", "push", "--help"]])
def test_eval_commands_import_evals_when_they_run(argv: list[str]) -> None:
    assert _loaded_after(argv) == "['evals']"


def test_help_names_the_eval_commands(capsys: pytest.CaptureFixture[str]) -> None:
    from app.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    listed = capsys.readouterr().out
    assert "acceptance evals: run scenarios, compare runs" in listed
    assert "prompt management (Langfuse)" in listed
