"""``planwright export`` / ``planwright import`` against the real app."""

from __future__ import annotations

import argparse
import io
import json
from pathlib import Path

import httpx
from fastapi.testclient import TestClient

from app.cli import build_parser
from app.client import transfer
from tests.app.service.helpers import EDITOR, REVIEWER, TWO_WORKFLOWS, create_workflow
from tests.documents import REFERRAL_WITH_WEBHOOK


def _args(argv: list[str], client: TestClient) -> argparse.Namespace:
    args = build_parser(argv).parse_args(argv)
    args.http = client
    return args


def _run(argv: list[str], client: TestClient, stdin: str = "") -> tuple[int, str, str]:
    args = _args(argv, client)
    out, err = io.StringIO(), io.StringIO()
    if argv[0] == "export":
        code = transfer.run_export(args, out, err)
    else:
        code = transfer.run_import(args, io.StringIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


def test_export_each_format(client: TestClient, tmp_path: Path) -> None:
    workflow = create_workflow(client, REFERRAL_WITH_WEBHOOK)
    code, out, _ = _run(["export", workflow["id"], "--token", REVIEWER], client)
    assert (code, out) == (0, REFERRAL_WITH_WEBHOOK)
    code, out, _ = _run(["export", workflow["id"], "--format", "cli", "--token", REVIEWER], client)
    assert code == 0 and json.loads(out)["start"] == "webhook"
    target = tmp_path / "project.yaml"
    code, _, err = _run(
        ["export", workflow["id"], "--format", "lightning", "-o", str(target), "--token", EDITOR],
        client,
    )
    assert code == 0 and "wrote" in err
    assert "workflows:\n  referral-intake:\n" in target.read_text()


def test_import_guesses_the_format_and_reports(client: TestClient, tmp_path: Path) -> None:
    project = tmp_path / "project.yaml"
    project.write_text(TWO_WORKFLOWS)
    code, out, _ = _run(["import", str(project), "--token", EDITOR], client)
    assert code == 0
    assert out.count("from lightning") == 2 and "'Intake'" in out and "'Digest'" in out
    workflow = create_workflow(client, REFERRAL_WITH_WEBHOOK)
    _, exported, _ = _run(["export", workflow["id"], "--format", "cli", "--token", EDITOR], client)
    code, out, _ = _run(["import", "-", "--token", EDITOR], client, stdin=exported)
    assert code == 0 and "from cli" in out


def test_errors_exit_nonzero_with_the_message(client: TestClient, tmp_path: Path) -> None:
    bad = tmp_path / "project.yaml"
    bad.write_text(TWO_WORKFLOWS.replace("target_job: send", "target_job: sned"))
    code, out, err = _run(["import", str(bad), "--token", EDITOR], client)
    assert (code, out) == (1, "")
    assert "workflows.digest.edges.cron->send.target_job" in err
    code, _, err = _run(["import", str(bad), "--token", REVIEWER], client)
    assert code == 1
    code, _, err = _run(["export", "missing", "--token", EDITOR], client)
    assert code == 1 and "missing" in err
    code, _, err = _run(["import", str(tmp_path / "nope.yaml")], client)
    assert code == 2 and "cannot read" in err


def test_unreachable_server_exits_2() -> None:
    args = build_parser(["export", "w1"]).parse_args(["export", "w1", "--url", "http://x.test"])

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    args.http = httpx.Client(base_url="http://x.test", transport=httpx.MockTransport(refuse))
    err = io.StringIO()
    assert transfer.run_export(args, io.StringIO(), err) == 2
    assert "cannot reach" in err.getvalue()
