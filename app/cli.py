"""``planwright`` command line: serve, chat, export, import, eval, prompts, schema,
adaptor-docs."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import Any

from app import client
from app.client import projects, transfer
from tools.document.schema import SCHEMA_PATH, render_json_schema

# Commands the eval harness adds; ``evals`` is imported only when one of them runs.
EVAL_COMMANDS = {
    "eval": "acceptance evals: run scenarios, compare runs",
    "prompts": "prompt management (Langfuse)",
}


def _serve(args: argparse.Namespace) -> int:
    import uvicorn
    from pydantic import ValidationError

    from app.limits import server_options
    from app.main import create_app
    from app.settings import Settings

    # --host/--port go through Settings, so its refusal to listen beyond loopback
    # without tokens applies to them too.
    overrides = {k: v for k, v in (("host", args.host), ("port", args.port)) if v}
    try:
        settings = Settings(**overrides)
    except ValidationError as exc:
        print(f"planwright: {exc.errors()[0]['msg']}", file=sys.stderr)
        return 2
    host, port = settings.host, settings.port
    print(f"Planwright listening on http://{host}:{port}", flush=True)
    uvicorn.run(
        create_app(settings), host=host, port=port, log_level="info", **server_options(settings)
    )
    return 0


def _schema(args: argparse.Namespace) -> int:
    rendered = render_json_schema()
    if args.write:
        SCHEMA_PATH.parent.mkdir(parents=True, exist_ok=True)
        SCHEMA_PATH.write_text(rendered, encoding="utf-8")
        print(f"wrote {SCHEMA_PATH}")
        return 0
    if args.check:
        current = SCHEMA_PATH.read_text(encoding="utf-8") if SCHEMA_PATH.exists() else ""
        if current != rendered:
            print(f"{SCHEMA_PATH} is stale: run `planwright schema --write`", file=sys.stderr)
            return 1
        print(f"{SCHEMA_PATH} is up to date")
        return 0
    sys.stdout.write(rendered)
    return 0


def _adaptor_docs(args: argparse.Namespace) -> int:
    from app.settings import Settings
    from tools.catalogue.adaptor_docs import install_adaptor_docs, package_docs_dir_default

    target = package_docs_dir_default(Settings().adaptor_docs_dir)
    installed = install_adaptor_docs(target)
    print(f"installed {len(installed)} adaptor packages into {target}")
    print(f"set PLANWRIGHT_ADAPTOR_DOCS_DIR={target} to index their documentation")
    return 0


def _wants_evals(argv: Sequence[str] | None) -> bool:
    words = sys.argv[1:] if argv is None else argv
    return next((w for w in words if not w.startswith("-")), None) in EVAL_COMMANDS


def _add_eval_commands(commands: Any, argv: Sequence[str] | None) -> None:
    """The eval harness's commands: the real ones when ``argv`` runs one of them,
    else placeholders that only name them in ``planwright --help``."""
    if _wants_evals(argv):
        from evals.cli import register as register_evals

        register_evals(commands)
        return
    for name, text in EVAL_COMMANDS.items():
        commands.add_parser(name, help=text, add_help=False)


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The parser for ``argv`` (default ``sys.argv[1:]``); the eval commands are
    built (and ``evals`` imported) only when ``argv`` names one of them."""
    parser = argparse.ArgumentParser(prog="planwright", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the service")
    serve.add_argument("--host")
    serve.add_argument("--port", type=int)
    serve.set_defaults(run=_serve)

    schema = commands.add_parser("schema", help="print, write or check the document JSON Schema")
    mode = schema.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help=f"write {SCHEMA_PATH.name}")
    mode.add_argument("--check", action="store_true", help="fail if the committed file is stale")
    schema.set_defaults(run=_schema)

    docs = commands.add_parser("adaptor-docs", help="install adaptor packages for doc search")
    docs.add_argument("action", choices=["install"])
    docs.set_defaults(run=_adaptor_docs)

    client.register(commands)
    transfer.register(commands)
    projects.register(commands)
    _add_eval_commands(commands, argv)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser(argv).parse_args(argv)
    result: int = args.run(args)
    return result


if __name__ == "__main__":
    raise SystemExit(main())
