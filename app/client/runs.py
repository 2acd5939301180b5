"""Test runs in the terminal (DESIGN §5c): what ``/run @input.json [@responses.json]``
sends, a ``run.progress`` frame as a status line, a finished run as readable lines, and
the errors-mode text ``/fix`` hands the planner for a failed run.

Pure functions over the wire data (``tools.testrun``'s models check the files before
anything is sent) but for :func:`read_run_files`, which reads the files.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import TypeAdapter, ValidationError

from tools.document import WorkflowDocument
from tools.testrun import SampleResponse

Paint = Callable[[str, str], str]

FIX_CONTENT = "Fix the failed test run"
"""The turn ``/fix`` sends (api.md: errors mode from a failed run)."""
ERRORS_LIMIT = 20_000
"""The longest ``errors`` a turn frame takes (the server's ``TurnFrame.errors`` bound)."""
INPUT_JSON_LIMIT = 8_000
"""How much of the failed step's input JSON ``/fix`` sends, so the errors stay in bounds."""
ERROR_TEXT_LIMIT = 4_000
"""How much of the step's error ``/fix`` sends (a stack trace can be long)."""
REQUESTS_LIMIT = 10
"""How many unanswered requests ``/fix`` names."""
LOG_LINES = 5
"""Log lines of a failed step shown with the result."""
FIXABLE = ("failed", "timed_out")
STATUS_WORDS = {
    "succeeded": ("✓", "green", "succeeded"),
    "failed": ("✗", "red", "failed"),
    "timed_out": ("✗", "red", "timed out"),
    "unsupported": ("!", "yellow", "could not run here (unsupported)"),
}
_RESPONSES = TypeAdapter(list[SampleResponse])


def _plain(text: str, style: str) -> str:
    return text


@dataclass(frozen=True)
class RunFiles:
    """What a ``/run`` sends besides its type: the input state and sample responses."""

    input: dict[str, Any] | None = None
    responses: list[dict[str, Any]] = field(default_factory=list)

    def frame(self) -> dict[str, Any]:
        """The ``run`` frame (input left out: the server's empty input)."""
        frame: dict[str, Any] = {"type": "run"}
        if self.input is not None:
            frame["input"] = self.input
        if self.responses:
            frame["responses"] = self.responses
        return frame


USAGE = "Usage: /run [@input.json [@responses.json]]  (no file: an empty input)"


def _load_json(path: str) -> Any:
    """The file's JSON, or a string saying why it cannot be read."""
    try:
        with open(path, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        return f"Cannot read {path}: {exc.strerror or exc}"
    except UnicodeDecodeError:
        return f"Cannot read {path}: it is not UTF-8 text"
    try:
        return json.loads(text)
    except ValueError as exc:
        return f"{path} is not valid JSON: {exc}"


def _problem(exc: ValidationError) -> str:
    first = exc.errors()[0]
    where = first["loc"]
    item = f"response {int(where[0]) + 1}" if where and isinstance(where[0], int) else "it"
    fields = ".".join(str(p) for p in where[1:])
    return f"{item}: {fields + ': ' if fields else ''}{first['msg']}"


def read_run_files(argument: str) -> RunFiles | str:
    """The input and sample responses ``/run`` names (``@input.json``, then optionally
    ``@responses.json``), checked; a string: what is wrong (nothing is sent)."""
    try:
        words = shlex.split(argument)
    except ValueError as exc:
        return f"{USAGE} ({exc})"
    if len(words) > 2 or any(not w.startswith("@") or len(w) < 2 for w in words):
        return USAGE
    paths = [w[1:] for w in words]
    state: dict[str, Any] | None = None
    responses: list[dict[str, Any]] = []
    if paths:
        loaded = _load_json(paths[0])
        if isinstance(loaded, str):
            return loaded
        if not isinstance(loaded, dict):
            return (
                f"{paths[0]}: the input must be a JSON object, the initial state "
                '{"data": {...}} (a bare object is taken as data)'
            )
        state = loaded
    if len(paths) == 2:
        loaded = _load_json(paths[1])
        if isinstance(loaded, str):
            return loaded
        if isinstance(loaded, dict) and isinstance(loaded.get("responses"), list):
            loaded = loaded["responses"]  # {"responses": [...]}, as a run request holds them
        if not isinstance(loaded, list):
            return (
                f"{paths[1]}: the sample responses must be a JSON list of "
                "{method, url, status, body}"
            )
        try:
            checked = _RESPONSES.validate_python(loaded)
        except ValidationError as exc:
            return f"{paths[1]}: {_problem(exc)}"
        responses = [r.model_dump(mode="json") for r in checked]
    return RunFiles(state, responses)


def step_names(yaml_text: str) -> dict[str, str]:
    """Job key -> display name in the workflow (empty when it cannot be read)."""
    try:
        jobs = WorkflowDocument.from_yaml(yaml_text).structure.jobs
    except Exception:
        return {}
    return {key: job.name or key for key, job in jobs.items()}


def duration_text(ms: Any) -> str:
    if not isinstance(ms, int | float):
        return "?"
    return f"{int(ms)} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def progress_line(
    frame: dict[str, Any], names: dict[str, str]
) -> tuple[Literal["spinner", "settled", "failed"], str]:
    """A run.progress frame as a status line: ``started`` spins; ``succeeded`` and
    ``failed`` settle, naming the step."""
    key = str(frame.get("step_key", ""))
    name = names.get(key, key)
    label = f"{name} ({key})" if name != key else key
    status = frame.get("status")
    if status == "started":
        return "spinner", f"Running {label}…"
    if status == "failed":
        return "failed", f"{label} failed"
    return "settled", f"{label} ran"


def render_run(run: dict[str, Any], names: dict[str, str], paint: Paint = _plain) -> list[str]:
    """A finished test run as lines: its status and summary, each step with its status
    and duration (a failed step's error under it), the requests no sample answered, the
    steps the runtime could not load here, and the run's own error."""
    status = str(run.get("status", ""))
    mark, style, words = STATUS_WORDS.get(status, ("?", "yellow", status))
    version = f" of v{run['version']}" if run.get("version") is not None else ""
    if run.get("draft"):  # a review-mode draft's run: not the saved version itself
        version = f" of the draft made from v{run['version']}" if version else " of the draft"
    lines = [
        paint(f"{mark} Test run{version}: {words} ({duration_text(run.get('duration_ms'))})", style)
    ]
    if run.get("summary"):
        lines.append(f"  {run['summary']}")
    steps = run.get("steps") or []
    if steps:
        width = max(len(f"{s.get('name') or s.get('key')} ({s.get('key')})") for s in steps)
        for step in steps:
            ok = step.get("status") == "succeeded"
            label = f"{step.get('name') or step.get('key')} ({step.get('key')})"
            cut = paint("  (output cut to the limit)", "dim") if step.get("truncated") else ""
            lines.append(
                f"  {paint('✓' if ok else '✗', 'green' if ok else 'red')} {label.ljust(width)}  "
                f"{step.get('status', '')!s:<9}  {duration_text(step.get('duration_ms')):>8}" + cut
            )
            if step.get("error"):
                for number, text in enumerate(str(step["error"]).splitlines() or [""]):
                    prefix = "error: " if number == 0 else "       "
                    lines.append(paint(f"      {prefix}{text}", "red"))
            if not ok:  # what a failed step logged is often why
                logs = [str(x) for x in step.get("logs") or []]
                for text in logs[:LOG_LINES]:
                    lines.append(paint(f"      log: {text}", "dim"))
                if len(logs) > LOG_LINES:
                    lines.append(paint(f"      … {len(logs) - LOG_LINES} more log lines", "dim"))
    elif status != "unsupported":
        lines.append("  No step ran.")
    unmatched = [r for r in run.get("requests") or [] if not r.get("matched")]
    if unmatched:
        lines.append("  Requests no sample response answered (the step got an error):")
        for request in unmatched:
            key = request.get("step_key")
            by = f"  ({names.get(key, key)})" if key else ""
            lines.append(f"    {request.get('method', '?')} {request.get('url', '?')}{by}")
    unsupported = run.get("unsupported") or []
    if unsupported:
        lines.append("  Steps OpenFn's runtime cannot load here:")
        for item in unsupported:
            key = str(item.get("key", ""))
            lines.append(f"    {names.get(key, key)} ({key}): {item.get('reason', '')}")
    if run.get("error"):
        lines.append(paint(f"  {run['error']}", "red"))
    if status in FIXABLE:
        lines.append(paint("  /fix hands the failure to the planner.", "dim"))
    return lines


def failed_step(run: dict[str, Any]) -> dict[str, Any] | None:
    return next((s for s in run.get("steps") or [] if s.get("status") == "failed"), None)


def fix_errors(run: dict[str, Any], names: dict[str, str]) -> str | None:
    """What ``/fix`` sends as the turn's ``errors`` for a failed (or timed out) run: the
    failed step's name and key, its error, the requests it made that no sample answered
    and its input JSON (cut to :data:`INPUT_JSON_LIMIT`); None: nothing to fix."""
    if run.get("status") not in FIXABLE:
        return None
    version = f" of version {run['version']}" if run.get("version") is not None else ""
    words = STATUS_WORDS[str(run["status"])][2]
    lines = [f"A test run{version} of the workflow {words}."]
    step = failed_step(run)
    if step is None and run.get("steps"):
        step = run["steps"][-1]  # timed out: the last step that started
        lines.append("The last step that started:")
    if step is not None:
        key = str(step.get("key", ""))
        name = step.get("name") or names.get(key, key)
        lines.append(f'Failed step: "{name}" (key {key})')
        if step.get("error"):
            lines.append(f"Error: {_cut(str(step['error']), ERROR_TEXT_LIMIT, 'error')}")
        unmatched = [
            f"{r.get('method')} {r.get('url')}"
            for r in run.get("requests") or []
            if not r.get("matched") and r.get("step_key") in (None, key)
        ]
        if unmatched:
            more = len(unmatched) - REQUESTS_LIMIT
            lines.append(
                "Requests no sample answered: "
                + "; ".join(unmatched[:REQUESTS_LIMIT])
                + (f"; and {more} more" if more > 0 else "")
            )
    if run.get("error"):
        lines.append(f"Run error: {_cut(str(run['error']), ERROR_TEXT_LIMIT, 'error')}")
    if step is not None:
        text = json.dumps(step.get("input"), indent=2, ensure_ascii=False, default=str)
        lines.append("Input of the step (JSON):")
        lines.append(_cut(text, INPUT_JSON_LIMIT, "input"))
    return "\n".join(lines)[:ERRORS_LIMIT]  # the parts are bounded; this is a last guard


def _cut(text: str, limit: int, what: str) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({what} cut)"
