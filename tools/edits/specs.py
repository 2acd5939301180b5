"""Input models shared by several tools (JobSpec, EdgeSpec, TriggerSpec)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from tools.base import ToolArgs

ConditionTypeArg = Literal["always", "on_job_success", "on_job_failure", "js_expression"]


class JobSpec(ToolArgs):
    """A new step."""

    key: str | None = Field(
        None,
        description="Stable key for the step (letters, digits, '-' or '_'). Leave it out to "
        "derive it from the name ('Check coverage' -> 'check-coverage').",
    )
    name: str = Field(
        description="Display name users see; unique in the workflow, at most 100 characters."
    )
    adaptor: str = Field(
        description="Adaptor the step uses: a short name ('http', 'fhir'), a package "
        "('@openfn/language-http') or a pinned package ('@openfn/language-http@6.5.1'). "
        "Without a version it is pinned to the version the catalogue lists as current; "
        "'@latest' only when the user asks for it."
    )


class EdgeFields(ToolArgs):
    condition_type: ConditionTypeArg | None = Field(
        None,
        description="When the target runs: 'always', 'on_job_success', 'on_job_failure' or "
        "'js_expression'. New edges default to 'on_job_success' from a step and 'always' "
        "from a trigger.",
    )
    condition_expression: str | None = Field(
        None,
        description="JavaScript expression over state, e.g. \"state.data.plan === 'HMO'\". "
        "Required for (and only for) js_expression edges.",
    )
    condition_label: str | None = Field(
        None, description="Short human label for the condition, e.g. 'HMO members'."
    )
    enabled: bool | None = Field(None, description="Whether the edge is active (default true).")


class EdgeSpec(EdgeFields):
    """A new edge between two nodes."""

    source: str = Field(description="Key of the step or trigger the edge leaves from.")
    target: str = Field(description="Key of the step the edge leads to.")


class TriggerSpec(ToolArgs):
    """The workflow's trigger: a webhook or a cron schedule."""

    type: Literal["webhook", "cron"] = Field(description="'webhook' or 'cron'.")
    key: str | None = Field(
        None,
        description="Trigger key. Leave it out to replace the workflow's only trigger, or to "
        "create one keyed by its type.",
    )
    enabled: bool | None = Field(
        None, description="Turn the trigger on or off. New triggers start disabled."
    )
    cron_expression: str | None = Field(
        None, description="5-field cron (minute hour day month weekday), e.g. '0 7 * * 1-5'."
    )
    cron_cursor_job: str | None = Field(
        None, description="Key of the step whose output is the cron cursor (cron only)."
    )
    webhook_reply: str | None = Field(
        None, description="Webhook reply mode (webhook only); kept unless given."
    )
    webhook_response_config: dict[str, Any] | None = Field(
        None, description="Webhook response configuration (webhook only); kept unless given."
    )
    custom_path: str | None = Field(
        None, description="Custom webhook URL path (webhook only); kept unless given."
    )
