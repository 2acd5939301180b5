from __future__ import annotations

from typing import Any

from pydantic import Field

from tools.base import ReadOutput, ToolArgs, ToolContext, ToolSpec
from tools.document import WorkflowDocument
from tools.errors import ToolInputError
from tools.testrun import SampleResponse


class TestRunArgs(ToolArgs):
    """Run the workflow in OpenFn's runtime on a sample input: which steps ran, what each
    produced, which branch each decision took, where it failed. HTTP calls get the
    matching sample response (else an error); nothing leaves the machine or changes."""

    __test__ = False

    input: dict[str, Any] | None = Field(
        None,
        description=(
            'The initial state the user gave: {"data": {...}} (a bare object is the '
            "data). Left out when there is no sample."
        ),
    )
    responses: list[SampleResponse] = Field(
        default_factory=list,
        description=("Sample answers the user gave for the steps' HTTP calls."),
    )


def test_run(doc: WorkflowDocument, args: TestRunArgs, ctx: ToolContext) -> ReadOutput:
    """Validate the request; the agent graph runs the workflow itself (``TurnRuntime.runner``)."""
    if not doc.structure.jobs:
        raise ToolInputError("The workflow has no steps to run yet.", code="nothing_to_run")
    return ReadOutput(
        "Test run requested.",
        {
            "input": args.input,
            "responses": [r.model_dump(mode="json") for r in args.responses],
        },
    )


test_run.__test__ = False  # type: ignore[attr-defined]

TOOL = ToolSpec(
    "test_run",
    TestRunArgs,
    "run",
    test_run,
    spinner="Test-running the workflow…",
    action="test-run the workflow",
)
