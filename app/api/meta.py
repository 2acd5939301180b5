"""Service metadata: health, the document JSON Schema, the tool definitions, and a cron
expression's next runs (counted from the store's clock)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from app.deps import ServicesDep, SettingsDep
from tools.document.cron import cron_problem, next_runs, runs_text
from tools.document.schema import workflow_json_schema
from tools.errors import ToolInputError
from tools.registry import tool_definitions

router = APIRouter(tags=["meta"])


@router.get("/healthz")
def health(settings: SettingsDep) -> dict[str, str]:
    return {"status": "ok", "model": "anthropic" if settings.uses_anthropic else "offline"}


@router.get("/v1/schema/workflow")
def workflow_schema() -> dict[str, Any]:
    return workflow_json_schema()


@router.get("/v1/tools")
def tools(read_only: bool = False) -> list[dict[str, Any]]:
    return tool_definitions(read_only=read_only)


@router.get("/v1/cron/next-runs")
def cron_next_runs(
    services: ServicesDep,
    expr: str,  # its length is cron_problem's to refuse, as invalid_cron
    count: Annotated[int, Query(ge=1, le=20)] = 3,
) -> dict[str, Any]:
    """The next ``count`` times ``expr`` fires (UTC), from now on the store's clock;
    an expression OpenFn cannot schedule is a 422 saying why."""
    if problem := cron_problem(expr):
        raise ToolInputError(problem, code="invalid_cron")
    runs = next_runs(" ".join(expr.split()), services.store.now(), count)
    return {"expr": expr, "runs": [run.isoformat() for run in runs], "text": runs_text(runs)}
