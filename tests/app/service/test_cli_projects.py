"""``planwright project new|list|export`` against the real app (issue 23: the terminal
could not create or export a project)."""

from __future__ import annotations

import argparse
import io
from pathlib import Path

import yaml
from fastapi.testclient import TestClient

from app.cli import build_parser
from app.client import projects
from tests.app.service.helpers import EDITOR, REVIEWER, TWO_WORKFLOWS


def _run(argv: list[str], client: TestClient) -> tuple[int, str, str]:
    args: argparse.Namespace = build_parser(argv).parse_args(argv)
    args.http = client
    out, err = io.StringIO(), io.StringIO()
    # The registered runners write to sys.stdout/stderr; the module's own take streams.
    run = {"new": projects.run_new, "list": projects.run_list, "export": projects.run_export}
    return run[args.action](args, out, err), out.getvalue(), err.getvalue()


def test_new_list_and_export_a_project(client: TestClient, tmp_path: Path) -> None:
    code, out, _ = _run(["project", "list", "--token", REVIEWER], client)
    assert (code, out) == (0, 'No projects yet: planwright project new "NAME"\n')

    code, out, _ = _run(["project", "new", "Referral intake", "--token", EDITOR], client)
    assert code == 0 and "Created project 'Referral intake'" in out and "0 workflows" in out
    empty_id = out.split("(")[1].split(")")[0]
    assert f"planwright chat --project {empty_id}" in out

    source = tmp_path / "project.yaml"
    source.write_text(TWO_WORKFLOWS)
    code, out, _ = _run(
        ["project", "new", "Imported", "--from", str(source), "--token", EDITOR], client
    )
    assert code == 0 and "with 2 workflows" in out and "Intake (" in out and "Digest (" in out
    imported_id = out.split("(")[1].split(")")[0]

    code, out, _ = _run(["project", "list", "--token", REVIEWER], client)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 2
    assert lines[0].startswith(f"{imported_id}  Imported  (2 workflows")
    assert lines[1].startswith(f"{empty_id}  Referral intake  (0 workflows")

    code, out, _ = _run(["project", "export", imported_id, "--token", REVIEWER], client)
    exported = yaml.safe_load(out)
    assert code == 0 and sorted(exported["workflows"]) == ["digest", "intake"]
    target = tmp_path / "out.yaml"
    code, _, err = _run(
        ["project", "export", imported_id, "-o", str(target), "--token", REVIEWER], client
    )
    assert code == 0 and target.read_text() == out
    # Like a workflow's export, what OpenFn would trip over is said after the file: here a
    # step whose credential the project does not hold, so nothing gives it a baseUrl.
    said = err.splitlines()
    assert said[0] == f"wrote {target}"
    assert said[1:] and all(line.startswith("warning: ") for line in said[1:]), said
    assert any("'clinic-api' is not one of the project's" in line for line in said), said


def test_errors_are_said_with_the_exit_code(client: TestClient, tmp_path: Path) -> None:
    code, _, err = _run(["project", "export", "no-such-project", "--token", EDITOR], client)
    assert code == 1 and err.startswith("planwright: ")
    code, _, err = _run(["project", "new", "X", "--token", REVIEWER], client)
    assert code == 1 and err.startswith("planwright: ")  # reviewers cannot create
    code, _, err = _run(["project", "list", "--token", "wrong-token-000000000000"], client)
    assert code == 2 and "valid token" in err
    code, _, err = _run(
        ["project", "new", "X", "--from", str(tmp_path / "missing.yaml"), "--token", EDITOR],
        client,
    )
    assert code == 2 and "cannot read" in err
