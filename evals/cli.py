"""Command line of the eval harness.

Wired into ``planwright`` with :func:`register` (``planwright eval run|compare``,
``planwright prompts push``) and runnable alone as ``python -m evals run|compare|prompts``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from evals.scenario import CATEGORIES, MODEL_KINDS


def _split(values: list[str] | None) -> list[str]:
    return [v.strip() for value in values or [] for v in value.split(",") if v.strip()]


def _langfuse(args: argparse.Namespace) -> Any | None:
    if getattr(args, "no_langfuse", False):
        return None
    from agents.tracing import LangfuseConfig

    return LangfuseConfig.from_env().client()


def _eval_run(args: argparse.Namespace) -> int:
    from agents.tracing import Tracer
    from evals.report import write_reports
    from evals.runner import EvalOptions, parse_prompt_args, run_eval, summary

    unknown = [c for c in _split(args.category) if c not in CATEGORIES]
    if unknown:
        print(f"unknown category {unknown[0]!r}; known: {', '.join(CATEGORIES)}", file=sys.stderr)
        return 2
    try:
        prompts = parse_prompt_args(args.prompt or [])
    except Exception as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    options = EvalOptions(
        model=args.model,
        prompts=prompts,
        categories=_split(args.category),
        ids=_split(args.scenario),
        concurrency=args.concurrency,
        repeat=args.repeat,
        max_tool_calls=args.max_tool_calls,
        judge=not args.no_judge,
        runtime=not args.no_runtime,
    )
    client = _langfuse(args)
    loader = None
    if client is not None and args.prompt_source == "langfuse":
        from prompts.langfuse import LangfusePromptSource

        loader = LangfusePromptSource(client).load
    tracer = Tracer(client, tags=["eval", f"eval:{args.model}"])
    try:
        run = asyncio.run(
            run_eval(options, observe=tracer.turn if tracer.enabled else None, prompt_loader=loader)
        )
    except RuntimeError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    out = Path(args.out) if args.out else Path("eval-results") / f"{args.model}-{stamp}"
    paths = write_reports(run, out)
    totals = summary(run)
    print(f"{run.run_name}: pass rate {run.pass_rate:.1%}")
    for category, rate in totals["categories"].items():
        print(f"  {category:<14} {rate:.0%}")
    print(f"wrote {paths['json']}, {paths['md'].name}, {paths['html'].name}")
    if client is not None:
        from evals.langfuse_sync import record_run

        result = record_run(client, run)
        tracer.flush()
        url = getattr(result, "experiment_url", None) or getattr(result, "dataset_run_url", None)
        print(f"recorded Langfuse dataset run {run.run_name!r}" + (f": {url}" if url else ""))
    if args.fail_under is not None and run.pass_rate < args.fail_under:
        print(f"pass rate {run.pass_rate:.1%} is below {args.fail_under:.1%}", file=sys.stderr)
        return 1
    return 0


def _eval_compare(args: argparse.Namespace) -> int:
    from evals.compare import compare_files

    try:
        text, path = compare_files(Path(args.a), Path(args.b), Path(args.out) if args.out else None)
    except (OSError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(text)
    print(f"wrote {path}")
    return 0


def _prompts_push(args: argparse.Namespace) -> int:
    from prompts.langfuse import push_prompts

    client = _langfuse(args)
    if client is None:
        print(
            "Langfuse is not configured: set LANGFUSE_PUBLIC_KEY, LANGFUSE_SECRET_KEY "
            "(and LANGFUSE_HOST)",
            file=sys.stderr,
        )
        return 2
    results = push_prompts(client, roles=_split(args.role), dry_run=args.dry_run)
    for r in results:
        where = f" (Langfuse version {r.langfuse_version})" if r.langfuse_version else ""
        print(f"{r.role} {r.version} #{r.hash}: {r.status}{where}")
    client.flush()
    return 0


def add_eval_commands(commands: Any) -> None:
    """``run`` and ``compare`` under ``commands`` (a subparsers object)."""
    run = commands.add_parser("run", help="run scenarios through the agent graph and grade them")
    run.add_argument("--model", choices=MODEL_KINDS, default="offline")
    run.add_argument(
        "--prompt", action="append", metavar="ROLE=VERSION", help="e.g. planner=v2 (repeatable)"
    )
    run.add_argument("--category", action="append", help=f"one of: {', '.join(CATEGORIES)}")
    run.add_argument("--scenario", action="append", help="only these scenario ids")
    run.add_argument("--concurrency", type=int, default=4)
    run.add_argument("--repeat", type=int, default=1, help="run each scenario K times")
    run.add_argument("--out", help="report directory (default eval-results/<model>-<time>)")
    run.add_argument("--max-tool-calls", type=int, default=20)
    run.add_argument("--no-judge", action="store_true", help="never call the LLM judge")
    run.add_argument("--no-langfuse", action="store_true", help="no tracing/experiments")
    run.add_argument(
        "--no-runtime",
        action="store_true",
        help="leave out the runs_in_openfn grader (no node)",
    )
    run.add_argument("--prompt-source", choices=["local", "langfuse"], default="local")
    run.add_argument("--fail-under", type=float, help="exit 1 below this pass rate (0-1)")
    run.set_defaults(run=_eval_run)

    cmp = commands.add_parser("compare", help="compare two results.json side by side")
    cmp.add_argument("a", help="baseline results.json")
    cmp.add_argument("b", help="candidate results.json")
    cmp.add_argument("--out", help="directory for compare.md (default: current directory)")
    cmp.set_defaults(run=_eval_compare)


def add_prompt_commands(commands: Any) -> None:
    push = commands.add_parser("push", help="upload prompts/ versions to Langfuse with labels")
    push.add_argument("--role", action="append", help="only these roles")
    push.add_argument("--dry-run", action="store_true")
    push.set_defaults(run=_prompts_push)


def register(subparsers: Any) -> None:
    """Add ``eval run|compare`` and ``prompts push`` to a ``planwright`` parser."""
    evals = subparsers.add_parser("eval", help="acceptance evals: run scenarios, compare runs")
    add_eval_commands(evals.add_subparsers(dest="eval_command", required=True))
    prompts = subparsers.add_parser("prompts", help="prompt management (Langfuse)")
    add_prompt_commands(prompts.add_subparsers(dest="prompts_command", required=True))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m evals", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    add_eval_commands(commands)
    prompts = commands.add_parser("prompts", help="prompt management (Langfuse)")
    add_prompt_commands(prompts.add_subparsers(dest="prompts_command", required=True))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    result: int = args.run(args)
    return result
