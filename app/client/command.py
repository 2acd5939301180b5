"""The ``chat`` subcommand: parse its options, open (or create) a workflow, or open a
project, over REST, start a session and hand it to :class:`~app.client.session.ChatClient`."""

from __future__ import annotations

import argparse
import asyncio
import sys
from typing import Any, TextIO
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from app.client.rest import ChatError, Rest, add_connection_arguments
from app.client.session import ChatClient
from app.client.terminal import LineReader, Output, ask


def register(subparsers: Any) -> argparse.ArgumentParser:
    """Add ``chat`` to a ``planwright`` subcommand parser."""
    chat: argparse.ArgumentParser = subparsers.add_parser(
        "chat",
        help="chat with the planner in the terminal",
        description="Chat with the planner about one workflow, or plan a project's workflows "
        "from a spec, over the service's WebSocket.",
    )
    target = chat.add_mutually_exclusive_group()
    target.add_argument("--workflow", metavar="ID", help="open this workflow")
    target.add_argument("--new", metavar="NAME", help="create a workflow with this name")
    target.add_argument(
        "--session",
        metavar="ID",
        help="go back to this session (its history, and a proposal or plan waiting for review)",
    )
    target.add_argument(
        "--project",
        metavar="ID",
        help="open a project session: its turns plan the project's workflows (/plan, /project)",
    )
    chat.add_argument("--read-only", action="store_true", help="questions only; no changes")
    chat.add_argument(
        "--review",
        action="store_true",
        help="review mode: each turn's changes wait as a proposal to accept all, some or none "
        "of before anything is saved",
    )
    chat.add_argument(
        "--mode",
        choices=("plan", "edit"),
        help="send every turn in this mode (plan: propose workflows for review first)",
    )
    add_connection_arguments(chat)
    chat.set_defaults(run=main)
    return chat


def main(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_chat(args, sys.stdin, sys.stdout))
    except KeyboardInterrupt:
        print(file=sys.stdout)
        return 130


async def run_chat(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    """Run the interactive client until ``/quit`` or end of input; the exit code."""
    out = Output(stdout)
    lines = LineReader(stdin, asyncio.get_running_loop())
    base_url = args.url.rstrip("/")
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    async with httpx.AsyncClient(base_url=base_url, headers=headers, timeout=30) as http:
        rest = Rest(http)
        try:
            target: dict[str, Any]
            project_name = ""
            if args.session:  # an existing session: as it is (its own read-only and review)
                session = {"id": args.session}
            else:
                if args.project:
                    path = f"/v1/projects/{quote(args.project, safe='')}"
                    project = await rest.call("GET", path)
                    target, project_name = {"project_id": project["id"]}, project["name"]
                else:
                    workflow_id = await choose_workflow(args, rest, out, lines)
                    if workflow_id is None:
                        return 0
                    target = {"workflow_id": workflow_id}
                body: dict[str, Any] = {**target, "read_only": bool(args.read_only)}
                if args.review:
                    body["review"] = True  # left out otherwise: the server's default
                session = await rest.call("POST", "/v1/sessions", json=body)
            detail = await rest.call("GET", f"/v1/sessions/{quote(session['id'], safe='')}")
            workflow = detail.get("workflow")
            project_id = detail.get("project_id") or (workflow or {}).get("project_id")
            if workflow is None and project_id and not project_name:
                project_name = (await rest.call("GET", f"/v1/projects/{project_id}"))["name"]
            name = workflow["name"] if workflow else project_name
            client = ChatClient(
                rest=rest,
                out=out,
                lines=lines,
                ws_url=socket_url(base_url, f"/v1/sessions/{detail['id']}/ws", args.token),
                session_id=detail["id"],
                workflow_id=workflow["id"] if workflow else None,
                read_only=bool(detail["read_only"]),
                name=name,
                version=workflow["version"] if workflow else 0,
                yaml=workflow["yaml"] if workflow else "",
                project_id=project_id,
                mode=args.mode,
                pending=detail.get("pending_confirmation"),
                review=bool(detail.get("review", args.review)) and workflow is not None,
            )
            return await client.run()
        except ChatError as exc:
            out.line(f"error: {exc.message}")
            return exc.code
        finally:
            lines.close()


def socket_url(base_url: str, path: str, token: str | None) -> str:
    parts = urlsplit(base_url)
    scheme = "wss" if parts.scheme == "https" else "ws"
    query = f"token={quote(token, safe='')}" if token else ""
    return urlunsplit((scheme, parts.netloc, parts.path.rstrip("/") + path, query, ""))


async def choose_workflow(
    args: argparse.Namespace, rest: Rest, out: Output, lines: LineReader
) -> str | None:
    if args.workflow:
        found = await rest.call("GET", f"/v1/workflows/{quote(args.workflow, safe='')}")
        return str(found["id"])
    if args.new:
        created = await rest.call("POST", "/v1/workflows", json={"name": args.new})
        out.line(f"Created workflow {created['name']!r} ({created['id']}).")
        return str(created["id"])
    workflows = await rest.call("GET", "/v1/workflows")
    if workflows:
        out.line("Workflows:")
        for number, workflow in enumerate(workflows, 1):
            out.line(
                f"  {number:>2}. {workflow['name']}  (v{workflow['version']}, {workflow['id']})"
            )
    while True:
        prompt = (
            "Open which workflow? A number, or a name for a new one: "
            if workflows
            else "Name for a new workflow: "
        )
        answer = await ask(out, lines, prompt)
        if answer is None:
            return None
        answer = answer.strip()
        if answer.isdigit() and workflows:
            index = int(answer) - 1
            if 0 <= index < len(workflows):
                return str(workflows[index]["id"])
            out.line(f"There is no workflow number {answer}.")
            continue
        created = await rest.call("POST", "/v1/workflows", json={"name": answer or None})
        out.line(f"Created workflow {created['name']!r} ({created['id']}).")
        return str(created["id"])
