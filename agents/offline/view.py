"""The offline model's view of a workflow, and a scratch copy to try plans on.

The model gets only the redacted structure (no ids, no bodies). :class:`View`
answers graph questions over it; :class:`Scratch` rebuilds a document from it
so a plan can be run through the real tools before it is proposed: a plan the
tools would reject becomes an explanation instead of a half-applied edit.
"""

from __future__ import annotations

import itertools
import json
from dataclasses import dataclass
from typing import Any

from tools.base import ToolContext, ToolResult
from tools.catalogue.names import adaptor_short_name
from tools.document import WorkflowDocument
from tools.document.redaction import redact
from tools.document.structure import condition_text
from tools.jobcode import STANDARD_EMPTY_BODY
from tools.registry import run_tool, spec_for


@dataclass(frozen=True)
class EdgeView:
    source: str
    target: str
    condition_type: str
    expression: str | None = None
    label: str | None = None
    enabled: bool = True


class View:
    def __init__(self, structure: dict[str, Any]) -> None:
        self.raw = structure
        self.name: str | None = structure.get("name")
        self.jobs: list[dict[str, Any]] = list(structure.get("jobs") or [])
        self.by_key = {job["key"]: job for job in self.jobs}
        self.triggers: list[dict[str, Any]] = list(structure.get("triggers") or [])
        self.trigger_keys = [t["key"] for t in self.triggers]
        self.edges = [
            EdgeView(
                e["source"],
                e["target"],
                e.get("condition_type", "always"),
                e.get("condition_expression"),
                e.get("condition_label"),
                e.get("enabled", True),
            )
            for e in structure.get("edges") or []
        ]

    # --- nodes ---

    def name_of(self, key: str) -> str:
        job = self.by_key.get(key)
        if job is not None:
            return str(job["name"])
        return f"the {key} trigger" if key in self.trigger_keys else key

    def label(self, key: str) -> str:
        """'"Check coverage"' for a step, 'the webhook trigger' for a trigger."""
        if key in self.trigger_keys and key not in self.by_key:
            return f"the {key} trigger"
        return f'"{self.name_of(key)}"'

    def adaptor_of(self, key: str) -> str:
        return adaptor_short_name(str(self.by_key[key]["adaptor"]))

    def trigger(self) -> dict[str, Any] | None:
        return self.triggers[0] if len(self.triggers) == 1 else None

    # --- edges ---

    def out_edges(self, node: str) -> list[EdgeView]:
        return [e for e in self.edges if e.source == node]

    def in_edges(self, key: str) -> list[EdgeView]:
        return [e for e in self.edges if e.target == key]

    def edge(self, source: str, target: str) -> EdgeView | None:
        return next((e for e in self.edges if e.source == source and e.target == target), None)

    def order(self) -> list[str]:
        """Job keys in flow order: from the trigger (or roots) along edges, then the rest."""
        seen: list[str] = []
        starts = [e.target for t in self.trigger_keys for e in self.out_edges(t)]
        starts += [k for k in self.by_key if not self.in_edges(k)]
        queue = [k for k in dict.fromkeys(starts) if k in self.by_key]
        while queue:
            key = queue.pop(0)
            if key in seen:
                continue
            seen.append(key)
            queue += [e.target for e in self.out_edges(key) if e.target not in seen]
        return seen + [k for k in self.by_key if k not in seen]

    def leaves(self) -> list[str]:
        return [k for k in self.order() if not self.out_edges(k)]

    def first(self) -> str | None:
        for key in self.trigger_keys:
            for edge in self.out_edges(key):
                return edge.target
        roots = [k for k in self.order() if not self.in_edges(k)]
        return roots[0] if len(roots) == 1 else None


def condition_words(edge: EdgeView) -> str:
    return condition_text(edge.condition_type, edge.expression, edge.label)


def document_from(structure: dict[str, Any]) -> WorkflowDocument:
    """A document with the same structure (placeholder ids and bodies)."""
    counter = itertools.count(1)

    def fake_id() -> str:
        return f"00000000-0000-4000-9000-{next(counter):012d}"

    jobs: dict[str, Any] = {}
    ids: dict[str, str] = {}
    for job in structure.get("jobs") or []:
        ids[job["key"]] = fake_id()
        # As many lines of code as the real body: sizes read off the copy stay exact.
        lines = max(int(job.get("code_lines") or 1), 1)
        body = (
            "\n".join(["fn(state => state);"] * lines)
            if job.get("has_code")
            else STANDARD_EMPTY_BODY
        )
        jobs[job["key"]] = {
            "id": ids[job["key"]],
            "name": job["name"],
            "adaptor": job["adaptor"],
            "body": body,
            # A credential's name (never a secret): what a review step is known by.
            **({"credential": job["credential"]} if job.get("credential") else {}),
        }
    triggers: dict[str, Any] = {}
    for trigger in structure.get("triggers") or []:
        entry: dict[str, Any] = {
            "id": fake_id(),
            "type": trigger["type"],
            "enabled": trigger.get("enabled", False),
        }
        if trigger.get("cron_expression"):
            entry["cron_expression"] = trigger["cron_expression"]
        cursor = trigger.get("cron_cursor_job")
        if cursor:
            entry["cron_cursor_job_id"] = ids.get(cursor, cursor)
        for name in ("webhook_reply", "custom_path"):
            if trigger.get(name) is not None:
                entry[name] = trigger[name]
        triggers[trigger["key"]] = entry
    edges: dict[str, Any] = {}
    for edge in structure.get("edges") or []:
        source = edge["source"]
        entry = {"id": fake_id()}
        entry["source_trigger" if source in triggers else "source_job"] = source
        entry["target_job"] = edge["target"]
        entry["condition_type"] = edge.get("condition_type", "always")
        for name in ("condition_expression", "condition_label"):
            if edge.get(name):
                entry[name] = edge[name]
        entry["enabled"] = edge.get("enabled", True)
        edges[f"{source}->{edge['target']}"] = entry
    data: dict[str, Any] = {}
    if structure.get("name"):
        data["name"] = structure["name"]
    for section, entries in (("jobs", jobs), ("triggers", triggers), ("edges", edges)):
        if entries:
            data[section] = entries
    return WorkflowDocument.from_yaml(json.dumps(data) if data else "")


class Scratch:
    """A throwaway copy of the workflow: plans are tried here before they are proposed."""

    def __init__(self, structure: dict[str, Any]) -> None:
        self.doc = document_from(structure)
        counter = itertools.count(1)
        self.ctx = ToolContext(new_id=lambda: f"00000000-0000-4000-a000-{next(counter):012d}")
        self._view: View | None = View(redact(self.doc.structure))

    @property
    def view(self) -> View:
        if self._view is None:
            self._view = View(redact(self.doc.structure))
        return self._view

    def run(self, name: str, args: dict[str, Any]) -> ToolResult:
        spec = spec_for(name)
        if spec is not None and spec.kind == "read":
            # Reads change nothing: a plan is tried for what it changes. (The docs index
            # would be built for the throwaway context just to be thrown away.)
            return ToolResult(ok=True, message="")
        result = run_tool(self.doc, name, args, context=self.ctx)
        if result.mutated:
            self._view = None
        return result
