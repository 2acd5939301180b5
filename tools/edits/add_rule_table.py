"""``add_rule_table``: per-type rules as one step whose code holds the table as data.

"Orthopedic needs imaging; cardiology needs an EKG report and labs; behavioral health
a clinical summary, no labs" is a table from a type to what it requires. The step's
code is that table as a JavaScript object literal and a few lines that look up the
record's type in it and list what is missing, with language-common's ``fn``; with
``items`` it does the same for every record of a list, with ``each`` over a JSONPath.
Each record gets ``required``, ``missing`` and ``complete``; a type the table does not
list fails the step (naming the type and the known ones) rather than passing it.
"""

from __future__ import annotations

import re

from pydantic import Field, model_validator

from tools.base import ToolArgs, ToolContext, ToolSpec
from tools.document.names import sanitise_name
from tools.document.refs import require_job
from tools.document.structure import Draft
from tools.edits.generated import add_coded_step, connect, js, main_successors
from tools.errors import ToolInputError

_FIELD = re.compile(r"^[A-Za-z_$][A-Za-z0-9_$]*$")


class RuleRow(ToolArgs):
    """A type and what it requires."""

    when: str = Field(min_length=1, description="The type, as the data spells it: 'orthopedic'.")
    requires: list[str] = Field(
        default_factory=list, description="What this type needs: ['EKG report', 'labs']."
    )
    not_required: list[str] = Field(
        default_factory=list,
        description="What the user said it does not need ('no labs'); never checked.",
    )


class AddRuleTableArgs(ToolArgs):
    """Add one step holding per-type rules as a table (data, not branches): it looks up
    the record's `type_field`, compares the row's requirements with the record's
    `have_field` list (case-insensitive) and sets required, missing and complete on it;
    with `items` it checks each item of that list. An unknown type fails the step. It
    runs on success after `after` (or first, in a workflow with no steps)."""

    name: str = Field(description="The step's name, e.g. 'Check required documents'.")
    after: str | None = Field(None, description="Key of the step it runs after.")
    type_field: str = Field("type", description="The record field holding its type.")
    have_field: str = Field("documents", description="The record field listing what it has.")
    items: str | None = Field(
        None, description="A list field of state.data to check item by item: 'referrals'."
    )
    rows: list[RuleRow] = Field(min_length=1, description="The table, one row per type.")

    @model_validator(mode="after")
    def _fields(self) -> AddRuleTableArgs:
        for field in (self.type_field, self.have_field, self.items):
            if field is not None and not _FIELD.match(field):
                raise ValueError(f"{field!r} is not a field name (letters, digits, _ or $)")
        kinds = [_norm(r.when) for r in self.rows]
        if len(set(kinds)) != len(kinds):
            raise ValueError("two rows have the same type")
        return self


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


def table_literal(rows: list[RuleRow]) -> str:
    """The table as a JavaScript object literal, one line per row."""
    lines = ["{"]
    for row in rows:
        entry = f"required: {js(row.requires)}"
        if row.not_required:
            entry += f", notRequired: {js(row.not_required)}"
        lines.append(f"    {js(_norm(row.when))}: {{ {entry} }},")
    lines.append("  }")
    return "\n".join(lines)


def rule_table_code(args: AddRuleTableArgs) -> str:
    type_field, have_field = args.type_field, args.have_field
    check = [
        f"  const kind = String(record?.{type_field} ?? '').trim().toLowerCase();",
        "  const row = RULES[kind];",
        "  if (!row) {",
        "    throw new Error(",
        "      `No rule for ${JSON.stringify(record?." + type_field + ")}; the table knows: ` +",
        "        Object.keys(RULES).join(', '),",
        "    );",
        "  }",
        f"  const have = (record?.{have_field} ?? []).map(x => String(x).trim().toLowerCase());",
        "  const missing = row.required.filter(x => !have.includes(x.toLowerCase()));",
        "  const complete = missing.length === 0;",
        "  const checked = { ...record, required: row.required, missing, complete };",
    ]
    head = ["// The rules, as data: type -> what it requires."]
    if args.items is None:
        return "\n".join(
            [
                *head,
                "fn(state => {",
                f"  const RULES = {table_literal(args.rows)};",
                "  const record = state.data;",
                *check,
                "  return { ...state, data: checked };",
                "});",
            ]
        )
    items = args.items
    return "\n".join(
        [
            *head,
            f"// Every item of state.data.{items} is checked on its own (each), then the",
            "// checked items replace the list.",
            "fn(state => ({ ...state, ruleInput: state.data, ruleChecked: [] }));",
            f"each('$.data.{items}[*]', fn(state => {{",
            f"  const RULES = {table_literal(args.rows)};",
            "  const record = state.data;",
            *check,
            "  return { ...state, ruleChecked: [...state.ruleChecked, checked] };",
            "}));",
            "fn(state => {",
            "  const { ruleInput, ruleChecked, index, ...rest } = state;",
            f"  return {{ ...rest, data: {{ ...ruleInput, {items}: ruleChecked }} }};",
            "});",
        ]
    )


def add_rule_table(draft: Draft, args: AddRuleTableArgs, ctx: ToolContext) -> str:
    structure = draft.structure
    after = require_job(structure, args.after).key if args.after else None
    if after is None and structure.jobs:
        raise ToolInputError(
            "Say which step the rules run after (`after`); the workflow already has steps.",
            code="missing_after",
        )
    name = sanitise_name(args.name)[:100].rstrip()
    if not name:
        raise ToolInputError(
            f"Step name {args.name!r} has no usable characters.", code="invalid_name"
        )
    key = add_coded_step(draft, ctx, name, "common", rule_table_code(args))
    if after is not None:
        connect(draft, ctx, after, key, "on_job_success")
    else:
        for trigger in structure.triggers:
            if not structure.edges_from(trigger):
                connect(draft, ctx, trigger, key)
    rows = "; ".join(f"{r.when}: {', '.join(r.requires) or 'nothing'}" for r in args.rows)
    per = f", for each item of state.data.{args.items}" if args.items else ""
    also = main_successors(draft, after) if after else []
    beside = (
        f" It runs beside {', '.join(repr(k) for k in also if k != key)}." if len(also) > 1 else ""
    )
    shown = f" after {structure.jobs[after].name!r}" if after else ""
    return f"Added {name!r}{shown}{per}, its table: {rows}.{beside}"


TOOL = ToolSpec(
    "add_rule_table",
    AddRuleTableArgs,
    "structural",
    add_rule_table,
    spinner="Adding the rule table…",
    action="add the rule table",
)
