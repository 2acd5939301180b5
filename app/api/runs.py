"""Test runs over REST (DESIGN §5c): run a workflow on a sample, read runs back.

Any principal may run a workflow it may read, reviewers too: a run changes no workflow.
The handlers are thin; :class:`app.runs.RunService` resolves, runs, clears and stores.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, status
from pydantic import BaseModel, Field, model_validator

from app.deps import PrincipalDep, ServicesDep
from app.text import PathId
from tools.document.yaml_io import is_unstorable
from tools.testrun import RunRequest, TestRun

router = APIRouter(tags=["runs"])

RunId = Annotated[str, Path(max_length=200, pattern=r"^[A-Za-z0-9_-]+$")]


def _storable(value: Any, where: str) -> None:
    if isinstance(value, dict):
        for key, item in value.items():
            _storable(key, where)
            _storable(item, where)
    elif isinstance(value, list):
        for item in value:
            _storable(item, where)
    elif isinstance(value, str) and is_unstorable(value):
        raise ValueError(f"{where} must not contain NUL characters or unpaired surrogates")


class CreateRun(RunRequest):
    """``POST /v1/workflows/{id}/runs``: what to run it on (every field optional)."""

    @model_validator(mode="after")
    def _storable_text(self) -> CreateRun:
        # The run stores and returns its input and what the steps saw: text that no
        # database or response can hold is refused here, as in every other body.
        _storable(self.input, "input")
        _storable([r.model_dump(mode="json") for r in self.responses], "responses")
        _storable(self.configuration, "configuration")
        _storable(self.credentials, "credentials")
        return self


class RunList(BaseModel):
    runs: list[TestRun] = Field(description="Newest first, at most the limit.")


@router.post("/v1/workflows/{workflow_id}/runs", status_code=status.HTTP_201_CREATED)
async def create_run(
    workflow_id: PathId,
    services: ServicesDep,
    principal: PrincipalDep,
    body: Annotated[CreateRun | None, Body()] = None,
) -> TestRun:
    """Run the workflow (``version``, else its current one) in OpenFn's runtime on the
    sample ``input``; outbound HTTP calls get the matching ``responses`` (none leaves the
    machine); ``configuration`` is this run's credentials, never stored. The run is
    stored and returned whatever its status; 503 ``openfn_runtime_unavailable`` when the
    runtime is not installed here."""
    return await services.runs.run(workflow_id, body or CreateRun(), author=principal.author)


@router.get("/v1/workflows/{workflow_id}/runs")
async def list_runs(
    workflow_id: PathId,
    services: ServicesDep,
    principal: PrincipalDep,
    limit: Annotated[int | None, Query(ge=1, le=1000)] = None,
) -> RunList:
    """The workflow's test runs, newest first (at most ``limit``, bounded by the server)."""
    return RunList(runs=await services.runs.list(workflow_id, limit=limit))


@router.get("/v1/runs/{run_id}")
async def get_run(run_id: RunId, services: ServicesDep, principal: PrincipalDep) -> TestRun:
    return await services.runs.get(run_id)
