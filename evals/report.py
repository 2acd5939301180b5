"""Local reports of an eval run: ``results.json``, ``report.md`` and ``report.html``.

``results.json`` has top-level ``model``, ``prompts`` (role -> version and hash),
``pass_rate`` and ``scenarios``: ``[{id, category, passed, graders, tool_rounds,
tokens, latency_ms, final_yaml, ...}]``; ``final_yaml`` is the workflow the
scenario ended with (the first failing run's, else the first run's), which
``evals.compare`` diffs between two runs (a plan scenario's: every planned
workflow, and ``plan``: each plan turn's proposals, answers, order, contracts,
delta and builds). With ``--repeat K`` a scenario passes only when all K runs
pass, its numbers are means over the runs and ``repeats`` lists each run (each
with its own ``final_yaml``).
"""

from __future__ import annotations

import html
import json
from pathlib import Path
from statistics import mean
from typing import Any

from evals.execute import RunOutcome
from evals.runner import EvalRun, ScenarioResult, ScenarioRun, summary


def _run_dict(run: ScenarioRun) -> dict[str, Any]:
    outcome = run.outcome
    return {
        "passed": run.passed,
        "graders": [g.as_dict() for g in run.grades],
        "tool_rounds": outcome.tool_rounds,
        "tokens": outcome.tokens,
        "latency_ms": outcome.latency_ms,
        "reply": outcome.reply,
        "error": outcome.error,
        "final_yaml": outcome.after_yaml,
        **({"plan": _plan_turns(outcome)} if outcome.plan is not None else {}),
    }


def _plan_turns(outcome: RunOutcome) -> list[dict[str, Any]]:
    """A plan scenario's turns: what was proposed (last proposal), answered and built."""
    assert outcome.plan is not None
    turns = []
    for turn in outcome.plan.turns:
        last = turn.last_proposal
        turns.append(
            {
                "proposals": len(turn.proposals),
                "answered": turn.answered,
                "order": last.plan.order if last is not None else None,
                "contracts": [f"{c.source} -> {c.target}" for c in last.contracts] if last else [],
                "delta": last.delta.model_dump() if last is not None and last.delta else None,
                "built": turn.built,
                "failed": turn.failed,
                "status": turn.record.status if turn.record is not None else None,
            }
        )
    return turns


def _scenario_dict(result: ScenarioResult) -> dict[str, Any]:
    runs = [_run_dict(r) for r in result.runs]
    shown = next((r for r in runs if not r["passed"]), runs[0] if runs else {})
    scenario = result.scenario
    entry: dict[str, Any] = {
        "id": scenario.id,
        "category": scenario.category,
        "description": scenario.description,
        "phrasing": scenario.phrasing,
        "passed": result.passed,
        "pass_count": sum(r["passed"] for r in runs),
        "runs": len(runs),
        "graders": shown.get("graders", []),
        "tool_rounds": round(mean(r["tool_rounds"] for r in runs), 2) if runs else 0,
        "tokens": round(mean(r["tokens"] for r in runs)) if runs else 0,
        "latency_ms": round(mean(r["latency_ms"] for r in runs)) if runs else 0,
        "reply": shown.get("reply", ""),
        "error": shown.get("error"),
        "final_yaml": shown.get("final_yaml"),
    }
    if "plan" in shown:
        entry["plan"] = shown["plan"]
    if len(runs) > 1:
        entry["repeats"] = runs
    return entry


def results_dict(run: EvalRun) -> dict[str, Any]:
    totals = summary(run)
    categories: dict[str, dict[str, Any]] = {}
    for result in run.results:
        stats = categories.setdefault(result.scenario.category, {"passed": 0, "runs": 0})
        stats["passed"] += sum(r.passed for r in result.runs)
        stats["runs"] += len(result.runs)
    for name, stats in categories.items():
        stats["pass_rate"] = totals["categories"][name]
    return {
        "model": run.model,
        "model_ids": run.model_ids,
        "prompts": run.prompts,
        "run_name": run.run_name,
        "pass_rate": run.pass_rate,
        "started_at": run.started_at,
        "duration_ms": run.duration_ms,
        "repeat": run.options.repeat,
        "concurrency": run.options.concurrency,
        "categories": dict(sorted(categories.items())),
        "scenarios": [_scenario_dict(r) for r in run.results],
    }


def _failed_comments(entry: dict[str, Any]) -> str:
    failed = [g for g in entry["graders"] if g["status"] == "failed"]
    return "; ".join(f"{g['name']}: {g['comment']}" for g in failed)


def _md_cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(data: dict[str, Any]) -> str:
    prompts = ", ".join(f"{r} {p['version']} ({p['hash']})" for r, p in data["prompts"].items())
    lines = [
        f"# Eval report: {data['model']}",
        "",
        f"- model: `{data['model']}` {json.dumps(data.get('model_ids', {}))}",
        f"- prompts: {prompts}",
        f"- pass rate: **{data['pass_rate']:.1%}** over {len(data['scenarios'])} scenarios"
        f" x {data.get('repeat', 1)} run(s)",
        f"- started {data.get('started_at', '')}, took {data.get('duration_ms', 0)} ms",
        "",
        "## Per category",
        "",
        "| category | pass rate | passed/runs |",
        "|---|---|---|",
    ]
    for name, stats in data["categories"].items():
        lines.append(f"| {name} | {stats['pass_rate']:.0%} | {stats['passed']}/{stats['runs']} |")
    lines += [
        "",
        "## Per scenario",
        "",
        "| scenario | category | result | rounds | tokens | latency ms | failures |",
        "|---|---|---|---|---|---|---|",
    ]
    for s in data["scenarios"]:
        result = "PASS" if s["passed"] else "FAIL"
        if s["runs"] > 1:
            result += f" {s['pass_count']}/{s['runs']}"
        lines.append(
            f"| {s['id']} | {s['category']} | {result} | {s['tool_rounds']} | {s['tokens']} | "
            f"{s['latency_ms']} | {_md_cell(_failed_comments(s))} |"
        )
    lines += ["", "## Grader comments", ""]
    for s in data["scenarios"]:
        lines.append(f"### {s['id']} ({'pass' if s['passed'] else 'FAIL'})")
        lines.append("")
        lines.append(f"{s['description']}")
        lines.append("")
        for g in s["graders"]:
            lines.append(
                f"- **{g['name']}** {g['status']} ({g['score']}): {_md_cell(g['comment'])}"
            )
        if s.get("reply"):
            lines.append(f"- reply: {_md_cell(s['reply'][:300])}")
        lines.append("")
    return "\n".join(lines)


_CSS = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:75em}"
    "table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:4px 8px;"
    "text-align:left;vertical-align:top}.pass{color:#176f2c}.fail{color:#b00020}"
    ".skipped{color:#777}details{margin:.3em 0}"
)


def render_html(data: dict[str, Any]) -> str:
    e = html.escape
    prompts = ", ".join(f"{r} {p['version']} ({p['hash']})" for r, p in data["prompts"].items())
    rows = "".join(
        f"<tr><td>{e(n)}</td><td>{s['pass_rate']:.0%}</td><td>{s['passed']}/{s['runs']}</td></tr>"
        for n, s in data["categories"].items()
    )
    scenario_rows = []
    for s in data["scenarios"]:
        cls = "pass" if s["passed"] else "fail"
        verdict = f"{'PASS' if s['passed'] else 'FAIL'} {s['pass_count']}/{s['runs']}"
        graders = "".join(
            f"<li class='{e(g['status'] if g['status'] != 'passed' else 'pass')}'>"
            f"<b>{e(g['name'])}</b> {e(g['status'])} ({g['score']}): {e(g['comment'])}</li>"
            for g in s["graders"]
        )
        scenario_rows.append(
            f"<tr><td>{e(s['id'])}</td><td>{e(s['category'])}</td>"
            f"<td class='{cls}'>{verdict}</td>"
            f"<td>{s['tool_rounds']}</td><td>{s['tokens']}</td><td>{s['latency_ms']}</td>"
            f"<td><details><summary>{e(s['description'])}</summary><ul>{graders}</ul>"
            f"<pre>{e(s.get('reply') or '')}</pre></details></td></tr>"
        )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>Eval report: {e(data['model'])}</title><style>{_CSS}</style></head><body>"
        f"<h1>Eval report: {e(data['model'])}</h1>"
        f"<p>Prompts: {e(prompts)}<br>Pass rate: <b>{data['pass_rate']:.1%}</b> "
        f"({len(data['scenarios'])} scenarios x {data.get('repeat', 1)} run(s))</p>"
        "<h2>Per category</h2><table><tr><th>category</th><th>pass rate</th>"
        f"<th>passed/runs</th></tr>{rows}</table>"
        "<h2>Per scenario</h2><table><tr><th>scenario</th><th>category</th><th>result</th>"
        "<th>rounds</th><th>tokens</th><th>latency ms</th><th>graders</th></tr>"
        f"{''.join(scenario_rows)}</table></body></html>"
    )


def write_reports(run: EvalRun, out: Path) -> dict[str, Path]:
    out.mkdir(parents=True, exist_ok=True)
    data = results_dict(run)
    paths = {
        "json": out / "results.json",
        "md": out / "report.md",
        "html": out / "report.html",
    }
    paths["json"].write_text(
        json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    paths["md"].write_text(render_markdown(data) + "\n", encoding="utf-8")
    paths["html"].write_text(render_html(data), encoding="utf-8")
    return paths
