"""``planwright project new|list|export``: projects over REST (DESIGN §5a).

``new NAME`` creates an empty project (``POST /v1/projects``), or one holding every
workflow of a Lightning ``project.yaml`` (``--from FILE``); ``list`` shows them newest
first (``GET /v1/projects``); ``export PROJECT_ID`` writes the whole project as one
Lightning ``project.yaml`` (``GET /v1/projects/{id}/export``) to stdout or ``-o FILE``,
as ``planwright export`` does for one workflow. A session on a project (plan mode) is
``planwright chat --project PROJECT_ID``. Like ``chat``, these reach the server over the
wire only.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any, TextIO
from urllib.parse import quote

from app.client.rest import ChatError, add_connection_arguments
from app.client.transfer import export, request

PROJECT_FORMATS = ("lightning",)
"""What the server exports a project as (``GET /v1/projects/{id}/export?format=``)."""


def register(subparsers: Any) -> None:
    """Add ``project`` (with ``new``, ``list`` and ``export``) to a ``planwright`` parser."""
    project = subparsers.add_parser("project", help="create, list and export projects")
    actions = project.add_subparsers(dest="action", required=True)

    new = actions.add_parser("new", help="create a project (empty, or from a project.yaml)")
    new.add_argument("name", metavar="NAME")
    new.add_argument("--from", dest="source", metavar="FILE", help="a Lightning project.yaml")
    add_connection_arguments(new)
    new.set_defaults(run=lambda args: run_new(args, sys.stdout, sys.stderr))

    listing = actions.add_parser("list", help="the projects, newest first")
    add_connection_arguments(listing)
    listing.set_defaults(run=lambda args: run_list(args, sys.stdout, sys.stderr))

    export = actions.add_parser(
        "export", help="write a project's workflows as one Lightning project.yaml"
    )
    export.add_argument("project", metavar="PROJECT_ID")
    export.add_argument("--format", choices=PROJECT_FORMATS, default="lightning")
    export.add_argument("-o", "--output", metavar="FILE", help="write here (default: stdout)")
    add_connection_arguments(export)
    export.set_defaults(run=lambda args: run_export(args, sys.stdout, sys.stderr))


def run_new(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    body: dict[str, Any] = {"name": args.name}
    if args.source:
        try:
            body["yaml"] = Path(args.source).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            print(f"planwright: cannot read {args.source}: {exc}", file=stderr)
            return 2
    try:
        project = request(args, "POST", "/v1/projects", json=body).json()
    except ChatError as exc:
        print(f"planwright: {exc.message}", file=stderr)
        return exc.code
    count = len(project["workflows"])
    stdout.write(
        f"Created project {project['name']!r} ({project['id']}) with {count} "
        f"workflow{'' if count == 1 else 's'}\n"
    )
    for workflow in project["workflows"]:
        stdout.write(f"  {workflow['name']} ({workflow['id']})\n")
        for problem in workflow.get("problems") or []:
            stdout.write(f"    problem: {problem}\n")
    stdout.write(f"Plan it: planwright chat --project {project['id']}\n")
    return 0


def run_list(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    try:
        projects = request(args, "GET", "/v1/projects").json()
    except ChatError as exc:
        print(f"planwright: {exc.message}", file=stderr)
        return exc.code
    if not projects:
        stdout.write('No projects yet: planwright project new "NAME"\n')
        return 0
    for project in projects:
        count = project["workflow_count"]
        stdout.write(
            f"{project['id']}  {project['name']}  ({count} workflow{'' if count == 1 else 's'}, "
            f"updated {project['updated_at'][:16].replace('T', ' ')})\n"
        )
    return 0


def run_export(args: argparse.Namespace, stdout: TextIO, stderr: TextIO) -> int:
    return export(args, f"/v1/projects/{quote(args.project, safe='')}/export", stdout, stderr)
