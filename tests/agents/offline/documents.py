"""Sample workflows the offline-model tests (and the rules' examples) run on; their YAML is in
data/docs/."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from tools.document import WorkflowDocument

SAMPLES = Path(__file__).parent / "data" / "docs"


def _sample(name: str) -> str:
    return (SAMPLES / f"{name}.yaml").read_text(encoding="utf-8")


REFERRAL_YAML = _sample("referral")

CHAIN_YAML = _sample("chain")

DOCS: dict[str, Callable[[], WorkflowDocument]] = {
    "referral": lambda: WorkflowDocument.from_yaml(REFERRAL_YAML),
    "chain": lambda: WorkflowDocument.from_yaml(CHAIN_YAML),
    "empty": lambda: WorkflowDocument.new("Referral intake"),
    "unnamed": lambda: WorkflowDocument.new(),
    "disconnected": lambda: WorkflowDocument.from_yaml(
        REFERRAL_YAML.replace(
            "  webhook->get-referrals:\n"
            "    id: 00000000-0000-4000-8000-000000000006\n"
            "    source_trigger: webhook\n"
            "    target_job: get-referrals\n"
            "    condition_type: always\n"
            "    enabled: true\n",
            "",
        )
    ),
}

SINGLE_YAML = _sample("single")
DOCS["single"] = lambda: WorkflowDocument.from_yaml(SINGLE_YAML)

REFERRAL_JOBS = {
    "get-referrals": ("Get referrals", "http"),
    "check-coverage": ("Check coverage", "fhir"),
    "send-email": ("Send email", "gmail"),
    "send-sms": ("Send SMS", "twilio"),
}
REFERRAL_EDGES: dict[tuple[str, str], Any] = {
    ("webhook", "get-referrals"): "always",
    ("get-referrals", "check-coverage"): "on_job_success",
    ("check-coverage", "send-email"): "on_job_success",
    ("check-coverage", "send-sms"): "on_job_failure",
}
CHAIN_EDGES: dict[tuple[str, str], Any] = {
    ("cron", "fetch-patients"): "always",
    ("fetch-patients", "transform-data"): "on_job_success",
    ("transform-data", "upsert-records"): "on_job_success",
}
ASK_SEND = 'Which step do you mean by "send"'
CAN_DO = "ANTHROPIC_API_KEY"


def edges_with(base: dict[tuple[str, str], Any], **changes: Any) -> dict[tuple[str, str], Any]:
    """``base`` with edges added/changed (``a__b=value``) or removed (``a__b=None``)."""
    result = dict(base)
    for name, value in changes.items():
        pair = tuple(name.replace("_", "-").split("--"))
        assert len(pair) == 2
        if value is None:
            result.pop((pair[0], pair[1]), None)
        else:
            result[(pair[0], pair[1])] = value
    return result


# Spelled out, not imported: the exact guard OpenFn's runtime needs (its own on_job_success).
SUCCESS_GUARD = "!state.errors?.[upstreamStepId]"


def ok_and(check: str) -> str:
    """The expression of a branch that means "on success and <check>"."""
    return f"{SUCCESS_GUARD} && ({check})"


def js(expression: str, label: str | None = None) -> dict[str, Any]:
    value: dict[str, Any] = {"condition_type": "js_expression", "condition_expression": expression}
    if label:
        value["condition_label"] = label
    return value


# A decision with two arms that meet again (the shape of Linda's coverage check, seed 000).
BRANCHING_YAML = _sample("branching")
DOCS["branching"] = lambda: WorkflowDocument.from_yaml(BRANCHING_YAML)

# The workflow Linda's paragraph builds (seed 000, data/build.yaml's build-expert-paragraph): the
# BlueCross arm reaches prior auth through the portal step, so a rule that adds prior auth
# for another kind of referral is a new arm from the decision, not a wider one.
LINDA_YAML = _sample("linda")
DOCS["linda"] = lambda: WorkflowDocument.from_yaml(LINDA_YAML)

# The chain with two review gates' raise parts (credential review-queue): the supervisor's
# after Upsert records, and the billing team's escalation when Transform data fails.
GATED_YAML = _sample("gated")
DOCS["gated"] = lambda: WorkflowDocument.from_yaml(GATED_YAML)
