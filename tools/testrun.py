"""What a test run is asked and what it reports (DESIGN §5c): pure data, shared by the
service, the chat tool `test_run`, the runner (`agents/testrun`), the evals and the web page.

A test run executes a workflow's ``cli`` export in OpenFn's own runtime (the pinned
npm ``@openfn/runtime`` with the real adaptors) on a sample input. No HTTP call
leaves the machine: a call matching a :class:`SampleResponse` gets it, any other
gets an error the step sees and the run lists in ``requests``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

RunStatus = Literal["succeeded", "failed", "timed_out", "unsupported"]
StepStatus = Literal["succeeded", "failed"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class SampleResponse(_Model):
    """One answer an outbound HTTP call of the run may get."""

    method: str = Field(
        "GET",
        min_length=1,
        max_length=10,
        pattern=r"^[A-Za-z]+$",
        description="HTTP method (any case).",
    )
    url: str = Field(
        min_length=1,
        max_length=2000,
        description="Absolute URL; ending in *, a prefix.",
    )
    status: int = Field(200, ge=100, le=599, description="HTTP status.")
    body: Any = Field(None, description="JSON body (a string is text).")
    headers: dict[str, str] = Field(
        default_factory=dict, description="Headers, if the step reads any."
    )


class RunRequest(_Model):
    """What a test run is given (``POST /v1/workflows/{id}/runs``, the ``run`` frame,
    the chat tool)."""

    version: int | None = Field(None, ge=1, strict=True)
    """The workflow version to run; the current one when left out."""
    input: dict[str, Any] = Field(default_factory=lambda: {"data": {}})
    """The initial state (``{"data": {...}}``); a bare object is taken as ``data``."""
    responses: list[SampleResponse] = Field(default_factory=list, max_length=200)
    """Sample answers for the run's outbound HTTP calls."""
    credentials: dict[str, dict[str, Any]] | None = Field(None, max_length=100)
    """The run's credential map, as ``openfn … --creds creds.json`` reads it: credential
    name -> its configuration (``{"payer-portal": {"baseUrl": ..., "username": ...}}``).
    A step gets the entry its credential names and nothing else; a step without a
    credential runs with no configuration, as in OpenFn's CLI. Never stored, never
    traced, never logged."""
    configuration: dict[str, Any] | None = None
    """The older single configuration: the value of every credential a step names that
    ``credentials`` does not give (never given to a step that names none). Never
    stored, never traced, never logged."""
    timeout_s: float | None = Field(None, gt=0)
    """Wall-clock limit for the whole run; the service's default when left out. No upper
    bound here: the service refuses more than its ``PLANWRIGHT_RUN_MAX_TIMEOUT_S`` with
    its own code, ``timeout_too_long`` (``app/runs.py``), and the runner never waits
    longer than ``agents.testrun.limits.MAX_TIMEOUT_S`` whoever asks."""


class StepRun(_Model):
    """One step that ran, in the order it started (a step reached twice appears twice)."""

    key: str
    """The step's job key."""
    name: str
    status: StepStatus
    duration_ms: int
    input: Any = None
    """The state the step started with."""
    output: Any = None
    """The state it ended with (cut to the output limit, see ``truncated``)."""
    error: str | None = None
    logs: list[str] = Field(default_factory=list)
    """What the step's code logged (``console.log`` and the adaptor's logger)."""
    truncated: bool = False
    """Its input, output or logs were cut to the run's output limit."""


class EdgeRun(_Model):
    """Whether an edge fired when its source finished (or the trigger started)."""

    source: str
    """A job key or the trigger key."""
    target: str
    fired: bool


class RequestRecord(_Model):
    """One outbound HTTP call a step made."""

    step_key: str | None = None
    method: str
    url: str
    status: int | None = None
    """What the step got: the sample's status, or ``None`` when it got an error."""
    matched: bool
    """A sample answered it; ``False``: the step got an error instead."""


class UnsupportedStep(_Model):
    """A step the runtime cannot load here, and why (never a wrong result)."""

    key: str
    reason: str


class StandIn(_Model):
    """A step's pinned adaptor version is not installed here: the installed version of the
    same major version ran it instead (a run says so rather than pass for the pin)."""

    key: str
    adaptor: str
    """The npm package, e.g. ``@openfn/language-http``."""
    pinned: str
    ran: str


class TestRun(_Model):
    """A finished test run, as stored and as every client reads it."""

    __test__ = False  # not a pytest class

    run_id: str
    workflow_id: str | None = None
    version: int | None = None
    status: RunStatus
    steps: list[StepRun] = Field(default_factory=list)
    edges: list[EdgeRun] = Field(default_factory=list)
    requests: list[RequestRecord] = Field(default_factory=list)
    unsupported: list[UnsupportedStep] = Field(default_factory=list)
    final_state: Any = None
    error: str | None = None
    """Why the run as a whole failed, timed out or could not start."""
    summary: str = ""
    """The run in plain words, for people (never parsed)."""
    duration_ms: int = 0
    draft: bool = False
    """It ran a review-mode draft made from ``version``, not the version itself."""
    runtime: dict[str, str] = Field(default_factory=dict)
    """Package -> version that ran it (``@openfn/runtime``, each adaptor)."""
    stand_ins: list[StandIn] = Field(default_factory=list)
    """Steps whose pinned adaptor version ran as another installed version."""
    created_at: str | None = None
    created_by: str | None = None

    @property
    def failed_step(self) -> StepRun | None:
        """The first step that failed, if any."""
        return next((s for s in self.steps if s.status == "failed"), None)
