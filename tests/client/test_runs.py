"""Test runs in the terminal client: the files ``/run`` reads (and refuses), progress
lines, a finished run as text, and the errors ``/fix`` sends."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.client import runs
from tests.client import frames


def write(folder: Path, name: str, content: object) -> str:
    path = folder / name
    path.write_text(content if isinstance(content, str) else json.dumps(content), "utf-8")
    return str(path)


def test_no_file_is_an_empty_input(tmp_path: Path) -> None:
    files = runs.read_run_files("")
    assert files == runs.RunFiles()
    assert isinstance(files, runs.RunFiles) and files.frame() == {"type": "run"}


def test_input_and_responses_files_become_the_run_frame(tmp_path: Path) -> None:
    sample = write(tmp_path, "sample.json", {"data": {"patient": "p-1"}})
    responses = write(
        tmp_path,
        "responses.json",
        [{"method": "get", "url": "https://fhir.example/*", "body": {"plan": "HMO"}}],
    )
    files = runs.read_run_files(f"@{sample} @{responses}")
    assert isinstance(files, runs.RunFiles)
    assert files.frame() == {
        "type": "run",
        "input": {"data": {"patient": "p-1"}},
        "responses": [
            {
                "method": "get",
                "url": "https://fhir.example/*",
                "status": 200,
                "body": {"plan": "HMO"},
                "headers": {},
            }
        ],
    }
    # {"responses": [...]} (a run request's own shape) is read the same; quoted paths work.
    spaced = write(
        tmp_path, "my responses.json", {"responses": json.loads(Path(responses).read_text())}
    )
    again = runs.read_run_files(f"@{sample} '@{spaced}'")
    assert again == files


@pytest.mark.parametrize(
    ("argument", "problem"),
    [
        ("sample.json", runs.USAGE),
        ("@a @b @c", runs.USAGE),
        ("@", runs.USAGE),
        ("@'unclosed", runs.USAGE),
        ("@missing.json", "Cannot read missing.json: No such file or directory"),
        ("@bad.json", "bad.json is not valid JSON: Expecting ',' delimiter: line 1 column 13"),
        ("@list.json", "list.json: the input must be a JSON object"),
        ("@good.json @object.json", "object.json: the sample responses must be a JSON list"),
        ("@good.json @no_url.json", "no_url.json: response 2: url: Field required"),
        ("@good.json @bad_status.json", "bad_status.json: response 1: status: Input should be"),
    ],
)
def test_bad_files_say_what_is_wrong(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, argument: str, problem: str
) -> None:
    monkeypatch.chdir(tmp_path)
    write(tmp_path, "bad.json", '{"data": {} "x": 1}')
    write(tmp_path, "list.json", [1, 2])
    write(tmp_path, "good.json", {"data": {}})
    write(tmp_path, "object.json", {"url": "https://x.example"})
    write(tmp_path, "no_url.json", [{"url": "https://x.example"}, {"status": 404}])
    write(tmp_path, "bad_status.json", [{"url": "https://x.example", "status": 99}])
    result = runs.read_run_files(argument)
    assert isinstance(result, str) and result.startswith(problem), result


def test_progress_lines_name_the_step() -> None:
    names = runs.step_names(frames.DOC)
    assert names == {"fetch": "Get referrals", "check": "Check coverage", "notify": "Notify clinic"}
    assert runs.progress_line(frames.progress("fetch", "started"), names) == (
        "spinner",
        "Running Get referrals (fetch)…",
    )
    assert runs.progress_line(frames.progress("fetch", "succeeded"), names) == (
        "settled",
        "Get referrals (fetch) ran",
    )
    assert runs.progress_line(frames.progress("gone", "failed"), names) == ("failed", "gone failed")


def test_a_failed_run_shows_each_step_the_error_and_the_unmatched_request() -> None:
    lines = runs.render_run(frames.failed_run(), runs.step_names(frames.DOC))
    assert lines == [
        "✗ Test run of v3: failed (1.4 s)",
        "  Ran 2 of 3 steps; Check coverage failed.",
        "  ✓ Get referrals (fetch)   succeeded     42 ms",
        "  ✗ Check coverage (check)  failed        1.2 s",
        "      error: Error: no sample response for GET https://fhir.example/Coverage",
        "                 at request",
        "      log: looking up coverage",
        "  Requests no sample response answered (the step got an error):",
        "    GET https://fhir.example/Coverage  (Check coverage)",
        "  /fix hands the failure to the planner.",
    ]


def test_a_succeeded_run_lists_steps_and_offers_no_fix() -> None:
    lines = runs.render_run(frames.succeeded_run(), {})
    assert lines[0] == "✓ Test run of v3: succeeded (1.4 s)"
    assert [line.split()[1] for line in lines[2:]] == ["Get", "Check", "Notify"]
    assert not any("/fix" in line or "Requests" in line for line in lines)


def test_timed_out_and_unsupported_runs_say_why() -> None:
    timed = frames.failed_run(
        status="timed_out",
        steps=[],
        requests=[],
        error="The run took longer than 20 s.",
        summary="",
    )
    assert runs.render_run(timed, {}) == [
        "✗ Test run of v3: timed out (1.4 s)",
        "  No step ran.",
        "  The run took longer than 20 s.",
        "  /fix hands the failure to the planner.",
    ]
    unsupported = frames.failed_run(
        status="unsupported",
        steps=[],
        requests=[],
        unsupported=[{"key": "check", "reason": "imports 'fs', which the runtime cannot load"}],
        summary="Nothing ran.",
    )
    lines = runs.render_run(unsupported, runs.step_names(frames.DOC))
    assert lines[0] == "! Test run of v3: could not run here (unsupported) (1.4 s)"
    assert lines[2:] == [
        "  Steps OpenFn's runtime cannot load here:",
        "    Check coverage (check): imports 'fs', which the runtime cannot load",
    ]


def test_fix_errors_carry_the_failed_step_its_error_and_its_input() -> None:
    errors = runs.fix_errors(frames.failed_run(), {})
    assert errors is not None
    head, _, body = errors.partition("Input of the step (JSON):\n")
    assert head.splitlines() == [
        "A test run of version 3 of the workflow failed.",
        'Failed step: "Check coverage" (key check)',
        "Error: Error: no sample response for GET https://fhir.example/Coverage",
        "    at request",
        "Requests no sample answered: GET https://fhir.example/Coverage",
    ]
    assert json.loads(body) == {"data": {"patient": {"id": "p-1", "plan": "BlueCross HMO"}}}
    assert runs.fix_errors(frames.succeeded_run(), {}) is None
    assert runs.fix_errors(frames.failed_run(status="unsupported"), {}) is None


def test_fix_errors_stay_within_what_a_turn_takes() -> None:
    run = frames.failed_run()
    run["steps"][1]["input"] = {"data": {"rows": ["x" * 100] * 500}}
    run["steps"][1]["error"] = "E" * 15_000
    run["requests"] = [
        {"step_key": "check", "method": "GET", "url": f"https://x.example/{n}", "matched": False}
        for n in range(30)
    ]
    errors = runs.fix_errors(run, {})
    assert errors is not None and len(errors) <= runs.ERRORS_LIMIT
    assert "\n… (error cut)\n" in errors
    assert errors.endswith("\n… (input cut)")  # the end is still there: nothing cut blindly
    assert "https://x.example/9; and 20 more\n" in errors
    short = runs.fix_errors(frames.failed_run(), {})
    assert short is not None and "(input cut)" not in short


def test_a_timed_out_run_names_the_last_step_that_started() -> None:
    run = frames.failed_run(status="timed_out", error="The run took longer than 20 s.")
    run["steps"] = run["steps"][:1]
    errors = runs.fix_errors(run, {})
    assert errors is not None
    assert errors.splitlines()[:4] == [
        "A test run of version 3 of the workflow timed out.",
        "The last step that started:",
        'Failed step: "Get referrals" (key fetch)',
        "Run error: The run took longer than 20 s.",
    ]
