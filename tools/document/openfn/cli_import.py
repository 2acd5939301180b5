"""Importing a CLI ``workflow.json`` (``{steps}``, or the ``{workflow, options}`` plan).

Steps with a ``type`` are triggers, the others jobs (as ``@openfn/project``
tells them apart). A job's adaptor is its ``adaptor`` or its one ``adaptors``
entry; its ``expression`` is the code itself, or a path to a file the import was
given in ``files`` (a path to a file not given is refused: it cannot be read from
here); a string ``configuration`` is the
credential's name, while an object (credential values) or a ``.json`` path is
refused, because Planwright stores names only. ``next`` edges read as the
runtime reads them: ``true`` or ``"always"`` is always, the runtime's aliases
``on_upstream_success``/``on_upstream_fail`` are ``on_job_success``/
``on_job_failure``, any other string is a JavaScript condition, and an edge
the runtime would never follow (``false``, or an object without condition)
comes in disabled.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from tools.document import WorkflowDocument
from tools.document.openfn.building import DocumentBuilder
from tools.document.openfn.context import file_text
from tools.document.openfn.fields import (
    TRIGGER_SETTINGS,
    bad,
    extras,
    flag,
    mapping,
    text,
    trigger_settings,
)
from tools.document.yaml_io import DEFAULT_MAX_BYTES, DEFAULT_MAX_DEPTH, check_size
from tools.errors import DocumentError

_CONDITIONS = {
    "always": "always",
    "on_job_success": "on_job_success",
    "on_job_failure": "on_job_failure",
    "on_upstream_success": "on_job_success",
    "on_upstream_fail": "on_job_failure",
}
_JOB_FIELDS = {"id", "name", "adaptor", "adaptors", "expression", "configuration", "next"}
_JOB_FIELDS |= {"openfn"}
_TRIGGER_FIELDS = {"id", "type", "enabled", "next", "openfn", "cron_cursor_job"}
_TRIGGER_FIELDS |= {"cron_cursor_job_id", *TRIGGER_SETTINGS}


def from_cli_json(
    text_: str,
    *,
    new_id: Callable[[], str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    files: Mapping[str, str] | None = None,
) -> WorkflowDocument:
    check_size(text_, max_bytes)
    try:
        data = json.loads(text_)
    except json.JSONDecodeError as exc:
        raise DocumentError(
            f"Invalid JSON: {exc.msg} (line {exc.lineno}, column {exc.colno}).",
            code="invalid_json",
        ) from exc
    except RecursionError as exc:
        raise DocumentError("The document is nested too deeply.", code="yaml_too_deep") from exc
    _check_depth(data)
    return from_cli_workflow(data, new_id=new_id, max_bytes=max_bytes, files=files)


def from_cli_workflow(
    data: Any,
    *,
    new_id: Callable[[], str],
    max_bytes: int = DEFAULT_MAX_BYTES,
    files: Mapping[str, str] | None = None,
) -> WorkflowDocument:
    root = mapping(data, "workflow")
    field = "workflow" if "workflow" in root else ""
    workflow = mapping(root["workflow"], "workflow") if field else root
    steps = workflow.get("steps")
    prefix = f"{field}.steps" if field else "steps"
    if not isinstance(steps, list) or not steps:
        bad(prefix, "must be a non-empty list of steps.")
    name = text(workflow, "name", field or "workflow") or text(workflow, "id", field or "workflow")
    builder = DocumentBuilder(name, new_id)
    nodes: list[tuple[str, str, Mapping[str, Any]]] = []  # (our key, field, step)
    for index, value in enumerate(steps):
        where = f"{prefix}[{index}]"
        step = mapping(value, where)
        nodes.append((_add_step(builder, step, where, index, files or {}), where, step))
    for key, where, step in nodes:
        _add_next(builder, key, step.get("next"), f"{where}.next")
    start = text(workflow, "start", field or "workflow")
    if start is not None:
        builder.node(start, f"{field + '.' if field else ''}start")
    return builder.build(max_bytes=max_bytes)


def _given_id(step: Mapping[str, Any]) -> str | None:
    meta = step.get("openfn")
    uuid = meta.get("uuid") if isinstance(meta, Mapping) else None
    return uuid if isinstance(uuid, str) else None


def _add_step(
    builder: DocumentBuilder,
    step: Mapping[str, Any],
    where: str,
    index: int,
    files: Mapping[str, str],
) -> str:
    step_id = text(step, "id", where)
    if step.get("type") is not None:
        trigger_type = text(step, "type", where) or ""
        settings, cursor = trigger_settings(step, where)
        return builder.add_trigger(
            step_id or trigger_type,
            where,
            type=trigger_type,
            enabled=flag(step, "enabled", where, default=False),
            settings=settings,
            cursor_job=cursor,
            given_id=_given_id(step),
            extra=extras(step, _TRIGGER_FIELDS),
        )
    expression = text(step, "expression", where)
    if expression is not None and _names_a_file(expression):
        expression = file_text(expression, f"{where}.expression", files)
    return builder.add_job(
        step_id or f"step-{index + 1}",
        where,
        name=text(step, "name", where) or step_id or f"Step {index + 1}",
        adaptor=_adaptor(step, where),
        body=expression,
        credential=_credential(step, where),
        given_id=_given_id(step),
        extra=extras(step, _JOB_FIELDS),
    )


def _adaptor(step: Mapping[str, Any], where: str) -> str:
    single = text(step, "adaptor", where)
    if single is not None:
        return single
    adaptors = step.get("adaptors")
    if not isinstance(adaptors, list) or len(adaptors) != 1 or not isinstance(adaptors[0], str):
        bad(f"{where}.adaptors", "a step needs exactly one adaptor (a list of one string).")
    return adaptors[0]


def _credential(step: Mapping[str, Any], where: str) -> str | None:
    value = step.get("configuration")
    if value is None:
        return None
    if not isinstance(value, str):
        bad(
            f"{where}.configuration",
            "holds credential values; Planwright keeps only a credential's name (a string).",
        )
    if value.strip().endswith(".json") or _names_a_file(value):
        bad(f"{where}.configuration", f"names a file ({value!r}); give the credential's name.")
    return value.strip() or None


def _add_next(builder: DocumentBuilder, source: str, value: Any, where: str) -> None:
    if value is None:
        return
    if isinstance(value, str):
        value = {value: True}
    for target, rule in mapping(value, where).items():
        field = f"{where}.{target}"
        condition: Any = rule
        label = None
        enabled = True
        if isinstance(rule, Mapping):
            condition = rule.get("condition")
            label = text(rule, "label", field)
            enabled = not flag(rule, "disabled", field, default=False)
            if condition is None:  # the runtime never follows such an edge
                condition, enabled = True, False
        if isinstance(condition, bool):
            condition_type, expression = "always", None
            enabled = enabled and condition
        elif isinstance(condition, str):
            condition_type = _CONDITIONS.get(condition.strip(), "js_expression")
            expression = condition if condition_type == "js_expression" else None
        else:
            bad(f"{field}.condition", "must be a string or true/false.")
        builder.add_edge(
            field,
            source=source,
            target=builder.node(target, field),
            condition_type=condition_type,
            expression=expression,
            label=label,
            enabled=enabled,
        )


def _names_a_file(value: str) -> bool:
    """A one-word, one-line value that looks like a path (what the CLI would read)."""
    stripped = value.strip()
    if not stripped or any(ch.isspace() for ch in stripped):
        return False
    return stripped.startswith(("./", "../", "/", "~/")) or stripped.endswith((".js", ".json"))


def _check_depth(value: Any, depth: int = 0) -> None:
    if depth > DEFAULT_MAX_DEPTH:
        raise DocumentError(
            f"The document is nested more than {DEFAULT_MAX_DEPTH} levels deep.",
            code="yaml_too_deep",
        )
    children = (
        value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    )
    for child in children:
        _check_depth(child, depth + 1)
