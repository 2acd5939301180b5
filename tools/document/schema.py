"""Pydantic models of the workflow document: shape validation and JSON Schema.

These models check types on load (a ``name: 123`` or a list where a mapping
belongs is rejected with the path that is wrong) and are the source of the
published JSON Schema. Unknown fields are allowed everywhere: Lightning puts
more in a workflow than Planwright edits, and all of it must survive.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr, ValidationError

from tools.errors import DocumentError

SCHEMA_VERSION = 1
SCHEMA_PATH = Path(__file__).parent / "data" / "schema" / f"workflow.v{SCHEMA_VERSION}.json"


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


class JobModel(_Open):
    id: StrictStr | None = Field(None, description="Server-minted UUID; never edited by tools.")
    name: StrictStr = Field(description="Display name, unique in the workflow, at most 100 chars.")
    adaptor: StrictStr = Field(description="Adaptor package, e.g. '@openfn/language-http@latest'.")
    credential: StrictStr | None = Field(
        None,
        description="Name of the OpenFn credential the step runs with (a name, never a secret).",
    )
    body: StrictStr | None = Field(None, description="The step's JavaScript job code.")


class TriggerModel(_Open):
    id: StrictStr | None = None
    type: Literal["webhook", "cron"]
    enabled: StrictBool = False
    cron_expression: StrictStr | None = Field(None, description="5-field cron; cron triggers.")
    cron_cursor_job_id: StrictStr | None = Field(None, description="Id of a job (cron cursor).")
    webhook_reply: Any = None
    webhook_response_config: Any = None
    custom_path: StrictStr | None = None


class EdgeModel(_Open):
    id: StrictStr | None = None
    source_trigger: StrictStr | None = Field(None, description="Trigger key; or source_job.")
    source_job: StrictStr | None = Field(None, description="Job key; or source_trigger.")
    target_job: StrictStr
    condition_type: Literal["always", "on_job_success", "on_job_failure", "js_expression"] = (
        "always"
    )
    condition_expression: StrictStr | None = Field(
        None, description="JavaScript expression; required iff condition_type is js_expression."
    )
    condition_label: StrictStr | None = None
    enabled: StrictBool = True


class WorkflowModel(_Open):
    """One OpenFn-style workflow: jobs, triggers and the edges between them."""

    name: StrictStr | None = None
    jobs: dict[str, JobModel] | None = None
    triggers: dict[str, TriggerModel] | None = None
    edges: dict[str, EdgeModel] | None = None


def check_shape(data: Any) -> None:
    """Raise :class:`DocumentError` naming every field of the wrong type."""
    if data is None:
        return
    if not isinstance(data, dict):
        raise DocumentError(
            f"The document must be a mapping at the top level, not {type(data).__name__}.",
            code="invalid_root",
        )
    for section in ("jobs", "triggers", "edges"):
        entries = data.get(section)
        if isinstance(entries, dict):
            bad = [k for k in entries if not isinstance(k, str)]
            if bad:
                raise DocumentError(
                    f"{section}: keys must be strings, got {bad[0]!r}.",
                    code="invalid_field",
                    field=section,
                )
    try:
        WorkflowModel.model_validate(data)
    except ValidationError as exc:
        errors = exc.errors()[:10]
        paths = [".".join(str(p) for p in err["loc"]) for err in errors]
        problems = [f"{path}: {err['msg']}" for path, err in zip(paths, errors, strict=True)]
        raise DocumentError(
            "The document has fields of the wrong type: " + "; ".join(problems),
            code="invalid_field",
            field=paths[0],  # the first of them, as an import error names its field
        ) from exc


def workflow_json_schema() -> dict[str, Any]:
    schema = WorkflowModel.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = f"https://planwright.dev/schema/workflow.v{SCHEMA_VERSION}.json"
    return schema


def render_json_schema() -> str:
    return json.dumps(workflow_json_schema(), indent=2, sort_keys=True) + "\n"
