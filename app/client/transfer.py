"""``planwright export`` and ``planwright import``: workflows in and out over REST.

``export`` writes one workflow as Planwright YAML, a Lightning ``project.yaml``
or a CLI ``workflow.json`` (``GET /v1/workflows/{id}/export?format=``);
``import`` sends a file in any of the three (``POST /v1/workflows/import``),
its format guessed from the file name and content unless ``--format`` says.
Like ``chat``, these reach the server over the wire only.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

import httpx

from app.client.rest import ChatError, add_connection_arguments
from tools.document.openfn.formats import FORMATS, guess_format


def register(subparsers: Any) -> None:
    """Add ``export`` and ``import`` to a ``planwright`` subcommand parser."""
    export = subparsers.add_parser(
        "export",
        help="write a workflow as Planwright YAML, a Lightning project.yaml or a CLI workflow.json",
    )
    export.add_argument("workflow", metavar="WORKFLOW_ID")
    export.add_argument("--format", choices=FORMATS, default="yaml")
    export.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    add_connection_arguments(export)
    export.set_defaults(run=lambda args: run_export(args, sys.stdout, sys.stderr))

    imports = subparsers.add_parser(
        "import", help="create workflows from a Planwright YAML, project.yaml or workflow.json"
    )
    imports.add_argument("file", metavar="FILE", help="the file to import ('-' for stdin)")
    imports.add_argument(
        "--format", choices=FORMATS, help="default: guessed from the file name and content"
    )
    add_connection_arguments(imports)
    imports.set_defaults(run=lambda args: run_import(args, sys.stdin, sys.stdout, sys.stderr))


def run_export(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    return export(args, f"/v1/workflows/{quote(args.workflow, safe='')}/export", stdout, stderr)


def export(args: argparse.Namespace, path: str, stdout: TextIO, stderr: TextIO) -> int:
    """GET an export (``path``) in ``args.format`` into ``args.output`` or stdout, and say
    each problem OpenFn would trip over that the server lists with it."""
    try:
        response = request(args, "GET", path, params={"format": args.format})
    except ChatError as exc:
        print(f"planwright: {exc.message}", file=stderr)
        return exc.code
    if args.output:
        Path(args.output).write_text(response.text, encoding="utf-8")
        print(f"wrote {args.output}", file=stderr)
    else:
        stdout.write(response.text)
    # What OpenFn would trip over (a step that needs a baseUrl): said, never hidden.
    for warning in json.loads(response.headers.get("x-planwright-warnings") or "[]"):
        print(f"warning: {warning}", file=stderr)
    return 0


def run_import(args: argparse.Namespace, stdin: TextIO, stdout: TextIO, stderr: TextIO) -> int:
    try:
        text = stdin.read() if args.file == "-" else Path(args.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        print(f"planwright: cannot read {args.file}: {exc}", file=stderr)
        return 2
    fmt = args.format or guess_format(text, "" if args.file == "-" else args.file)
    try:
        response = request(
            args, "POST", "/v1/workflows/import", json={"format": fmt, "content": text}
        )
    except ChatError as exc:
        print(f"planwright: {exc.message}", file=stderr)
        return exc.code
    for workflow in response.json()["workflows"]:
        stdout.write(f"Imported {workflow['name']!r} ({workflow['id']}) from {fmt}\n")
        for problem in workflow["problems"]:
            stdout.write(f"  problem: {problem}\n")
    return 0


def request(args: argparse.Namespace, method: str, path: str, **kwargs: Any) -> httpx.Response:
    """One call; ``args.http`` (an ``httpx.Client``, tests pass the app's) replaces the
    connection to ``args.url``."""
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    given: httpx.Client | None = getattr(args, "http", None)
    try:
        if given is not None:
            response = given.request(method, path, headers=headers, **kwargs)
        else:
            with httpx.Client(base_url=args.url.rstrip("/"), timeout=60) as http:
                response = http.request(method, path, headers=headers, **kwargs)
    except httpx.HTTPError as exc:
        raise ChatError(
            f"cannot reach {args.url} ({exc.__class__.__name__}): is `planwright serve` running?",
            2,
        ) from exc
    if response.status_code == 401:
        raise ChatError("the server needs a valid token: pass --token or set PLANWRIGHT_TOKEN", 2)
    if response.is_error:
        try:
            error = response.json()["error"]
            message = error["message"]
        except (ValueError, KeyError, TypeError):
            message = response.text[:200] or response.reason_phrase
        raise ChatError(message, 1)
    return response
