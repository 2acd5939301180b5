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
        description="Key (letters, digits, '-', '_'); left out: from the name "
        "('Check coverage' -> 'check-coverage').",
    )
    name: str = Field(description="Display name: unique, at most 100 characters.")
    adaptor: str = Field(
        description="Short name ('http'), package or pinned package "
        "('@openfn/language-http@6.5.1'); unpinned gets the current version; '@latest' "
        "only if the user asks."
    )


class EdgeFields(ToolArgs):
    condition_type: ConditionTypeArg | None = Field(
        None,
        description="Default: on_job_success from a step, always from a trigger.",
    )
    condition_expression: str | None = Field(
        None,
        description="JavaScript over state; js_expression edges only (and required).",
    )
    condition_label: str | None = Field(None, description="Short label, e.g. 'HMO members'.")
    enabled: bool | None = Field(None, description="Default true.")


class EdgeSpec(EdgeFields):
    """A new edge between two nodes."""

    source: str = Field(description="Step or trigger key.")
    target: str = Field(description="Step key.")


class TriggerSpec(ToolArgs):
    """The workflow's trigger: a webhook or a cron schedule."""

    type: Literal["webhook", "cron"] = Field(description="'webhook' or 'cron'.")
    key: str | None = Field(
        None,
        description="Left out: the only trigger, or a new one keyed by its type.",
    )
    enabled: bool | None = Field(None, description="On or off; new triggers start disabled.")
    cron_expression: str | None = Field(None, description="5 fields, e.g. '0 7 * * 1-5'.")
    cron_cursor_job: str | None = Field(None, description="Step whose output is the cron cursor.")
    webhook_reply: str | None = Field(None, description="Webhook only; kept unless given.")
    webhook_response_config: dict[str, Any] | None = Field(
        None, description="Webhook only; kept unless given."
    )
    custom_path: str | None = Field(None, description="Webhook URL path; kept unless given.")
