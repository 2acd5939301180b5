"""Every tool's policy lives on its spec; every field the model fills is described."""

from __future__ import annotations

from typing import Any

import pytest

from agents.nodes.route import ROUTE
from tools.base import ToolSpec
from tools.document import WorkflowDocument
from tools.registry import CODE_EDIT_TOOL, TOOLS, spec_for

ALL_SPECS: list[ToolSpec[Any]] = [*TOOLS.values(), CODE_EDIT_TOOL, ROUTE]


def _undescribed(schema: Any, path: str) -> list[str]:
    """Paths of properties in a JSON schema that have no description."""
    missing: list[str] = []
    if isinstance(schema, dict):
        for name, prop in (schema.get("properties") or {}).items():
            where = f"{path}.{name}"
            if not (isinstance(prop, dict) and prop.get("description")):
                missing.append(where)
            missing += _undescribed(prop, where)
        for key in ("items", "anyOf", "oneOf", "allOf"):
            value = schema.get(key)
            for child in value if isinstance(value, list) else [value]:
                missing += _undescribed(child, path)
    return missing


@pytest.mark.parametrize("spec", ALL_SPECS, ids=lambda s: s.name)
def test_every_args_field_has_a_description(spec: ToolSpec[Any]) -> None:
    definition = spec.definition()
    assert definition["description"], f"{spec.name} has no docstring for the model"
    assert _undescribed(definition["input_schema"], spec.name) == []


DEFAULTS = ToolSpec("x", ROUTE.args, "read")


@pytest.mark.parametrize("spec", [*TOOLS.values(), CODE_EDIT_TOOL], ids=lambda s: s.name)
def test_every_tool_sets_its_own_status_text_and_action(spec: ToolSpec[Any]) -> None:
    assert spec.spinner != DEFAULTS.spinner
    assert spec.action != DEFAULTS.action
    if spec.count_field is not None:
        assert spec.count_field in spec.args.model_fields
        assert "{n}" in spec.spinner


def test_spinner_counts_the_items_of_the_call() -> None:
    add = TOOLS["add_jobs"]
    one = add.spinner_text({"jobs": [{"name": "A"}]})
    three = add.spinner_text({"jobs": [{"name": "A"}, {"name": "B"}, {"name": "C"}]})
    assert (one, three) == ("Adding 1 step…", "Adding 3 steps…")
    assert add.spinner_text("not a mapping") == "Adding 1 step…"


def test_only_the_fan_out_tool_fans_out_and_only_losing_changes_ask() -> None:
    assert [s.name for s in TOOLS.values() if s.fans_out] == ["call_job_code_agent"]
    asking = [s.name for s in TOOLS.values() if s.confirm is not None]
    assert asking == ["create_workflow", "remove_jobs", "set_trigger"]
    assert spec_for(CODE_EDIT_TOOL.name) is CODE_EDIT_TOOL
    assert spec_for("nope") is None


DOC = """\
name: Two steps
jobs:
  fetch:
    id: 11111111-1111-4111-8111-111111111111
    name: Fetch
    adaptor: '@openfn/language-http@latest'
    body: get('/patients')
  store:
    id: 22222222-2222-4222-8222-222222222222
    name: Store
    adaptor: '@openfn/language-common@latest'
    body: '// Add operations here'
edges:
  fetch->store:
    source_job: fetch
    target_job: store
    condition_type: on_job_success
"""


def test_the_removal_rule_sees_the_whole_round() -> None:
    rule = TOOLS["remove_jobs"].confirm
    assert rule is not None
    structure = WorkflowDocument.from_yaml(DOC).structure
    # A step without code, not the last one: nothing to ask.
    assert rule(structure, [{"keys": ["store"]}]) is None
    # Code is lost.
    assert rule(structure, [{"keys": ["fetch"]}]) == "remove 'Fetch', which holds code"
    # Two calls that together empty the workflow ask as one.
    asked = rule(structure, [{"keys": ["store"]}, {"keys": ["fetch"]}])
    assert asked == "remove all 2 steps, including 'Fetch', which holds code"
    # Unknown keys and malformed input are left to the call itself.
    assert rule(structure, [{"keys": ["ghost"]}, {"keys": "fetch"}]) is None


HOOK = """\
name: Hook
triggers:
  webhook:
    id: 33333333-3333-4333-8333-333333333333
    type: webhook
    enabled: true
    webhook_reply: after_completion
    webhook_response_config: {status: 202}
    custom_path: intake
"""


def test_the_trigger_rule_asks_before_response_settings_are_dropped() -> None:
    rule = TOOLS["set_trigger"].confirm
    assert rule is not None
    structure = WorkflowDocument.from_yaml(HOOK).structure
    assert rule(structure, [{"type": "cron", "cron_expression": "0 9 * * *"}]) == (
        "switch the webhook trigger 'webhook' to cron, dropping its response settings "
        "(webhook_reply, webhook_response_config)"
    )
    # Named by key, the same.
    assert rule(structure, [{"type": "cron", "key": "webhook"}]) is not None
    # Staying a webhook keeps them (or replaces them because they were passed): no question.
    assert rule(structure, [{"type": "webhook", "enabled": False}]) is None
    assert rule(structure, [{"type": "webhook", "webhook_reply": "before_start"}]) is None
    # Only response settings count: a webhook with just a custom path switches freely.
    bare = WorkflowDocument.from_yaml(
        HOOK.replace("    webhook_reply: after_completion\n", "").replace(
            "    webhook_response_config: {status: 202}\n", ""
        )
    ).structure
    assert rule(bare, [{"type": "cron", "cron_expression": "0 9 * * *"}]) is None
    # A cron trigger has none to lose.
    cron = WorkflowDocument.from_yaml(DOC).structure
    assert rule(cron, [{"type": "cron"}]) is None


def test_create_workflow_asks_the_same_when_its_trigger_replaces_such_a_webhook() -> None:
    rule = TOOLS["create_workflow"].confirm
    assert rule is not None
    structure = WorkflowDocument.from_yaml(HOOK).structure
    build = {"name": "New", "jobs": [{"name": "A", "adaptor": "common"}]}
    assert rule(structure, [build]) is None
    asked = rule(
        structure, [{**build, "trigger": {"type": "cron", "cron_expression": "0 9 * * *"}}]
    )
    assert asked is not None and "webhook_reply" in asked
