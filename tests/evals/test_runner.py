"""The runner end to end through the real graph (scripted scenarios), reports, compare, CLI."""

from __future__ import annotations

import argparse
import copy
import io
import json
from pathlib import Path

import pytest

from evals import cli
from evals.compare import compare, compare_files
from evals.report import results_dict, write_reports
from evals.runner import EvalOptions, EvalRun, Progress, parse_prompt_args, run_eval
from evals.scenario import load_scenarios
from prompts import load_prompt

SCRIPTED = load_scenarios(model="scripted")


@pytest.fixture(scope="module")
def scripted_run() -> EvalRun:
    import asyncio

    options = EvalOptions(model="scripted", concurrency=6, repeat=1, judge=False)
    progress = Progress(len(SCRIPTED), stream=io.StringIO())
    return asyncio.run(run_eval(options, scenarios=SCRIPTED, progress=progress))


def test_scripted_scenarios_all_pass_through_the_real_graph(scripted_run: EvalRun) -> None:
    failing = {
        r.scenario.id: [g.comment for run in r.runs for g in run.grades if not g.passed]
        for r in scripted_run.results
        if not r.passed
    }
    assert failing == {}
    assert scripted_run.pass_rate == 1.0
    by_id = {r.scenario.id: r.runs[0].outcome for r in scripted_run.results}
    assert by_id["add-specific-dedupe-after"].tokens == 2400 + 120 + 2900 + 30
    assert by_id["add-specific-dedupe-after"].tool_rounds == 1
    assert by_id["remove-with-code-approved"].confirmations
    assert by_id["code-direct-route"].last.events[0] == {"type": "route", "destination": "job_code"}


def test_results_json_md_and_html(scripted_run: EvalRun, tmp_path: Path) -> None:
    paths = write_reports(scripted_run, tmp_path)
    data = json.loads(paths["json"].read_text())
    assert {"model", "prompts", "pass_rate", "scenarios"} <= data.keys()
    assert data["model"] == "scripted" and data["pass_rate"] == 1.0
    assert (
        data["prompts"]["planner"]["version"] == load_prompt("planner").version
        and len(data["prompts"]["planner"]["hash"]) == 16
    )
    entry = data["scenarios"][0]
    assert {
        "id",
        "category",
        "passed",
        "graders",
        "tool_rounds",
        "tokens",
        "latency_ms",
    } <= entry.keys()
    assert {"name", "score", "passed", "comment", "status"} <= entry["graders"][0].keys()
    assert data["categories"]["remove"]["runs"] >= 1
    md = paths["md"].read_text()
    assert "pass rate: **100.0%**" in md and "| add-specific-dedupe-after |" in md
    assert f"planner {load_prompt('planner').version}" in md and "## Per category" in md
    html = paths["html"].read_text()
    assert html.startswith("<!doctype html>") and "add-specific-dedupe-after" in html


async def test_a_confirmation_the_scenario_does_not_answer_is_reported_as_unanswered() -> None:
    unanswered = copy.deepcopy({s.id: s for s in SCRIPTED}["remove-without-code"])
    unanswered.turns[0].approve = None
    options = EvalOptions(model="scripted", concurrency=1, judge=False)
    run = await run_eval(options, scenarios=[unanswered], progress=Progress(1, io.StringIO()))
    result = run.results[0].runs[0]
    assert result.outcome.last.confirmations and result.outcome.last.approved is None
    assert result.outcome.after_yaml == result.outcome.before_yaml  # resumed as declined
    grades = {g.name: g for g in result.grades}
    assert not grades["completed"].passed
    assert "confirmation left unanswered: 'remove send sms'" in grades["completed"].comment


async def test_repeat_and_concurrency_and_failures_in_the_report() -> None:
    by_id = {s.id: s for s in SCRIPTED}
    broken = copy.deepcopy(by_id["rename-quoted"])
    broken.expect.jobs[0].name = "Something else"
    options = EvalOptions(model="scripted", concurrency=2, repeat=3, judge=False)
    progress = Progress(6, stream=io.StringIO())
    run = await run_eval(
        options, scenarios=[broken, by_id["remove-without-code"]], progress=progress
    )
    data = results_dict(run)
    assert data["pass_rate"] == 0.5 and data["repeat"] == 3
    first, second = data["scenarios"]
    assert not first["passed"] and first["pass_count"] == 0 and len(first["repeats"]) == 3
    failed = [g for g in first["graders"] if g["status"] == "failed"]
    assert failed and failed[0]["name"] == "expected_structure"
    assert second["passed"] and second["pass_count"] == 3
    assert isinstance(progress.stream, io.StringIO)
    assert progress.done == 6 and "FAIL" in progress.stream.getvalue()


def test_compare_side_by_side(scripted_run: EvalRun, tmp_path: Path) -> None:
    a = results_dict(scripted_run)
    b = copy.deepcopy(a)
    b["prompts"]["planner"]["version"] = "v99"
    b["pass_rate"] = 0.5
    b["scenarios"][0].update(passed=False, pass_count=0, tool_rounds=4, tokens=9999)
    text = compare(a, b)
    latest = load_prompt("planner").version
    assert f"planner={latest}" in text and "planner=v99" in text
    assert "-50.0 points" in text
    sid = b["scenarios"][0]["id"]
    row = next(line for line in text.splitlines() if line.startswith(f"| {sid}"))
    assert "**changed**" in row and "| PASS | FAIL |" in row
    assert "## Per category" in text
    (tmp_path / "a.json").write_text(json.dumps(a))
    (tmp_path / "b.json").write_text(json.dumps(b))
    written, path = compare_files(tmp_path / "a.json", tmp_path / "b.json", tmp_path / "cmp")
    assert path == tmp_path / "cmp" / "compare.md" and path.read_text() == written


def test_cli_run_and_compare(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "run"
    args = ["run", "--model", "scripted", "--no-langfuse", "--no-judge", "--out", str(out)]
    assert cli.main([*args, "--scenario", "rename-quoted,trigger-webhook-to-cron"]) == 0
    data = json.loads((out / "results.json").read_text())
    assert [s["id"] for s in data["scenarios"]] == ["rename-quoted", "trigger-webhook-to-cron"]
    assert (out / "report.md").exists() and (out / "report.html").exists()
    assert (
        cli.main(
            [
                "compare",
                str(out / "results.json"),
                str(out / "results.json"),
                "--out",
                str(tmp_path),
            ]
        )
        == 0
    )
    assert "0 scenario(s) changed outcome." in capsys.readouterr().out
    assert cli.main([*args, "--category", "nonsense"]) == 2
    assert cli.main([*args, "--prompt", "planner=v9"]) == 2
    assert cli.main([*args, "--scenario", "rename-quoted", "--fail-under", "1.01"]) == 1


def test_register_adds_eval_and_prompts_commands() -> None:
    parser = argparse.ArgumentParser(prog="planwright")
    cli.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["eval", "run", "--model", "offline", "--prompt", "planner=v1"])
    assert args.run is not None and args.model == "offline" and args.prompt == ["planner=v1"]
    args = parser.parse_args(["eval", "compare", "a.json", "b.json"])
    assert (args.a, args.b) == ("a.json", "b.json")
    assert parser.parse_args(["prompts", "push", "--dry-run"]).dry_run


def test_prompt_args() -> None:
    assert parse_prompt_args(["planner=1", "router=v1"]) == {"planner": "v1", "router": "v1"}
    with pytest.raises(ValueError):
        parse_prompt_args(["planner"])


def test_prompts_push_without_langfuse_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("LANGFUSE_PUBLIC_KEY", raising=False)
    monkeypatch.delenv("LANGFUSE_SECRET_KEY", raising=False)
    assert cli.main(["prompts", "push"]) == 2


def test_results_json_keeps_each_scenarios_final_yaml(scripted_run: EvalRun) -> None:
    data = results_dict(scripted_run)
    for entry, result in zip(data["scenarios"], scripted_run.results, strict=True):
        assert entry["final_yaml"] == result.runs[0].outcome.after_yaml


def test_compare_shows_per_scenario_output_diffs(scripted_run: EvalRun) -> None:
    a = results_dict(scripted_run)
    b = copy.deepcopy(a)
    changed = b["scenarios"][1]
    changed["final_yaml"] = changed["final_yaml"].replace("name:", "name: Renamed", 1) + "x: 1\n"
    del b["scenarios"][2]["final_yaml"]  # e.g. a results.json from before final_yaml
    text = compare(a, b)
    assert "## Output diffs (final workflow, A -> B)" in text
    assert "1 scenario(s) produced a different workflow" in text
    assert f"No final YAML to compare (older results.json?): {b['scenarios'][2]['id']}." in text
    section = text.split(f"### {changed['id']}\n", 1)[1]
    assert section.startswith("\n```diff\n")
    assert f"+++ B/{changed['id']}.yaml" in section and "+x: 1" in section
    rows = {line.split(" | ")[0][2:]: line for line in text.splitlines() if line.startswith("| ")}
    assert "| differs |" in rows[changed["id"]]
    assert "| same |" in rows[a["scenarios"][0]["id"]]
    assert "| - |" in rows[b["scenarios"][2]["id"]]


def test_compare_masks_minted_ids(scripted_run: EvalRun) -> None:
    """Every run mints fresh UUIDs: an id-only difference is the same output."""
    a = results_dict(scripted_run)
    b = copy.deepcopy(a)
    entry = next(s for s in b["scenarios"] if "id: " in s["final_yaml"])
    entry["final_yaml"] = entry["final_yaml"].replace(
        "id: ", "id: 0a9b8c7d-6e5f-4d3c-2b1a-0c3f8f0a4444\n    x_old_id: ", 1
    )
    first_a = next(s for s in a["scenarios"] if s["id"] == entry["id"])
    first_a["final_yaml"] = entry["final_yaml"].replace(
        "0a9b8c7d-6e5f-4d3c-2b1a-0c3f8f0a4444", "11111111-2222-4333-8444-555555555555"
    )
    text = compare(a, b)
    assert f"### {entry['id']}" not in text
    assert "0 scenario(s) produced a different workflow" in text
