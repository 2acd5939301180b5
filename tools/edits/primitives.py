"""Edit operations shared by the tools, each acting on a :class:`Draft`.

Each function resolves references exactly, normalises its inputs, records the
primitive ops on the draft and a :class:`Change` for the result. Rules that
concern the whole structure (unique names, cycles, conditions, cron) are
checked afterwards by :mod:`tools.validation`, once, for every tool.
"""

from __future__ import annotations

from typing import Any

from tools.base import ToolContext
from tools.catalogue.names import adaptor_short_name, resolve_adaptor
from tools.document.names import MAX_NAME_LENGTH, derive_key, edge_key, is_valid_key, sanitise_name
from tools.document.refs import NodeKind, require_edge, require_job, resolve_node
from tools.document.structure import (
    CRON_FIELDS,
    WEBHOOK_FIELDS,
    AddEntry,
    Change,
    Draft,
    Edge,
    RekeyEntry,
    RemoveEntry,
    Trigger,
    UpdateEntry,
)
from tools.edits.specs import EdgeFields, EdgeSpec, JobSpec, TriggerSpec
from tools.errors import ToolInputError
from tools.jobcode import STANDARD_EMPTY_BODY, has_code


def clean_name(raw: str, *, what: str = "Step") -> str:
    name = sanitise_name(raw)
    if not name:
        raise ToolInputError(
            f"{what} name {raw!r} has no usable characters (ASCII letters, digits, spaces, "
            "'_' and '-').",
            code="invalid_name",
        )
    if len(name) > MAX_NAME_LENGTH:
        raise ToolInputError(
            f"{what} name is {len(name)} characters; the limit is {MAX_NAME_LENGTH}.",
            code="name_too_long",
        )
    return name


def check_new_key(draft: Draft, key: str) -> None:
    if not is_valid_key(key):
        raise ToolInputError(
            f"Key {key!r} must start with a letter or digit and use only letters, digits, "
            "'-' and '_' (at most 100 characters).",
            code="invalid_key",
        )
    structure = draft.structure
    if key in structure.jobs:
        raise ToolInputError(
            f"A step with key {key!r} already exists (named {structure.jobs[key].name!r}); "
            "pass a different key or name.",
            code="duplicate_job_key",
        )
    if key in structure.triggers:
        raise ToolInputError(f"{key!r} is already a trigger key.", code="node_key_clash")


# --- jobs -------------------------------------------------------------------


def add_job(draft: Draft, spec: JobSpec, ctx: ToolContext) -> str:
    name = clean_name(spec.name)
    key = spec.key if spec.key else derive_key(name)
    if not key:
        raise ToolInputError(
            f"Cannot derive a key from {spec.name!r}; pass one.", code="invalid_key"
        )
    check_new_key(draft, key)
    adaptor = resolve_adaptor(spec.adaptor, ctx.catalogue)
    values = {"id": ctx.new_id(), "name": name, "adaptor": adaptor, "body": STANDARD_EMPTY_BODY}
    draft.apply(AddEntry("jobs", key, values))
    draft.note(Change("added", "job", key, name))
    return f"{name} ({key}, {adaptor_short_name(adaptor)})"


def rename_job_key(draft: Draft, old: str, new: str) -> list[str]:
    """Rekey a step and cascade to its edges (ids kept) and cron cursors."""
    check_new_key(draft, new)
    structure = draft.structure
    old_id = structure.jobs[old].id
    draft.apply(RekeyEntry("jobs", old, new))
    cascaded: list[str] = []
    for edge in list(structure.edges.values()):
        values: dict[str, Any] = {}
        if edge.source_job == old:
            values["source_job"] = new
        if edge.target_job == old:
            values["target_job"] = new
        if not values:
            continue
        draft.apply(UpdateEntry("edges", edge.key, values))
        updated = structure.edges[edge.key]
        conventional = edge_key(edge.source, edge.target_job)
        if edge.key == conventional:
            new_edge_key = edge_key(updated.source, updated.target_job)
            _rekey_edge(draft, edge.key, new_edge_key)
            cascaded.append(f"edge {edge.key} -> {new_edge_key}")
    for trigger in list(structure.triggers.values()):
        # Cursors hold a job id, which a rename keeps; documents that hold the key follow it.
        if trigger.cron_cursor_job_id == old and old != old_id:
            draft.apply(UpdateEntry("triggers", trigger.key, {"cron_cursor_job_id": new}))
            cascaded.append(f"cron cursor of {trigger.key}")
    draft.note(Change("renamed", "job", new, f"from {old}"))
    return cascaded


def remove_job(draft: Draft, key: str) -> tuple[bool, list[str]]:
    """Remove a step, its edges, and cron cursors pointing at it."""
    structure = draft.structure
    job = structure.jobs[key]
    cascaded: list[str] = []
    for edge in list(structure.edges.values()):
        if key in (edge.source_job, edge.target_job):
            draft.apply(RemoveEntry("edges", edge.key))
            draft.note(Change("removed", "edge", edge.key))
            cascaded.append(f"edge {edge.source} -> {edge.target_job}")
    for trigger in list(structure.triggers.values()):
        if trigger.cron_cursor_job_id is not None and trigger.cron_cursor_job_id in (job.id, key):
            draft.apply(UpdateEntry("triggers", trigger.key, {"cron_cursor_job_id": None}))
            cascaded.append(f"cron cursor of {trigger.key} cleared")
    draft.apply(RemoveEntry("jobs", key))
    draft.note(Change("removed", "job", key, job.name))
    return has_code(job.body), cascaded


# --- edges ------------------------------------------------------------------


def _rekey_edge(draft: Draft, old: str, new: str) -> None:
    if old == new:
        return
    if new in draft.structure.edges:
        raise ToolInputError(f"An edge keyed {new!r} already exists.", code="duplicate_edge")
    draft.apply(RekeyEntry("edges", old, new))


def _source_fields(kind: NodeKind, key: str) -> dict[str, Any]:
    if kind == "trigger":
        return {"source_trigger": key, "source_job": None}
    return {"source_job": key, "source_trigger": None}


def require_target_job(draft: Draft, target: str) -> None:
    if target in draft.structure.triggers:
        raise ToolInputError(
            f"{target!r} is a trigger; edges can only lead to steps.", code="edge_into_trigger"
        )
    require_job(draft.structure, target)


def _condition_values(fields: EdgeFields, current: Edge | None) -> dict[str, Any]:
    """Condition fields to write. An expression alone implies js_expression; leaving
    js_expression drops the stale expression."""
    values: dict[str, Any] = {}
    condition_type = fields.condition_type
    if condition_type is None and fields.condition_expression is not None:
        condition_type = "js_expression"
    if condition_type is not None:
        values["condition_type"] = condition_type
        if condition_type != "js_expression" and fields.condition_expression is None:
            values["condition_expression"] = None
    if fields.condition_expression is not None:
        values["condition_expression"] = fields.condition_expression
    if fields.condition_label is not None:
        values["condition_label"] = fields.condition_label or None
    if fields.enabled is not None:
        values["enabled"] = fields.enabled
    if current is not None:
        values = {k: v for k, v in values.items() if getattr(current, k) != v}
    return values


def add_edge(draft: Draft, spec: EdgeSpec, ctx: ToolContext) -> str:
    structure = draft.structure
    kind = resolve_node(structure, spec.source)
    require_target_job(draft, spec.target)
    if structure.find_edge(spec.source, spec.target) is not None:
        raise ToolInputError(
            f"There is already an edge from {spec.source!r} to {spec.target!r}; "
            "use update_edges to change it.",
            code="duplicate_edge",
        )
    key = edge_key(spec.source, spec.target)
    if key in structure.edges:
        raise ToolInputError(f"An edge keyed {key!r} already exists.", code="duplicate_edge")
    values: dict[str, Any] = {
        "id": ctx.new_id(),
        **_source_fields(kind, spec.source),
        "target_job": spec.target,
        "condition_type": "always" if kind == "trigger" else "on_job_success",
        "enabled": True,
    }
    values.update(_condition_values(spec, None))
    draft.apply(AddEntry("edges", key, values))
    edge = draft.structure.edges[key]
    draft.note(Change("added", "edge", key, edge.condition_type))
    return describe_edge(edge)


def update_edge(
    draft: Draft,
    source: str,
    target: str,
    fields: EdgeFields,
    new_source: str | None,
    new_target: str | None,
) -> str:
    structure = draft.structure
    edge = require_edge(structure, source, target)
    values = _condition_values(fields, edge)
    if new_source is not None and new_source != edge.source:
        values.update(_source_fields(resolve_node(structure, new_source), new_source))
    if new_target is not None and new_target != edge.target_job:
        require_target_job(draft, new_target)
        values["target_job"] = new_target
    if not values:
        raise ToolInputError(
            f"Nothing to change on the edge {source!r} -> {target!r}: every field given "
            "already has that value.",
            code="no_change",
        )
    draft.apply(UpdateEntry("edges", edge.key, values))
    updated = draft.structure.edges[edge.key]
    if (updated.source, updated.target_job) != (edge.source, edge.target_job):
        pair = (updated.source, updated.target_job)
        if any(
            e.key != edge.key and (e.source, e.target_job) == pair for e in structure.edges.values()
        ):
            raise ToolInputError(
                f"There is already an edge from {updated.source!r} to {updated.target_job!r}.",
                code="duplicate_edge",
            )
        key = edge.key
        if key == edge_key(edge.source, edge.target_job):
            key = edge_key(updated.source, updated.target_job)
            _rekey_edge(draft, edge.key, key)
        updated = draft.structure.edges[key]
    draft.note(Change("updated", "edge", updated.key, ", ".join(sorted(values))))
    return describe_edge(updated)


def describe_edge(edge: Edge) -> str:
    condition = edge.condition_type
    if edge.condition_type == "js_expression":
        condition = f"when {edge.condition_expression}"
    label = f" [{edge.condition_label}]" if edge.condition_label else ""
    disabled = " (disabled)" if not edge.enabled else ""
    return f"{edge.source} -> {edge.target_job} ({condition}){label}{disabled}"


# --- triggers ---------------------------------------------------------------


def set_trigger(draft: Draft, spec: TriggerSpec, ctx: ToolContext, *, connect: bool = True) -> str:
    """Create or replace the trigger; replacing keeps its edge (rekeyed) and id.

    Webhook settings are kept unless passed; switching type drops the settings
    of the other type, and says so.
    """
    structure = draft.structure
    current = _trigger_to_replace(draft, spec)
    values: dict[str, Any] = {"type": spec.type}
    notes: list[str] = []
    if spec.enabled is not None:
        values["enabled"] = spec.enabled
    if spec.cron_expression is not None:
        values["cron_expression"] = " ".join(spec.cron_expression.split())
    if spec.cron_cursor_job is not None:
        cursor_job = require_job(structure, spec.cron_cursor_job)
        # A step loaded without an id is referenced by its key (rename/remove follow keys too).
        values["cron_cursor_job_id"] = cursor_job.id or cursor_job.key
    for name in WEBHOOK_FIELDS:
        given = getattr(spec, name)
        if given is not None:
            values[name] = given
    other_fields = WEBHOOK_FIELDS if spec.type == "cron" else CRON_FIELDS
    passed_other = [f for f in other_fields if values.get(f) is not None]
    if passed_other:
        raise ToolInputError(
            f"{', '.join(passed_other)} do not apply to a {spec.type} trigger.",
            code="invalid_trigger_field",
        )

    if current is None:
        key = spec.key or spec.type
        check_new_trigger_key(draft, key)
        values = {"id": ctx.new_id(), "enabled": False, **values}
        draft.apply(AddEntry("triggers", key, values))
        draft.note(Change("added", "trigger", key, spec.type))
        if connect:
            notes.append(connect_trigger(draft, key, ctx))
        return describe_trigger(draft.structure.triggers[key], notes)

    if current.type != spec.type:
        dropped = [f for f in other_fields if getattr(current, f) is not None]
        values.update(dict.fromkeys(dropped))
        if dropped:
            notes.append(f"dropped {', '.join(dropped)} (not used by {spec.type} triggers)")
    values = {k: v for k, v in values.items() if getattr(current, k) != v}
    key = current.key
    new_key = spec.key or (spec.type if current.key == current.type else current.key)
    if values:
        draft.apply(UpdateEntry("triggers", key, values))
    if new_key != key:
        check_new_trigger_key(draft, new_key)
        draft.apply(RekeyEntry("triggers", key, new_key))
        for edge in structure.edges_from(key):
            draft.apply(UpdateEntry("edges", edge.key, {"source_trigger": new_key}))
            if edge.key == edge_key(key, edge.target_job):
                _rekey_edge(draft, edge.key, edge_key(new_key, edge.target_job))
        notes.append(f"renamed from {key}")
        key = new_key
    if not values and new_key == current.key:
        raise ToolInputError(f"The trigger {key!r} already has those settings.", code="no_change")
    draft.note(Change("updated", "trigger", key, ", ".join(sorted(values)) or "renamed"))
    return describe_trigger(draft.structure.triggers[key], notes)


def _trigger_to_replace(draft: Draft, spec: TriggerSpec) -> Trigger | None:
    triggers = draft.structure.triggers
    if spec.key is not None and spec.key in triggers:
        return triggers[spec.key]
    if len(triggers) > 1:
        raise ToolInputError(
            "This workflow has several triggers; pass the key of the one to change: "
            + ", ".join(triggers)
            + ".",
            code="ambiguous_trigger",
        )
    return next(iter(triggers.values()), None)


def check_new_trigger_key(draft: Draft, key: str) -> None:
    if not is_valid_key(key):
        raise ToolInputError(f"Trigger key {key!r} is not a valid key.", code="invalid_key")
    if key in draft.structure.jobs:
        raise ToolInputError(f"{key!r} is already a step key.", code="node_key_clash")
    if key in draft.structure.triggers:
        raise ToolInputError(f"A trigger keyed {key!r} already exists.", code="duplicate_trigger")


def connect_trigger(draft: Draft, key: str, ctx: ToolContext) -> str:
    """Connect an unconnected trigger to the workflow's first step, when there is one."""
    structure = draft.structure
    if structure.edges_from(key):
        return ""
    roots = structure.root_jobs()
    if len(roots) != 1:
        if roots:
            return "not connected yet: add an edge from it to one of " + ", ".join(roots)
        return ""
    key_ = edge_key(key, roots[0])
    values = {
        "id": ctx.new_id(),
        "source_trigger": key,
        "target_job": roots[0],
        "condition_type": "always",
        "enabled": True,
    }
    draft.apply(AddEntry("edges", key_, values))
    draft.note(Change("added", "edge", key_, "always"))
    return f"connected to {roots[0]}"


def describe_trigger(trigger: Trigger, notes: list[str]) -> str:
    state = "enabled" if trigger.enabled else "disabled"
    what = f"cron '{trigger.cron_expression}'" if trigger.type == "cron" else "webhook"
    extra = "".join(f"; {n}" for n in notes if n)
    return f"trigger {trigger.key}: {what}, {state}{extra}"
